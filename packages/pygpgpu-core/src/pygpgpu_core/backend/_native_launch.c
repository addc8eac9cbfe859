/* The optional native launcher of the pointer-array launch ABI (CUDA, HIP): the warm path of
 * backend/launcher.py's generated launch() in C, built by `python -m pygpgpu build-native`
 * (backend/native.py). It does what launch() does on its happy path (look the geometry up, pack
 * the arguments, make the context current, launch, record the launch on the context) with no
 * Python frame and no ctypes call in between. Anything off that path (an unknown geometry, an
 * argument that does not convert, a closed kernel or buffer, a float past float32's range) is
 * handed to the Python launch() it was built from, which raises the error the user would get
 * without this module. A failed launch status goes to the kernel's launch_failed().
 *
 * Each call packs into its own stack memory, and the driver calls run without the GIL, as ctypes
 * calls do. Where the driver offers graphs (CUDA 12.0+), the launch is a one-kernel graph made on
 * the first launch: its node's arguments and geometry set (cuGraphExecKernelNodeSetParams copies
 * them), then cuGraphLaunch, which costs the driver less than cuLaunchKernelEx; a lock keeps one
 * thread's arguments with its own replay. A node update the driver refuses (a geometry past the
 * device's limits) is launched directly instead, so the error is the launch's own. release()
 * destroys the graph before the kernel's module is unloaded.
 *
 * OpenCL keeps a kernel's arguments in the kernel object (clSetKernelArg), so its launcher only
 * needs C for the repeat: RepeatLauncher enqueues again when every argument is the object set last
 * in its slot and the work size equals the last launch's (pygpgpu_opencl/_kernel.py's
 * generated launch(), whose fallback does everything else), under the same two locks.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <pythread.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifndef PYGPGPU_SOURCE_HASH   /* native.build() passes this file's hash: a module built from another is not used */
#define PYGPGPU_SOURCE_HASH ""
#endif

#define MAX_PARAMS 64      /* more parameters: backend/native.py keeps the Python launcher */
#define SLACK_POINTERS 64  /* a kernel whose parameters the driver cannot count: extra pointers, as args.py */

typedef int (*set_current_ptr_fn)(void *ctx);
typedef int (*set_current_int_fn)(int device);
typedef int (*launch_ex_fn)(const void *config, void *func, void **params, void **extra);
typedef int (*launch_fn)(void *func, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                         unsigned bz, unsigned shared, void *stream, void **params, void **extra);

/* CUDA_KERNEL_NODE_PARAMS_v2 of cuda.h (CUDA 12.0+) */
typedef struct {
    void *func;
    unsigned grid[3], block[3], shared;
    void **params, **extra;
    void *kern, *ctx;
} node_params;

typedef struct {   /* the graph functions, by address (all or none) */
    int (*create)(void **graph, unsigned flags);
    int (*add_kernel_node)(void **node, void *graph, void *const *deps, size_t ndeps, const node_params *params);
    int (*instantiate)(void **exec, void *graph, unsigned long long flags);
    int (*set_params)(void *exec, void *node, const node_params *params);
    int (*launch)(void *exec, void *stream);
    int (*exec_destroy)(void *exec);
    int (*destroy)(void *graph);
} graph_calls;

#define GRAPH_ATTEMPTS 3   /* graphs the driver refused to make: then launches go direct */

/* CUlaunchConfig of cuda.h (CUDA 12.0+); backend/launcher.py's LaunchConfig is the same layout. */
typedef struct {
    unsigned grid[3], block[3], shared;
    void *stream;
    void *attrs;
    unsigned num_attrs;
} launch_config;

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *dict;
    void *set_current;       /* NULL: no call */
    int token_is_int;        /* set_current takes a device ordinal (HIP) rather than a context */
    void *token;
    launch_ex_fn launch_ex;  /* NULL: launch through `launch`, 11 arguments */
    launch_fn launch;
    void **func_slot;        /* the kernel's handle, NULL once its program closed */
    void **stream_slot;
    int slack;               /* pointers past the parameters, to zeroed memory */
    Py_ssize_t nargs;
    char codes[MAX_PARAMS];  /* per argument: 'P' a buffer's .ptr, else a struct format character */
    PyObject *owners;        /* what the slots above point into */
    PyObject *geometry_cache, *fallback, *fail, *context, *name;
    PyObject *weakrefs;
    graph_calls graph;       /* graph.launch NULL: no graphs */
    PyThread_type_lock graph_lock;   /* guards the fields below and each update + replay */
    void *graph_handle, *graph_node, *graph_exec;
    int graph_refusals;      /* GRAPH_ATTEMPTS: no more graphs (refused, or released) */
} Launcher;

static PyObject *str_ptr, *str_last_launch;
static char slack_bytes[4096];

/* 0: packed; -1: not packable here (any Python error cleared): the fallback decides. */
static int pack_one(char code, PyObject *value, uint64_t *slot) {
    *slot = 0;
    if (code == 'P') {
        PyObject *ptr = PyObject_GetAttr(value, str_ptr);
        if (ptr == NULL) goto refused;
        if (!PyLong_CheckExact(ptr)) { Py_DECREF(ptr); return -1; }
        *slot = PyLong_AsUnsignedLongLong(ptr);
        Py_DECREF(ptr);
        if (*slot == (uint64_t)-1 && PyErr_Occurred()) goto refused;
        return 0;
    }
    if (code == 'f' || code == 'd' || code == 'e') {
        double v = PyFloat_AsDouble(value);
        if (v == -1.0 && PyErr_Occurred()) goto refused;
        /* as struct.pack_into: an overflow raises, and the Python launcher then casts the C way */
#if PY_VERSION_HEX >= 0x030B0000
        int rc = code == 'd' ? PyFloat_Pack8(v, (char *)slot, 1)
               : code == 'f' ? PyFloat_Pack4(v, (char *)slot, 1) : PyFloat_Pack2(v, (char *)slot, 1);
#else
        int rc = code == 'd' ? _PyFloat_Pack8(v, (unsigned char *)slot, 1)
               : code == 'f' ? _PyFloat_Pack4(v, (unsigned char *)slot, 1) : _PyFloat_Pack2(v, (unsigned char *)slot, 1);
#endif
        if (rc < 0) goto refused;
        return 0;
    }
    if (code == '?') {
        int truth = PyObject_IsTrue(value);
        if (truth < 0) goto refused;
        *slot = (uint64_t)truth;
        return 0;
    }
    PyObject *index = PyNumber_Index(value);   /* struct's integer codes take what has __index__ */
    if (index == NULL) goto refused;
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(index, &overflow);
    if (v == -1 && PyErr_Occurred()) { Py_DECREF(index); goto refused; }
    if (code == 'Q') {
        unsigned long long u = overflow > 0 ? PyLong_AsUnsignedLongLong(index) : (unsigned long long)v;
        Py_DECREF(index);
        if ((overflow > 0 && u == (unsigned long long)-1 && PyErr_Occurred()) || overflow < 0 || (!overflow && v < 0))
            goto refused;
        *slot = u;
        return 0;
    }
    Py_DECREF(index);
    if (overflow) return -1;
    switch (code) {
    case 'b': if (v < INT8_MIN || v > INT8_MAX) return -1; { int8_t x = (int8_t)v; memcpy(slot, &x, 1); } return 0;
    case 'B': if (v < 0 || v > UINT8_MAX) return -1; { uint8_t x = (uint8_t)v; memcpy(slot, &x, 1); } return 0;
    case 'h': if (v < INT16_MIN || v > INT16_MAX) return -1; { int16_t x = (int16_t)v; memcpy(slot, &x, 2); } return 0;
    case 'H': if (v < 0 || v > UINT16_MAX) return -1; { uint16_t x = (uint16_t)v; memcpy(slot, &x, 2); } return 0;
    case 'i': if (v < INT32_MIN || v > INT32_MAX) return -1; { int32_t x = (int32_t)v; memcpy(slot, &x, 4); } return 0;
    case 'I': if (v < 0 || v > UINT32_MAX) return -1; { uint32_t x = (uint32_t)v; memcpy(slot, &x, 4); } return 0;
    case 'q': memcpy(slot, &v, 8); return 0;
    default: return -1;
    }
refused:
    PyErr_Clear();
    return -1;
}

static PyObject *hand_over(Launcher *self, PyObject *const *args) {
    return PyObject_Vectorcall(self->fallback, args, 3, NULL);
}

static PyObject *launch_values(Launcher *self, PyObject *const *args, PyObject *items);

static void make_current(Launcher *self) {
    if (self->set_current == NULL) return;
    if (self->token_is_int) ((set_current_int_fn)self->set_current)((int)(intptr_t)self->token);
    else ((set_current_ptr_fn)self->set_current)(self->token);
}

#define GRAPH_UNUSED (-12345)   /* not a driver status: launch directly */

/* The launch through the launcher's graph (made here on first use); GRAPH_UNUSED where there is
 * none or the driver refuses this node update. Called without the GIL, under graph_lock. */
static int graph_launch(Launcher *self, const launch_config *config, void *func, void **params) {
    node_params node;
    memset(&node, 0, sizeof node);
    node.func = func;
    memcpy(node.grid, config->grid, sizeof node.grid);
    memcpy(node.block, config->block, sizeof node.block);
    node.params = params;
    if (self->graph_exec == NULL) {
        if (self->graph_refusals >= GRAPH_ATTEMPTS) return GRAPH_UNUSED;
        void *graph = NULL, *graph_node = NULL, *exec = NULL;
        int rc = self->graph.create(&graph, 0);
        if (!rc) rc = self->graph.add_kernel_node(&graph_node, graph, NULL, 0, &node);
        if (!rc) rc = self->graph.instantiate(&exec, graph, 0);
        if (rc) {
            if (graph != NULL) self->graph.destroy(graph);
            self->graph_refusals++;
            return GRAPH_UNUSED;
        }
        self->graph_handle = graph;
        self->graph_node = graph_node;
        self->graph_exec = exec;
    } else if (self->graph.set_params(self->graph_exec, self->graph_node, &node)) {
        return GRAPH_UNUSED;
    }
    return self->graph.launch(self->graph_exec, *self->stream_slot);
}

/* Destroy the graph (call with graph_lock held, or where no other reference exists). */
static void graph_free(Launcher *self) {
    if (self->graph_exec != NULL) self->graph.exec_destroy(self->graph_exec);
    if (self->graph_handle != NULL) self->graph.destroy(self->graph_handle);
    self->graph_exec = self->graph_handle = self->graph_node = NULL;
}

static int as_uint(PyObject *item, unsigned *out) {
    unsigned long v = PyLong_AsUnsignedLong(item);
    if (v == (unsigned long)-1 && PyErr_Occurred()) { PyErr_Clear(); return -1; }
    if (v > 0xFFFFFFFFul) return -1;
    *out = (unsigned)v;
    return 0;
}

/* launcher(global_size, local_size, args) */
static PyObject *launcher_call(PyObject *obj, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    Launcher *self = (Launcher *)obj;
    if (PyVectorcall_NARGS(nargsf) != 3 || kwnames != NULL)
        return PyObject_Vectorcall(self->fallback, args, nargsf, kwnames);
    PyObject *values = args[2];
    if (!PyTuple_CheckExact(values) || PyTuple_GET_SIZE(values) != self->nargs) {
        /* a list is packed from a tuple copy: a .ptr property run while packing may change the list */
        if (!PyList_CheckExact(values) || PyList_GET_SIZE(values) != self->nargs) return hand_over(self, args);
        PyObject *frozen = PyList_AsTuple(values);
        if (frozen == NULL) return NULL;
        PyObject *result = launch_values(self, args, frozen);
        Py_DECREF(frozen);
        return result;
    }
    return launch_values(self, args, values);
}

/* The launch of `items`, a tuple of the launcher's argument count (args[2] itself, or a copy of it). */
static PyObject *launch_values(Launcher *self, PyObject *const *args, PyObject *items) {
    Py_ssize_t n = self->nargs;
    PyObject *values = args[2];

    PyObject *key = PyTuple_Pack(2, args[0], args[1]);
    if (key == NULL) return NULL;
    PyObject *geom = PyDict_GetItemWithError(self->geometry_cache, key);  /* borrowed */
    Py_DECREF(key);
    if (geom == NULL) { PyErr_Clear(); return hand_over(self, args); }   /* not cached, or unhashable */
    launch_config config;
    memset(&config, 0, sizeof config);
    int usable = PyTuple_CheckExact(geom) && PyTuple_GET_SIZE(geom) == 6;   /* None: nothing to launch */
    Py_INCREF(geom);        /* (another thread may clear the cache) */
    for (int i = 0; usable && i < 3; i++)
        usable = !as_uint(PyTuple_GET_ITEM(geom, i), &config.grid[i]) && !as_uint(PyTuple_GET_ITEM(geom, i + 3), &config.block[i]);
    Py_DECREF(geom);
    if (!usable) return hand_over(self, args);

    uint64_t slots[MAX_PARAMS];
    void *params[MAX_PARAMS + SLACK_POINTERS];
    for (Py_ssize_t i = 0; i < n; i++) {
        if (pack_one(self->codes[i], PyTuple_GET_ITEM(items, i), &slots[i])) return hand_over(self, args);
        params[i] = &slots[i];
    }
    for (int i = 0; i < self->slack; i++) params[n + i] = slack_bytes;
    void *func = *self->func_slot;
    if (func == NULL) return hand_over(self, args);   /* its program closed: launch() raises */
    void *stream = *self->stream_slot;
    config.stream = stream;

    int rc;
    Py_BEGIN_ALLOW_THREADS
    make_current(self);
    rc = GRAPH_UNUSED;
    if (self->graph.launch != NULL) {
        PyThread_acquire_lock(self->graph_lock, WAIT_LOCK);
        rc = graph_launch(self, &config, func, params);
        PyThread_release_lock(self->graph_lock);
    }
    if (rc == GRAPH_UNUSED) {
        if (self->launch_ex != NULL)
            rc = self->launch_ex(&config, func, params, NULL);
        else
            rc = self->launch(func, config.grid[0], config.grid[1], config.grid[2], config.block[0], config.block[1],
                              config.block[2], 0, stream, params, NULL);
    }
    Py_END_ALLOW_THREADS
    if (rc) {
        PyObject *status = PyLong_FromLong(rc);
        if (status == NULL) return NULL;
        PyObject *result = PyObject_CallOneArg(self->fail, status);
        Py_DECREF(status);
        if (result == NULL) return NULL;
        Py_DECREF(result);
    }
    PyObject *last = PyTuple_Pack(2, self->name, values);
    if (last == NULL) return NULL;
    int set = PyObject_SetAttr(self->context, str_last_launch, last);
    Py_DECREF(last);
    if (set < 0) return NULL;
    Py_RETURN_NONE;
}

static int launcher_traverse(Launcher *self, visitproc visit, void *arg) {
    Py_VISIT(self->dict);
    Py_VISIT(self->owners);
    Py_VISIT(self->geometry_cache);
    Py_VISIT(self->fallback);
    Py_VISIT(self->fail);
    Py_VISIT(self->context);
    Py_VISIT(self->name);
    return 0;
}

static int launcher_clear(Launcher *self) {
    Py_CLEAR(self->dict);
    Py_CLEAR(self->owners);
    Py_CLEAR(self->geometry_cache);
    Py_CLEAR(self->fallback);
    Py_CLEAR(self->fail);
    Py_CLEAR(self->context);
    Py_CLEAR(self->name);
    return 0;
}

static void launcher_dealloc(Launcher *self) {
    PyObject_GC_UnTrack(self);
    if (self->weakrefs != NULL) PyObject_ClearWeakRefs((PyObject *)self);
    /* A NULL kernel handle: its program closed (release() ran then) or the process forked (the
     * graph is the parent's): no driver call. */
    if (self->graph_exec != NULL && *self->func_slot != NULL) {
        make_current(self);
        graph_free(self);
    }
    if (self->graph_lock != NULL) PyThread_free_lock(self->graph_lock);
    launcher_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* release(): destroy the graph now and launch directly from here on (the kernel's program is
 * closing: the graph must go before its module). */
static PyObject *launcher_release(PyObject *obj, PyObject *unused) {
    Launcher *self = (Launcher *)obj;
    (void)unused;
    if (self->graph.launch == NULL) Py_RETURN_NONE;
    Py_BEGIN_ALLOW_THREADS
    PyThread_acquire_lock(self->graph_lock, WAIT_LOCK);
    if (self->graph_exec != NULL && *self->func_slot != NULL) {
        make_current(self);
        graph_free(self);
    }
    self->graph_exec = self->graph_handle = self->graph_node = NULL;
    self->graph_refusals = GRAPH_ATTEMPTS;
    PyThread_release_lock(self->graph_lock);
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

/* graph_state(): "none" (no graph functions), "unmade", "made" or "off" (refused or released). */
static PyObject *launcher_graph_state(PyObject *obj, PyObject *unused) {
    Launcher *self = (Launcher *)obj;
    (void)unused;
    const char *state = self->graph.launch == NULL ? "none" : self->graph_exec != NULL ? "made"
                      : self->graph_refusals >= GRAPH_ATTEMPTS ? "off" : "unmade";
    return PyUnicode_FromString(state);
}

static PyMethodDef launcher_methods[] = {
    {"release", launcher_release, METH_NOARGS, "destroy the launcher's graph (before its module is unloaded)"},
    {"graph_state", launcher_graph_state, METH_NOARGS, "none, unmade, made or off"},
    {NULL, NULL, 0, NULL},
};

/* `again` is the launcher itself: packing on the stack costs less than checking what was kept. */
static PyObject *launcher_again(PyObject *self, void *closure) {
    (void)closure;
    return Py_NewRef(self);
}

static PyGetSetDef launcher_getset[] = {
    {"again", launcher_again, NULL, "the same launcher (a memo hit needs nothing else)", NULL},
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject LauncherType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "pygpgpu_core.backend._native_launch.Launcher",
    .tp_basicsize = sizeof(Launcher),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_vectorcall_offset = offsetof(Launcher, vectorcall),
    .tp_dictoffset = offsetof(Launcher, dict),
    .tp_weaklistoffset = offsetof(Launcher, weakrefs),
    .tp_methods = launcher_methods,
    .tp_call = PyVectorcall_Call,
    .tp_traverse = (traverseproc)launcher_traverse,
    .tp_clear = (inquiry)launcher_clear,
    .tp_dealloc = (destructor)launcher_dealloc,
    .tp_getset = launcher_getset,
    .tp_doc = "launcher(global_size, local_size, args): a warm launch without Python frames",
};

/* make(set_current, token_is_int, token, launch_ex, launch, func_slot, stream_slot, slack, codes,
 *      owners, geometry_cache, fallback, fail, context, name, graph): addresses as ints (0: none);
 * graph: () or the addresses of cuGraphCreate, cuGraphAddKernelNode_v2, cuGraphInstantiateWithFlags,
 * cuGraphExecKernelNodeSetParams_v2, cuGraphLaunch, cuGraphExecDestroy, cuGraphDestroy. */
static PyObject *make(PyObject *module, PyObject *args) {
    (void)module;
    unsigned long long set_current, token, launch_ex, launch, func_slot, stream_slot;
    int token_is_int, slack;
    const char *codes;
    Py_ssize_t ncodes;
    PyObject *owners, *geometry_cache, *fallback, *fail, *context, *name, *graph;
    if (!PyArg_ParseTuple(args, "KpKKKKKiy#OO!OOOUO!:make", &set_current, &token_is_int, &token, &launch_ex, &launch,
                          &func_slot, &stream_slot, &slack, &codes, &ncodes, &owners, &PyDict_Type, &geometry_cache,
                          &fallback, &fail, &context, &name, &PyTuple_Type, &graph))
        return NULL;
    void *graph_fns[7] = {NULL};
    Py_ssize_t ngraph = PyTuple_GET_SIZE(graph);
    if (ngraph != 0 && ngraph != 7) {
        PyErr_SetString(PyExc_ValueError, "make(): graph is () or 7 function addresses");
        return NULL;
    }
    for (Py_ssize_t i = 0; i < ngraph; i++) {
        graph_fns[i] = PyLong_AsVoidPtr(PyTuple_GET_ITEM(graph, i));
        if (graph_fns[i] == NULL) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "make(): a graph function address is 0");
            return NULL;
        }
    }
    if (ncodes > MAX_PARAMS || slack < 0 || slack > SLACK_POINTERS || !func_slot || !stream_slot || (!launch_ex && !launch)) {
        PyErr_SetString(PyExc_ValueError, "make(): more than 64 parameters, or a missing slot or launch function");
        return NULL;
    }
    for (Py_ssize_t i = 0; i < ncodes; i++)
        if (!strchr("PbBhHiIqQefd?", codes[i]) || codes[i] == 0) {
            PyErr_Format(PyExc_ValueError, "make(): no native packing for argument code %c", codes[i]);
            return NULL;
        }
    Launcher *self = PyObject_GC_New(Launcher, &LauncherType);
    if (self == NULL) return NULL;
    self->vectorcall = launcher_call;
    self->dict = NULL;
    self->set_current = (void *)(uintptr_t)set_current;
    self->token_is_int = token_is_int;
    self->token = (void *)(uintptr_t)token;
    self->launch_ex = (launch_ex_fn)(uintptr_t)launch_ex;
    self->launch = (launch_fn)(uintptr_t)launch;
    self->func_slot = (void **)(uintptr_t)func_slot;
    self->stream_slot = (void **)(uintptr_t)stream_slot;
    self->slack = slack;
    self->nargs = ncodes;
    memset(self->codes, 0, sizeof self->codes);
    memcpy(self->codes, codes, (size_t)ncodes);
    self->owners = Py_NewRef(owners);
    self->geometry_cache = Py_NewRef(geometry_cache);
    self->fallback = Py_NewRef(fallback);
    self->fail = Py_NewRef(fail);
    self->context = Py_NewRef(context);
    self->name = Py_NewRef(name);
    self->weakrefs = NULL;
    memset(&self->graph, 0, sizeof self->graph);
    self->graph_lock = NULL;
    self->graph_handle = self->graph_node = self->graph_exec = NULL;
    self->graph_refusals = 0;
    if (ngraph) {
        self->graph_lock = PyThread_allocate_lock();
        if (self->graph_lock == NULL) { Py_DECREF(self); return PyErr_NoMemory(); }
        memcpy(&self->graph, graph_fns, sizeof graph_fns);
    }
    PyObject_GC_Track(self);
    return (PyObject *)self;
}


/* ---- OpenCL: the repeat of a launch whose arguments are all set already ---------------------- */

typedef int32_t (*enqueue_fn)(void *queue, void *kernel, uint32_t dims, const size_t *offset, const size_t *global,
                              const size_t *local, uint32_t nwait, const void *wait, void **event);
typedef int32_t (*release_event_fn)(void *event);

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *dict;
    enqueue_fn enqueue;
    release_event_fn release_event;
    int events;              /* keep each launch's event as the context's last (else mark it untracked) */
    PyObject *buffers;       /* bytes: per argument 1 where it is a Buffer (checked for closing) */
    PyObject *kernel, *context, *last, *work;
    PyObject *lock_acquire, *lock_release, *queue_acquire, *queue_release;   /* bound methods */
    PyObject *fallback, *fail, *name;
    PyObject *weakrefs;
    unsigned long long repeats;   /* launches done here (not by the fallback): tests, benchmarks */
} RepeatLauncher;

static PyObject *str_handle, *str_queue_handle, *str_key_g, *str_key_l, *str_total, *str_dims, *str_gws, *str_lws,
                *str_last_event, *str_untracked;

static int call_lock(PyObject *bound) {   /* lock.acquire() or .release(); -1 with an exception set */
    PyObject *r = PyObject_CallNoArgs(bound);
    if (r == NULL) return -1;
    Py_DECREF(r);
    return 0;
}

/* lock.release(), keeping an exception already raised (the launch's own error) */
static int call_unlock(PyObject *bound) {
#if PY_VERSION_HEX >= 0x030C0000
    PyObject *pending = PyErr_GetRaisedException();
    int rc = call_lock(bound);
    if (pending != NULL) {
        if (rc == 0) PyErr_SetRaisedException(pending);
        else Py_DECREF(pending);
    }
#else
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);
    int rc = call_lock(bound);
    if (type != NULL) {
        if (rc == 0) PyErr_Restore(type, value, traceback);
        else { Py_DECREF(type); Py_XDECREF(value); Py_XDECREF(traceback); }
    }
#endif
    return rc;
}

/* 1: `obj.name is expected`; 0: not; -1: error. */
static int attr_is(PyObject *obj, PyObject *name, PyObject *expected) {
    PyObject *v = PyObject_GetAttr(obj, name);
    if (v == NULL) return -1;
    int same = v == expected;
    Py_DECREF(v);
    return same;
}

/* Whether a work size is the last launch's: the object in `work.name`, or a tuple or int equal
 * to it (the memo of a @kernel call keeps its own tuple; _WorkSizeCache.changed compares so). */
static int same_size(PyObject *work, PyObject *name, PyObject *size) {
    PyObject *last = PyObject_GetAttr(work, name);
    if (last == NULL) { PyErr_Clear(); return 0; }
    int same = last == size;
    if (!same && (PyTuple_CheckExact(size) || PyLong_CheckExact(size)) && Py_TYPE(last) == Py_TYPE(size)) {
        same = PyObject_RichCompareBool(size, last, Py_EQ) == 1;
        PyErr_Clear();
    }
    Py_DECREF(last);
    return same;
}

/* The handle in `obj.name` (an int), NULL where it is None or not an int (errors cleared). */
static void *handle_attr(PyObject *obj, PyObject *name) {
    PyObject *v = PyObject_GetAttr(obj, name);
    if (v == NULL) { PyErr_Clear(); return NULL; }
    void *h = PyLong_CheckExact(v) ? PyLong_AsVoidPtr(v) : NULL;
    Py_DECREF(v);
    if (h == NULL) PyErr_Clear();
    return h;
}

/* The address of a ctypes array in `obj.name` (None: NULL); view->obj set when one is held. */
static int array_attr(PyObject *obj, PyObject *name, Py_buffer *view, const size_t **out) {
    view->obj = NULL;
    *out = NULL;
    PyObject *v = PyObject_GetAttr(obj, name);
    if (v == NULL) return -1;
    int rc = 0;
    if (v != Py_None) {
        rc = PyObject_GetBuffer(v, view, PyBUF_SIMPLE);
        if (rc == 0) *out = (const size_t *)view->buf;
    }
    Py_DECREF(v);
    return rc;
}

/* 1: launched; 0: not the repeat of the last launch (nothing done); -1: an exception is set.
 * Called with the kernel's lock held. */
static int repeat_locked(RepeatLauncher *self, PyObject *const *args, PyObject *items) {
    Py_ssize_t n = PyTuple_GET_SIZE(items);
    if (!PyList_CheckExact(self->last) || PyList_GET_SIZE(self->last) != n) return 0;
    const char *buffers = PyBytes_AS_STRING(self->buffers);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *value = PyTuple_GET_ITEM(items, i);
        if (value != PyList_GET_ITEM(self->last, i)) return 0;
        if (buffers[i] && value != Py_None) {
            int closed = attr_is(value, str_handle, Py_None);
            if (closed) { PyErr_Clear(); return 0; }    /* closed since it was set: the fallback raises */
        }
    }
    if (!same_size(self->work, str_key_g, args[0]) || !same_size(self->work, str_key_l, args[1])) return 0;
    PyObject *total = PyObject_GetAttr(self->work, str_total);
    if (total == NULL) { PyErr_Clear(); return 0; }
    int nothing = !PyLong_CheckExact(total) || !PyObject_IsTrue(total);
    Py_DECREF(total);
    if (nothing) return 0;
    void *kernel = handle_attr(self->kernel, str_handle);
    void *queue = handle_attr(self->context, str_queue_handle);
    if (kernel == NULL || queue == NULL) return 0;     /* closed (or forked): the fallback raises */
    PyObject *dims_obj = PyObject_GetAttr(self->work, str_dims);
    if (dims_obj == NULL) { PyErr_Clear(); return 0; }
    unsigned long dims = PyLong_AsUnsignedLong(dims_obj);
    Py_DECREF(dims_obj);
    if (PyErr_Occurred() || dims < 1 || dims > 3) { PyErr_Clear(); return 0; }
    Py_buffer gws_view, lws_view;
    const size_t *gws, *lws;
    if (array_attr(self->work, str_gws, &gws_view, &gws) || gws == NULL) {
        PyErr_Clear();
        if (gws_view.obj != NULL) PyBuffer_Release(&gws_view);
        return 0;
    }
    if (array_attr(self->work, str_lws, &lws_view, &lws)) {
        PyErr_Clear();
        PyBuffer_Release(&gws_view);
        return 0;
    }

    int launched = 1;
    if (call_lock(self->queue_acquire)) { launched = -1; goto done; }
    void *event = NULL;
    int32_t status;
    Py_BEGIN_ALLOW_THREADS
    status = self->enqueue(queue, kernel, (uint32_t)dims, NULL, gws, lws, 0, NULL, self->events ? &event : NULL);
    Py_END_ALLOW_THREADS
    if (!status) {   /* the launch becomes the queue's last command (as _wait.track) */
        if (self->events) {
            PyObject *previous = PyObject_GetAttr(self->context, str_last_event);
            PyObject *now = PyLong_FromVoidPtr(event);
            int set = now == NULL ? -1 : PyObject_SetAttr(self->context, str_last_event, now);
            Py_XDECREF(now);
            if (set < 0) {                 /* (out of memory) the event stays unreleased */
                Py_XDECREF(previous);
                launched = -1;
            } else if (previous != NULL) {
                void *old = PyLong_Check(previous) ? PyLong_AsVoidPtr(previous) : NULL;
                Py_DECREF(previous);
                if (old != NULL) self->release_event(old);
                PyErr_Clear();
            } else {
                PyErr_Clear();
            }
        } else if (PyObject_SetAttr(self->context, str_untracked, Py_True) < 0) {
            launched = -1;
        }
    }
    if (call_unlock(self->queue_release)) launched = -1;
    if (launched == 1 && status) {       /* raises the error the Python launcher raises */
        PyObject *code = PyLong_FromLong(status);
        PyObject *r = code == NULL ? NULL : PyObject_CallOneArg(self->fail, code);
        Py_XDECREF(code);
        Py_XDECREF(r);
        launched = r == NULL ? -1 : 1;
    }
    if (launched == 1) {
        self->repeats++;
        PyObject *record = PyTuple_Pack(2, self->name, args[2]);
        if (record == NULL || PyObject_SetAttr(self->context, str_last_launch, record) < 0) launched = -1;
        Py_XDECREF(record);
    }
done:
    PyBuffer_Release(&gws_view);
    if (lws_view.obj != NULL) PyBuffer_Release(&lws_view);
    return launched;
}

/* launcher(global_size, local_size, args) */
static PyObject *repeat_call(PyObject *obj, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    RepeatLauncher *self = (RepeatLauncher *)obj;
    if (PyVectorcall_NARGS(nargsf) != 3 || kwnames != NULL)
        return PyObject_Vectorcall(self->fallback, args, nargsf, kwnames);
    PyObject *values = args[2], *items;
    Py_ssize_t n = PyBytes_GET_SIZE(self->buffers);
    if (PyTuple_CheckExact(values) && PyTuple_GET_SIZE(values) == n) {
        items = Py_NewRef(values);
    } else if (PyList_CheckExact(values) && PyList_GET_SIZE(values) == n) {
        items = PyList_AsTuple(values);   /* as the Python launcher unpacks it once */
        if (items == NULL) return NULL;
    } else {
        return PyObject_Vectorcall(self->fallback, args, 3, NULL);
    }
    int launched = -1;
    if (!call_lock(self->lock_acquire)) {
        launched = repeat_locked(self, args, items);
        if (call_unlock(self->lock_release)) launched = -1;
    }
    Py_DECREF(items);
    if (launched < 0) return NULL;
    if (launched == 0) return PyObject_Vectorcall(self->fallback, args, 3, NULL);
    Py_RETURN_NONE;
}

static int repeat_traverse(RepeatLauncher *self, visitproc visit, void *arg) {
    Py_VISIT(self->dict);
    Py_VISIT(self->buffers);
    Py_VISIT(self->kernel);
    Py_VISIT(self->context);
    Py_VISIT(self->last);
    Py_VISIT(self->work);
    Py_VISIT(self->lock_acquire);
    Py_VISIT(self->lock_release);
    Py_VISIT(self->queue_acquire);
    Py_VISIT(self->queue_release);
    Py_VISIT(self->fallback);
    Py_VISIT(self->fail);
    Py_VISIT(self->name);
    return 0;
}

static int repeat_clear(RepeatLauncher *self) {
    Py_CLEAR(self->dict);
    Py_CLEAR(self->buffers);
    Py_CLEAR(self->kernel);
    Py_CLEAR(self->context);
    Py_CLEAR(self->last);
    Py_CLEAR(self->work);
    Py_CLEAR(self->lock_acquire);
    Py_CLEAR(self->lock_release);
    Py_CLEAR(self->queue_acquire);
    Py_CLEAR(self->queue_release);
    Py_CLEAR(self->fallback);
    Py_CLEAR(self->fail);
    Py_CLEAR(self->name);
    return 0;
}

static void repeat_dealloc(RepeatLauncher *self) {
    PyObject_GC_UnTrack(self);
    if (self->weakrefs != NULL) PyObject_ClearWeakRefs((PyObject *)self);
    repeat_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *repeat_count(PyObject *self, void *closure) {
    (void)closure;
    return PyLong_FromUnsignedLongLong(((RepeatLauncher *)self)->repeats);
}

static PyGetSetDef repeat_getset[] = {
    {"repeats", repeat_count, NULL, "how many launches were repeated in C", NULL},
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject RepeatLauncherType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "pygpgpu_core.backend._native_launch.RepeatLauncher",
    .tp_basicsize = sizeof(RepeatLauncher),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_vectorcall_offset = offsetof(RepeatLauncher, vectorcall),
    .tp_dictoffset = offsetof(RepeatLauncher, dict),
    .tp_weaklistoffset = offsetof(RepeatLauncher, weakrefs),
    .tp_call = PyVectorcall_Call,
    .tp_traverse = (traverseproc)repeat_traverse,
    .tp_clear = (inquiry)repeat_clear,
    .tp_dealloc = (destructor)repeat_dealloc,
    .tp_getset = repeat_getset,
    .tp_doc = "launcher(global_size, local_size, args): an OpenCL launch repeated without Python frames",
};

/* make_repeat(enqueue, release_event, events, buffers, kernel, context, last, work, lock, queue_lock,
 *             fallback, fail, name): clEnqueueNDRangeKernel and clReleaseEvent by address. */
static PyObject *make_repeat(PyObject *module, PyObject *args) {
    (void)module;
    unsigned long long enqueue, release_event;
    int events;
    PyObject *buffers, *kernel, *context, *last, *work, *lock, *queue_lock, *fallback, *fail, *name;
    if (!PyArg_ParseTuple(args, "KKpO!OOO!OOOOOU:make_repeat", &enqueue, &release_event, &events, &PyBytes_Type,
                          &buffers, &kernel, &context, &PyList_Type, &last, &work, &lock, &queue_lock, &fallback,
                          &fail, &name))
        return NULL;
    if (!enqueue || !release_event) {
        PyErr_SetString(PyExc_ValueError, "make_repeat(): a function address is 0");
        return NULL;
    }
    RepeatLauncher *self = PyObject_GC_New(RepeatLauncher, &RepeatLauncherType);
    if (self == NULL) return NULL;
    self->vectorcall = repeat_call;
    self->dict = self->weakrefs = NULL;
    self->repeats = 0;
    self->enqueue = (enqueue_fn)(uintptr_t)enqueue;
    self->release_event = (release_event_fn)(uintptr_t)release_event;
    self->events = events;
    self->buffers = Py_NewRef(buffers);
    self->kernel = Py_NewRef(kernel);
    self->context = Py_NewRef(context);
    self->last = Py_NewRef(last);
    self->work = Py_NewRef(work);
    self->fallback = Py_NewRef(fallback);
    self->fail = Py_NewRef(fail);
    self->name = Py_NewRef(name);
    self->lock_acquire = PyObject_GetAttrString(lock, "acquire");
    self->lock_release = PyObject_GetAttrString(lock, "release");
    self->queue_acquire = PyObject_GetAttrString(queue_lock, "acquire");
    self->queue_release = PyObject_GetAttrString(queue_lock, "release");
    PyObject_GC_Track(self);
    if (!self->lock_acquire || !self->lock_release || !self->queue_acquire || !self->queue_release) {
        Py_DECREF(self);
        return NULL;
    }
    return (PyObject *)self;
}

static PyMethodDef methods[] = {
    {"make", make, METH_VARARGS, "a native launcher (see backend/native.py)"},
    {"make_repeat", make_repeat, METH_VARARGS, "a native OpenCL repeat launcher (see backend/native.py)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "_native_launch", "the native warm launch of the CUDA/HIP driver kit and the OpenCL repeat launch", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__native_launch(void) {
    if (PyType_Ready(&LauncherType) < 0 || PyType_Ready(&RepeatLauncherType) < 0) return NULL;
    const char *names[] = {"ptr", "_last_launch", "_handle", "_queue_handle", "key_g", "key_l", "total", "dims", "gws",
                           "lws", "_last_event", "_untracked"};
    PyObject **interned[] = {&str_ptr, &str_last_launch, &str_handle, &str_queue_handle, &str_key_g, &str_key_l,
                             &str_total, &str_dims, &str_gws, &str_lws, &str_last_event, &str_untracked};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if ((*interned[i] = PyUnicode_InternFromString(names[i])) == NULL) return NULL;
    PyObject *module = PyModule_Create(&module_def);
    if (module == NULL) return NULL;
    if (PyModule_AddStringConstant(module, "SOURCE_HASH", PYGPGPU_SOURCE_HASH) < 0
        || PyModule_AddIntConstant(module, "MAX_PARAMS", MAX_PARAMS) < 0) { Py_DECREF(module); return NULL; }
    return module;
}
