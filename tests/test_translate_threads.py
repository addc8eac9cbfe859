"""Several Python threads calling the same kernels at once: every call gets its own result
(launch plans, small-argument batches, the pool and the pin cache are shared between them)."""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np

from pygpgpu_core import gnp
from pygpgpu_translate import kernel


@kernel
def affine(x, out, a, b):
    for i in range(out.shape[0]):
        out[i] = a * x[i] + b


def _calls(k, device, worker: int, rounds: int = 40):
    rng = np.random.default_rng(worker)
    bad = []
    for r in range(rounds):
        n = int(rng.choice([1, 7, 300, 5000, 300_000]))       # small batches and per-array copies
        x = rng.random(n, dtype=np.float32)
        out = np.zeros(n, np.float32)
        a, b = float(worker), float(r)
        if r % 3 == 2:                                          # resident arrays too
            gx, gout = gnp.asarray(x, device=device), gnp.empty(n, np.float32, device=device)
            k(gx, gout, a, b)
            out = gout.get()
        else:
            k(x, out, a, b)
        want = np.float32(a) * x + np.float32(b)
        if not np.allclose(out, want, rtol=1e-6):
            bad.append((worker, r, n))
    return bad


def test_concurrent_calls_from_threads(backend, device):
    k = affine[backend]
    k(np.zeros(4, np.float32), np.zeros(4, np.float32), 1.0, 0.0)   # compile once, up front
    with ThreadPoolExecutor(6) as pool:
        results = list(pool.map(lambda w: _calls(k, device, w), range(6)))
    assert [b for r in results for b in r] == []


@kernel
def add_k(x, out, k):
    for i in range(out.shape[0]):
        out[i] = x[i] + k


def test_first_calls_from_threads_at_once(backend):
    """Threads racing to translate and build the same kernel (two signatures) all get results."""
    k = add_k[backend]

    def call(w):
        x = np.arange(100, dtype=np.float32 if w % 2 else np.int32)
        out = np.zeros_like(x)
        k(x, out, w)
        return bool(np.array_equal(out, x + w))

    with ThreadPoolExecutor(8) as pool:
        assert all(pool.map(call, range(16)))
