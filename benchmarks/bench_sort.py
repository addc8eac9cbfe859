"""gnp.sort / gnp.argsort of long 1-D arrays (the radix sort) beside CuPy, and where its time goes.

    python benchmarks/bench_sort.py [OUT.json] [--device SELECTOR] [--n ELEMENTS]

For float32, int32, float64 and uint8 arrays of ``--n`` elements (default 16M; 4M on a CPU device):
the time of ``gnp.sort`` and ``gnp.argsort`` (checked against numpy first), CuPy's ``cp.sort`` and
``cp.argsort`` beside them where CuPy is importable, and the ratio. Then one float32 sort once
more with a synchronize around every launch: the time per kernel (histogram, the three scan
kernels, scatter) summed over the passes -- each launch then waits for the previous one, so the
sum is larger than the sort's time, but the shares say which kernel to work on.

Times: the median of several repeats of a batch of calls after a warm-up (the warm-up includes
compiling), synchronized at the end of each batch, in milliseconds per call.
"""
from __future__ import annotations

import argparse
import collections
import json
import sys
import time

import numpy as np
import pygpgpu.numpy as gnp
from pygpgpu_core import registry
from _timing import timed_ms  # benchmarks/ is the script's folder, first on sys.path

_parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
_parser.add_argument("out", nargs="?", help="where to write the JSON report")
_parser.add_argument("--device", default=None, help="device selector (default: the default device)")
_parser.add_argument("--n", type=int, default=None, help="elements per array (default 16M, 4M on a CPU)")
ARGS = _parser.parse_args()


def sample(dtype, n: int) -> np.ndarray:
    rng = np.random.default_rng(0)
    if np.dtype(dtype).kind == "f":
        return rng.random(n).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)


def kernel_shares(dev, g) -> dict:
    """ms per kernel name over one sort, each launch synchronized."""
    from pygpgpu_translate.array_ops import _radix, _scan

    sync = dev.context().synchronize
    spent: collections.Counter = collections.Counter()
    real = _radix.launch

    def timed_launch(kern, device, config, args):
        sync()
        t = time.perf_counter()
        real(kern, device, config, args)
        sync()
        spent[kern.__name__] += (time.perf_counter() - t) * 1e3

    _radix.launch = _scan.launch = timed_launch
    try:
        gnp.sort(g)
        sync()
    finally:
        _radix.launch = _scan.launch = real
    return dict(spent.most_common())


def main() -> int:
    dev = registry.select_device(ARGS.device)
    sync = dev.context().synchronize
    n = ARGS.n or ((4 if getattr(dev, "is_cpu", False) else 16) << 20)
    print(f"device: {dev.selector} {dev.name}, n = {n}")
    try:
        import cupy as cp
        csync = cp.cuda.Device().synchronize
    except Exception as exc:            # noqa: BLE001  (no CuPy: ours alone)
        cp = None
        print(f"CuPy not importable ({exc}); timing pygpgpu.numpy alone")
    rows, ok = [], True
    for dtype in (np.float32, np.int32, np.float64, np.uint8):
        a = sample(dtype, n)
        g = gnp.asarray(a, device=dev)
        c = cp.asarray(a) if cp else None
        for op in ("sort", "argsort"):
            ours = getattr(gnp, op)
            want = np.sort(a) if op == "sort" else np.argsort(a, kind="stable")
            row = {"op": f"{op} {n / 2**20:g}M {np.dtype(dtype).name}",
                   "checked": bool(np.array_equal(ours(g).get(), want))}
            ok &= row["checked"]
            row["ours_ms"] = timed_ms(lambda: ours(g), sync, 3)
            if cp:
                theirs = getattr(cp, op)
                row["cupy_ms"] = timed_ms(lambda: theirs(c), csync, 3)
                row["ratio_ours_over_cupy"] = row["ours_ms"] / row["cupy_ms"]
            rows.append(row)
            cupy = f"{row['cupy_ms']:9.3f} {row['ratio_ours_over_cupy']:6.2f}" if cp else ""
            print(f"{row['op']:28s} {row['ours_ms']:9.3f} {cupy} {'' if row['checked'] else 'WRONG RESULT'}")
    shares = kernel_shares(dev, gnp.asarray(sample(np.float32, n), device=dev))
    print("one float32 sort, each launch synchronized (ms per kernel, all passes):")
    for name, ms in shares.items():
        print(f"  {ms:9.3f}  {name}")
    if ARGS.out:
        with open(ARGS.out, "w") as f:
            json.dump({"device": dev.name, "n": n, "rows": rows, "kernels_ms": shares}, f, indent=2)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
