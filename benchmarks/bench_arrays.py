"""Device-array benchmark (issue 7): saxpy with numpy arrays in and out, and with resident
gnp arrays, against numpy's own ``a*x+y`` (PoCL) and CuPy (CUDA), in one run.

    python benchmarks/bench_arrays.py [--json results.json] [--write-results] [--quick]

Sections run where their device exists: "pocl" on an OpenCL device that shares host memory
(PoCL here), "cuda" on a CUDA device (the GPU machine). ``--write-results`` replaces this
script's sections of benchmarks/RESULTS.md (between its own markers) with the tables measured.
Times are the best of several repeats after a warm-up, in milliseconds; every column is
guarded, so one that fails prints its error and the others still run.
"""
from __future__ import annotations

import json
import os
import platform
import re
import sys
import time
import traceback

import numpy as np

import pygpgpu_core.gnp as gnp
from pygpgpu_core import registry
from pygpgpu_core.errors import GPGPUError

QUICK = "--quick" in sys.argv
WRITE = "--write-results" in sys.argv
JSON_PATH = sys.argv[sys.argv.index("--json") + 1] if "--json" in sys.argv else None
RESULTS_MD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "RESULTS.md")
SIZES = (1, 1 << 20) if QUICK else (1, 1 << 20, 16 << 20)
A = np.float32(2.0)

SOURCES = {
    "opencl": """
__kernel void saxpy(__global const float* x, __global const float* y, __global float* out, float a, int n) {
    int i = get_global_id(0);
    if (i < n) out[i] = a * x[i] + y[i];
}""",
    "cuda": """
extern "C" __global__ void saxpy(const float* x, const float* y, float* out, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a * x[i] + y[i];
}""",
}


def best_ms(fn, repeats: int, warmup: int = 2) -> float:
    for _ in range(warmup):
        fn()
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best * 1e3


def repeats_for(n: int) -> int:
    if QUICK:
        return 5
    return 50 if n <= 1 << 20 else 10


def guarded(label: str, fn):
    try:
        return fn()
    except Exception as exc:  # one broken column must not hide the others
        print(f"  [{label}] failed: {type(exc).__name__}: {exc}")
        if os.environ.get("PYGPGPU_DEBUG"):
            traceback.print_exc()
        return None


def lowlevel_saxpy(device):
    kernel = device.context().program(SOURCES[device.backend.dialect]).kernel("saxpy")
    launch = kernel.launcher(["buffer", "buffer", "buffer", np.dtype(np.float32), np.dtype(np.int32)])

    def run(xb, yb, ob, n):
        launch((n,), None, (xb, yb, ob, A, n))

    return run


def translated_saxpy():
    """The @kernel version, when the translator is installed and working."""
    from pygpgpu_translate import kernel

    @kernel
    def saxpy(x, y, out, a):
        for i in range(out.shape[0]):
            out[i] = a * x[i] + y[i]

    return saxpy


def check(out: np.ndarray, x: np.ndarray, y: np.ndarray) -> None:
    np.testing.assert_allclose(out, A * x + y, rtol=1e-6)


def section_common(device, n, x, y, row):
    """Columns measured on every backend: gnp numpy in/out, staged numpy in/out, resident."""
    saxpy = lowlevel_saxpy(device)
    ctx = device.context()

    def gnp_round_trip():
        gx = gnp.asarray(x, device=device)
        gy = gnp.asarray(y, device=device)
        go = gnp.empty(n, np.float32, device=device)
        saxpy(gx.buffer, gy.buffer, go.buffer, n)
        return go.get()

    check(gnp_round_trip(), x, y)
    row["gnp_numpy_in_out"] = best_ms(gnp_round_trip, repeats_for(n))

    out = np.empty(n, np.float32)

    def staged_round_trip(x=x, y=y, out=out):
        sx = gnp.stage_numpy(x, device, read=True, write=False)
        sy = gnp.stage_numpy(y, device, read=True, write=False)
        so = gnp.stage_numpy(out, device, read=False, write=True, overwrite=True)
        saxpy(sx.buffer, sy.buffer, so.buffer, n)
        so.finish()
        sx.finish()
        sy.finish()

    staged_round_trip()
    check(out, x, y)
    row["staged_numpy_in_out"] = guarded("staged", lambda: best_ms(staged_round_trip, repeats_for(n)))

    gx, gy = gnp.asarray(x, device=device), gnp.asarray(y, device=device)
    go = gnp.empty(n, np.float32, device=device)

    def resident():
        saxpy(gx.buffer, gy.buffer, go.buffer, n)
        ctx.synchronize()

    gnp.reset_transfer_stats()
    row["gnp_resident"] = best_ms(resident, repeats_for(n) * 2)
    assert gnp.transfer_stats()["h2d"] == 0 and gnp.transfer_stats()["d2h"] == 0
    check(go.get(), x, y)

    def kernel_round_trip(k):
        out2 = np.empty(n, np.float32)

        def run():
            k(x, y, out2, A)

        run()
        check(out2, x, y)
        return best_ms(run, repeats_for(n))

    k = guarded("@kernel", translated_saxpy)
    if k is not None:
        backend_kernel = k[device.selector] if hasattr(k, "__getitem__") else k
        row["kernel_numpy_in_out"] = guarded("@kernel numpy in/out", lambda: kernel_round_trip(backend_kernel))
    return saxpy


def pocl_section(device) -> list[dict]:
    rows = []
    from pygpgpu_opencl import aligned_empty

    for n in SIZES:
        rng = np.random.default_rng(n)
        x = rng.random(n, dtype=np.float32)
        y = rng.random(n, dtype=np.float32)
        row = {"n": n}
        row["numpy_axpy"] = best_ms(lambda: A * x + y, repeats_for(n))
        saxpy = section_common(device, n, x, y, row)

        # The same staged round trip on page-aligned numpy arrays: every argument is zero-copy.
        xa, ya, oa = aligned_empty(n), aligned_empty(n), aligned_empty(n)
        xa[:], ya[:] = x, y

        def staged_aligned():
            sx = gnp.stage_numpy(xa, device, read=True, write=False)
            sy = gnp.stage_numpy(ya, device, read=True, write=False)
            so = gnp.stage_numpy(oa, device, read=False, write=True, overwrite=True)
            saxpy(sx.buffer, sy.buffer, so.buffer, n)
            so.finish()
            sx.finish()
            sy.finish()

        gnp.reset_transfer_stats()
        staged_aligned()
        check(oa, x, y)
        row["staged_aligned_in_out"] = best_ms(staged_aligned, repeats_for(n))
        row["aligned_copies"] = gnp.transfer_stats()["h2d"] + gnp.transfer_stats()["d2h"]
        row["pyopencl_in_out"] = guarded("pyopencl", lambda: pyopencl_round_trip(x, y)) if _has("pyopencl") else None
        rows.append(row)
        print_row("pocl", row)
    return rows


def _has(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


def pyopencl_round_trip(x, y):
    import pyopencl as cl

    ctx = cl.Context([p for p in cl.get_platforms() if "Portable" in p.name][0].get_devices())
    queue = cl.CommandQueue(ctx)
    prg = cl.Program(ctx, SOURCES["opencl"]).build()
    knl = cl.Kernel(prg, "saxpy")
    mf = cl.mem_flags
    n = x.size
    out = np.empty_like(x)

    def run():
        bx = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=x)
        by = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=y)
        bo = cl.Buffer(ctx, mf.WRITE_ONLY, out.nbytes)
        knl(queue, (n,), None, bx, by, bo, A, np.int32(n))
        cl.enqueue_copy(queue, out, bo)

    run()
    check(out, x, y)
    return best_ms(run, repeats_for(n))


def numba_saxpy():
    """Numba-CUDA's saxpy, called with numpy arrays (Numba copies them in and back itself)."""
    np.row_stack = np.vstack  # numba-cuda on numpy 2.5 still refers to it (as in bench_cuda.py)
    from numba import cuda as ncuda

    @ncuda.jit
    def saxpy(x, y, out, a):
        i = ncuda.grid(1)
        if i < out.shape[0]:
            out[i] = a * x[i] + y[i]

    return lambda x, y, out: saxpy[(x.size + 255) // 256, 256](x, y, out, A)


def fresh_arrays_ms(k, x, y, repeats: int) -> float:
    """@kernel numpy in/out where every call gets arrays it has never seen (so nothing is
    page-locked yet): the first-call cost of the transfers, without the compile."""
    best = float("inf")
    for _ in range(repeats):
        xs, ys, out = x.copy(), y.copy(), np.zeros_like(x)   # touched: page faults not timed
        t = time.perf_counter()
        k(xs, ys, out, A)
        best = min(best, time.perf_counter() - t)
    check(out, x, y)
    return best * 1e3


def cuda_section(device) -> list[dict]:
    rows = []
    cupy = None
    if _has("cupy"):
        import cupy
    nb = guarded("numba", numba_saxpy) if _has("numba") else None
    k = guarded("@kernel", translated_saxpy)
    for n in SIZES:
        rng = np.random.default_rng(n)
        x = rng.random(n, dtype=np.float32)
        y = rng.random(n, dtype=np.float32)
        row = {"n": n}
        section_common(device, n, x, y, row)
        # pygpgpu page-locked x and y above (they came back): CuPy and Numba get copies, so
        # that they read ordinary pageable memory, as they would in a program of their own
        x, y = x.copy(), y.copy()
        if k is not None:
            row["kernel_numpy_fresh"] = guarded("@kernel fresh arrays",
                                                lambda: fresh_arrays_ms(k[device.selector], x, y, 3 if QUICK else 8))
        if nb is not None:
            def numba_round_trip(out_nb=np.empty(n, np.float32)):  # noqa: B008  (one output per size)
                nb(x, y, out_nb)                          # compiles on the first call
                check(out_nb, x, y)
                return best_ms(lambda: nb(x, y, out_nb), repeats_for(n))

            row["numba_numpy_in_out"] = guarded("numba", numba_round_trip)
        if cupy is not None:
            def cupy_round_trip():
                cx, cy = cupy.asarray(x), cupy.asarray(y)
                return (A * cx + cy).get()

            check(cupy_round_trip(), x, y)
            row["cupy_numpy_in_out"] = guarded("cupy", lambda: best_ms(cupy_round_trip, repeats_for(n)))
            cx, cy = cupy.asarray(x), cupy.asarray(y)

            def cupy_resident():
                A * cx + cy
                cupy.cuda.runtime.deviceSynchronize()

            row["cupy_resident"] = guarded("cupy resident", lambda: best_ms(cupy_resident, repeats_for(n) * 2))
        rows.append(row)
        print_row("cuda", row)
    return rows


CUDA_TARGETS_MS = {1: 0.050, 1 << 20: 1.0, 16 << 20: 13.0}


def small_batch_section(device) -> list[dict]:
    """Tiny numpy arguments in host-mapped memory (the kernel reads them in place) against the
    copied batch, for a streaming kernel and for matmul, which reads each element n times: the
    measurements behind MAPPED_BATCH_MAX."""
    from pygpgpu_core.gnp import _staging
    from pygpgpu_translate import kernel

    def kernels():
        @kernel
        def saxpy(x, y, out, a):
            for i in range(out.shape[0]):
                out[i] = a * x[i] + y[i]

        @kernel
        def matmul(a, b, c):
            for i in range(c.shape[0]):
                for j in range(c.shape[1]):
                    s = 0.0
                    for k in range(a.shape[1]):
                        s += a[i, k] * b[k, j]
                    c[i, j] = s

        return saxpy[device.selector], matmul[device.selector]

    rng = np.random.default_rng(0)
    rows, inputs = [], []
    for name, n in [("saxpy", 1), ("saxpy", 1024), ("saxpy", 16384), ("matmul", 8), ("matmul", 16), ("matmul", 32)]:
        if name == "saxpy":
            args = (rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32), np.empty(n, np.float32), A)
        else:
            args = (rng.random((n, n), dtype=np.float32), rng.random((n, n), dtype=np.float32),
                    np.empty((n, n), np.float32))
        rows.append({"case": f"{name} {n}" + (f"x{n}" if name == "matmul" else ""),
                     "nbytes": sum(a.nbytes for a in args[:3])})
        inputs.append((name, args))
    defaults = _staging.MAPPED_BATCH_MAX, _staging.STREAMED_MAPPED_MAX
    try:
        for label, limits in (("default", defaults), ("mapped", (1 << 20, 1 << 20)), ("copied", (0, 0))):
            _staging.MAPPED_BATCH_MAX, _staging.STREAMED_MAPPED_MAX = limits
            fns = dict(zip(("saxpy", "matmul"), kernels()))   # new plans: new batches
            for row, (name, args) in zip(rows, inputs):
                run = (lambda fn=fns[name], args=args: fn(*args))  # noqa: E731  (binds this row's kernel)
                run()
                row[label] = best_ms(run, 20 if QUICK else 300)
    finally:
        _staging.MAPPED_BATCH_MAX, _staging.STREAMED_MAPPED_MAX = defaults
    for r in rows:
        print(f"[small batch] {r['case']} ({r['nbytes']} bytes): default {fmt(r.get('default'))} ms, mapped "
              f"{fmt(r.get('mapped'))} ms, copied {fmt(r.get('copied'))} ms", flush=True)
    return rows


def fmt(v) -> str:
    if v is None:
        return "—"
    if isinstance(v, int):
        return str(v)
    return f"{v:.3f}" if v < 10 else f"{v:.1f}"


def print_row(section: str, row: dict) -> None:
    cells = ", ".join(f"{k}={fmt(v)}" for k, v in row.items() if k != "n")
    print(f"[{section}] n={row['n']}: {cells}", flush=True)


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            names = [line.split(":", 1)[1].strip() for line in f if line.startswith("model name")]
        if names:
            cpu = f"{names[0]} ({len(names)} logical CPUs)"
    except OSError:
        pass
    return f"{cpu}, Python {platform.python_version()}, numpy {np.__version__}"


def pocl_markdown(device, rows) -> str:
    lines = [
        f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on {device.name} "
        f"({device.selector}, {machine()}); best of repeats, ms.",
        "",
        "saxpy `out = a*x + y` (float32). *numpy in/out*: numpy arrays go in and the result comes "
        "back as numpy; *resident*: gnp arrays stay on the device (no transfers, counted).",
        "",
        "| n | numpy a*x+y | @kernel numpy in/out | staged numpy in/out (plain arrays) | staged, page-aligned arrays | gnp asarray→kernel→get | gnp resident | PyOpenCL in/out |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['n']:,} | {fmt(r.get('numpy_axpy'))} | {fmt(r.get('kernel_numpy_in_out'))} | "
            f"{fmt(r.get('staged_numpy_in_out'))} | {fmt(r.get('staged_aligned_in_out'))} | "
            f"{fmt(r.get('gnp_numpy_in_out'))} | {fmt(r.get('gnp_resident'))} | {fmt(r.get('pyopencl_in_out'))} |"
        )
    big = rows[-1]
    numpy_ms = big["numpy_axpy"]

    def verdict(ms):
        return "—" if ms is None else f"{fmt(ms)} ms, {'meets' if ms <= numpy_ms else 'misses'} it"

    lines += [
        "",
        f"Target: 16M numpy round trip ≤ numpy's own a*x+y ({fmt(numpy_ms)} ms in this run). Plain numpy "
        f"arrays through `@kernel`: {verdict(big.get('kernel_numpy_in_out'))}; staged plain arrays: "
        f"{verdict(big.get('staged_numpy_in_out'))}; page-aligned arrays: "
        f"{verdict(big.get('staged_aligned_in_out'))}.",
        "",
        "Plain numpy arrays are used in place too: numpy's large allocations start 16 bytes into a page, "
        "below PoCL's 128-byte base-address alignment but on the 4-byte alignment a `float*` parameter needs, "
        "and `stage_numpy` passes that element alignment to `buffer_from_host(..., zero_copy=True, align=...)` "
        "(arrays of wider vector types need their own size). Written arrays under 1 MiB are copied through "
        "the pool instead (cheaper than the map/unmap an alias needs), hence the n=1 row. The machine has 2 "
        "shared cores: timings vary by 2-3x between runs.",
    ]
    return "\n".join(lines)


def cuda_markdown(device, rows, small) -> str:
    def verdict(r):
        target, ms = CUDA_TARGETS_MS.get(r["n"]), r.get("kernel_numpy_in_out")
        if target is None or ms is None:
            return "—"
        return f"≤ {fmt(target)}: {'met' if ms <= target else 'missed'}"

    lines = [
        f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on {device.name} ({device.selector}), "
        f"{machine()}; best of repeats, ms (lower is better).",
        "",
        "saxpy `out = a*x + y` (float32), numpy arrays in and the result back in numpy. *@kernel*: the same "
        "arrays call after call, as in a loop (pygpgpu page-locks an array of 1 MiB or more on its second "
        "transfer, then DMAs it in place); *@kernel, new arrays*: arrays never seen before, each call "
        "(pageable copies); *staged*: `gnp.stage_numpy` + the low-level launcher; CuPy (`cupy.asarray` → "
        "`a*x+y` → `.get()`) and Numba (a `cuda.jit` kernel called with numpy arrays, which copies all three "
        "back) read their own copies of the inputs, never page-locked by pygpgpu.",
        "",
        "| n | @kernel | @kernel, new arrays | staged | gnp asarray→kernel→get | CuPy | Numba | gnp resident | CuPy resident | issue 7 target (@kernel) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['n']:,} | {fmt(r.get('kernel_numpy_in_out'))} | {fmt(r.get('kernel_numpy_fresh'))} | "
            f"{fmt(r.get('staged_numpy_in_out'))} | {fmt(r.get('gnp_numpy_in_out'))} | {fmt(r.get('cupy_numpy_in_out'))} | "
            f"{fmt(r.get('numba_numpy_in_out'))} | {fmt(r.get('gnp_resident'))} | {fmt(r.get('cupy_resident'))} | {verdict(r)} |"
        )
    over = [r for r in rows if r.get("kernel_numpy_fresh") is not None and r["n"] in CUDA_TARGETS_MS
            and r["kernel_numpy_fresh"] > CUDA_TARGETS_MS[r["n"]]]
    if over:
        lines += ["", "With arrays it has never seen (the first call of a program, or new arrays each call) the "
                  "copies are pageable and the targets are not all met: " + ", ".join(
                      f"n={r['n']:,}: {r['kernel_numpy_fresh']:.4g} ms against ≤ {CUDA_TARGETS_MS[r['n']]:g}"
                      for r in over) + "."]
    if small:
        lines += [
            "",
            "Launches whose numpy arguments are all small travel as one batch, either in page-locked host "
            "memory the kernel reads and writes in place (no copy commands) or in one pooled device block "
            "with one copy each way. Every kernel access to host-mapped memory crosses the bus, so a kernel "
            "that reads each element many times (matmul reads each n times) loses once the arrays grow. "
            "*default*: host-mapped up to `MAPPED_BATCH_MAX` (4 KiB), and up to the whole batch limit (1 MiB) "
            "when the translator proves each work item touches only its own element (`streamed`, saxpy "
            "here); the other columns force one way (ms):",
            "",
            "| kernel | argument bytes | default | host-mapped | copied batch |",
            "|---|---:|---:|---:|---:|",
        ]
        for r in small:
            lines.append(f"| {r['case']} | {r['nbytes']:,} | {fmt(r.get('default'))} | {fmt(r.get('mapped'))} | "
                         f"{fmt(r.get('copied'))} |")
    return "\n".join(lines)


def write_section(name: str, title: str, body: str) -> None:
    start, end = f"<!-- bench_arrays:{name}:start -->", f"<!-- bench_arrays:{name}:end -->"
    block = f"{start}\n## {title}\n\n{body}\n{end}"
    text = open(RESULTS_MD).read() if os.path.exists(RESULTS_MD) else "# Benchmark results\n"
    pattern = re.compile(re.escape(start) + ".*?" + re.escape(end), re.S)
    text = pattern.sub(lambda _: block, text) if pattern.search(text) else text.rstrip("\n") + "\n\n" + block + "\n"
    tmp = RESULTS_MD + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, RESULTS_MD)
    print(f"wrote the {name} section of {RESULTS_MD}")


def _devices(name: str) -> list:
    try:
        return registry.backend_devices(name)
    except GPGPUError as exc:
        print(f"[{name}] skipped: {exc}")
        return []


def main() -> int:
    results = {"machine": machine(), "sections": {}}
    pocl = [d for d in _devices("opencl") if getattr(d, "host_unified_memory", False)]
    if pocl:
        dev = pocl[0]
        print(f"[pocl] {dev.name} ({dev.selector})")
        rows = pocl_section(dev)
        results["sections"]["pocl"] = rows
        if WRITE and not QUICK:
            write_section("pocl", "Device arrays: numpy in/out and resident saxpy on PoCL (bench_arrays.py)",
                          pocl_markdown(dev, rows))
    cuda = _devices("cuda")
    if cuda:
        dev = cuda[0]
        print(f"[cuda] {dev.name} ({dev.selector})")
        rows = cuda_section(dev)
        results["sections"]["cuda"] = rows
        small = results["sections"]["cuda_small_batch"] = guarded("small batch", lambda: small_batch_section(dev))
        if WRITE and not QUICK:
            write_section("cuda", "Device arrays: numpy in/out saxpy on CUDA vs CuPy and Numba (bench_arrays.py)",
                          cuda_markdown(dev, rows, small))
    if JSON_PATH:
        with open(JSON_PATH, "w") as f:
            json.dump(results, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
