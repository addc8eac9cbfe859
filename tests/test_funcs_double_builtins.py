"""Which OpenCL builtins funcs.* uses for double: only those whose double precision the OpenCL
spec bounds. mix and smoothstep are "implementation-defined" for double, and NVIDIA's double
smoothstep returned float-accurate results (relative error 6e-8), so doubles get the prelude's
own formula there; float32 keeps the fast builtins."""
from __future__ import annotations

import re

import numpy as np
import pytest

from pygpgpu_core import funcs, registry
from pygpgpu_translate import kernel
from pygpgpu_translate._dialects import dialect_for
from pygpgpu_translate.prelude import prelude_source

VENDOR_PRECISION = ("mix", "smoothstep")
OPENCL = dialect_for("opencl")


def _calls_builtin(source: str, builtin: str) -> bool:
    # "smoothstep(" but not "pg_smoothstep_double(": the OpenCL builtin, not a prelude function
    return re.search(rf"(?<![\w]){builtin}\(", source) is not None


@pytest.mark.parametrize("name", VENDOR_PRECISION)
@pytest.mark.parametrize("width", ["", "2", "3", "4", "8", "16"])
def test_double_mix_and_smoothstep_do_not_use_the_vendor_builtin(name, width):
    t = f"double{width}"
    assert OPENCL.builtin_function(name, t) is None
    source = prelude_source("opencl", [f"funcs.{name}:{t}"])
    assert f"pg_{name}_{t}(" in source and not _calls_builtin(source, name), source


@pytest.mark.parametrize("name", VENDOR_PRECISION)
def test_float_mix_and_smoothstep_keep_the_fast_builtin(name):
    for t in ("float", "float4"):
        assert OPENCL.builtin_function(name, t) == name
        assert _calls_builtin(prelude_source("opencl", [f"funcs.{name}:{t}"]), name)


def test_builtins_with_a_bounded_double_error_stay():
    # 0 ulp (clamp, step, sign, fmin, fmax, fabs), correctly rounded (fma), <= 2 ulp (degrees,
    # radians), a few ulp or an absolute bound (dot, cross, length, distance, normalize)
    for name in ("clamp", "step", "sign", "min", "max", "abs", "fma", "degrees", "radians",
                 "dot", "length", "distance", "normalize"):
        builtin = OPENCL.builtin_function(name, "float4")
        assert builtin and OPENCL.builtin_function(name, "double4") == builtin, name
        assert f"{builtin}(" in prelude_source("opencl", [f"funcs.{name}:double4"]), name
    assert OPENCL.builtin_function("cross", "double3") == "cross"


@kernel
def _blend(lo, hi, x, a, b, t, smooth, mixed):
    for i in range(x.shape[0]):
        smooth[i] = funcs.smoothstep(lo[i], hi[i], x[i])
        mixed[i] = funcs.mix(a[i], b[i], t[i])


def test_double_smoothstep_and_mix_are_double_accurate_on_the_device(backend):
    device = registry.get_device(backend)
    if not device.fp64:
        pytest.skip(f"{device.selector} has no float64 support")
    rng = np.random.default_rng(7)
    n = 1000
    lo, hi = rng.uniform(-2, -0.5, n), rng.uniform(0.5, 2, n)
    x = rng.uniform(-2.5, 2.5, n)
    a, b, t = rng.uniform(-3, 3, n), rng.uniform(-3, 3, n), rng.uniform(0, 1, n)
    smooth, mixed = np.zeros(n), np.zeros(n)
    _blend[backend](lo, hi, x, a, b, t, smooth, mixed)
    want_smooth, want_mixed = np.zeros(n), np.zeros(n)
    _blend.py_func(lo, hi, x, a, b, t, want_smooth, want_mixed)
    # float-accurate results are ~1e-8 off; double ones a few ulp
    np.testing.assert_allclose(smooth, want_smooth, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(mixed, want_mixed, rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("name, args", [
    ("smoothstep", (-1.3, 1.7, 0.123456789)), ("mix", (1.1, 2.3, 0.3)), ("fma", (1.1, 2.3, 0.3)),
    ("step", (0.5, 0.7)), ("radians", (33.3,)), ("degrees", (0.3,)),
])
def test_host_funcs_keep_numpy_float64_scalars_float64(name, args):
    """Indexing a float64 array gives np.float64, a subclass of Python float but a strong
    float64: the host side (py_func, the reference the device is compared with) must not treat it
    as a weak Python float and compute in float32."""
    got = getattr(funcs, name)(*map(np.float64, args))
    assert isinstance(got, np.float64), (name, type(got))
    assert isinstance(getattr(funcs, name)(*args), np.float32)          # Python floats alone: float32
