"""Monte Carlo estimate of pi: points drawn in the unit square, counted inside the quarter circle.

    python examples/02_monte_carlo_pi.py [work_items]

`gpu.uniform(seed, counter)` is a counter-based generator (Philox-4x32-10): nothing is stored,
so work item i simply draws the numbers with counters i * 2 * SAMPLES ... (i + 1) * 2 * SAMPLES - 1.
The same function runs on the host on a numpy array of counters and gives bit-identical
floats, so the host recomputes every work item's count exactly.
"""
import numpy as np
from _common import example_size

from pygpgpu import gpu, kernel

SAMPLES = 256           # points per work item (a module constant: compiled in)
SEED = 2024


@kernel
def count_hits(hits, seed):
    for i in range(hits.shape[0]):
        inside = 0
        first = i * (2 * SAMPLES)
        for k in range(SAMPLES):
            # float32 multiples of 2**-24: their squares and the sum are exact in float64, so a
            # point on the circle's edge counts the same with or without a fused multiply-add
            x = np.float64(gpu.uniform(seed, first + 2 * k))
            y = np.float64(gpu.uniform(seed, first + 2 * k + 1))
            if x * x + y * y < 1.0:
                inside += 1
        hits[i] = inside


def host_hits(work_items: int, seed: int = SEED) -> np.ndarray:
    """The same draws on the host: gpu.uniform over a numpy array of all the counters."""
    u = gpu.uniform(seed, np.arange(work_items * 2 * SAMPLES, dtype=np.int64)).astype(np.float64)
    x, y = u[0::2].reshape(work_items, SAMPLES), u[1::2].reshape(work_items, SAMPLES)
    return np.count_nonzero(x * x + y * y < 1.0, axis=1).astype(np.int32)


def main(work_items: int = 1 << 16, seed: int = SEED) -> dict:
    hits = np.zeros(work_items, np.int32)
    count_hits(hits, seed)
    pi = 4.0 * int(hits.sum()) / (work_items * SAMPLES)
    print(f"{work_items * SAMPLES:,} samples: pi ~= {pi:.6f} (error {abs(pi - np.pi):.2e})")
    return {"hits": hits, "pi": pi, "seed": seed}


if __name__ == "__main__":
    main(example_size(1 << 16))
