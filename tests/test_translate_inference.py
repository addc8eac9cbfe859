"""Type inference leaves nothing behind but types: a local that widens (int -> float) while the
body is iterated to a fixed point makes the provisional passes call helpers and prelude pieces
at the narrower type; the generated source holds only what the final types use."""
from __future__ import annotations

import re

import numpy as np
import pytest

from pygpgpu import kernel


def half(v):
    return v // 2


def outer(v):
    return inner(v) + 1


def inner(v):
    return v % 3


@kernel
def widen_then_halve(x, out):
    for i in range(x.shape[0]):
        acc = 0
        acc = half(acc + i)          # int on the first pass, float once the next line is seen
        acc = acc + x[i] * 1.5
        out[i] = acc


@kernel
def widen_through_nested_helpers(x, out):
    for i in range(x.shape[0]):
        acc = i
        acc = outer(acc)
        acc = acc * x[i]
        out[i] = acc


@kernel
def widen_with_modulo(x, out):
    for i in range(x.shape[0]):
        acc = i
        acc = acc % 4                # pymod at int on the first pass only
        acc = acc - x[i]
        out[i] = acc


def _functions(source: str) -> list[str]:
    """The names of the C functions the source defines (helpers, prelude pieces, the kernel)."""
    return re.findall(r"\b(pyg_\w+|pg_\w+)\s*\([^;{)]*\)\s*(?:\{|\n\{)", source)


def _args(n=37):
    return np.arange(n, dtype=np.float32) * 0.25 - 3.0, np.zeros(n, np.float32)


@pytest.mark.parametrize("dialect", ["opencl", "cuda", "hip"])
def test_only_the_final_specialization_of_a_helper_is_emitted(dialect):
    src = widen_then_halve.inspect(*_args(), backend=dialect).source
    defined = _functions(src)
    assert defined.count("pyg_half") == 1, src
    assert "pyg_half_1" not in src                      # no second specialization
    assert re.search(r"\bfloat pyg_half\(float v\)", src), src
    assert "pg_pyfloordiv_int" not in src               # the int // of the provisional pass
    assert "pg_pyfloordiv_float" in src


@pytest.mark.parametrize("dialect", ["opencl", "cuda", "hip"])
def test_nested_helpers_of_a_provisional_type_are_not_emitted(dialect):
    src = widen_through_nested_helpers.inspect(*_args(), backend=dialect).source
    defined = _functions(src)
    assert defined.count("pyg_outer") == 1 and defined.count("pyg_inner") == 1, src
    assert "pyg_outer_1" not in src and "pyg_inner_1" not in src
    # acc is an int on the first pass and a float in the end: both helpers only at float
    assert re.search(r"\bfloat pyg_inner\(float v\)", src), src
    assert re.search(r"\bfloat pyg_outer\(float v\)", src), src
    assert "pg_pymod_int" not in src
    assert src.index("pyg_inner(float") < src.index("pyg_outer(float")   # dependencies first


@pytest.mark.parametrize("dialect", ["opencl", "cuda", "hip"])
def test_a_prelude_piece_used_only_at_a_provisional_type_is_absent(dialect):
    src = widen_with_modulo.inspect(*_args(), backend=dialect).source
    assert "pg_pymod_float" in src
    assert "pg_pymod_int" not in src, src


def test_the_widened_kernels_compute_what_python_computes(backend):
    x, out = _args()
    for k in (widen_then_halve, widen_through_nested_helpers, widen_with_modulo):
        want = np.zeros_like(out)
        k.py_func(x, want)
        out[:] = 0
        k[backend](x, out)
        np.testing.assert_allclose(out, want, rtol=1e-6, err_msg=k.__name__)
