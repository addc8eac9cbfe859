"""Monte Carlo estimate of pi: each work item draws points in the unit square with its own
random-number generator and counts those inside the quarter circle.

    python examples/02_monte_carlo_pi.py [work_items]

Kernels have no random module, so the generator is a plain helper function: xorshift32 on
uint32 values, which wraps exactly as in C. The same helper runs on the host (with numpy
uint32 arrays) to check every count.
"""
import numpy as np
from _common import example_size

from pygpgpu import kernel

SAMPLES = 256           # points per work item (a module constant: compiled in)


def xorshift(state):
    state ^= state << 13
    state ^= state >> 17
    state ^= state << 5
    return state


@kernel
def count_hits(seeds, hits):
    for i in range(hits.shape[0]):
        state = seeds[i]
        inside = 0
        for _ in range(SAMPLES):
            state = xorshift(state)
            x = (state >> 8) * (1.0 / 16777216.0)      # top 24 bits -> [0, 1)
            state = xorshift(state)
            y = (state >> 8) * (1.0 / 16777216.0)
            if x * x + y * y < 1.0:
                inside += 1
        hits[i] = inside


def host_hits(seeds: np.ndarray) -> np.ndarray:
    """The same computation with numpy, all work items at once (float32 like the kernel)."""
    state = seeds.copy()
    inside = np.zeros(seeds.shape, np.int32)
    scale = np.float32(1.0 / 16777216.0)
    for _ in range(SAMPLES):
        state = xorshift(state)
        x = (state >> np.uint32(8)).astype(np.float32) * scale
        state = xorshift(state)
        y = (state >> np.uint32(8)).astype(np.float32) * scale
        inside += (x * x + y * y < np.float32(1.0))
    return inside


def main(work_items: int = 1 << 16) -> dict:
    seeds = np.random.default_rng(1).integers(1, 2**32, size=work_items, dtype=np.uint32)  # never 0
    hits = np.zeros(work_items, np.int32)
    count_hits(seeds, hits)
    pi = 4.0 * hits.sum() / (work_items * SAMPLES)
    print(f"{work_items * SAMPLES:,} samples: pi ~= {pi:.6f} (error {abs(pi - np.pi):.2e})")
    return {"seeds": seeds, "hits": hits, "pi": pi}


if __name__ == "__main__":
    main(example_size(1 << 16))
