"""Kernels on the CPU: @kernel on PoCL against Numba's ``njit(parallel=True)``, and gnp on PoCL
against numpy, in one process (issue 33, items 4 and 5).

    python benchmarks/bench_cpu.py OUT.json [--device SELECTOR] [--quick]

Rows: saxpy (16M float32), a 5-point stencil (2048², float32), mandelbrot (1024², 200
iterations), n-body (4096 bodies, float32), each written once as a ``@kernel`` and once as the loop Numba
users write, and a sum (16M float32: ``g.sum()`` against Numba's ``prange`` reduction); then ``g.sum()``, ``a * x + y`` and
``gnp.sort`` of 16M float32 beside numpy's own. Every result is checked against the other first.
Times: the median of batches after a warm-up (compiling included in the warm-up), in ms per call;
``ratio`` is ours / peer (below 1: faster). The device defaults to the first PoCL device.

    python benchmarks/bench_cpu.py OUT.json --ab

adds, for each ``@kernel`` row, the same kernel built with the CPU choices off (``PYGPGPU_CPU_TUNING=0``:
the GPU-shaped wide kernel and the runtime's group pick; ``pygpgpu_translate._cpu_choices``) as the peer,
timed alternately with it in this process (``--rounds`` times, median): ratio = with / without.
``--groups`` adds the 2-D kernels (stencil, mandelbrot) at fixed bracket group shapes beside the
automatic pick (peer), for tuning ``_cpu_choices.cpu_group_shape`` on a given CPU.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import platform

import numpy as np
import pygpgpu
import pygpgpu.numpy as gnp
from pygpgpu import kernel
from pygpgpu_core import registry
from _timing import timed_ms  # benchmarks/ is the script's folder, first on sys.path

_parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
_parser.add_argument("out", nargs="?", help="where to write the JSON report")
_parser.add_argument("--device", default=None, help="device selector (default: the first PoCL device)")
_parser.add_argument("--quick", action="store_true", help="smaller sizes (a smoke test)")
_parser.add_argument("--ab", action="store_true",
                     help="also time each @kernel with the CPU choices off (PYGPGPU_CPU_TUNING=0), alternately")
_parser.add_argument("--rounds", type=int, default=5, help="alternations of --ab (median of each side)")
_parser.add_argument("--groups", action="store_true", help="also time the 2-D kernels at fixed group shapes")
GROUP_SHAPES = [(8, 8), (64, 1), (256, 1), (1024, 1), (2048, 1), (512, 8), (1024, 4), (2048, 2)]
_args = _parser.parse_args([] if __name__ != "__main__" else None)
SCALE = 16 if _args.quick else 1

try:
    import numba
    from numba import njit, prange
except ImportError:            # the numpy rows still run
    numba = None


def pocl_device():
    if _args.device:
        return registry.get_device(_args.device)
    for selector in pygpgpu.available_devices():
        dev = registry.get_device(selector)
        if "Portable Computing Language" in str(getattr(dev, "platform_name", "")) or "pthread" in dev.name \
                or "cpu-" in dev.name:
            return dev
    raise SystemExit("no PoCL device: pass --device")


# --- the @kernel side: benchmarks/_bench_kernels.py (shared with bench_webgpu.py) ---------------
from _bench_kernels import mandelbrot, nbody, saxpy, stencil  # noqa: E402


# --- the Numba side ---------------------------------------------------------------------------
if numba is not None:
    @njit(parallel=True)
    def saxpy_nb(a, x, y, out):
        for i in prange(out.shape[0]):
            out[i] = a * x[i] + y[i]

    @njit(parallel=True)
    def stencil_nb(a, out):
        for i in prange(1, a.shape[0] - 1):
            for j in range(1, a.shape[1] - 1):
                out[i, j] = np.float32(0.25) * (a[i - 1, j] + a[i + 1, j] + a[i, j - 1] + a[i, j + 1]) - a[i, j]

    @njit(parallel=True)
    def mandelbrot_nb(out, iters):
        h, w = out.shape
        for i in prange(h):
            for j in range(w):
                cr = np.float32(-2.0) + np.float32(3.0) * np.float32(j) / np.float32(w)
                ci = np.float32(-1.5) + np.float32(3.0) * np.float32(i) / np.float32(h)
                zr = np.float32(0.0)
                zi = np.float32(0.0)
                n = 0
                while n < iters and zr * zr + zi * zi < np.float32(4.0):
                    zr, zi = zr * zr - zi * zi + cr, np.float32(2.0) * zr * zi + ci
                    n += 1
                out[i, j] = n

    @njit(parallel=True)
    def nbody_nb(pos, acc):
        for i in prange(acc.shape[0]):
            ax = np.float32(0.0)
            ay = np.float32(0.0)
            az = np.float32(0.0)
            for j in range(pos.shape[0]):
                dx = pos[j, 0] - pos[i, 0]
                dy = pos[j, 1] - pos[i, 1]
                dz = pos[j, 2] - pos[i, 2]
                inv = np.float32(1.0) / math.sqrt(dx * dx + dy * dy + dz * dz + np.float32(1e-3))
                s = pos[j, 3] * inv * inv * inv
                ax += dx * s
                ay += dy * s
                az += dz * s
            acc[i, 0] = ax
            acc[i, 1] = ay
            acc[i, 2] = az

    @njit(parallel=True)
    def total_nb(x):
        s = np.float32(0.0)
        for i in prange(x.shape[0]):
            s += x[i]
        return s


def untuned(kfunc, dev, *first_args, switch: str = "ENABLED"):
    """The kernel of ``kfunc``'s Python function as a separate kernel object whose plan (translation
    and group pick) is made with the CPU choices off (``switch="NARROW"``: only the one-element
    kernels off, the group shapes kept): its first call happens here."""
    import pygpgpu_translate._cpu_choices as cpu_choices
    k = kernel(kfunc.py_func)[dev.selector]
    was = getattr(cpu_choices, switch)
    setattr(cpu_choices, switch, False)
    try:
        k(*first_args)
    finally:
        setattr(cpu_choices, switch, was)
    return k


def alternate_ms(call_a, call_b, sync, batch: int, rounds: int) -> "tuple[float, float]":
    """Medians of ``rounds`` alternations of timed_ms on a then b: a burst of load from other
    jobs lands on both sides alike."""
    a, b = [], []
    for _ in range(rounds):
        a.append(timed_ms(call_a, sync, batch, repeats=3, warmup=1))
        b.append(timed_ms(call_b, sync, batch, repeats=3, warmup=1))
    return sorted(a)[len(a) // 2], sorted(b)[len(b) // 2]


def main() -> int:
    dev = pocl_device()
    rng = np.random.default_rng(0)
    rows = []

    def row(name, ours_ms, peer, peer_ms):
        rows.append({"row": name, "ours_ms": round(ours_ms, 4), "peer": peer,
                     "peer_ms": None if peer_ms is None else round(peer_ms, 4),
                     "ratio": None if peer_ms is None else round(ours_ms / peer_ms, 3)})
        print(rows[-1], flush=True)

    def ab(name, kfunc, k, args, sync, batch):
        """--ab: ``k`` (as the plain run builds it) against the same kernel with the CPU choices off."""
        if not _args.ab:
            return
        off = untuned(kfunc, dev, *args)
        with_ms, without_ms = alternate_ms(lambda: k(*args), lambda: off(*args), sync, batch, _args.rounds)
        row(f"{name} [CPU choices on / off]", with_ms, "PYGPGPU_CPU_TUNING=0", without_ms)
        wide = untuned(kfunc, dev, *args, switch="NARROW")
        with_ms, wide_ms = alternate_ms(lambda: k(*args), lambda: wide(*args), sync, batch, _args.rounds)
        row(f"{name} [CPU choices on / wide kernels with CPU groups]", with_ms, "_cpu_choices.NARROW=False", wide_ms)

    def shapes(name, kfunc, k, args, side, sync, batch):
        """--groups: ``kfunc`` launched over (side, side) in each of GROUP_SHAPES, alternately
        with the automatic pick ``k``."""
        if not _args.groups:
            return
        for shape in GROUP_SHAPES:
            fixed = kfunc[dev.selector][(side, side), shape]
            fixed(*args)
            mine, auto = alternate_ms(lambda: fixed(*args), lambda: k(*args), sync, batch, _args.rounds)
            row(f"{name} group {shape}", mine, "automatic group", auto)

    def put(a):
        return gnp.asarray(a, device=dev)

    ctx = dev.context()

    def sync_on(_g):
        return ctx.synchronize

    n = (1 << 24) // SCALE
    x, y = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    gx, gy, gout = put(x), put(y), gnp.empty(n, np.float32, device=dev)
    k = saxpy[dev.selector]
    k(np.float32(2.0), gx, gy, gout)
    np.testing.assert_allclose(gout.get(), 2 * x + y, rtol=1e-6)
    ours = timed_ms(lambda: k(np.float32(2.0), gx, gy, gout), sync_on(gout), 10)
    peer = None
    if numba is not None:
        out = np.empty_like(x)
        saxpy_nb(np.float32(2.0), x, y, out)
        peer = timed_ms(lambda: saxpy_nb(np.float32(2.0), x, y, out), lambda: None, 10)
    row(f"saxpy {n >> 20}M", ours, "numba parallel", peer)
    ab(f"saxpy {n >> 20}M", saxpy, k, (np.float32(2.0), gx, gy, gout), sync_on(gout), 10)
    if _args.ab:                # a prime length: the runtime's pick is a divisor of it (groups of one work item)
        gp1, gq1, go1 = gx[:n - 3], gy[:n - 3], gnp.empty(n - 3, np.float32, device=dev)
        ab(f"saxpy {n >> 20}M - 3 (prime)", saxpy, k, (np.float32(2.0), gp1, gq1, go1), sync_on(go1), 10)

    side = 2048 // int(math.sqrt(SCALE))
    a = rng.random((side, side), dtype=np.float32)
    ga, gs = put(a), gnp.zeros((side, side), np.float32, device=dev)
    k = stencil[dev.selector]
    k(ga, gs)
    ours = timed_ms(lambda: k(ga, gs), sync_on(gs), 10)
    peer = None
    if numba is not None:
        out = np.zeros_like(a)
        stencil_nb(a, out)
        np.testing.assert_allclose(gs.get(), out, rtol=1e-5, atol=1e-6)
        peer = timed_ms(lambda: stencil_nb(a, out), lambda: None, 10)
    row(f"stencil 5-point {side}²", ours, "numba parallel", peer)
    ab(f"stencil 5-point {side}²", stencil, k, (ga, gs), sync_on(gs), 10)
    shapes(f"stencil 5-point {side}²", stencil, k, (ga, gs), side, sync_on(gs), 10)

    side = 1024 // int(math.sqrt(SCALE))
    gm = gnp.zeros((side, side), np.int32, device=dev)
    k = mandelbrot[dev.selector]
    k(gm, 200)
    ours = timed_ms(lambda: k(gm, 200), sync_on(gm), 3)
    peer = None
    if numba is not None:
        out = np.zeros((side, side), np.int32)
        mandelbrot_nb(out, 200)
        assert np.mean(out != gm.get()) < 1e-3      # float32 on both sides; a boundary pixel may differ
        peer = timed_ms(lambda: mandelbrot_nb(out, 200), lambda: None, 3)
    row(f"mandelbrot {side}², 200 iterations", ours, "numba parallel", peer)
    ab(f"mandelbrot {side}²", mandelbrot, k, (gm, 200), sync_on(gm), 3)
    shapes(f"mandelbrot {side}²", mandelbrot, k, (gm, 200), side, sync_on(gm), 3)

    bodies = 4096 // SCALE
    pos = rng.random((bodies, 4), dtype=np.float32)
    gp, gacc = put(pos), gnp.zeros((bodies, 3), np.float32, device=dev)
    k = nbody[dev.selector]
    k(gp, gacc)
    ours = timed_ms(lambda: k(gp, gacc), sync_on(gacc), 2)
    peer = None
    if numba is not None:
        acc = np.zeros((bodies, 3), np.float32)
        nbody_nb(pos, acc)
        np.testing.assert_allclose(gacc.get(), acc, rtol=1e-3, atol=1e-3)
        peer = timed_ms(lambda: nbody_nb(pos, acc), lambda: None, 2)
    row(f"n-body {bodies}", ours, "numba parallel", peer)
    ab(f"n-body {bodies}", nbody, k, (gp, gacc), sync_on(gacc), 2)

    np.testing.assert_allclose(float(gx.sum()), float(x.sum()), rtol=1e-4)
    ours = timed_ms(lambda: gx.sum(), ctx.synchronize, 10)
    peer = None
    if numba is not None:
        np.testing.assert_allclose(total_nb(x), x.sum(dtype=np.float64), rtol=1e-3)
        peer = timed_ms(lambda: total_nb(x), lambda: None, 10)
    row(f"sum {n >> 20}M (gnp)", ours, "numba parallel", peer)

    # gnp against numpy (item 5)
    row(f"gnp g.sum() {n >> 20}M", timed_ms(lambda: gx.sum(), ctx.synchronize, 10), "numpy",
        timed_ms(lambda: x.sum(), lambda: None, 10))
    row(f"gnp a * x + y {n >> 20}M", timed_ms(lambda: 2.0 * gx + gy, ctx.synchronize, 5), "numpy",
        timed_ms(lambda: np.float32(2.0) * x + y, lambda: None, 5))
    np.testing.assert_array_equal(gnp.sort(gx).get(), np.sort(x))
    row(f"gnp sort {n >> 20}M", timed_ms(lambda: gnp.sort(gx), ctx.synchronize, 1), "numpy",
        timed_ms(lambda: np.sort(x), lambda: None, 1))
    if _args.ab:                # the sort reads the switch at each call
        import pygpgpu_translate._cpu_choices as cpu_choices

        def tiled_sort():
            cpu_choices.ENABLED = False
            try:
                return gnp.sort(gx)
            finally:
                cpu_choices.ENABLED = True
        with_ms, without_ms = alternate_ms(lambda: gnp.sort(gx), tiled_sort, ctx.synchronize, 1, min(_args.rounds, 3))
        row(f"gnp sort {n >> 20}M [CPU choices on / off]", with_ms, "PYGPGPU_CPU_TUNING=0", without_ms)

    report = {"device": str(dev), "cpus": os.cpu_count(), "machine": platform.processor() or platform.machine(),
              "numba": getattr(numba, "__version__", None), "numpy": np.__version__,
              "pygpgpu": pygpgpu.__version__, "python": platform.python_version(),
              "load": os.getloadavg(), "rows": rows}
    if _args.out:
        with open(_args.out, "w") as f:
            json.dump(report, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
