"""CUDA benchmark (issue 8): the same workloads through PyGPGPU's low-level API, CuPy
RawKernel, Numba-CUDA and PyGPGPU's @kernel, side by side in one process.

    python benchmarks/bench_cuda.py [results.json] [--quick] [--rounds=N]

Every column is guarded: one that fails prints its error and the others still run.
Times are the best of several repeats of back-to-back launches followed by one
synchronisation (kernel time plus any launch overhead the GPU cannot hide), in ms.
A workload's columns run interleaved, N passes (default 3) in rotated order, so that the
GPU's clock drift does not favour one of them.
"""
from __future__ import annotations

import json
import math
import os
import platform
import sys
import tempfile
import time
import traceback
import uuid

import numpy as np

try:  # @kernel functions resolve names in this module's globals, so gpu.* must live here
    from pygpgpu_core import gpu
except ImportError:
    gpu = None

QUICK = "--quick" in sys.argv
# passes over a workload's columns (measure()); --rounds=N changes it
ROUNDS = next((int(a.split("=", 1)[1]) for a in sys.argv[1:] if a.startswith("--rounds=")), 1 if QUICK else 3)
ARGS = [a for a in sys.argv[1:] if not a.startswith("--")]
JSON_PATH = ARGS[0] if ARGS else None

# ---------------------------------------------------------------------------------------------
# Problem sizes (issue 8); --quick shrinks them to check that every column starts.
N_SAXPY = (1 << 20) if QUICK else 64 << 20
N_STENCIL = 1024 if QUICK else 8192
N_BODY = 4096 if QUICK else 32 * 1024
N_HIST = (1 << 20) if QUICK else 64 << 20
N_MANDEL = 512 if QUICK else 4096
MAXIT = 256
N_MATMUL = 256 if QUICK else 2048

CUDA_SOURCE = r"""
extern "C" __global__ void saxpy(const float* x, const float* y, float* out, float a, long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a * x[i] + y[i];
}
extern "C" __global__ void stencil(const float* u, float* out, int n) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= n || y >= n) return;
    if (x == 0 || y == 0 || x == n - 1 || y == n - 1) { out[y * n + x] = u[y * n + x]; return; }
    out[y * n + x] = 0.25f * (u[(y - 1) * n + x] + u[(y + 1) * n + x] + u[y * n + x - 1] + u[y * n + x + 1]);
}
extern "C" __global__ void nbody(const float4* pos, float4* acc, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float4 p = pos[i];
    float ax = 0.0f, ay = 0.0f, az = 0.0f;
    for (int j = 0; j < n; ++j) {
        float4 q = pos[j];
        float dx = q.x - p.x, dy = q.y - p.y, dz = q.z - p.z;
        float r2 = dx * dx + dy * dy + dz * dz + 1e-3f;
        float inv = rsqrtf(r2);
        float s = q.w * inv * inv * inv;
        ax += dx * s; ay += dy * s; az += dz * s;
    }
    acc[i] = make_float4(ax, ay, az, 0.0f);
}
// n-body as written with 1/sqrt: the issue-17 fast-math pair, built with --use_fast_math
extern "C" __global__ void nbody_div(const float4* pos, float4* acc, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float4 p = pos[i];
    float ax = 0.0f, ay = 0.0f, az = 0.0f;
    for (int j = 0; j < n; ++j) {
        float4 q = pos[j];
        float dx = q.x - p.x, dy = q.y - p.y, dz = q.z - p.z;
        float r2 = dx * dx + dy * dy + dz * dz + 1e-3f;
        float inv = 1.0f / sqrtf(r2);
        float s = q.w * inv * inv * inv;
        ax += dx * s; ay += dy * s; az += dz * s;
    }
    acc[i] = make_float4(ax, ay, az, 0.0f);
}
extern "C" __global__ void histogram(const unsigned int* data, unsigned int* bins, long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&bins[data[i] & 255u], 1u);
}
extern "C" __global__ void mandelbrot(int* out, int w, int h, int maxit) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    float cr = -2.0f + 3.0f * x / w, ci = -1.5f + 3.0f * y / h;
    float zr = 0.0f, zi = 0.0f;
    int it = 0;
    while (it < maxit && zr * zr + zi * zi <= 4.0f) {
        float t = zr * zr - zi * zi + cr;
        zi = 2.0f * zr * zi + ci;
        zr = t;
        ++it;
    }
    out[y * w + x] = it;
}
extern "C" __global__ void matmul(const float* a, const float* b, float* c, int n) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= n || col >= n) return;
    float acc = 0.0f;
    for (int k = 0; k < n; ++k) acc += a[row * n + k] * b[k * n + col];
    c[row * n + col] = acc;
}
extern "C" __global__ void tiny(float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += 1.0f;
}
"""

ROWS: list[dict] = []
PENDING: list[tuple] = []     # (workload, column, fn, metric) not yet measured


def log(msg: str) -> None:
    print(msg, flush=True)


def timeit(run, sync, reps: int, repeats: int = 5) -> float:
    """Best seconds per call over ``repeats`` batches of ``reps`` back-to-back calls."""
    run()
    sync()
    best = math.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(reps):
            run()
        sync()
        best = min(best, (time.perf_counter() - t0) / reps)
    return best


def first_transfer(copy, like: np.ndarray, repeats: int = 3) -> float:
    """Best seconds of ``copy(a)`` over arrays ``a`` that were never transferred before."""
    best = math.inf
    for _ in range(repeats):
        a = np.ones_like(like)                  # touched, so page faults are not timed
        t0 = time.perf_counter()
        copy(a)
        best = min(best, time.perf_counter() - t0)
    return best


def record(workload: str, column: str, fn, metric=None) -> None:
    """One column of one workload, run by the next ``measure()``: ``fn()`` gives (seconds, correct)."""
    PENDING.append((workload, column, fn, metric))


def measure(rounds: int = ROUNDS) -> None:
    """Run the columns recorded since the last call ``rounds`` times, each pass in a rotated order,
    and keep each column's best time. Interleaved, a drift of the GPU's clocks (which moved
    sequentially measured ratios by up to 4% between runs) falls on every column alike. A column
    that raises is printed and recorded, never fatal, and not run again."""
    pending = PENDING[:]
    PENDING.clear()
    best: dict = {}
    errors: dict = {}
    for r in range(rounds):
        shift = r % max(len(pending), 1)
        for workload, column, fn, _ in pending[shift:] + pending[:shift]:
            if (workload, column) in errors:
                continue
            try:
                seconds, ok = fn()
            except Exception as exc:  # a failing column must not stop the others
                errors[workload, column] = exc
                if os.environ.get("BENCH_TRACEBACK"):
                    traceback.print_exc()
                continue
            t, all_ok = best.get((workload, column), (math.inf, True))
            best[workload, column] = (min(t, seconds), all_ok and bool(ok))
    for workload, column, _, metric in pending:
        if (workload, column) in errors:
            exc = errors[workload, column]
            row = {"workload": workload, "column": column, "error": f"{type(exc).__name__}: {exc}"}
            log(f"  {workload:<28} {column:<12} FAILED {type(exc).__name__}: {str(exc).splitlines()[0][:200]}")
        else:
            seconds, ok = best[workload, column]
            row = {"workload": workload, "column": column, "ms": seconds * 1e3, "correct": ok}
            if metric:
                row.update(metric(seconds))
            extra = "".join(f" {k}={v:.1f}" for k, v in row.items() if k not in ("workload", "column", "ms", "correct"))
            log(f"  {workload:<28} {column:<12} {seconds * 1e3:10.4f} ms{extra}{'' if ok else '  WRONG RESULT'}")
        ROWS.append(row)


# ---------------------------------------------------------------------------------------------
# Frameworks (each optional)
def load_pygpgpu():
    from pygpgpu_core import registry

    device = registry.backend_devices("cuda")[0]
    ctx = device.context()
    # CuPy compiles every RawKernel/RawModule with -ftz=true (denormals flushed to zero); the
    # same flag here keeps the handwritten columns like-for-like (it is worth ~7% on n-body).
    return device, ctx, ctx.program(CUDA_SOURCE, ["-ftz=true"], name="bench.cu")


def load_cupy():
    import cupy

    module = cupy.RawModule(code=CUDA_SOURCE)
    return cupy, module


def load_numba():
    np.row_stack = np.vstack  # numba 0.68 on numpy 2.5 still refers to it
    from numba import cuda

    return cuda


def load_translate():
    from pygpgpu_translate import kernel

    try:
        from pygpgpu_core import gnp
    except ImportError:
        gnp = None
    return kernel, gnp


def optional(name, loader):
    try:
        value = loader()
        log(f"[{name}] ready")
        return value
    except Exception as exc:
        log(f"[{name}] unavailable: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")
        return None


# ---------------------------------------------------------------------------------------------
def main() -> None:
    log(f"bench_cuda.py {'(quick sizes)' if QUICK else ''} python {platform.python_version()} numpy {np.__version__}")
    started = time.perf_counter()
    pg = optional("pygpgpu low-level", load_pygpgpu)
    cp_mod = optional("cupy", load_cupy)
    # the handwritten kernels built with --use_fast_math: the peers of @kernel(fastmath=True)
    pg_fast = optional("pygpgpu low-level --use_fast_math",
                       lambda: pg[1].program(CUDA_SOURCE, ["--use_fast_math"], name="bench_fast.cu")) if pg else None
    # the handwritten kernels built without -ftz: what @kernel's default (exact, denormals kept) is up against
    pg_exact = optional("pygpgpu low-level, no -ftz",
                        lambda: pg[1].program(CUDA_SOURCE, name="bench_exact.cu")) if pg else None
    cp_fast = optional("cupy --use_fast_math",
                       lambda: cp_mod[0].RawModule(code=CUDA_SOURCE, options=("--use_fast_math",))) if cp_mod else None
    nb = optional("numba-cuda", load_numba)
    tr = optional("pygpgpu @kernel", load_translate)
    if pg:
        device, ctx, prog = pg
        log(f"device: {device} / {device.backend.version()}")
    rng = np.random.default_rng(0)

    def pg_sync():
        ctx.synchronize()

    def cp_sync():
        cp_mod[0].cuda.Device().synchronize()

    def nb_sync():
        nb.synchronize()

    def cuda_sync_any():
        if pg:
            ctx.synchronize()
        else:
            from pygpgpu_core import registry

            registry.backend_devices("cuda")[0].context().synchronize()

    def gnp_put(a):
        kernel, gnp = tr
        if gnp is None:
            raise RuntimeError("pygpgpu_core.gnp (device arrays) is not available: @kernel would time transfers")
        return gnp.asarray(a, device="cuda")

    def to_host(a):
        return np.asarray(a.get() if hasattr(a, "get") else a)

    # --- saxpy --------------------------------------------------------------------------
    n = N_SAXPY
    x = rng.random(n, dtype=np.float32)
    y = rng.random(n, dtype=np.float32)
    ref = 2.0 * x + y
    bw = lambda s: {"GB/s": 12 * n / s / 1e9}  # noqa: E731
    reps = 20
    log(f"saxpy {n} float32")
    if pg:
        def run_pg():
            k = prog.kernel("saxpy")
            dx, dy, do = ctx.buffer_from_host(x), ctx.buffer_from_host(y), ctx.buffer(x.nbytes)
            fn = k.launcher(["buffer", "buffer", "buffer", np.float32, np.int64])
            args = (dx, dy, do, 2.0, n)
            t = timeit(lambda: fn((n,), (256,), args), pg_sync, reps)
            out = np.empty_like(x)
            do.read(out)
            for b in (dx, dy, do):
                b.close()
            return t, np.allclose(out, ref)
        record(f"saxpy {n >> 20}M f32", "pygpgpu", run_pg, bw)
    if cp_mod:
        def run_cp():
            cupy, mod = cp_mod
            k = mod.get_function("saxpy")
            dx, dy, do = cupy.asarray(x), cupy.asarray(y), cupy.empty_like(cupy.asarray(x))
            grid = ((n + 255) // 256,)
            t = timeit(lambda: k(grid, (256,), (dx, dy, do, np.float32(2.0), np.int64(n))), cp_sync, reps)
            return t, np.allclose(cupy.asnumpy(do), ref)
        record(f"saxpy {n >> 20}M f32", "cupy", run_cp, bw)
    if nb:
        def run_nb():
            cuda = nb

            @cuda.jit
            def saxpy(x, y, out, a):
                i = cuda.grid(1)
                if i < out.size:
                    out[i] = a * x[i] + y[i]

            dx, dy, do = cuda.to_device(x), cuda.to_device(y), cuda.device_array_like(x)
            grid = (n + 255) // 256
            t = timeit(lambda: saxpy[grid, 256](dx, dy, do, np.float32(2.0)), nb_sync, reps)
            return t, np.allclose(do.copy_to_host(), ref)
        record(f"saxpy {n >> 20}M f32", "numba", run_nb, bw)
        try:
            import torch

            def run_torch_copy():
                tx = torch.from_numpy(x).cuda()
                to = torch.empty_like(tx)
                t = timeit(lambda: to.copy_(tx), torch.cuda.synchronize, reps)
                return t, True
            record(f"device copy {n >> 20}M f32", "torch", run_torch_copy, lambda s: {"GB/s": 8 * n / s / 1e9})
        except ImportError:
            pass
    if tr:
        def run_tr():
            kernel, _ = tr

            @kernel
            def saxpy(x, y, out, a):
                for i in range(out.shape[0]):
                    out[i] = a * x[i] + y[i]

            dx, dy, do = gnp_put(x), gnp_put(y), gnp_put(np.empty_like(x))
            k = saxpy["cuda"]
            t = timeit(lambda: k(dx, dy, do, np.float32(2.0)), cuda_sync_any, reps)
            return t, np.allclose(to_host(do), ref)
        record(f"saxpy {n >> 20}M f32", "@kernel", run_tr, bw)

    measure()

    # --- 5-point stencil ----------------------------------------------------------------
    s = N_STENCIL
    u = rng.random((s, s), dtype=np.float32)
    ref = u.copy()
    ref[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
    name = f"stencil 5-pt {s}^2"
    log(name)
    reps = 20
    if pg:
        def run_pg():
            k = prog.kernel("stencil")
            du, do = ctx.buffer_from_host(u), ctx.buffer(u.nbytes)
            fn = k.launcher(["buffer", "buffer", np.int32])
            t = timeit(lambda: fn((s, s), (32, 8), (du, do, s)), pg_sync, reps)
            out = np.empty_like(u)
            do.read(out)
            return t, np.allclose(out, ref, atol=1e-5)
        record(name, "pygpgpu", run_pg)
    if cp_mod:
        def run_cp():
            cupy, mod = cp_mod
            k = mod.get_function("stencil")
            du, do = cupy.asarray(u), cupy.empty((s, s), cupy.float32)
            grid = ((s + 31) // 32, (s + 7) // 8)
            t = timeit(lambda: k(grid, (32, 8), (du, do, np.int32(s))), cp_sync, reps)
            return t, np.allclose(cupy.asnumpy(do), ref, atol=1e-5)
        record(name, "cupy", run_cp)
    if nb:
        def run_nb():
            cuda = nb

            @cuda.jit
            def stencil(u, out):
                x, y = cuda.grid(2)
                n = u.shape[0]
                if x < n and y < n:
                    if x == 0 or y == 0 or x == n - 1 or y == n - 1:
                        out[y, x] = u[y, x]
                    else:
                        out[y, x] = np.float32(0.25) * (u[y - 1, x] + u[y + 1, x] + u[y, x - 1] + u[y, x + 1])

            du, do = cuda.to_device(u), cuda.device_array_like(u)
            grid = ((s + 31) // 32, (s + 7) // 8)
            t = timeit(lambda: stencil[grid, (32, 8)](du, do), nb_sync, reps)
            return t, np.allclose(do.copy_to_host(), ref, atol=1e-5)
        record(name, "numba", run_nb)
    if tr:
        def run_tr():
            kernel, _ = tr

            @kernel
            def stencil(u, out):
                for y, x in np.ndindex(out.shape):
                    if y == 0 or x == 0 or y == out.shape[0] - 1 or x == out.shape[1] - 1:
                        out[y, x] = u[y, x]
                    else:
                        out[y, x] = 0.25 * (u[y - 1, x] + u[y + 1, x] + u[y, x - 1] + u[y, x + 1])

            du, do = gnp_put(u), gnp_put(np.empty_like(u))
            k = stencil["cuda"]
            t = timeit(lambda: k(du, do), cuda_sync_any, reps)
            return t, np.allclose(to_host(do), ref, atol=1e-5)
        record(name, "@kernel", run_tr)

    measure()

    # --- n-body -------------------------------------------------------------------------
    nbody_n = N_BODY
    pos = rng.random((nbody_n, 4), dtype=np.float32)
    check_idx = rng.integers(0, nbody_n, 16)

    def nbody_ref(i):
        d = pos[:, :3] - pos[i, :3]
        r2 = (d * d).sum(1) + 1e-3
        sc = pos[:, 3] / (r2 * np.sqrt(r2))
        return (d * sc[:, None]).sum(0)

    refs = np.array([nbody_ref(i) for i in check_idx])

    def nbody_ok(acc):
        return np.allclose(acc[check_idx, :3], refs, rtol=2e-3, atol=1e-2)

    name = f"n-body {nbody_n} all-pairs"
    log(name)
    reps = 5
    def handwritten_nbody(program, kernel_name):
        """The low-level run of a handwritten n-body kernel of ``program``: (seconds, correct)."""
        def run():
            fn = program.kernel(kernel_name).launcher(["buffer", "buffer", np.int32])
            dp, da = ctx.buffer_from_host(pos), ctx.buffer(pos.nbytes)
            t = timeit(lambda: fn((nbody_n,), (256,), (dp, da, nbody_n)), pg_sync, reps)
            acc = np.empty_like(pos)
            da.read(acc)
            return t, nbody_ok(acc)
        return run

    if pg:
        record(name, "pygpgpu", handwritten_nbody(prog, "nbody"))
    if pg_exact:
        record(name, "pygpgpu no -ftz", handwritten_nbody(pg_exact, "nbody"))
    if cp_mod:
        def run_cp():
            cupy, mod = cp_mod
            k = mod.get_function("nbody")
            dp, da = cupy.asarray(pos), cupy.empty_like(cupy.asarray(pos))
            t = timeit(lambda: k(((nbody_n + 255) // 256,), (256,), (dp, da, np.int32(nbody_n))), cp_sync, reps)
            return t, nbody_ok(cupy.asnumpy(da))
        record(name, "cupy", run_cp)
    if nb:
        def run_nb():
            cuda = nb
            import math as m

            @cuda.jit(fastmath=True)
            def nbody(pos, acc):
                i = cuda.grid(1)
                n = pos.shape[0]
                if i < n:
                    px, py, pz = pos[i, 0], pos[i, 1], pos[i, 2]
                    ax = np.float32(0.0)
                    ay = np.float32(0.0)
                    az = np.float32(0.0)
                    for j in range(n):
                        dx = pos[j, 0] - px
                        dy = pos[j, 1] - py
                        dz = pos[j, 2] - pz
                        r2 = dx * dx + dy * dy + dz * dz + np.float32(1e-3)
                        inv = np.float32(1.0) / m.sqrt(r2)
                        sc = pos[j, 3] * inv * inv * inv
                        ax += dx * sc
                        ay += dy * sc
                        az += dz * sc
                    acc[i, 0] = ax
                    acc[i, 1] = ay
                    acc[i, 2] = az
                    acc[i, 3] = np.float32(0.0)

            dp, da = cuda.to_device(pos), cuda.device_array_like(pos)
            t = timeit(lambda: nbody[(nbody_n + 255) // 256, 256](dp, da), nb_sync, reps)
            return t, nbody_ok(da.copy_to_host())
        record(name, "numba", run_nb)
    if tr:
        def run_tr():
            kernel, _ = tr

            @kernel
            def nbody(pos, acc):
                for i in range(acc.shape[0]):
                    ax = 0.0
                    ay = 0.0
                    az = 0.0
                    for j in range(pos.shape[0]):
                        dx = pos[j, 0] - pos[i, 0]
                        dy = pos[j, 1] - pos[i, 1]
                        dz = pos[j, 2] - pos[i, 2]
                        r2 = dx * dx + dy * dy + dz * dz + 1e-3
                        inv = gpu.rsqrt(r2)       # rsqrtf, as the handwritten kernel (1/sqrt is IEEE div + sqrt)
                        sc = pos[j, 3] * inv * inv * inv
                        ax += dx * sc
                        ay += dy * sc
                        az += dz * sc
                    acc[i, 0] = ax
                    acc[i, 1] = ay
                    acc[i, 2] = az
                    acc[i, 3] = 0.0

            dp, da = gnp_put(pos), gnp_put(np.zeros_like(pos))
            k = nbody["cuda"]
            t = timeit(lambda: k(dp, da), cuda_sync_any, reps)
            return t, nbody_ok(to_host(da))
        record(name, "@kernel", run_tr)

    measure()

    # --- n-body written with 1.0 / sqrt: fast math (issue 17, item 3) ------------------------
    # handwritten `1.0f / sqrtf(r2)` built with --use_fast_math (NVRTC turns it into rsqrt.approx)
    # beside @kernel(fastmath=True) over `1.0 / math.sqrt(r2)`; "@kernel exact" is the default build.
    name = f"n-body {nbody_n} 1/sqrt fastmath"
    log(name)
    if pg_fast:
        record(name, "pygpgpu", handwritten_nbody(pg_fast, "nbody_div"))
    if cp_fast:
        def run_cp():
            cupy = cp_mod[0]
            k = cp_fast.get_function("nbody_div")
            dp, da = cupy.asarray(pos), cupy.empty_like(cupy.asarray(pos))
            t = timeit(lambda: k(((nbody_n + 255) // 256,), (256,), (dp, da, np.int32(nbody_n))), cp_sync, reps)
            return t, nbody_ok(cupy.asnumpy(da))
        record(name, "cupy", run_cp)
    if tr:
        def nbody_div(pos, acc):
            for i in range(acc.shape[0]):
                ax = 0.0
                ay = 0.0
                az = 0.0
                for j in range(pos.shape[0]):
                    dx = pos[j, 0] - pos[i, 0]
                    dy = pos[j, 1] - pos[i, 1]
                    dz = pos[j, 2] - pos[i, 2]
                    r2 = dx * dx + dy * dy + dz * dz + 1e-3
                    inv = 1.0 / math.sqrt(r2)
                    sc = pos[j, 3] * inv * inv * inv
                    ax += dx * sc
                    ay += dy * sc
                    az += dz * sc
                acc[i, 0] = ax
                acc[i, 1] = ay
                acc[i, 2] = az
                acc[i, 3] = 0.0

        def run_tr_mode(fastmath):
            def run():
                kernel, _ = tr
                k = kernel(fastmath=fastmath)(nbody_div)["cuda"]
                dp, da = gnp_put(pos), gnp_put(np.zeros_like(pos))
                t = timeit(lambda: k(dp, da), cuda_sync_any, reps)
                return t, nbody_ok(to_host(da))
            return run
        record(name, "@kernel", run_tr_mode(True))
        record(name, "@kernel exact", run_tr_mode(False))

    measure()

    # --- histogram ----------------------------------------------------------------------
    hn = N_HIST
    data = rng.integers(0, 256, hn, dtype=np.uint32)
    ref = np.bincount(data, minlength=256).astype(np.uint32)
    name = f"histogram {hn >> 20}M->256 atomics"
    log(name)
    reps = 5
    if pg:
        def run_pg():
            k = prog.kernel("histogram")
            dd, db = ctx.buffer_from_host(data), ctx.buffer(256 * 4)
            fn = k.launcher(["buffer", "buffer", np.int64])

            def run():
                db.fill(np.uint32(0))
                fn((hn,), (256,), (dd, db, hn))
            t = timeit(run, pg_sync, reps)
            bins = np.empty(256, np.uint32)
            db.read(bins)
            return t, np.array_equal(bins, ref)
        record(name, "pygpgpu", run_pg)
    if cp_mod:
        def run_cp():
            cupy, mod = cp_mod
            k = mod.get_function("histogram")
            dd, db = cupy.asarray(data), cupy.zeros(256, cupy.uint32)

            def run():
                db.fill(0)
                k(((hn + 255) // 256,), (256,), (dd, db, np.int64(hn)))
            t = timeit(run, cp_sync, reps)
            return t, np.array_equal(cupy.asnumpy(db), ref)
        record(name, "cupy", run_cp)
    if nb:
        def run_nb():
            cuda = nb

            @cuda.jit
            def hist(data, bins):
                i = cuda.grid(1)
                if i < data.size:
                    cuda.atomic.add(bins, data[i] & 255, 1)

            @cuda.jit
            def zero(bins):
                i = cuda.grid(1)
                if i < bins.size:
                    bins[i] = 0

            dd, db = cuda.to_device(data), cuda.device_array(256, np.uint32)

            def run():
                zero[1, 256](db)
                hist[(hn + 255) // 256, 256](dd, db)
            t = timeit(run, nb_sync, reps)
            return t, np.array_equal(db.copy_to_host(), ref)
        record(name, "numba", run_nb)
    if tr:
        def run_tr():
            kernel, _ = tr
            if gpu is None:
                raise RuntimeError("pygpgpu_core.gpu is not available")

            @kernel
            def hist(data, counts):
                gpu.work_size(data)
                i = gpu.get_global_id(0)
                gpu.atomic_add(counts, data[i], 1)

            dd, db = gnp_put(data), gnp_put(np.zeros(256, np.uint32))
            k = hist["cuda"]

            def run():
                db.buffer.fill(np.uint32(0))
                k(dd, db)
            t = timeit(run, cuda_sync_any, reps)
            return t, np.array_equal(to_host(db), ref)
        record(name, "@kernel", run_tr)

    measure()

    # --- mandelbrot ---------------------------------------------------------------------
    m = N_MANDEL
    name = f"mandelbrot {m}^2 maxit {MAXIT}"
    log(name)
    reps = 10

    def mandel_ok(img):
        ys, xs = np.arange(0, m, max(1, m // 64)), np.arange(0, m, max(1, m // 64))
        bad = 0
        for yy in ys[:16]:
            for xx in xs[:16]:
                cr = np.float32(-2.0) + np.float32(3.0) * np.float32(xx) / np.float32(m)
                ci = np.float32(-1.5) + np.float32(3.0) * np.float32(yy) / np.float32(m)
                zr = zi = np.float32(0.0)
                it = 0
                while it < MAXIT and zr * zr + zi * zi <= 4.0:
                    zr, zi = zr * zr - zi * zi + cr, np.float32(2.0) * zr * zi + ci
                    it += 1
                bad += abs(int(img[yy, xx]) - it) > 2
        return bad <= 2  # float rounding near the set's boundary

    if pg:
        def run_pg():
            k = prog.kernel("mandelbrot")
            do = ctx.buffer(m * m * 4)
            fn = k.launcher(["buffer", np.int32, np.int32, np.int32])
            t = timeit(lambda: fn((m, m), (16, 16), (do, m, m, MAXIT)), pg_sync, reps)
            img = np.empty((m, m), np.int32)
            do.read(img)
            return t, mandel_ok(img)
        record(name, "pygpgpu", run_pg)
    if cp_mod:
        def run_cp():
            cupy, mod = cp_mod
            k = mod.get_function("mandelbrot")
            do = cupy.empty((m, m), cupy.int32)
            grid = ((m + 15) // 16, (m + 15) // 16)
            t = timeit(lambda: k(grid, (16, 16), (do, np.int32(m), np.int32(m), np.int32(MAXIT))), cp_sync, reps)
            return t, mandel_ok(cupy.asnumpy(do))
        record(name, "cupy", run_cp)
    if nb:
        def run_nb():
            cuda = nb

            @cuda.jit
            def mandel(out, maxit):
                x, y = cuda.grid(2)
                h, w = out.shape
                if x < w and y < h:
                    cr = np.float32(-2.0) + np.float32(3.0) * np.float32(x) / np.float32(w)
                    ci = np.float32(-1.5) + np.float32(3.0) * np.float32(y) / np.float32(h)
                    zr = np.float32(0.0)
                    zi = np.float32(0.0)
                    it = 0
                    while it < maxit and zr * zr + zi * zi <= np.float32(4.0):
                        t = zr * zr - zi * zi + cr
                        zi = np.float32(2.0) * zr * zi + ci
                        zr = t
                        it += 1
                    out[y, x] = it

            do = cuda.device_array((m, m), np.int32)
            grid = ((m + 15) // 16, (m + 15) // 16)
            t = timeit(lambda: mandel[grid, (16, 16)](do, MAXIT), nb_sync, reps)
            return t, mandel_ok(do.copy_to_host())
        record(name, "numba", run_nb)
    if tr:
        def run_tr():
            kernel, _ = tr

            @kernel
            def mandel(out, maxit):
                for y, x in np.ndindex(out.shape):
                    cr = -2.0 + 3.0 * x / out.shape[1]
                    ci = -1.5 + 3.0 * y / out.shape[0]
                    zr = 0.0
                    zi = 0.0
                    it = 0
                    while it < maxit and zr * zr + zi * zi <= 4.0:
                        t = zr * zr - zi * zi + cr
                        zi = 2.0 * zr * zi + ci
                        zr = t
                        it += 1
                    out[y, x] = it

            do = gnp_put(np.zeros((m, m), np.int32))
            k = mandel["cuda"]
            t = timeit(lambda: k(do, np.int32(MAXIT)), cuda_sync_any, reps)
            return t, mandel_ok(to_host(do))
        record(name, "@kernel", run_tr)

    measure()

    # --- naive matmul -------------------------------------------------------------------
    mn = N_MATMUL
    a = rng.random((mn, mn), dtype=np.float32)
    b = rng.random((mn, mn), dtype=np.float32)
    ref = a @ b
    name = f"naive matmul {mn}"
    log(name)
    reps = 5
    if pg:
        def run_pg():
            k = prog.kernel("matmul")
            da, db, dc = ctx.buffer_from_host(a), ctx.buffer_from_host(b), ctx.buffer(a.nbytes)
            fn = k.launcher(["buffer", "buffer", "buffer", np.int32])
            t = timeit(lambda: fn((mn, mn), (16, 16), (da, db, dc, mn)), pg_sync, reps)
            c = np.empty_like(a)
            dc.read(c)
            return t, np.allclose(c, ref, rtol=1e-3)
        record(name, "pygpgpu", run_pg)
    if cp_mod:
        def run_cp():
            cupy, mod = cp_mod
            k = mod.get_function("matmul")
            da, db, dc = cupy.asarray(a), cupy.asarray(b), cupy.empty((mn, mn), cupy.float32)
            grid = ((mn + 15) // 16, (mn + 15) // 16)
            t = timeit(lambda: k(grid, (16, 16), (da, db, dc, np.int32(mn))), cp_sync, reps)
            return t, np.allclose(cupy.asnumpy(dc), ref, rtol=1e-3)
        record(name, "cupy", run_cp)
    if nb:
        def run_nb():
            cuda = nb

            @cuda.jit
            def matmul(a, b, c):
                col, row = cuda.grid(2)
                n = c.shape[0]
                if row < n and col < n:
                    acc = np.float32(0.0)
                    for k in range(n):
                        acc += a[row, k] * b[k, col]
                    c[row, col] = acc

            da, db, dc = cuda.to_device(a), cuda.to_device(b), cuda.device_array_like(a)
            grid = ((mn + 15) // 16, (mn + 15) // 16)
            t = timeit(lambda: matmul[grid, (16, 16)](da, db, dc), nb_sync, reps)
            return t, np.allclose(dc.copy_to_host(), ref, rtol=1e-3)
        record(name, "numba", run_nb)
    if tr:
        def run_tr():
            kernel, _ = tr

            @kernel
            def matmul(a, b, c):
                for i, j in np.ndindex(c.shape):
                    acc = 0.0
                    for k in range(a.shape[1]):
                        acc += a[i, k] * b[k, j]
                    c[i, j] = acc

            da, db, dc = gnp_put(a), gnp_put(b), gnp_put(np.zeros_like(a))
            k = matmul["cuda"]
            t = timeit(lambda: k(da, db, dc), cuda_sync_any, reps)
            return t, np.allclose(to_host(dc), ref, rtol=1e-3)
        record(name, "@kernel", run_tr)

    measure()

    # --- warm launch of a tiny kernel with resident arrays --------------------------------
    name = "warm launch tiny (us)"
    log(name)
    reps = 2000 if QUICK else 20000
    tiny = np.zeros(1, np.float32)
    to_us = lambda s: {"us": s * 1e6}  # noqa: E731
    if pg:
        def run_pg():
            k = prog.kernel("tiny")
            dx = ctx.buffer_from_host(tiny)
            fn = k.launcher(["buffer", np.int32])
            args = (dx, 1)
            return timeit(lambda: fn((1,), (32,), args), pg_sync, reps), True
        record(name, "pygpgpu", run_pg, to_us)

        def run_pg_launch():
            k = prog.kernel("tiny")
            dx = ctx.buffer_from_host(tiny)
            args = [dx, np.int32(1)]
            return timeit(lambda: k.launch((1,), (32,), args), pg_sync, reps // 4), True
        record(name, "pygpgpu.launch", run_pg_launch, to_us)
    if cp_mod:
        def run_cp():
            cupy, mod = cp_mod
            k = mod.get_function("tiny")
            dx = cupy.zeros(1, cupy.float32)
            one = np.int32(1)
            return timeit(lambda: k((1,), (32,), (dx, one)), cp_sync, reps), True
        record(name, "cupy", run_cp, to_us)
    if nb:
        def run_nb():
            cuda = nb

            @cuda.jit
            def tiny_k(x):
                i = cuda.grid(1)
                if i < x.size:
                    x[i] += 1.0

            dx = cuda.to_device(tiny)
            return timeit(lambda: tiny_k[1, 32](dx), nb_sync, reps // 4), True
        record(name, "numba", run_nb, to_us)
    if tr:
        def run_tr():
            kernel, _ = tr

            @kernel
            def tiny_k(x):
                for i in range(x.shape[0]):
                    x[i] += 1.0

            dx = gnp_put(tiny)
            k = tiny_k["cuda"]
            return timeit(lambda: k(dx), cuda_sync_any, reps // 4), True
        record(name, "@kernel", run_tr, to_us)

    measure()

    # --- first call, cold cache -------------------------------------------------------------
    name = "first call cold cache (s)"
    log(name)
    tag = uuid.uuid4().hex[:12]
    # one small kernel under a fresh name, so that no cache (ours, CuPy's, NVRTC's) can help
    cold_src = CUDA_SOURCE.split("extern", 2)[1].join(["extern", ""]).replace("saxpy", f"saxpy_{tag}")
    xs = np.ones(1024, np.float32)
    if pg:
        def run_pg():
            from pygpgpu_core import cache

            old = os.environ.get("PYGPGPU_CACHE_DIR")
            os.environ["PYGPGPU_CACHE_DIR"] = tempfile.mkdtemp(prefix="pygpgpu-cold-")
            try:
                t0 = time.perf_counter()
                k = ctx.program(cold_src + "\n// pygpgpu cold\n").kernel(f"saxpy_{tag}")
                out = np.zeros_like(xs)
                k.launch(1024, 256, [xs, xs, out, np.float32(2.0), np.int64(1024)])
                t = time.perf_counter() - t0
            finally:
                if old is None:
                    os.environ.pop("PYGPGPU_CACHE_DIR", None)
                else:
                    os.environ["PYGPGPU_CACHE_DIR"] = old
            assert cache.cache_dir()
            return t, bool((out == 3.0).all())
        record(name, "pygpgpu", run_pg)
    if cp_mod:
        def run_cp():
            cupy, _ = cp_mod
            t0 = time.perf_counter()
            k = cupy.RawKernel(cold_src + "\n// cupy cold\n", f"saxpy_{tag}")
            dx = cupy.asarray(xs)
            do = cupy.zeros_like(dx)
            k((4,), (256,), (dx, dx, do, np.float32(2.0), np.int64(1024)))
            ok = bool((cupy.asnumpy(do) == 3.0).all())
            return time.perf_counter() - t0, ok
        record(name, "cupy", run_cp)
    if nb:
        def run_nb():
            cuda = nb
            t0 = time.perf_counter()

            @cuda.jit
            def saxpy_cold(x, y, out, a):
                i = cuda.grid(1)
                if i < out.size:
                    out[i] = a * x[i] + y[i]

            out = np.zeros_like(xs)
            saxpy_cold[4, 256](xs, xs, out, np.float32(2.0))
            return time.perf_counter() - t0, bool((out == 3.0).all())
        record(name, "numba", run_nb)
    if tr:
        def run_tr():
            kernel, _ = tr
            old = os.environ.get("PYGPGPU_CACHE_DIR")
            os.environ["PYGPGPU_CACHE_DIR"] = tempfile.mkdtemp(prefix="pygpgpu-cold-")
            try:
                t0 = time.perf_counter()

                @kernel
                def saxpy_cold(x, y, out, a):
                    for i in range(out.shape[0]):
                        out[i] = a * x[i] + y[i]

                out = np.zeros_like(xs)
                saxpy_cold["cuda"](xs, xs, out, np.float32(2.0))
                t = time.perf_counter() - t0
            finally:
                if old is None:
                    os.environ.pop("PYGPGPU_CACHE_DIR", None)
                else:
                    os.environ["PYGPGPU_CACHE_DIR"] = old
            return t, bool((out == 3.0).all())
        record(name, "@kernel", run_tr)

    measure(rounds=1)     # a cold first call happens once

    # --- host <-> device transfers (pinned staging) -----------------------------------------
    if pg:
        log("transfers")
        for size_mb in ((4, 64) if QUICK else (4, 64, 1024)):
            host = np.ones((size_mb << 20) // 4, np.float32)
            buf = ctx.buffer(host.nbytes)
            back = np.empty_like(host)
            gbs = lambda s, n=host.nbytes: {"GB/s": n / s / 1e9}  # noqa: E731
            # The same arrays again and again: pygpgpu page-locks them on their second transfer.
            record(f"H2D {size_mb} MiB", "pygpgpu", lambda: (timeit(lambda: buf.write(host), pg_sync, 3), True), gbs)
            record(f"D2H {size_mb} MiB", "pygpgpu",
                   lambda: (timeit(lambda: buf.read(back), pg_sync, 3), bool(back[-1] == 1.0)), gbs)
            # Arrays never transferred before (pageable: the staging path), one copy each.
            record(f"H2D {size_mb} MiB, new array", "pygpgpu",
                   lambda: (first_transfer(lambda a: buf.write(a), host), True), gbs)
            record(f"D2H {size_mb} MiB, new array", "pygpgpu",
                   lambda: (first_transfer(lambda a: buf.read(a), host), True), gbs)
            if cp_mod:
                cupy = cp_mod[0]
                dev = cupy.empty(host.shape, cupy.float32)
                # copies of the arrays, so that CuPy does not read memory pygpgpu page-locked
                host_cp, back_cp = host.copy(), np.empty_like(host)
                record(f"H2D {size_mb} MiB", "cupy", lambda: (timeit(lambda: dev.set(host_cp), cp_sync, 3), True), gbs)
                record(f"D2H {size_mb} MiB", "cupy", lambda: (timeit(lambda: dev.get(out=back_cp), cp_sync, 3), True), gbs)
                measure(rounds=1)   # before dev, buf and host are those of the next size
                del dev
            measure(rounds=1)
            buf.close()

    # --- table -----------------------------------------------------------------------------------
    columns = ["pygpgpu", "pygpgpu.launch", "cupy", "numba", "@kernel", "@kernel exact", "torch"]
    # ours / peer, by time (lower is better; a GB/s row's ratio is the peer's GB/s over ours)
    ratio_pairs = [("@kernel", "pygpgpu"), ("@kernel", "cupy"), ("pygpgpu", "cupy")]
    workloads = list(dict.fromkeys(r["workload"] for r in ROWS))
    ratios: dict = {}

    def ms_of(w, c):
        row = next((r for r in ROWS if r["workload"] == w and r["column"] == c), None)
        return row["ms"] if row and "ms" in row else None

    log("\n" + f"{'workload':<30}" + "".join(f"{c:>16}" for c in columns)
        + "".join(f"{a + '/' + b:>18}" for a, b in ratio_pairs))
    for w in workloads:
        ratio_cells = []
        for a, b in ratio_pairs:
            ours, peer = ms_of(w, a), ms_of(w, b)
            if ours is not None and peer:
                ratios.setdefault(w, {})[f"{a}/{b}"] = ours / peer
                ratio_cells.append(f"{ours / peer:.3f}x")
            else:
                ratio_cells.append("-")
        cells = []
        for c in columns:
            row = next((r for r in ROWS if r["workload"] == w and r["column"] == c), None)
            if row is None:
                cells.append("-")
            elif "error" in row:
                cells.append("error")
            else:
                unit = "us" if "us" in row else ("GB/s" if "GB/s" in row else None)
                value = row[unit] if unit else row["ms"]
                cells.append(f"{value:.3f}{' ' + unit if unit else ' ms'}{'' if row['correct'] else '!'}")
        log(f"{w:<30}" + "".join(f"{c:>16}" for c in cells) + "".join(f"{c:>18}" for c in ratio_cells))
    log(f"total {time.perf_counter() - started:.1f} s")
    if JSON_PATH:
        meta = {
            "date": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()),
            "python": platform.python_version(),
            "numpy": np.__version__,
            "machine": platform.node(),
            "quick": QUICK,
        }
        if pg:
            meta["device"] = repr(pg[0])
            meta["versions"] = pg[0].backend.version()
        with open(JSON_PATH, "w") as f:
            json.dump({"meta": meta, "rows": ROWS, "ratios": ratios}, f, indent=1)
        log(f"wrote {JSON_PATH}")


if __name__ == "__main__":
    main()
