"""Warm launch with resident arrays (issue 17, items 1 and 6): what a warm ``@kernel`` call costs
beside CuPy's RawKernel (CUDA) and PyOpenCL's ``knl(queue, ...)`` (OpenCL) in the same run, the
host-side share of it, and a cProfile of 20k warm calls showing where that time goes.

    python benchmarks/profile_launch.py [OUT.json] [--backend opencl|cuda|...] [--calls 20000]

The kernel is the tiny one of bench_cuda.py (``x[i] += 1`` over one element) on a gnp array that
stays on the device. Rows (µs per call, best of ``--rounds`` rounds of ``--calls`` back-to-back calls
then one synchronize; every row is printed as ours / peer):

* ``@kernel``: ``k(x)`` with ``k = tiny["<backend>"]``;
* ``@kernel saxpy``: ``s(x, y, out, 2.0)``, three resident arrays of 1024 floats and a scalar;
* ``... host side``: the same calls on a second kernel object whose plan's launcher is a no-op,
  so only the Python work before the driver call is timed (as bench_launch_checks.py does);
* ``low-level launcher``: ``kernel.launcher([...])`` of the same handwritten source (the native
  launcher where ``pygpgpu build-native`` built it; then also ``low-level launcher, Python``);
* the peer: CuPy ``RawKernel`` or PyOpenCL ``knl(queue, (1,), None, buf)``, each with its own array.

Each round times every row once, one after the other, so a burst of load from other processes
on a shared machine lands on all rows alike rather than on whichever row ran then.

Then cProfile runs ``--calls`` ``@kernel`` host-side calls and prints the functions with the most
own time and their cumulative time. Runs well under 2 minutes.
"""
from __future__ import annotations

import cProfile
import io
import json
import math
import platform
import pstats
import sys
import time

import numpy as np

SOURCES = {
    "cuda": 'extern "C" __global__ void tiny(float* x, int n) {\n'
            "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) x[i] += 1.0f;\n}\n",
    "opencl": "__kernel void tiny(__global float* x, int n) {\n"
              "    int i = get_global_id(0);\n    if (i < n) x[i] += 1.0f;\n}\n",
}
SOURCES["hip"] = SOURCES["cuda"]


def tiny(x):
    for i in range(x.shape[0]):
        x[i] += 1.0


def saxpy(x, y, out, a):
    for i in range(out.shape[0]):
        out[i] = a * x[i] + y[i]


def per_call(fn, sync, calls: int, rounds: int) -> float:
    """Best seconds per call over ``rounds`` batches of ``calls`` back-to-back calls + one sync."""
    return interleaved({"row": (fn, sync)}, calls, rounds)["row"]


def interleaved(rows: dict, calls: int, rounds: int) -> dict:
    """name -> best seconds per call, each round timing every row of ``rows`` (name -> (fn,
    sync)) once: ``calls`` back-to-back calls then one sync, after a short warm-up."""
    best = {name: math.inf for name in rows}
    for name, (fn, sync) in rows.items():
        for _ in range(min(calls, 1000)):
            fn()
        sync()
    for _ in range(rounds):
        for name, (fn, sync) in rows.items():
            for _ in range(min(calls, 200)):
                fn()
            sync()
            t = time.perf_counter()
            for _ in range(calls):
                fn()
            sync()
            best[name] = min(best[name], (time.perf_counter() - t) / calls)
    return best


def profile_rows(fn, calls: int, top: int = 25) -> tuple[list, str]:
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(calls):
        fn()
    prof.disable()
    stats = pstats.Stats(prof)
    rows = []
    for (path, line, name), (cc, nc, tt, ct, _callers) in stats.stats.items():
        rows.append({"function": f"{path.rsplit('/', 1)[-1]}:{line}({name})", "calls": nc,
                     "own_us_per_launch": tt / calls * 1e6, "cum_us_per_launch": ct / calls * 1e6})
    rows.sort(key=lambda r: -r["own_us_per_launch"])
    out = io.StringIO()
    out.write(f"    {'own µs/launch':>14} {'cum µs/launch':>14} {'calls/launch':>12}  function\n")
    for r in rows[:top]:
        out.write(f"    {r['own_us_per_launch']:14.3f} {r['cum_us_per_launch']:14.3f} {r['calls'] / calls:12.1f}  "
                  f"{r['function']}\n")
    return rows[:top], out.getvalue()


def peer_cupy():
    """CuPy's RawKernel call of the tiny kernel and its sync."""
    import cupy

    k = cupy.RawKernel(SOURCES["cuda"], "tiny")
    x = cupy.zeros(1, cupy.float32)
    one = np.int32(1)
    return lambda: k((1,), (32,), (x, one)), cupy.cuda.Device().synchronize


def peer_pyopencl(device_name):
    """PyOpenCL's ``knl(queue, ...)`` of the tiny kernel and its sync."""
    import pyopencl as cl

    devices = [d for p in cl.get_platforms() for d in p.get_devices()]
    dev = next((d for d in devices if d.name == device_name), None)
    if dev is None:
        raise RuntimeError(f"PyOpenCL sees no device named {device_name!r}")
    ctx = cl.Context([dev])
    queue = cl.CommandQueue(ctx)
    knl = cl.Program(ctx, SOURCES["opencl"]).build().tiny
    buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4)
    one = np.int32(1)
    return lambda: knl(queue, (1,), None, buf, one), queue.finish


def measure(backend: str, calls: int, rounds: int) -> dict:
    from pygpgpu_core import gnp, registry
    from pygpgpu_translate import kernel

    dev = registry.get_device(backend)
    ctx = dev.context()
    dialect = getattr(dev.backend, "dialect", None) or dev.backend.name
    result: dict = {"backend": backend, "device": f"{dev.selector} {dev.name}"}
    x = gnp.asarray(np.zeros(1, np.float32), device=dev)
    xs = [gnp.asarray(np.ones(1024, np.float32), device=dev) for _ in range(3)]
    sync, nothing = ctx.synchronize, (lambda: None)
    k, s = kernel(tiny)[backend], kernel(saxpy)[backend]
    k_host, s_host = kernel(tiny)[backend], kernel(saxpy)[backend]     # their own plans, launchers stubbed
    for kf, args in ((k, (x,)), (s, xs + [2.0]), (k_host, (x,)), (s_host, xs + [2.0])):
        kf(*args)
    for kf in (k_host, s_host):
        (plan,) = kf._kf._plans.values()
        plan.launcher = lambda global_size, local_size, args: None
    a, b, c = xs
    prog = ctx.program(SOURCES[dialect], name="tiny_handwritten")
    fn = prog.kernel("tiny").launcher(["buffer", np.int32])
    buf = ctx.buffer(4)
    args = (buf, 1)
    rows = {
        "@kernel": (lambda: k(x), sync),
        "@kernel host side": (lambda: k_host(x), nothing),
        "@kernel saxpy": (lambda: s(a, b, c, 2.0), sync),
        "@kernel saxpy host side": (lambda: s_host(a, b, c, 2.0), nothing),
        "low-level launcher": (lambda: fn((1,), (32,), args), sync),
    }
    result["native launcher"] = type(fn).__name__ in ("Launcher", "RepeatLauncher")
    if type(fn).__name__ == "RepeatLauncher":      # OpenCL: the same launcher in Python, as without the module
        py_cl = prog.kernel("tiny").launcher(["buffer", np.int32], native=False)
        rows["low-level launcher, Python"] = (lambda: py_cl((1,), (32,), args), sync)
    elif result["native launcher"]:
        # the same launcher in Python, as it runs where `pygpgpu build-native` was not run
        from pygpgpu_core.backend.launcher import build_launcher

        py = build_launcher(prog.kernel("tiny"), ["buffer", np.int32], native=False)
        rows["low-level launcher, Python"] = (lambda: py((1,), (32,), args), sync)
        result["graph state"] = fn.graph_state()
        if fn.graph_state() != "none":     # and the native launcher launching directly, without its graph
            import os

            os.environ["PYGPGPU_GRAPH_LAUNCH"] = "0"
            try:
                direct = build_launcher(prog.kernel("tiny"), ["buffer", np.int32])
            finally:
                del os.environ["PYGPGPU_GRAPH_LAUNCH"]
            rows["low-level launcher, native, no graph"] = (lambda: direct((1,), (32,), args), sync)
    if "set_current" in getattr(getattr(fn, "python", fn), "__globals__", {}):
        # experiment: the same launcher without its cuCtxSetCurrent (the driver call replaced by a
        # Python no-op), to see what making the context current costs per launch
        from pygpgpu_core.backend.launcher import build_launcher

        bare = build_launcher(prog.kernel("tiny"), ["buffer", np.int32], native=False)  # not the kernel's own
        bare.__globals__["set_current"] = lambda handle: 0
        rows["low-level, no cuCtxSetCurrent"] = (lambda: bare((1,), (32,), args), sync)
        # and through cuLaunchKernel (11 arguments), which launches in the function's own context
        # whichever is current (benchmarks/launch_floor.c), so it needs no cuCtxSetCurrent either
        driver_calls = ctx.calls
        saved, driver_calls.launch_ex_unchecked = driver_calls.launch_ex_unchecked, None
        try:
            legacy = build_launcher(prog.kernel("tiny"), ["buffer", np.int32], native=False)
        finally:
            driver_calls.launch_ex_unchecked = saved
        legacy.__globals__["set_current"] = lambda handle: 0
        rows["cuLaunchKernel, no cuCtxSetCurrent"] = (lambda: legacy((1,), (32,), args), sync)
    peer = {"cuda": "cupy", "opencl": "pyopencl"}.get(dev.backend.name)
    result["peer"] = peer
    try:
        if peer == "cupy":
            rows["peer"] = peer_cupy()
        elif peer == "pyopencl":
            rows["peer"] = peer_pyopencl(dev.name)
    except Exception as exc:          # a missing peer only drops its column
        result["peer error"] = f"{type(exc).__name__}: {exc}"
    result["rows"] = interleaved(rows, calls, rounds)
    assert float(np.asarray(x)[0]) > 0, "the kernel did not run"
    np.testing.assert_allclose(np.asarray(c), 3.0)      # 2 * 1 + 1, however often it ran
    result["profile"], text = profile_rows(lambda: k_host(x), calls)
    result["profile text"] = text
    return result


def main(argv) -> int:
    args = [a for a in argv if not a.startswith("--")]
    opts: dict = {}
    for i, a in enumerate(argv):
        if a in ("--backend", "--calls", "--rounds") and i + 1 < len(argv):
            opts[a] = argv[i + 1]
            if argv[i + 1] in args:
                args.remove(argv[i + 1])
    json_path = args[0] if args else None
    calls = int(opts.get("--calls", 5000))
    rounds = int(opts.get("--rounds", 15))
    backends = [opts["--backend"]] if "--backend" in opts else ["cuda", "opencl"]
    started = time.perf_counter()
    report = {"meta": {"date": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()), "python": platform.python_version(),
                       "numpy": np.__version__, "machine": platform.node(), "calls": calls, "rounds": rounds},
              "results": []}
    from pygpgpu_core import registry
    for backend in backends:
        try:
            registry.get_device(backend)
        except Exception as exc:
            print(f"[{backend}] unavailable: {type(exc).__name__}: {str(exc).splitlines()[0][:200]}", flush=True)
            continue
        r = measure(backend, calls, rounds)
        report["results"].append(r)
        rows, peer = r["rows"], r["peer"]
        print(f"\n[{backend}] {r['device']}: warm launch of a tiny kernel, resident array, µs per call "
              f"(best of {rounds} x {calls})", flush=True)
        for name, s in rows.items():
            label = peer if name == "peer" else name
            ratio = ""
            if "peer" in rows and name != "peer":
                ratio = f"   ours/{peer} {s / rows['peer']:.2f}x"
            print(f"  {label:<24} {s * 1e6:8.2f} µs{ratio}", flush=True)
        if "peer error" in r:
            print(f"  {peer}: unavailable ({r['peer error'][:200]})", flush=True)
        print(f"  cProfile of {calls} @kernel calls, host side (launcher stubbed), by own time:", flush=True)
        print(r["profile text"], end="", flush=True)
    print(f"\ntotal {time.perf_counter() - started:.1f} s", flush=True)
    if json_path:
        for r in report["results"]:
            r["rows_us"] = {k: v * 1e6 for k, v in r.pop("rows").items()}
        with open(json_path, "w") as f:
            json.dump(report, f, indent=1)
        print(f"wrote {json_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
