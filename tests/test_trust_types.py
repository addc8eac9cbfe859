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
    # with no passes allowed the inference cannot settle: it must say so, never emit code. The
    # worklist and the early final pass (_infer, issue 34) settle this kernel within the first pass,
    # so they are turned off to reach the bound.
    from pygpgpu_translate import _builder, _infer

    monkeypatch.setattr(_builder, "TYPE_LATTICE_HEIGHT", 0)
    monkeypatch.setattr(_infer.AssignmentLog, "settle", lambda self, fb, widened: None)
    monkeypatch.setattr(_builder.FunctionBuilder, "_final_if_settled", lambda self, body: None)
    x = np.zeros(4, np.float32)
    with pytest.raises(KernelTypeError) as info:
        two_links.inspect(x, np.zeros(4, np.float32), backend="opencl")
    msg = str(info.value)
    assert "did not settle" in msg and "two_links" in msg and "no code was generated" in msg
    assert "still changing: _k, a, b)" in msg


# ---- item 9: a local first bound to a bare number ----------------------------------------------

@kernel
def box_blur(img, out):
    for y, x, c in np.ndindex(out.shape):
        acc = 0
        n = 0
        for dy in range(-1, 2):
            for dx in range(-1, 2):
                yy = y + dy
                xx = x + dx
                if 0 <= yy < img.shape[0] and 0 <= xx < img.shape[1]:
                    acc += img[yy, xx, c]
                    n += 1
        out[y, x, c] = acc // n


def box_blur_numpy(img):
    h, w, _ = img.shape
    padded = np.zeros((h + 2, w + 2, img.shape[2]), np.int64)
    padded[1:-1, 1:-1] = img
    ones = np.zeros((h + 2, w + 2), np.int64)
    ones[1:-1, 1:-1] = 1
    total = sum(padded[1 + dy:h + 1 + dy, 1 + dx:w + 1 + dx] for dy in (-1, 0, 1) for dx in (-1, 0, 1))
    count = sum(ones[1 + dy:h + 1 + dy, 1 + dx:w + 1 + dx] for dy in (-1, 0, 1) for dx in (-1, 0, 1))
    return (total // count[:, :, None]).astype(np.uint8)


def test_box_blur_over_uint8_accumulates_past_255(backend):
    rng = np.random.default_rng(12)
    img = rng.integers(150, 256, size=(19, 23, 3), dtype=np.uint8)     # nine of them sum far past 255
    out = np.zeros_like(img)
    box_blur[backend](img, out)
    np.testing.assert_array_equal(out, box_blur_numpy(img))
    assert "int acc;" in box_blur.inspect(img, out, backend="opencl").source


@kernel
def literal_then_uint32(a, out):
    for i in range(out.shape[0]):
        v = -1
        if a[i] > 5:
            v = a[i]
        out[i] = v


def test_a_literal_local_widens_to_hold_a_uint32_and_the_literal(backend):
    a = np.array([1, 7, 2**32 - 1, 5, 2**31], np.uint32)
    out = np.zeros(5, np.int64)
    literal_then_uint32[backend](a, out)
    np.testing.assert_array_equal(out, [-1, 7, 2**32 - 1, -1, 2**31])


@kernel(default_float=np.float64)
def sum_in_default_float(x, out):
    for i in range(out.shape[0]):
        s = 0.0
        for j in range(x.shape[0]):
            s += x[j]
        out[i] = s


def test_a_float_literal_local_is_the_kernels_default_float(backend, device):
    x = np.full(4096, 0.1, np.float32)
    out = np.zeros(2, np.float64)
    assert "double s;" in sum_in_default_float.inspect(x, out, backend="opencl").source
    if not device.fp64:
        pytest.skip(f"{device.selector} has no float64 support")
    sum_in_default_float[backend](x, out)
    want = 0.0
    for v in x.astype(np.float64):
        want += v
    np.testing.assert_allclose(out, want, rtol=1e-12)     # a float32 sum would be ~1e-4 off


@kernel
def weak_operand(x, out):
    for i in range(out.shape[0]):
        out[i] = (x[i] + 1) * 2.1


def test_literals_inside_expressions_stay_weak(backend):
    x = np.linspace(-2, 2, 33, dtype=np.float32)
    out = np.zeros_like(x)
    weak_operand[backend](x, out)
    np.testing.assert_array_equal(out, (x + np.float32(1)) * np.float32(2.1))
    assert "double" not in weak_operand.inspect(x, out, backend="opencl").source


def test_int_literal_local_is_int64_under_64_bit_indexing():
    img = np.zeros((4, 4, 3), np.uint8)
    tokens, _bits = box_blur._signature((img, img))
    t = box_blur._translation("opencl", tokens, 64, None)
    assert "long acc;" in t.source and "int acc;" not in t.source
