"""The timing rule the device-array benchmarks share (bench_gnp.py, bench_sort.py,
sweep_reduction.py): back-to-back calls, synchronized once per batch, the median batch."""
from __future__ import annotations

import statistics
import time


def timed_ms(fn, sync, batch: int, repeats: int = 5, warmup: int = 2) -> float:
    """Median over ``repeats`` of the milliseconds per call of ``batch`` back-to-back calls of
    ``fn`` followed by one ``sync()``, after ``warmup`` calls (which include any compiling)."""
    return timed_ms_and_repeats(fn, sync, batch, repeats, warmup)[0]


def timed_ms_and_repeats(fn, sync, batch: int, repeats: int = 5, warmup: int = 2) -> "tuple[float, list]":
    """:func:`timed_ms`, and every repeat's milliseconds per call beside the median."""
    for _ in range(warmup):
        fn()
    sync()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        for _ in range(batch):
            fn()
        sync()
        times.append((time.perf_counter() - t) / batch * 1e3)
    return statistics.median(times), times
