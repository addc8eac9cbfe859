"""pygpgpu.numpy operations against CuPy (CUDA) and numpy (PoCL), in one run (issue 16).

    python benchmarks/bench_gnp.py OUT.json [--device SELECTOR] [--quick]

On a CUDA device with CuPy importable: g.sum() of 64M float32 (and its bandwidth as a share of
a device-to-device copy's), a*x+y on 64M float32, sum(axis=0) and sum(axis=1) of 8192x8192
float32, cumsum of 64M float32, sort of 16M float32, each beside CuPy's time for the same
expression and the ratio ours/CuPy (below 1: faster than CuPy). Without CuPy, the same rows
without that column. On an OpenCL CPU device (PoCL): g.sum() of 16M float32 against numpy's
x.sum() (and a*x+y beside numpy's). Every result is checked against numpy (or CuPy) first.

Times: the median of several repeats of a batch of calls after a warm-up (the warm-up includes
compiling), synchronized at the end of each batch, in milliseconds per call. Made to finish in
well under two minutes on an H200. The JSON holds the rows, the device and the versions.
"""
from __future__ import annotations

import argparse
import json
import platform
import sys
import time
import traceback

import numpy as np
import pygpgpu
import pygpgpu.numpy as gnp
from pygpgpu_core import registry
from _timing import timed_ms  # benchmarks/ is the script's folder, first on sys.path

_parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
_parser.add_argument("out", nargs="?", help="where to write the JSON report")
_parser.add_argument("--device", default=None, help="device selector (default: the default device)")
_parser.add_argument("--quick", action="store_true", help="smaller sizes (a smoke test)")
_args = _parser.parse_args()
OUT_PATH, QUICK, SELECTOR = _args.out, _args.quick, _args.device


def close(a, b, rtol) -> bool:
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return bool(np.allclose(a, b, rtol=rtol, atol=rtol * max(1.0, float(np.max(np.abs(b))) if b.size else 1.0)))


def cuda_rows(dev, rows: list) -> None:
    try:
        import cupy as cp
    except Exception as exc:           # noqa: BLE001  (no CuPy: ours alone)
        cp = None
        print(f"CuPy not importable ({exc}); timing pygpgpu.numpy alone")
    sync = dev.context().synchronize
    csync = (lambda: cp.cuda.Device().synchronize()) if cp else None
    n = (16 if QUICK else 64) << 20
    side = 4096 if QUICK else 8192
    nsort = (4 if QUICK else 16) << 20
    rng = np.random.default_rng(0)
    x = rng.random(n, dtype=np.float32)
    y = rng.random(n, dtype=np.float32)
    m = rng.random((side, side), dtype=np.float32)
    s = rng.random(nsort, dtype=np.float32)
    gx, gy, gm, gs = (gnp.asarray(v, device=dev) for v in (x, y, m, s))
    cx, cy, cm, cs = (cp.asarray(v) for v in (x, y, m, s)) if cp else (None,) * 4
    a = 2.5

    copy_ms = timed_ms(lambda: gx.copy(), sync, 20, 5)
    copy_gbs = 2 * x.nbytes / copy_ms / 1e6
    ccopy_ms = timed_ms(lambda: cx.copy(), csync, 20, 5) if cp else None
    rows.append({"op": f"copy {n >> 20}M float32 (device to device)", "ours_ms": copy_ms, "cupy_ms": ccopy_ms,
                 "ours_GBps": copy_gbs})

    cases = [
        (f"g.sum() {n >> 20}M float32", lambda: gx.sum(), lambda: cx.sum(), lambda: x.astype(np.float64).sum(),
         1e-5, 30, x.nbytes),
        (f"a*x+y {n >> 20}M float32", lambda: a * gx + gy, lambda: a * cx + cy, lambda: a * x + y, 1e-6, 20, None),
        (f"sum(axis=0) {side}x{side} float32", lambda: gm.sum(axis=0), lambda: cm.sum(axis=0),
         lambda: m.astype(np.float64).sum(axis=0), 1e-5, 20, m.nbytes),
        (f"sum(axis=1) {side}x{side} float32", lambda: gm.sum(axis=1), lambda: cm.sum(axis=1),
         lambda: m.astype(np.float64).sum(axis=1), 1e-5, 20, m.nbytes),
        (f"cumsum {n >> 20}M float32", lambda: gnp.cumsum(gx), lambda: cp.cumsum(cx),
         lambda: np.cumsum(x.astype(np.float64)), 1e-4, 10, None),
        (f"sort {nsort >> 20}M float32", lambda: gnp.sort(gs), lambda: cp.sort(cs), lambda: np.sort(s), 0, 3, None),
    ]
    for name, ours, theirs, reference, rtol, batch, read_bytes in cases:
        row = {"op": name}
        try:
            got = ours().get()
            want = reference()
            row["checked"] = close(got, want, rtol) if rtol else bool(np.array_equal(got, want))
            row["ours_ms"] = timed_ms(ours, sync, batch, 5)
            if read_bytes:
                row["ours_GBps"] = read_bytes / row["ours_ms"] / 1e6
                row["share_of_copy_bandwidth"] = row["ours_GBps"] / copy_gbs
        except Exception as exc:      # noqa: BLE001  (report and go on with the next row)
            row["error"] = f"{type(exc).__name__}: {exc}"
            traceback.print_exc()
        if cp:
            try:
                row["cupy_ms"] = timed_ms(theirs, csync, batch, 5)
                if "ours_ms" in row:
                    row["ratio_ours_over_cupy"] = row["ours_ms"] / row["cupy_ms"]
            except Exception as exc:  # noqa: BLE001
                row["cupy_error"] = f"{type(exc).__name__}: {exc}"
        rows.append(row)


def pocl_rows(dev, rows: list) -> None:
    sync = dev.context().synchronize
    n = (4 if QUICK else 16) << 20
    x = np.random.default_rng(0).random(n, dtype=np.float32)
    y = np.random.default_rng(1).random(n, dtype=np.float32)
    gx, gy = gnp.asarray(x, device=dev), gnp.asarray(y, device=dev)
    for name, ours, host, rtol in [
        (f"g.sum() {n >> 20}M float32", lambda: gx.sum(), lambda: x.sum(), 1e-5),
        (f"a*x+y {n >> 20}M float32", lambda: 2.5 * gx + gy, lambda: 2.5 * x + y, 1e-6),
    ]:
        row = {"op": name, "checked": close(ours().get(), host(), rtol)}
        row["ours_ms"] = timed_ms(ours, sync, 5, 7)
        row["numpy_ms"] = timed_ms(host, lambda: None, 5, 7)
        row["ratio_ours_over_numpy"] = row["ours_ms"] / row["numpy_ms"]
        rows.append(row)


def main() -> int:
    dev = registry.select_device(SELECTOR)
    backend = dev.backend.name if hasattr(dev.backend, "name") else dev.selector.split(":")[0]
    print(f"device: {dev.selector} {dev.name} ({backend})")
    rows: list = []
    t0 = time.perf_counter()
    if backend == "cuda":
        cuda_rows(dev, rows)
    elif getattr(dev, "is_cpu", False) or getattr(dev, "host_unified_memory", False):
        pocl_rows(dev, rows)
    else:
        print(f"no comparison defined for {dev.selector}; run with --device cuda or a PoCL device")
    other = [k for k in ("cupy_ms", "numpy_ms") if any(k in r for r in rows)]
    head = f"{'operation':40s} {'ours ms':>9s}" + "".join(f" {k[:-3] + ' ms':>9s}" for k in other)
    print(head + f" {'ratio':>7s}  notes")
    for r in rows:
        ratio = r.get("ratio_ours_over_cupy", r.get("ratio_ours_over_numpy"))
        notes = []
        if "share_of_copy_bandwidth" in r:
            notes.append(f"{r['ours_GBps']:.0f} GB/s = {100 * r['share_of_copy_bandwidth']:.0f}% of copy bandwidth")
        elif "ours_GBps" in r:
            notes.append(f"{r['ours_GBps']:.0f} GB/s")
        if r.get("checked") is False:
            notes.append("RESULT DIFFERS FROM THE REFERENCE")
        if "error" in r:
            notes.append(r["error"])
        cells = "".join(f" {r[k]:9.3f}" if r.get(k) is not None else f" {'-':>9s}" for k in other)
        ours = f"{r['ours_ms']:9.3f}" if "ours_ms" in r else f"{'-':>9s}"
        print(f"{r['op']:40s} {ours}{cells} {ratio if ratio is None else f'{ratio:7.2f}'}  {'; '.join(notes)}")
    report = {"device": {"selector": dev.selector, "name": dev.name, "backend": backend},
              "pygpgpu": pygpgpu.__version__, "numpy": np.__version__, "python": platform.python_version(),
              "quick": QUICK, "seconds": time.perf_counter() - t0, "rows": rows}
    try:
        import cupy
        report["cupy"] = cupy.__version__
    except Exception:                 # noqa: BLE001
        pass
    if OUT_PATH:
        with open(OUT_PATH, "w") as f:
            json.dump(report, f, indent=2)
        print(f"wrote {OUT_PATH} ({report['seconds']:.0f} s)")
    return 0 if all(r.get("checked", True) and "error" not in r for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
