"""``@kernel(fastmath=True)``: the dialect's fast-math build options reach the compiler, fast and
exact builds of one function are cached apart (in memory, on disk, by pickling), results stay
within a fast-math tolerance, and the CUDA/HIP sources build with those options."""
from __future__ import annotations

import ctypes
import math
import pickle

import numpy as np
import pytest

from conftest import assert_code_object, assert_cubin, first_device
from pygpgpu_core import registry
from pygpgpu_translate import kernel, stats
from pygpgpu_translate._kernel import build_options
from pygpgpu_translate._translate import translate

FAST_FLAGS = {"opencl": "-cl-fast-relaxed-math", "cuda": "--use_fast_math", "hip": "-ffast-math"}
# NVRTC 13.0 honours the approximation flags in a CUBIN build only beside a ptxas option
FAST_OPTIONS = {"opencl": (FAST_FLAGS["opencl"],), "cuda": (FAST_FLAGS["cuda"], "--ptxas-options=-O3"),
                "hip": (FAST_FLAGS["hip"],)}


def mix(x, y, out):
    for i in range(out.shape[0]):
        r2 = x[i] * x[i] + y[i] + 1e-3
        out[i] = 1.0 / math.sqrt(r2) + math.exp(-x[i]) * math.sin(y[i]) + x[i] / (y[i] + 1.0)


mix_exact = kernel(mix)
mix_fast = kernel(fastmath=True)(mix)


def inputs(n=1000):
    rng = np.random.default_rng(7)
    return rng.random(n, dtype=np.float32) * 4, rng.random(n, dtype=np.float32) * 3, np.zeros(n, np.float32)


def reference(x, y):
    x, y = x.astype(np.float64), y.astype(np.float64)
    return 1.0 / np.sqrt(x * x + y + 1e-3) + np.exp(-x) * np.sin(y) + x / (y + 1.0)


def _dialect(backend):
    dev = registry.get_device(backend)
    return getattr(dev.backend, "dialect", None) or dev.backend.name


def _plan(kf, backend):
    """``kf``'s plan on ``backend``'s device (a module-level kernel also has plans on the other test backends)."""
    dev = registry.get_device(backend)
    (plan,) = [p for p in kf._plans.values() if p.device is dev]
    return plan


def test_fastmath_is_off_by_default_and_fixed_at_definition():
    assert kernel(mix).fastmath is False
    assert mix_fast.fastmath is True
    with pytest.raises(AttributeError):
        mix_fast.fastmath = False          # plans already built would keep the other mode


@pytest.mark.parametrize("dialect", ["opencl", "cuda", "hip"])
def test_build_options_per_dialect(dialect):
    class ExactDevice:
        exact_math_options = ("-cl-fp32-correctly-rounded-divide-sqrt",)

    class OwnCompiler:
        fast_math_options = ["--my-fast"]

    assert build_options(None, dialect, True) == FAST_OPTIONS[dialect]
    assert build_options(ExactDevice(), dialect, True) == FAST_OPTIONS[dialect]    # exact options dropped
    assert build_options(ExactDevice(), dialect, False) == ExactDevice.exact_math_options
    assert build_options(None, dialect, False) == ()
    assert build_options(OwnCompiler(), dialect, True) == ("--my-fast",)            # a plug-in's own compiler


def test_fast_and_exact_kernels_build_apart_and_agree_with_numpy(backend):
    x, y, out = inputs()
    ref = reference(x, y)
    mix_exact[backend](x, y, out)
    np.testing.assert_allclose(out, ref, rtol=2e-6, atol=1e-6)
    fast_out = np.zeros_like(out)
    mix_fast[backend](x, y, fast_out)
    np.testing.assert_allclose(fast_out, ref, rtol=1e-4, atol=1e-4)    # approximate div/sqrt/exp/sin
    dialect = _dialect(backend)
    exact_plan, fast_plan = _plan(mix_exact, backend), _plan(mix_fast, backend)
    assert FAST_FLAGS[dialect] in fast_plan.build_options
    assert FAST_FLAGS[dialect] not in exact_plan.build_options
    assert fast_plan.program is not exact_plan.program
    assert "(fast math)" in fast_plan.t.source and "(fast math)" not in exact_plan.t.source


def test_options_reach_the_opencl_compiler():
    dev = first_device("opencl")
    from pygpgpu_opencl._library import info_str, lib

    x, y, out = inputs(64)
    CL_PROGRAM_BUILD_OPTIONS = 0x1182

    def options_built_with(kf):
        kf[dev.selector](x, y, out)
        plan = next(p for p in kf._plans.values() if p.device is dev)
        return info_str(lib().clGetProgramBuildInfo, "clGetProgramBuildInfo", plan.program._handle,
                        ctypes.c_void_p(dev.handle).value, CL_PROGRAM_BUILD_OPTIONS)

    assert "-cl-fast-relaxed-math" in options_built_with(mix_fast).split()
    exact = options_built_with(mix_exact).split()
    assert "-cl-fast-relaxed-math" not in exact
    for opt in dev.exact_math_options:       # PoCL: -cl-fp32-correctly-rounded-divide-sqrt
        assert opt in exact


def _specs_and_key(kf, dialect):
    x, y, out = inputs(8)
    values = kf._call_values((x, y, out))
    tokens, bits = kf._signature(values)
    return kf._specs(tokens), (tokens, bits), bits


def test_generated_source_cache_keeps_fast_and_exact_apart(tmp_path, monkeypatch):
    monkeypatch.setenv("PYGPGPU_CACHE_DIR", str(tmp_path))
    specs, sig, bits = _specs_and_key(mix_exact, "cuda")
    hits = stats["source_cache_hits"]
    exact = translate(mix, specs, sig, "cuda", mix_exact.default_float, bits)
    fast = translate(mix, specs, sig, "cuda", mix_fast.default_float, bits, fastmath=True)
    assert stats["source_cache_hits"] == hits               # the exact entry does not answer for fast math
    assert "(fast math)" in fast.source.splitlines()[0] and "(fast math)" not in exact.source
    assert fast.source.split("\n", 1)[1] == exact.source.split("\n", 1)[1]    # the same code below the header
    again = translate(mix, specs, sig, "cuda", mix_fast.default_float, bits, fastmath=True)
    assert stats["source_cache_hits"] == hits + 1 and again.source == fast.source


def test_inspect_shows_the_mode():
    x, y, out = inputs(8)
    assert "(fast math)" in mix_fast.inspect(x, y, out, backend="cuda").source
    assert "(fast math)" not in mix_exact.inspect(x, y, out, backend="cuda").source


def test_pickling_by_value_keeps_the_mode_apart():
    pytest.importorskip("cloudpickle")

    def local_mix(x, y, out):              # a local function: pickled by value with its source
        for i in range(out.shape[0]):
            out[i] = x[i] / y[i]

    fast = pickle.loads(pickle.dumps(kernel(fastmath=True)(local_mix)))
    exact = pickle.loads(pickle.dumps(kernel(local_mix)))
    assert fast.fastmath is True and exact.fastmath is False
    assert fast is not exact


def test_cuda_fast_math_source_compiles_to_approximate_instructions(nvrtc_compile):
    x, y, out = inputs(8)
    source = mix_fast.inspect(x, y, out, backend="cuda").source
    fast_ptx = nvrtc_compile(source, "compute_90", build_options(None, "cuda", True)).decode(errors="replace")
    exact_ptx = nvrtc_compile(mix_exact.inspect(x, y, out, backend="cuda").source, "compute_90",
                              build_options(None, "cuda", False)).decode(errors="replace")
    # 1.0 / sqrt(r2): IEEE sqrt and reciprocal by default, one approximate rsqrt under --use_fast_math
    assert "sqrt.rn.f32" in exact_ptx and "rsqrt.approx" not in exact_ptx
    assert "rsqrt.approx.ftz.f32" in fast_ptx and "sqrt.rn" not in fast_ptx and "div.rn" not in fast_ptx
    assert_cubin(nvrtc_compile(source, "sm_90", build_options(None, "cuda", True)), source)


def softened_gravity(pos, acc):
    for i in range(acc.shape[0]):
        ax = 0.0
        ay = 0.0
        az = 0.0
        for j in range(pos.shape[0]):
            dx = pos[j, 0] - pos[i, 0]
            dy = pos[j, 1] - pos[i, 1]
            dz = pos[j, 2] - pos[i, 2]
            inv = 1.0 / math.sqrt(dx * dx + dy * dy + dz * dz + 1e-3)
            s = pos[j, 3] * inv * inv * inv
            ax += dx * s
            ay += dy * s
            az += dz * s
        acc[i, 0] = ax
        acc[i, 1] = ay
        acc[i, 2] = az


def test_cuda_fast_math_changes_the_cubin_of_an_n_body_loop(nvrtc_compile):
    # NVRTC 13.0 gave this kernel's CUBIN byte for byte the exact build's under --use_fast_math alone
    # (H100, 2026-12-06): the ptxas option in the CUDA dialect's fast-math options makes it honour them
    pos = np.zeros((16, 4), np.float32)
    builds = {}
    for fast in (False, True):
        source = kernel(fastmath=fast)(softened_gravity).inspect(pos, pos.copy(), backend="cuda").source
        builds[fast] = nvrtc_compile(source, "sm_90", build_options(None, "cuda", fast))
        assert_cubin(builds[fast], source)
    assert builds[True] != builds[False]


def test_hip_fast_math_source_compiles(hiprtc_compile):
    x, y, out = inputs(8)
    fast_src = mix_fast.inspect(x, y, out, backend="hip").source
    exact_src = mix_exact.inspect(x, y, out, backend="hip").source
    fast = hiprtc_compile(fast_src, "gfx90a", list(build_options(None, "hip", True)))
    assert_code_object(fast, fast_src)
    # the same code below the header comment, built without -ffast-math: another code object
    exact = hiprtc_compile(fast_src, "gfx90a", list(build_options(None, "hip", False)))
    assert_code_object(exact, exact_src)
    assert fast != exact
