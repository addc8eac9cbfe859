"""Translation happens once per signature and is rendered per dialect (issue 14, shape 2): the
builder asks no dialect, so one build (``_translate.build``) prints as OpenCL C, CUDA and HIP
(``_translate.render``), and each rendering is the source ``translate()`` writes for that
dialect alone. Covers every catalogue kernel (plain and in the bounds-checked debug mode) and
the features whose spelling is the dialect's: print() (printf and its 64-bit length modifier),
record structs, complex numbers, work items, barriers, math and atomics."""
from __future__ import annotations

import cmath
import math

import numpy as np
import pytest

from pygpgpu_core import gpu
from pygpgpu_translate import _dialects, kernel
from pygpgpu_translate._translate import build, render, translate
from test_translate_catalogue import CASES

DIALECTS = ("opencl", "cuda", "hip")


def _signature(k, args):
    values = k._call_values(args)
    tokens, bits = k._signature(values)
    return k._specs(tokens), (tokens, bits), bits


def _build(k, args, debug=False):
    specs, _key, bits = _signature(k, args)
    return build(k.py_func, specs, k.default_float, bits, bounds_check=debug)


def _alone(k, args, dialect, debug=False) -> str:
    specs, key, bits = _signature(k, args)
    return translate(k.py_func, specs, key, dialect, k.default_float, bits, use_disk=False, bounds_check=debug).source


def _check_one_build_renders_each_dialect(k, args, debug=False):
    built = _build(k, args, debug)
    first = {d: render(built, d) for d in reversed(DIALECTS)}        # any order, any number of times
    for d in DIALECTS:
        assert render(built, d) == first[d], f"rendering {d} twice differs: the emitter changed the IR"
        assert first[d] == _alone(k, args, d, debug), f"{k.__name__}: one build rendered as {d} differs from translate()"
    return first


@pytest.mark.parametrize("debug", [False, True], ids=["plain", "bounds-checked"])
@pytest.mark.parametrize("c", CASES, ids=lambda c: c.name)
def test_one_build_renders_every_catalogue_kernel_for_each_dialect(c, debug):
    k = kernel(debug=True)(c.kernel.py_func) if debug else c.kernel
    _check_one_build_renders_each_dialect(k, c.make_args(), debug)


def test_building_asks_no_dialect(monkeypatch):
    """The whole build (lowering, type inference, analyses) runs with the dialect registry
    unreachable; only rendering names a dialect."""
    def refuse(name):
        raise AssertionError(f"the build asked for dialect {name!r}")

    args = _feature_args()
    monkeypatch.setattr(_dialects, "dialect_for", refuse)
    built = _build(features, args, debug=True)
    monkeypatch.undo()
    for d in DIALECTS:
        assert render(built, d) == _alone(features, args, d, debug=True)


# ---- a kernel using what each dialect spells differently --------------------------------------
REC = np.dtype([("pos", np.float32, 3), ("mass", np.float64), ("id", np.int64)])


def weigh(r, z):
    return r * abs(z)


@kernel
def features(p, z, out, counts, big):
    for i in range(out.shape[0]):
        w = weigh(p[i].mass, z[i] * 2j)                    # a record field, complex arithmetic
        out[i] = w + math.sqrt(abs(p[i].pos[1])) + cmath.exp(z[i]).real
        gpu.atomic_add(counts, 0, 1)
        if i == 0:
            print("i", i, "big", big[i], p[i].id, f"{out[i]:.3f}", z[i].imag > 0)
        out[i] += gpu.get_local_size(0) * 0


def _feature_args():
    n = 16
    p = np.zeros(n, REC)
    p["mass"] = np.linspace(1, 2, n)
    p["pos"] = np.linspace(-1, 1, 3 * n).reshape(n, 3)
    p["id"] = np.arange(n) - 2**40
    z = (np.linspace(0, 1, n) + 1j * np.linspace(1, 0, n)).astype(np.complex128)
    return p, z, np.zeros(n), np.zeros(1, np.int32), np.arange(n, dtype=np.int64) * 2**33


def test_dialect_spellings_come_from_one_build():
    src = _check_one_build_renders_each_dialect(features, _feature_args())
    for d, length in [("opencl", "l"), ("cuda", "ll"), ("hip", "ll")]:      # 64-bit ints: the dialect's modifier
        for flag in ("True", "False"):                                       # a bool chooses between two formats
            assert f'printf("i %d big %{length}d %{length}d %.3lf {flag}\\n", i, big[i], p[i].f_id, out[i]);' in src[d]
    assert "get_local_size(0)" in src["opencl"] and "blockDim.x" in src["cuda"]
    assert "__kernel void" in src["opencl"] and 'extern "C" __global__ void' in src["cuda"]
    for d in DIALECTS:
        assert "sizeof(" in src[d] and "pg_complex" in src[d]            # record checks, complex structs
