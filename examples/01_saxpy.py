"""saxpy: out = alpha * x + y, the "hello world" of GPU computing.

    python examples/01_saxpy.py [n]

The loop bound (out.shape[0]) is the launch size: each iteration becomes one work item.
"""
import time

import numpy as np
from _common import example_size

import pygpgpu
from pygpgpu import kernel


@kernel
def saxpy(x, y, out, alpha):
    for i in range(out.shape[0]):       # one work item per element
        out[i] = alpha * x[i] + y[i]    # alpha is a Python float: weak, so this stays float32


def main(n: int = 1_000_000) -> dict:
    x = np.random.default_rng(0).random(n, dtype=np.float32)
    y = np.ones(n, np.float32)
    out = np.empty_like(x)

    saxpy(x, y, out, 2.0)               # first call: translate, compile (cached on disk), run
    t0 = time.perf_counter()
    saxpy(x, y, out, 2.0)               # warm call: numpy arrays copied in and out
    warm = time.perf_counter() - t0

    print(f"saxpy of {n:,} float32 on {pygpgpu.get_device().selector}: {warm * 1e3:.2f} ms (warm, numpy in/out)")
    print("max |error| vs numpy:", float(np.max(np.abs(out - (np.float32(2) * x + y)))))
    return {"x": x, "y": y, "out": out}


if __name__ == "__main__":
    main(example_size(1_000_000))
