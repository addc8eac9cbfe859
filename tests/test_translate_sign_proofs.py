"""Indices the sign proofs (pygpgpu_translate._signs) must NOT prove non-negative: each kernel here
indexes with a value that is negative for some work items, so the device must wrap it from the end
as Python does. A proof that is too bold skips the wrap and reads outside the array instead.
Kernels run on the device and compare with the same function run on the host.
"""
from __future__ import annotations

import numpy as np
import pytest

from pygpgpu_translate import kernel


@kernel
def mod_negative_divisor(x, out, k):
    for i in range(out.shape[0]):
        out[i] = x[i % k]                       # Python's % takes the divisor's sign: 0, -1, -2 ...


@kernel
def narrowed_product(x, out):
    for i in range(out.shape[0]):
        out[i] = x[np.int16(i) * 50]            # int16 wraps past 32767: negative, counts from the end


@kernel
def narrowed_sum(x, out):
    for i in range(out.shape[0]):
        out[i] = x[np.int8(np.int32(i) + 100)]  # int8 wraps past 127


@kernel
def difference(x, out, k):
    for i in range(out.shape[0]):
        out[i] = x[i - k]                       # negative for i < k


@kernel
def difference_constant(x, out):
    for i in range(out.shape[0]):
        out[i] = x[i - 9] + x[(i + 3) - 2 * 6]  # both operands are >= 0, the difference is not


@pytest.mark.parametrize("name, k, n, extra", [
    pytest.param("x[i % k], k < 0", mod_negative_divisor, 40, (-7,), id="mod_negative_divisor"),
    pytest.param("x[np.int16(i) * 50]", narrowed_product, 1000, (), id="narrowed_product"),
    pytest.param("x[np.int8(np.int32(i) + 100)]", narrowed_sum, 120, (), id="narrowed_sum"),
    pytest.param("x[i - k]", difference, 40, (9,), id="difference"),
    pytest.param("x[i - 9]", difference_constant, 40, (), id="difference_constant"),
])
def test_possibly_negative_indices_wrap_like_python(backend, name, k, n, extra):
    x = np.arange(50_000, dtype=np.float32)
    out = np.full(n, -1.0, np.float32)
    want = np.full(n, -1.0, np.float32)
    with np.errstate(all="ignore"):
        k.py_func(x, want, *extra)
    assert (want >= x.size // 2).any(), f"{name}: the test needs some negative indices"
    k[backend](x, out, *extra)
    bad = np.flatnonzero(out != want)
    assert not bad.size, f"{name}: rows {bad[:5].tolist()} read {out[bad[:5]].tolist()}, Python reads {want[bad[:5]].tolist()}"
