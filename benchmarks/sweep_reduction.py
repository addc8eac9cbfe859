"""Tuning sweep of the GPU rows-reduction kernel behind ``g.sum()`` (issue 16): each combination
of 128-bit vector loads on/off, loads in flight per work item and groups per compute unit,
timed beside CuPy's ``cp.sum`` in the same run.

    python benchmarks/sweep_reduction.py [OUT.json] [--device SELECTOR]

Rows: ``g.sum()`` of 64M float32 and ``g.sum(axis=1)`` of 8192x8192 float32, ms per call (median of
5 batches of 30 back-to-back calls, synchronized per batch), each checked against numpy first; with
CuPy also the device time alone (CUDA events around calls queued behind a long copy) and the host
time alone (launches stubbed), to tell a host-bound call from a slow kernel.
The knobs are module constants of ``pygpgpu_translate.array_ops._reduction``; the winner is what
the module should default to.
"""
from __future__ import annotations

import argparse
import itertools
import json
import time

import numpy as np
import pygpgpu.numpy as gnp
from pygpgpu_core import registry
from pygpgpu_translate.array_ops import _reduction as R
from _timing import timed_ms  # benchmarks/ is the script's folder, first on sys.path


def gpu_ms(fn, blocker, stream, cp, calls: int = 5) -> float:
    """Device time per call: ``calls`` calls queued behind a long ``blocker`` (so the host has
    queued them all before the device reaches them), timed by events on ``stream``."""
    start, end = cp.cuda.Event(), cp.cuda.Event()
    best = float("inf")
    for _ in range(3):
        blocker()
        start.record(stream)
        for _ in range(calls):
            fn()
        end.record(stream)
        end.synchronize()
        best = min(best, cp.cuda.get_elapsed_time(start, end) / calls)
    return best


def host_ms(fn, module, calls: int = 200) -> float:
    """Host time per call with the reduction's launches stubbed out."""
    real = module.launch
    module.launch = lambda *a: None
    try:
        fn()
        t = time.perf_counter()
        for _ in range(calls):
            fn()
        return (time.perf_counter() - t) / calls * 1e3
    finally:
        module.launch = real


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", nargs="?")
    ap.add_argument("--device", default=None)
    args = ap.parse_args()
    dev = registry.get_device(args.device) if args.device else registry.get_device()
    sync = dev.context().synchronize
    rng = np.random.default_rng(0)
    x = rng.random(64 << 20, dtype=np.float32)
    m = rng.random((8192, 8192), dtype=np.float32)
    gx, gm = gnp.asarray(x, device=dev), gnp.asarray(m, device=dev)
    want_x, want_m = x.astype(np.float64).sum(), m.astype(np.float64).sum(axis=1)
    report: dict = {"device": f"{dev.selector} {dev.name}", "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                    "rows": []}
    try:
        import cupy as cp
        cx, cm = cp.asarray(x), cp.asarray(m)
        csync = cp.cuda.Device().synchronize
        ours_stream = cp.cuda.ExternalStream(dev.context().queue.ptr)
        cstream = cp.cuda.get_current_stream()

        def cblock():
            for _ in range(8):
                cx.copy()
        report["cupy_ms"] = {"sum": timed_ms(lambda: cx.sum(), csync, 30), "sum1": timed_ms(lambda: cm.sum(axis=1), csync, 30),
                             "sum_gpu": gpu_ms(lambda: cx.sum(), cblock, cstream, cp),
                             "sum1_gpu": gpu_ms(lambda: cm.sum(axis=1), cblock, cstream, cp)}
        print("cupy", report["cupy_ms"], flush=True)
    except Exception as exc:      # noqa: BLE001  (no CuPy: ours alone)
        cp = None
        print(f"no CuPy: {exc}")

    def block():
        for _ in range(8):
            gx.copy()
    scalar_lanes = R._vector_lanes
    for vector, loads, per_cu in itertools.product((True, False), (1, 2, 4), (8, 16, 32)):
        if not vector and loads != 2:
            continue
        R._GPU_VECTOR_LOADS, R._GPU_GROUPS_PER_CU = loads, per_cu
        R._vector_lanes = scalar_lanes if vector else (lambda *a: 1)
        row = {"vector": vector, "loads": loads, "groups_per_cu": per_cu}
        try:
            assert np.isclose(float(gx.sum().get()), want_x, rtol=1e-5)
            assert np.allclose(gm.sum(axis=1).get(), want_m, rtol=1e-5)
            row["sum_ms"] = timed_ms(lambda: gx.sum(), sync, 30)
            row["sum1_ms"] = timed_ms(lambda: gm.sum(axis=1), sync, 30)
            row["sum_host_ms"] = host_ms(lambda: gx.sum(), R)
            if cp is not None:
                row["sum_gpu_ms"] = gpu_ms(lambda: gx.sum(), block, ours_stream, cp)
                row["sum1_gpu_ms"] = gpu_ms(lambda: gm.sum(axis=1), block, ours_stream, cp)
        except Exception as exc:  # noqa: BLE001  (report and go on)
            row["error"] = f"{type(exc).__name__}: {exc}"
        report["rows"].append(row)
        print(row, flush=True)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(report, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
