"""Issue 33's table of pygpgpu.numpy operations against CuPy, side by side in one run.

    python benchmarks/bench_gnp_table.py OUT.json [--device SELECTOR] [--quick] [--only SUBSTRING]
                                         [--profile]

Rows (float32 unless named): elementwise (add, a*x+y, sin, exp, where) and reductions (sum, max,
mean, argmax) of 16M elements, sum(axis=1) of 4096x4096, sort of 16M and argsort of 4M, matmul of
4096x4096 (CuPy's is cuBLAS), boolean mask select of 16M, cumsum of 16M, a transpose copy of
4096x4096, take of 16M, and the fixed cost of a call: a+b and sum of 1000 elements. Each result
is checked against CuPy's (or numpy's) first. Times: the median of several batches of
back-to-back calls, one synchronize per batch (benchmarks/_timing.py), ms per call; for the
1000-element rows that is the host's cost of one call, as a loop of small operations sees it.

``--synced`` adds each row's latency (one call, then a synchronize; the median of 30): the
difference between a 16M row and a 1000-element one is about the device time of the bigger one.
``--profile`` adds a cProfile of 20,000 warm calls of each 1000-element row (the top functions by
own time), to see where the fixed cost of a gnp call goes on that machine.
"""
from __future__ import annotations

import argparse
import cProfile
import io
import json
import platform
import pstats
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
_parser.add_argument("--only", default=None, help="only the rows whose name contains this")
_parser.add_argument("--profile", action="store_true", help="cProfile the 1000-element rows")
_parser.add_argument("--radix-sweep", action="store_true",
                     help="gnp.sort/argsort through the one-sweep radix sort (off by default until timed on a GPU)")
_parser.add_argument("--synced", action="store_true",
                     help="also time each call followed by a synchronize (its latency: host and device in series)")
_args = _parser.parse_args()


def close(a, b, rtol) -> bool:
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return bool(np.allclose(a, b, rtol=rtol, atol=rtol * max(1.0, float(np.max(np.abs(b))) if b.size else 1.0)))


def cases(xp, data: dict):
    """(name, function of this array module, rtol or 0 for exact, batch) for gnp and for CuPy alike."""
    x, y, m, s, s4, mm1, mm2, idx, t1, t2 = (data[k] for k in ("x", "y", "m", "s", "s4", "mm1", "mm2", "idx",
                                                               "t1", "t2"))
    n, side, nmm = data["n"], data["side"], data["nmm"]
    M = n >> 20
    return [
        (f"add {M}M", lambda: x + y, 0, 50),
        (f"a*x+y {M}M", lambda: 2.5 * x + y, 1e-6, 50),
        (f"sin {M}M", lambda: xp.sin(x), 1e-5, 50),
        (f"exp {M}M", lambda: xp.exp(x), 1e-5, 50),
        (f"where {M}M", lambda: xp.where(x > 0.5, x, y), 0, 50),
        (f"sum {M}M", lambda: x.sum(), 1e-5, 100),
        (f"max {M}M", lambda: x.max(), 0, 100),
        (f"mean {M}M", lambda: x.mean(), 1e-5, 100),
        (f"argmax {M}M", lambda: x.argmax(), 0, 100),
        (f"sum(axis=1) {side}x{side}", lambda: m.sum(axis=1), 1e-5, 100),
        (f"sum(axis=0) {side}x{side}", lambda: m.sum(axis=0), 1e-5, 100),
        (f"sort {M}M", lambda: xp.sort(s), 0, 5),
        (f"argsort {s4.size >> 20}M", lambda: xp.argsort(s4), -1, 5),
        (f"matmul {nmm}x{nmm}", lambda: mm1 @ mm2, 1e-3, 3),
        (f"boolean mask select {M}M", lambda: x[x > 0.5], 0, 20),
        (f"cumsum {M}M", lambda: xp.cumsum(x), 1e-3, 20),
        (f"transpose copy {side}x{side}", lambda: xp.ascontiguousarray(m.T), 0, 50),
        (f"take {M}M", lambda: xp.take(x, idx), 0, 50),
        ("a + b, 1000 elements", lambda: t1 + t2, 0, 2000),
        ("sum, 1000 elements", lambda: t1.sum(), 1e-5, 2000),
    ]


def host_data(quick: bool) -> dict:
    rng = np.random.default_rng(0)
    n = (4 if quick else 16) << 20
    side = 1024 if quick else 4096
    nmm = 1024 if quick else 4096
    return {
        "n": n, "side": side, "nmm": nmm,
        "x": rng.random(n, dtype=np.float32), "y": rng.random(n, dtype=np.float32),
        "m": rng.random((side, side), dtype=np.float32),
        "s": rng.random(n, dtype=np.float32), "s4": rng.random(n // 4, dtype=np.float32),
        "mm1": rng.random((nmm, nmm), dtype=np.float32), "mm2": rng.random((nmm, nmm), dtype=np.float32),
        "idx": rng.integers(0, n, n).astype(np.int64),
        "t1": rng.random(1000, dtype=np.float32), "t2": rng.random(1000, dtype=np.float32),
    }


def to_host(v, xp_name: str):
    if xp_name == "cupy":
        return v.get()
    return v.get() if hasattr(v, "get") else np.asarray(v)


def profile_rows(fns: list, rows: list) -> None:
    for name, fn in fns:
        for _ in range(200):
            fn()
        pr = cProfile.Profile()
        pr.enable()
        for _ in range(20000):
            fn()
        pr.disable()
        buf = io.StringIO()
        pstats.Stats(pr, stream=buf).sort_stats("tottime").print_stats(16)
        print(f"--- profile of {name} (20,000 calls) ---\n{buf.getvalue()}")
        rows.append({"op": f"profile: {name}", "profile": buf.getvalue()})


def main() -> int:
    if _args.radix_sweep:
        from pygpgpu_translate.array_ops import _radix
        _radix.SWEEP = True
    dev = registry.select_device(_args.device)
    backend = dev.backend.name if hasattr(dev.backend, "name") else dev.selector.split(":")[0]
    print(f"device: {dev.selector} {dev.name} ({backend})")
    try:
        import cupy as cp
        if backend != "cuda":
            cp = None
    except Exception as exc:           # noqa: BLE001  (no CuPy: ours alone, checked against numpy)
        print(f"CuPy not importable ({exc}); timing pygpgpu.numpy alone")
        cp = None
    data = host_data(_args.quick)
    arrays = {k: v for k, v in data.items() if isinstance(v, np.ndarray)}
    ours_data = dict(data, **{k: gnp.asarray(v, device=dev) for k, v in arrays.items()})
    sync = dev.context().synchronize
    ours = cases(gnp, ours_data)
    if cp is not None:
        their_data = dict(data, **{k: cp.asarray(v) for k, v in arrays.items()})
        theirs = cases(cp, their_data)
        csync = cp.cuda.Device().synchronize
    else:
        theirs = [None] * len(ours)
    host = cases(np, data)
    rows: list = []
    t0 = time.perf_counter()
    for (name, fn, rtol, batch), other, (_, host_fn, _, _) in zip(ours, theirs, host):
        if _args.only and _args.only not in name:
            continue
        row: dict = {"op": name}
        try:
            got = to_host(fn(), "gnp")
            want = to_host(other[1](), "cupy") if other is not None else np.asarray(host_fn())
            if rtol == -1:                # argsort: ties may order differently; compare the sorted values
                src = data["s4"]
                row["checked"] = bool(np.array_equal(src[got], src[want]))
            else:
                row["checked"] = close(got, want, rtol) if rtol else bool(np.array_equal(got, want))
            row["ours_ms"] = timed_ms(fn, sync, batch, 7)
            if _args.synced and batch >= 20:
                row["ours_synced_ms"] = timed_ms(fn, sync, 1, 30)
        except Exception as exc:      # noqa: BLE001  (report and go on with the next row)
            row["error"] = f"{type(exc).__name__}: {exc}"
            traceback.print_exc()
        if other is not None:
            try:
                row["cupy_ms"] = timed_ms(other[1], csync, batch, 7)
                if _args.synced and batch >= 20:
                    row["cupy_synced_ms"] = timed_ms(other[1], csync, 1, 30)
                if "ours_ms" in row:
                    row["ratio_ours_over_cupy"] = row["ours_ms"] / row["cupy_ms"]
            except Exception as exc:  # noqa: BLE001
                row["cupy_error"] = f"{type(exc).__name__}: {exc}"
        rows.append(row)
        ratio = row.get("ratio_ours_over_cupy")
        flag = "" if row.get("checked", True) else "  RESULT DIFFERS"
        print(f"{name:32s} ours {row.get('ours_ms', float('nan')):9.4f} ms   cupy "
              f"{row.get('cupy_ms', float('nan')):9.4f} ms   ratio "
              f"{'-' if ratio is None else f'{ratio:5.2f}'}{flag}{'  ' + row['error'] if 'error' in row else ''}"
              + (f"   synced ours {row['ours_synced_ms']:.4f} cupy {row.get('cupy_synced_ms', float('nan')):.4f}"
                 if "ours_synced_ms" in row else ""), flush=True)
    if _args.profile:
        t1, t2 = ours_data["t1"], ours_data["t2"]
        profile_rows([("gnp a + b, 1000", lambda: t1 + t2), ("gnp sum, 1000", lambda: t1.sum())], rows)
    report = {"device": {"selector": dev.selector, "name": dev.name, "backend": backend},
              "pygpgpu": pygpgpu.__version__, "numpy": np.__version__, "python": platform.python_version(),
              "quick": _args.quick, "seconds": time.perf_counter() - t0, "rows": rows}
    if cp is not None:
        report["cupy"] = cp.__version__
    if _args.out:
        with open(_args.out, "w") as f:
            json.dump(report, f, indent=2)
        print(f"wrote {_args.out} ({report['seconds']:.0f} s)")
    return 0 if all(r.get("checked", True) and "error" not in r for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
