"""Deep expressions (issue 12, item 11): a flat sum of 300 terms once exceeded clang's 256 nested
brackets and 400 terms raised a bare RecursionError. Long sums now translate and agree with the
host; an expression nested past what the translator can walk is a SyntaxError at its line."""
from __future__ import annotations

import importlib.util
import sys

import numpy as np
import pytest


def _module(tmp_path, name, text):
    path = tmp_path / f"{name}.py"
    path.write_text("from pygpgpu_translate import kernel\n\n" + text)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def deep(tmp_path_factory):
    text = ""
    for n in (300, 1000):
        terms = " + ".join(f"x[i] * {k % 7 + 1}" if k % 3 else f"x[i] - {k % 5}" for k in range(n))
        text += f"@kernel\ndef sum{n}(x, out):\n    for i in range(out.shape[0]):\n        out[i] = {terms}\n\n\n"
    text += ("@kernel\ndef too_deep(x, out):\n    for i in range(out.shape[0]):\n        y = x[i]\n"
             "        out[i] = " + "- " * 2000 + "y\n")
    return _module(tmp_path_factory.mktemp("deep"), "w12_deep", text)


@pytest.mark.parametrize("n", [300, 1000])
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int8, np.uint16])
def test_long_flat_sums_match_the_host(deep, backend, n, dtype):
    k = getattr(deep, f"sum{n}")
    x = (np.arange(40) % 23 - 7).astype(dtype)
    out = np.zeros_like(x)
    k[backend](x, out)
    want = np.zeros_like(x)
    with np.errstate(over="ignore"):
        k.py_func(x, want)                       # numpy scalars: int8/uint16 wrap as on the device
    if dtype == np.float32:
        np.testing.assert_allclose(out, want, rtol=1e-5)
    else:
        np.testing.assert_array_equal(out, want)


def test_long_sums_nest_shallowly_in_c(deep):
    x = np.zeros(4, np.float32)
    src = deep.sum1000.inspect(x, x, backend="opencl").source
    depth = most = 0
    for c in src:
        depth += c in "([{"
        depth -= c in ")]}"
        most = max(most, depth)
    assert most < 100                            # clang stops at 256


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int8])
def test_long_sums_compile_for_cuda(deep, nvrtc_compile, dtype):
    x = np.zeros(4, dtype)
    nvrtc_compile(deep.sum1000.inspect(x, x, backend="cuda").source)


@pytest.mark.parametrize("dtype", [np.float32, np.int8])
def test_long_sums_compile_for_hip(deep, hiprtc_compile, dtype):
    x = np.zeros(4, dtype)
    hiprtc_compile(deep.sum1000.inspect(x, x, backend="hip").source, "gfx1030")


def test_nesting_past_the_limit_is_a_syntax_error_at_the_line(deep):
    x = np.zeros(4, np.float32)
    with pytest.raises(SyntaxError) as info:
        deep.too_deep.inspect(x, x, backend="opencl")
    err = info.value
    assert "too deeply" in str(err) and "intermediate variables" in str(err)
    assert err.filename.endswith("w12_deep.py")
    assert err.lineno == deep.too_deep.py_func.__code__.co_firstlineno + 4
