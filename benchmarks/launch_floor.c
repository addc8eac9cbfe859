/* The driver's own cost of a warm launch, measured from C (issue 17, item 1): what no Python
 * library can go below, and which driver calls and options cost what.
 *
 *   cc -O2 -o launch_floor benchmarks/launch_floor.c -ldl && ./launch_floor [calls] [rounds]
 *
 * Loads libcuda.so.1 and libOpenCL.so.1 at run time (either may be missing) and launches the
 * tiny kernel of benchmarks/profile_launch.py (x[i] += 1 over one element, 32 threads) back to
 * back: best of `rounds` batches of `calls` launches then one synchronize, as the Python rows
 * are timed. Prints one JSON object per line: {"api", "row", "us"} or {"api", "row", "rc"} for
 * the experiments (CUDA: whether a launch needs its context current; the same launch replayed as
 * a captured one-launch graph through cuGraphLaunch, not yet run on a GPU when it was written).
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static int CALLS = 5000, ROUNDS = 15;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

typedef int (*launch_fn)(void *state);
typedef int (*sync_fn)(void *state);

/* µs per launch: best of ROUNDS batches of CALLS launches + one sync (after a warm-up batch). */
static double per_launch(launch_fn launch, sync_fn sync, void *state) {
    double best = 1e30;
    for (int r = -1; r < ROUNDS; r++) {
        double t = now();
        for (int i = 0; i < CALLS; i++)
            if (launch(state)) return -1.0;
        if (sync(state)) return -1.0;
        t = (now() - t) / CALLS;
        if (r >= 0 && t < best) best = t;
    }
    return best * 1e6;
}

static void report(const char *api, const char *row, double us) {
    printf("{\"api\": \"%s\", \"row\": \"%s\", \"us\": %.3f}\n", api, row, us);
    fflush(stdout);
}

static void report_rc(const char *api, const char *row, int rc) {
    printf("{\"api\": \"%s\", \"row\": \"%s\", \"rc\": %d}\n", api, row, rc);
    fflush(stdout);
}

/* ---- CUDA ------------------------------------------------------------------------------- */
static const char PTX[] =
    ".version 8.0\n.target sm_75\n.address_size 64\n"
    ".visible .entry tiny(.param .u64 p0, .param .u32 p1)\n{\n"
    ".reg .pred %p<2>; .reg .f32 %f<3>; .reg .b32 %r<6>; .reg .b64 %rd<5>;\n"
    "ld.param.u64 %rd1, [p0]; ld.param.u32 %r2, [p1];\n"
    "mov.u32 %r3, %ctaid.x; mov.u32 %r4, %ntid.x; mov.u32 %r5, %tid.x;\n"
    "mad.lo.s32 %r1, %r3, %r4, %r5; setp.ge.s32 %p1, %r1, %r2; @%p1 bra DONE;\n"
    "cvta.to.global.u64 %rd2, %rd1; mul.wide.s32 %rd3, %r1, 4; add.s64 %rd4, %rd2, %rd3;\n"
    "ld.global.f32 %f1, [%rd4]; add.f32 %f2, %f1, 0f3F800000; st.global.f32 [%rd4], %f2;\n"
    "DONE:\nret;\n}\n";

typedef struct {
    unsigned gx, gy, gz, bx, by, bz, shared;
    void *stream;
    void *attrs;
    unsigned nattrs;
} CUlaunchConfig;

static struct {
    int (*Init)(unsigned);
    int (*DeviceGet)(int *, int);
    int (*PrimaryCtxRetain)(void **, int);
    int (*CtxSetCurrent)(void *);
    int (*CtxGetCurrent)(void **);
    int (*CtxCreate)(void **, unsigned, int);
    int (*CtxSynchronize)(void);
    int (*ModuleLoadData)(void **, const void *);
    int (*ModuleGetFunction)(void **, void *, const char *);
    int (*MemAlloc)(uint64_t *, size_t);
    int (*MemcpyDtoH)(void *, uint64_t, size_t);
    int (*StreamCreate)(void **, unsigned);
    int (*StreamSynchronize)(void *);
    int (*LaunchKernel)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *,
                        void **, void **);
    int (*LaunchKernelEx)(const CUlaunchConfig *, void *, void **, void **);
    int (*StreamBeginCapture)(void *, int);
    int (*StreamEndCapture)(void *, void **);
    int (*GraphInstantiateWithFlags)(void **, void *, unsigned long long);
    int (*GraphLaunch)(void *, void *);
    int (*GraphGetNodes)(void *, void **, size_t *);
    int (*GraphExecKernelNodeSetParams)(void *, void *, const void *);
} cu;

/* CUDA_KERNEL_NODE_PARAMS_v2 of cuda.h (CUDA 12.0+) */
typedef struct {
    void *func;
    unsigned gx, gy, gz, bx, by, bz, shared;
    void **params, **extra;
    void *kern, *ctx;
} KernelNodeParams;

typedef struct {
    void *ctx, *func, *stream;
    void *params[2];
    uint64_t x;
    int n;
    CUlaunchConfig config;
    void *graph_exec;                  /* a graph of one launch of the kernel, captured on `stream` */
    void *graph_node;                  /* its kernel node */
    KernelNodeParams node_params;
} CudaState;

static int cu_launch(void *p) {
    CudaState *s = p;
    return cu.LaunchKernel(s->func, 1, 1, 1, 32, 1, 1, 0, s->stream, s->params, NULL);
}
static int cu_launch_current(void *p) {      /* pygpgpu's pattern: make the context current, launch */
    CudaState *s = p;
    int rc = cu.CtxSetCurrent(s->ctx);
    return rc ? rc : cu.LaunchKernel(s->func, 1, 1, 1, 32, 1, 1, 0, s->stream, s->params, NULL);
}
static int cu_launch_ex(void *p) {
    CudaState *s = p;
    return cu.LaunchKernelEx(&s->config, s->func, s->params, NULL);
}
static int cu_launch_ex_current(void *p) {
    CudaState *s = p;
    int rc = cu.CtxSetCurrent(s->ctx);
    return rc ? rc : cu.LaunchKernelEx(&s->config, s->func, s->params, NULL);
}
static int cu_graph_launch(void *p) {     /* the one-launch graph: what a memo could replay */
    CudaState *s = p;
    return cu.GraphLaunch(s->graph_exec, s->stream);
}
static int cu_graph_update_launch(void *p) {  /* the general case: the graph's arguments set, then replayed */
    CudaState *s = p;
    int rc = cu.GraphExecKernelNodeSetParams(s->graph_exec, s->graph_node, &s->node_params);
    return rc ? rc : cu.GraphLaunch(s->graph_exec, s->stream);
}
static int cu_set_current(void *p) {
    return cu.CtxSetCurrent(((CudaState *)p)->ctx);
}
static int cu_get_current(void *p) {
    void *c;
    (void)p;
    return cu.CtxGetCurrent(&c);
}
static int cu_sync(void *p) {
    return cu.StreamSynchronize(((CudaState *)p)->stream);
}

#define LOAD(lib, table, field, name) \
    if (!(*(void **)&table.field = dlsym(lib, name))) { fprintf(stderr, "no %s\n", name); return; }

static void cuda_rows(void) {
    void *lib = dlopen("libcuda.so.1", RTLD_NOW);
    if (!lib) { fprintf(stderr, "no libcuda.so.1: %s\n", dlerror()); return; }
    LOAD(lib, cu, Init, "cuInit") LOAD(lib, cu, DeviceGet, "cuDeviceGet")
    LOAD(lib, cu, PrimaryCtxRetain, "cuDevicePrimaryCtxRetain") LOAD(lib, cu, CtxSetCurrent, "cuCtxSetCurrent")
    LOAD(lib, cu, CtxGetCurrent, "cuCtxGetCurrent") LOAD(lib, cu, CtxCreate, "cuCtxCreate_v2")
    LOAD(lib, cu, CtxSynchronize, "cuCtxSynchronize") LOAD(lib, cu, ModuleLoadData, "cuModuleLoadData")
    LOAD(lib, cu, ModuleGetFunction, "cuModuleGetFunction") LOAD(lib, cu, MemAlloc, "cuMemAlloc_v2")
    LOAD(lib, cu, MemcpyDtoH, "cuMemcpyDtoH_v2") LOAD(lib, cu, StreamCreate, "cuStreamCreate")
    LOAD(lib, cu, StreamSynchronize, "cuStreamSynchronize") LOAD(lib, cu, LaunchKernel, "cuLaunchKernel")
    LOAD(lib, cu, LaunchKernelEx, "cuLaunchKernelEx")
    CudaState s = {0};
    int dev, rc;
    void *module;
    if ((rc = cu.Init(0)) || (rc = cu.DeviceGet(&dev, 0)) || (rc = cu.PrimaryCtxRetain(&s.ctx, dev)) ||
        (rc = cu.CtxSetCurrent(s.ctx)) || (rc = cu.ModuleLoadData(&module, PTX)) ||
        (rc = cu.ModuleGetFunction(&s.func, module, "tiny")) || (rc = cu.MemAlloc(&s.x, 4))) {
        fprintf(stderr, "CUDA set-up failed: %d\n", rc);
        return;
    }
    s.n = 1;
    s.params[0] = &s.x;
    s.params[1] = &s.n;
    void *blocking, *nonblocking;
    cu.StreamCreate(&blocking, 0);
    cu.StreamCreate(&nonblocking, 1);
    struct { const char *name; void *stream; } streams[] = {
        {"blocking stream", blocking}, {"non-blocking stream", nonblocking}, {"legacy default stream", NULL}};
    for (int i = 0; i < 3; i++) {
        char row[128];
        s.stream = streams[i].stream;
        s.config = (CUlaunchConfig){1, 1, 1, 32, 1, 1, 0, s.stream, NULL, 0};
        snprintf(row, sizeof row, "cuLaunchKernel, %s", streams[i].name);
        report("cuda", row, per_launch(cu_launch, cu_sync, &s));
        snprintf(row, sizeof row, "cuCtxSetCurrent + cuLaunchKernel, %s", streams[i].name);
        report("cuda", row, per_launch(cu_launch_current, cu_sync, &s));
        snprintf(row, sizeof row, "cuLaunchKernelEx, %s", streams[i].name);
        report("cuda", row, per_launch(cu_launch_ex, cu_sync, &s));
        snprintf(row, sizeof row, "cuCtxSetCurrent + cuLaunchKernelEx, %s", streams[i].name);
        report("cuda", row, per_launch(cu_launch_ex_current, cu_sync, &s));
    }
    s.stream = blocking;
    /* A graph of the same launch, captured once and replayed: cuGraphLaunch takes 2 arguments and no
     * geometry; whether the driver's side of it is cheaper than a kernel launch is the question. */
    *(void **)&cu.StreamBeginCapture = dlsym(lib, "cuStreamBeginCapture_v2");
    *(void **)&cu.StreamEndCapture = dlsym(lib, "cuStreamEndCapture");
    *(void **)&cu.GraphInstantiateWithFlags = dlsym(lib, "cuGraphInstantiateWithFlags");
    *(void **)&cu.GraphLaunch = dlsym(lib, "cuGraphLaunch");
    if (cu.StreamBeginCapture && cu.StreamEndCapture && cu.GraphInstantiateWithFlags && cu.GraphLaunch) {
        void *graph = NULL;
        s.stream = blocking;
        rc = cu.StreamBeginCapture(blocking, 0 /* CU_STREAM_CAPTURE_MODE_GLOBAL */);
        if (!rc) rc = cu_launch(&s);
        int end = cu.StreamEndCapture(blocking, &graph);
        if (!rc) rc = end;
        if (!rc) rc = cu.GraphInstantiateWithFlags(&s.graph_exec, graph, 0);
        if (rc) report_rc("cuda", "capturing a one-launch graph failed: rc", rc);
        else report("cuda", "cuGraphLaunch of a one-launch graph, blocking stream",
                    per_launch(cu_graph_launch, cu_sync, &s));
        *(void **)&cu.GraphGetNodes = dlsym(lib, "cuGraphGetNodes");
        *(void **)&cu.GraphExecKernelNodeSetParams = dlsym(lib, "cuGraphExecKernelNodeSetParams_v2");
        size_t count = 1;
        if (!rc && cu.GraphGetNodes && cu.GraphExecKernelNodeSetParams &&
            !(rc = cu.GraphGetNodes(graph, &s.graph_node, &count)) && count == 1) {
            s.node_params = (KernelNodeParams){s.func, 1, 1, 1, 32, 1, 1, 0, s.params, NULL, NULL, NULL};
            report("cuda", "cuGraphExecKernelNodeSetParams + cuGraphLaunch, blocking stream",
                   per_launch(cu_graph_update_launch, cu_sync, &s));
        } else {
            report_rc("cuda", "the graph's kernel node for a parameter update: rc", rc);
        }
    }
    report("cuda", "cuCtxSetCurrent alone", per_launch(cu_set_current, cu_sync, &s));
    report("cuda", "cuCtxGetCurrent alone", per_launch(cu_get_current, cu_sync, &s));

    /* Experiments: does a launch of a CUfunction on its context's stream need that context current? */
    float value = 0;
    cu.StreamSynchronize(blocking);
    cu.MemcpyDtoH(&value, s.x, 4);
    float before = value;
    cu.CtxSetCurrent(NULL);
    report_rc("cuda", "launch with no current context: cuLaunchKernel rc", cu_launch(&s));
    report_rc("cuda", "launch with no current context: cuLaunchKernelEx rc", cu_launch_ex(&s));
    void *other;
    rc = cu.CtxCreate(&other, 0, dev);                 /* becomes current */
    report_rc("cuda", "cuCtxCreate of a second context rc", rc);
    if (!rc) {
        report_rc("cuda", "launch with another context current: cuLaunchKernel rc", cu_launch(&s));
        report_rc("cuda", "launch with another context current: cuLaunchKernelEx rc", cu_launch_ex(&s));
    }
    cu.CtxSetCurrent(s.ctx);
    cu.StreamSynchronize(blocking);
    cu.MemcpyDtoH(&value, s.x, 4);
    report("cuda", "launches that ran in the experiments (x after - x before)", value - before);
}

/* ---- OpenCL ----------------------------------------------------------------------------- */
static const char CL_SOURCE[] =
    "__kernel void tiny(__global float* x, int n) {\n"
    "    int i = get_global_id(0);\n    if (i < n) x[i] += 1.0f;\n}\n";

static struct {
    int (*GetPlatformIDs)(unsigned, void **, unsigned *);
    int (*GetPlatformInfo)(void *, unsigned, size_t, void *, size_t *);
    int (*GetDeviceIDs)(void *, uint64_t, unsigned, void **, unsigned *);
    void *(*CreateContext)(void *, unsigned, void **, void *, void *, int *);
    void *(*CreateCommandQueue)(void *, void *, uint64_t, int *);
    void *(*CreateProgramWithSource)(void *, unsigned, const char **, const size_t *, int *);
    int (*BuildProgram)(void *, unsigned, void **, const char *, void *, void *);
    void *(*CreateKernel)(void *, const char *, int *);
    void *(*CreateBuffer)(void *, uint64_t, size_t, void *, int *);
    int (*SetKernelArg)(void *, unsigned, size_t, const void *);
    int (*EnqueueNDRangeKernel)(void *, void *, unsigned, const size_t *, const size_t *, const size_t *, unsigned,
                                void **, void **);
    int (*ReleaseEvent)(void *);
    int (*Finish)(void *);
    int (*Flush)(void *);
    int (*GetDeviceInfo)(void *, unsigned, size_t, void *, size_t *);
    void *(*GetExtensionFunctionAddressForPlatform)(void *, const char *);
    void (*ReleaseCommandQueue)(void *);
} cl;

/* cl_khr_command_buffer (provisional; NULL where the platform lacks it) */
static struct {
    void *(*Create)(unsigned, void **, const uint64_t *, int *);
    int (*NDRange)(void *, void *, const void *, void *, unsigned, const size_t *, const size_t *, const size_t *,
                   unsigned, const void *, void *, void *);
    int (*Finalize)(void *);
    int (*Enqueue)(unsigned, void **, void *, unsigned, void **, void **);
} clcb;

typedef struct {
    void *queue, *kernel, *buffer, *last_event;
    size_t global, local;
    int n;
    void *command_buffer;
} ClState;

static int cl_command_buffer(void *p) {    /* the launch recorded once in a command buffer, replayed */
    ClState *s = p;
    return clcb.Enqueue(1, &s->queue, s->command_buffer, 0, NULL, NULL);
}

static int cl_launch(void *p) {
    ClState *s = p;
    return cl.EnqueueNDRangeKernel(s->queue, s->kernel, 1, NULL, &s->global, &s->local, 0, NULL, NULL);
}
static int cl_launch_any_local(void *p) {
    ClState *s = p;
    return cl.EnqueueNDRangeKernel(s->queue, s->kernel, 1, NULL, &s->global, NULL, 0, NULL, NULL);
}
static int cl_launch_event(void *p) {        /* pygpgpu's pattern: keep the last launch's event */
    ClState *s = p;
    void *event;
    int rc = cl.EnqueueNDRangeKernel(s->queue, s->kernel, 1, NULL, &s->global, &s->local, 0, NULL, &event);
    if (!rc) {
        if (s->last_event) cl.ReleaseEvent(s->last_event);
        s->last_event = event;
    }
    return rc;
}
static int cl_set_and_launch(void *p) {      /* PyOpenCL's knl(queue, ...) pattern: set every argument */
    ClState *s = p;
    int rc = cl.SetKernelArg(s->kernel, 0, sizeof(void *), &s->buffer);
    if (!rc) rc = cl.SetKernelArg(s->kernel, 1, sizeof(int), &s->n);
    return rc ? rc : cl_launch_event(p);
}
static int cl_sync(void *p) {
    ClState *s = p;
    int rc = cl.Finish(s->queue);
    if (s->last_event) cl.ReleaseEvent(s->last_event);
    s->last_event = NULL;
    return rc;
}

static void opencl_rows(void) {
    void *lib = dlopen("libOpenCL.so.1", RTLD_NOW);
    if (!lib) { fprintf(stderr, "no libOpenCL.so.1: %s\n", dlerror()); return; }
    LOAD(lib, cl, GetPlatformIDs, "clGetPlatformIDs") LOAD(lib, cl, GetPlatformInfo, "clGetPlatformInfo")
    LOAD(lib, cl, GetDeviceIDs, "clGetDeviceIDs") LOAD(lib, cl, CreateContext, "clCreateContext")
    LOAD(lib, cl, CreateCommandQueue, "clCreateCommandQueue")
    LOAD(lib, cl, CreateProgramWithSource, "clCreateProgramWithSource") LOAD(lib, cl, BuildProgram, "clBuildProgram")
    LOAD(lib, cl, CreateKernel, "clCreateKernel") LOAD(lib, cl, CreateBuffer, "clCreateBuffer")
    LOAD(lib, cl, SetKernelArg, "clSetKernelArg") LOAD(lib, cl, EnqueueNDRangeKernel, "clEnqueueNDRangeKernel")
    LOAD(lib, cl, ReleaseEvent, "clReleaseEvent") LOAD(lib, cl, Finish, "clFinish") LOAD(lib, cl, Flush, "clFlush")
    LOAD(lib, cl, GetDeviceInfo, "clGetDeviceInfo") LOAD(lib, cl, ReleaseCommandQueue, "clReleaseCommandQueue")
    LOAD(lib, cl, GetExtensionFunctionAddressForPlatform, "clGetExtensionFunctionAddressForPlatform")
    void *platforms[8];
    unsigned np = 0;
    if (cl.GetPlatformIDs(8, platforms, &np) || !np) { fprintf(stderr, "no OpenCL platform\n"); return; }
    for (unsigned p = 0; p < np; p++) {
        char name[256] = {0};
        cl.GetPlatformInfo(platforms[p], 0x0902 /* CL_PLATFORM_NAME */, sizeof name - 1, name, NULL);
        void *device;
        unsigned nd = 0;
        if (cl.GetDeviceIDs(platforms[p], 0xFFFFFFFF /* ALL */, 1, &device, &nd) || !nd) continue;
        int err = 0;
        ClState s = {0};
        void *ctx = cl.CreateContext(NULL, 1, &device, NULL, NULL, &err);
        if (!err) s.queue = cl.CreateCommandQueue(ctx, device, 0, &err);
        const char *src = CL_SOURCE;
        void *prog = err ? NULL : cl.CreateProgramWithSource(ctx, 1, &src, NULL, &err);
        if (!err) err = cl.BuildProgram(prog, 1, &device, "", NULL, NULL);
        if (!err) s.kernel = cl.CreateKernel(prog, "tiny", &err);
        if (!err) s.buffer = cl.CreateBuffer(ctx, 1 /* READ_WRITE */, 4, NULL, &err);
        s.n = 1;
        s.global = 32;
        s.local = 32;
        if (!err) err = cl.SetKernelArg(s.kernel, 0, sizeof(void *), &s.buffer);
        if (!err) err = cl.SetKernelArg(s.kernel, 1, sizeof(int), &s.n);
        if (err) { fprintf(stderr, "OpenCL set-up on %s failed: %d\n", name, err); continue; }
        char api[300], *c;
        snprintf(api, sizeof api, "opencl %s", name);
        for (c = api; *c; c++) if (*c == '"' || *c == '\\') *c = '\'';
        report(api, "clEnqueueNDRangeKernel, no event, local 32", per_launch(cl_launch, cl_sync, &s));
        s.global = s.local = 256;
        report(api, "clEnqueueNDRangeKernel, no event, global and local 256", per_launch(cl_launch, cl_sync, &s));
        s.global = s.local = 32;
        report(api, "clEnqueueNDRangeKernel, no event, local NULL", per_launch(cl_launch_any_local, cl_sync, &s));
        report(api, "clEnqueueNDRangeKernel with an event, the previous released",
               per_launch(cl_launch_event, cl_sync, &s));
        report(api, "clSetKernelArg x2 + the same with an event", per_launch(cl_set_and_launch, cl_sync, &s));
        ClState o = s;                 /* an out-of-order queue: the driver orders nothing */
        o.queue = cl.CreateCommandQueue(ctx, device, 1 /* OUT_OF_ORDER_EXEC_MODE_ENABLE */, &err);
        if (!err) {
            report(api, "clEnqueueNDRangeKernel, no event, out-of-order queue", per_launch(cl_launch, cl_sync, &o));
            cl.ReleaseCommandQueue(o.queue);
        }
        static char extensions[16384];
        extensions[0] = 0;
        cl.GetDeviceInfo(device, 0x1030 /* CL_DEVICE_EXTENSIONS */, sizeof extensions - 1, extensions, NULL);
        int has_cb = strstr(extensions, "cl_khr_command_buffer") != NULL;
        report_rc(api, "cl_khr_command_buffer offered (1/0)", has_cb);
        if (!has_cb) continue;
        *(void **)&clcb.Create = cl.GetExtensionFunctionAddressForPlatform(platforms[p], "clCreateCommandBufferKHR");
        *(void **)&clcb.NDRange = cl.GetExtensionFunctionAddressForPlatform(platforms[p], "clCommandNDRangeKernelKHR");
        *(void **)&clcb.Finalize = cl.GetExtensionFunctionAddressForPlatform(platforms[p], "clFinalizeCommandBufferKHR");
        *(void **)&clcb.Enqueue = cl.GetExtensionFunctionAddressForPlatform(platforms[p], "clEnqueueCommandBufferKHR");
        if (!clcb.Create || !clcb.NDRange || !clcb.Finalize || !clcb.Enqueue) continue;
        /* simultaneous use (the replay enqueued while the previous one is pending), then without */
        uint64_t props[] = {0x1293 /* CL_COMMAND_BUFFER_FLAGS_KHR */, 1 /* SIMULTANEOUS_USE */, 0};
        for (int simultaneous = 1; simultaneous >= 0; simultaneous--) {
            s.command_buffer = clcb.Create(1, &s.queue, simultaneous ? props : NULL, &err);
            if (!err) err = clcb.NDRange(s.command_buffer, NULL, NULL, s.kernel, 1, NULL, &s.global, &s.local, 0, NULL,
                                         NULL, NULL);
            if (!err) err = clcb.Finalize(s.command_buffer);
            if (err) { report_rc(api, simultaneous ? "command buffer, simultaneous use: rc" : "command buffer: rc", err); continue; }
            report(api, simultaneous ? "clEnqueueCommandBufferKHR replay, simultaneous use"
                                     : "clEnqueueCommandBufferKHR replay", per_launch(cl_command_buffer, cl_sync, &s));
        }
    }
}

int main(int argc, char **argv) {
    if (argc > 1) sscanf(argv[1], "%d", &CALLS);
    if (argc > 2) sscanf(argv[2], "%d", &ROUNDS);
    cuda_rows();
    opencl_rows();
    return 0;
}
