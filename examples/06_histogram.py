"""A histogram with atomics: many work items add to the same bins at once.

    python examples/06_histogram.py [values]

A gid-style kernel: gpu.work_size(data) names the launch domain (one work item per value),
gpu.get_global_id(0) is this item's index, and gpu.atomic_add makes the concurrent
increments safe. The counts array is read back automatically because the kernel writes it.
"""
import numpy as np
from _common import example_size

from pygpgpu import gpu, kernel

BINS = 64


@kernel
def histogram(data, counts):
    gpu.work_size(data)                      # host side only: the domain is data's shape
    i = gpu.get_global_id(0)
    value = data[i]
    b = int(value * BINS)                    # data is in [0, 1)
    if b >= BINS:
        b = BINS - 1
    gpu.atomic_add(counts, b, 1)


def main(n: int = 10_000_000) -> dict:
    data = np.random.default_rng(3).beta(2.0, 5.0, n).astype(np.float32)
    counts = np.zeros(BINS, np.int32)
    histogram(data, counts)
    peak = int(np.argmax(counts))
    print(f"{n:,} values in {BINS} bins; fullest bin {peak} ({counts[peak]:,} values)")
    for b in range(0, BINS, 8):
        print(f"  [{b / BINS:.3f}, {(b + 8) / BINS:.3f}) " + "#" * int(60 * counts[b:b + 8].sum() / n))
    return {"data": data, "counts": counts}


if __name__ == "__main__":
    main(example_size(10_000_000))
