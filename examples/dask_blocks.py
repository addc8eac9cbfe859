"""A @kernel per block of a Dask array: on threads, then on a cluster of worker processes.

    pip install "dask[array]" distributed        # not needed by pygpgpu itself
    python examples/dask_blocks.py [n]

1. ``map_blocks`` with the threaded scheduler: every block goes through the same kernel on this
   process's device, several blocks at once.
2. A ``LocalCluster`` of two worker processes: Dask pickles the block function and the kernel it
   calls (a kernel defined in this script travels by value, with its source; one in an importable
   module by reference) and each worker translates and compiles it once, on its own default
   device. The sum of the kernel's results comes back to this process.

On a machine with several GPUs, give each worker its own device with ``PYGPGPU_BACKEND`` in the
worker's environment (e.g. one ``dask worker`` per GPU started with ``PYGPGPU_BACKEND=cuda:1``).
"""
from __future__ import annotations

import sys
import time

import numpy as np
from pygpgpu import kernel


@kernel
def gaussian(x, out, rate):
    for i in range(out.shape[0]):
        out[i] = np.exp(-rate * x[i] * x[i])


def gaussian_block(block: np.ndarray, rate: float) -> np.ndarray:
    """What each Dask task runs: one block through the kernel (blocks may be read-only views)."""
    out = np.empty_like(block)
    gaussian(np.ascontiguousarray(block), out, rate)
    return out


def main(n: int = 4_000_000, use_cluster: bool = True) -> dict:
    try:
        import dask.array as da
    except ImportError:
        raise SystemExit('this example needs Dask: pip install "dask[array]" distributed') from None
    rate, lo, hi = 0.5, -8.0, 8.0
    arr = da.linspace(lo, hi, n, chunks=max(1, n // 8))      # made block by block where it is used
    dx = (hi - lo) / (n - 1)
    exact = float(np.sqrt(np.pi / rate))                     # the integral of exp(-rate x^2)

    t0 = time.perf_counter()
    got = arr.map_blocks(gaussian_block, rate, dtype=arr.dtype).compute(scheduler="threads")
    threads_s = time.perf_counter() - t0
    x = np.linspace(lo, hi, n)
    np.testing.assert_allclose(got, np.exp(-rate * x * x), rtol=1e-12, atol=1e-12)
    print(f"threads: {arr.numblocks[0]} blocks of {arr.chunksize[0]} through the kernel in {threads_s:.2f} s (the first block compiles): OK")
    result = {"threads_s": threads_s}

    if use_cluster:
        from distributed import Client, LocalCluster

        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                          silence_logs=40) as cluster, Client(cluster) as client:
            t0 = time.perf_counter()
            integral = float(arr.map_blocks(gaussian_block, rate, dtype=arr.dtype).sum().compute()) * dx
            cluster_s = time.perf_counter() - t0
            assert abs(integral - exact) < 1e-6, (integral, exact)
            print(f"cluster: 2 worker processes integrated exp(-{rate} x^2) with the kernel in {cluster_s:.2f} s "
                  f"(first call: each worker translates and compiles): {integral:.9f}, exact {exact:.9f}: OK")
            result.update(cluster_s=cluster_s, integral=integral, workers=len(client.scheduler_info()["workers"]))
    return result


if __name__ == "__main__":      # Dask's worker processes import this file: run only when executed
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 4_000_000)
