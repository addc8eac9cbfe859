"""Dask (issue 19, item 3): ``map_blocks`` calling a kernel per block (threads, so the same kernel
runs concurrently on one device), and a ``LocalCluster`` of two worker processes computing a
reduction of kernel results, with a kernel by reference and one by value. dask and distributed
are test-only dependencies (``make test-setup`` installs them)."""
from __future__ import annotations

import _mp_kernels as mk
import numpy as np
import pytest
from pygpgpu import kernel

da = pytest.importorskip("dask.array")


def test_map_blocks_calls_a_kernel_per_block():
    x = np.random.default_rng(3).standard_normal(100_003).astype(np.float32)
    lazy = da.from_array(x, chunks=12_500).map_blocks(mk.scale_block, 0.5, dtype=np.float32)
    got = lazy.compute(scheduler="threads", num_workers=4)
    np.testing.assert_allclose(got, mk.scale_host(x, 0.5), rtol=1e-6, atol=1e-6)


def test_local_cluster_reduces_kernel_results():
    distributed = pytest.importorskip("distributed")

    @kernel
    def squares(x, out):                       # made here: reaches the workers by value
        for i in range(out.shape[0]):
            out[i] = x[i] * x[i]

    x = np.arange(200_000, dtype=np.float64) / 1000.0
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  host="127.0.0.1", silence_logs=40) as cluster, \
            distributed.Client(cluster, timeout="120s") as client:
        arr = da.from_array(x, chunks=25_000)
        total = arr.map_blocks(mk.scale_block, 2.0, dtype=np.float64).sum().compute(timeout=180)
        np.testing.assert_allclose(total, mk.scale_host(x, 2.0).sum(), rtol=1e-9)

        futures = client.map(mk.run_kernel, [squares] * 4, np.array_split(x, 4))
        sums = client.gather(client.map(np.sum, futures), errors="raise")
        np.testing.assert_allclose(sum(sums), np.sum(x * x), rtol=1e-9)
        workers = client.run(lambda: __import__("os").getpid())
        assert len(set(workers.values())) == 2         # two worker processes did the work


def test_dask_example_runs(monkeypatch):
    """examples/dask_blocks.py (threads part; the cluster part is the test above): its own check passes."""
    from pathlib import Path
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[1] / "examples"))
    import dask_blocks
    result = dask_blocks.main(20_000, use_cluster=False)
    assert result["threads_s"] > 0
