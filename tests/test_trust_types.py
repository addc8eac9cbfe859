"""Type inference that the generated code can trust (issue 12, items 8 and 9).

Item 8: inference runs to its fixed point, however long the chain of assignments that carries
a type from one variable to the next; it never emits code from types still changing.
Item 9: a variable first bound to a bare Python number has a concrete type (int32, or int64
with 64-bit indexing; the kernel's default float), so ``acc = 0; acc += img[...]`` over uint8
data does not wrap at 256.
"""
from __future__ import annotations

import numpy as np
import pytest

from pygpgpu_translate import KernelTypeError, kernel


@kernel
def float_through_sixteen_links(x, out):
    for i in range(out.shape[0]):
        v1 = 0
        v2 = 0
        v3 = 0
        v4 = 0
        v5 = 0
        v6 = 0
        v7 = 0
        v8 = 0
        v9 = 0
        v10 = 0
        v11 = 0
        v12 = 0
        v13 = 0
        v14 = 0
        v15 = 0
        v16 = 0
        for _k in range(20):
            # each link reads the variable the next line writes: inference learns one link per pass
            v16 = v15
            v15 = v14
            v14 = v13
            v13 = v12
            v12 = v11
            v11 = v10
            v10 = v9
            v9 = v8
            v8 = v7
            v7 = v6
            v6 = v5
            v5 = v4
            v4 = v3
            v3 = v2
            v2 = v1
            v1 = x[i] + 0.25 * i
        out[i] = v16


def test_a_float_carried_through_sixteen_loop_links_is_not_truncated(backend):
    x = np.linspace(0.75, 3.5, 24, dtype=np.float32)
    out = np.zeros_like(x)
    float_through_sixteen_links[backend](x, out)
    want = np.zeros_like(x)
    float_through_sixteen_links.py_func(x, want)
    assert np.all(want % 1 != 0)       # the reference really holds fractions (0.75, ...)
    np.testing.assert_array_equal(out, want)
    src = float_through_sixteen_links.inspect(x, out, backend="opencl").source
    assert "int v16;" not in src and "float v16;" in src


@kernel
def two_links(x, out):
    for i in range(out.shape[0]):
        a = 0
        b = 0
        for _k in range(3):
            b = a
            a = x[i]
        out[i] = b


def test_unconverged_types_raise_instead_of_emitting_code(monkeypatch):
    # with no passes allowed the inference cannot settle: it must say so, never emit code
    from pygpgpu_translate import _builder

    monkeypatch.setattr(_builder, "TYPE_LATTICE_HEIGHT", 0)
    x = np.zeros(4, np.float32)
    with pytest.raises(KernelTypeError) as info:
        two_links.inspect(x, np.zeros(4, np.float32), backend="opencl")
    msg = str(info.value)
    assert "did not settle" in msg and "two_links" in msg and "no code was generated" in msg
    assert "still changing: _k, a, b)" in msg
