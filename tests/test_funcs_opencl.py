"""Every funcs.* prelude function executed on an OpenCL device against the host implementation.

``native=True`` runs what OpenCL kernels use (builtins where OpenCL has them);
``native=False`` runs the portable component-wise bodies that CUDA and HIP get, so their
arithmetic is verified by execution too, not only by compiling.
"""
from __future__ import annotations

import zlib

import numpy as np
import pytest

from pygpgpu_core import funcs
from pygpgpu_translate._builtins import FUNCS
from pygpgpu_translate.prelude import PRELUDE_NAMES, prelude_source
from test_vec_helpers import opencl_runner

N = 64
# How each function takes its arguments from the inputs x, y, lo, hi, t, n (n: unit vectors).
FLOAT_ARGS = {
    "dot": "x y", "cross": "x y", "length": "x", "distance": "x y", "normalize": "x", "reflect": "x n",
    "clamp": "x lo hi", "mix": "x y t", "step": "y x", "smoothstep": "lo hi x", "fma": "x y t", "sign": "x",
    "radians": "x", "degrees": "x", "min": "x y", "max": "x y", "abs": "x",
}
INT_ARGS = {"clamp": "x lo hi", "sign": "x", "min": "x y", "max": "x y", "abs": "x"}
FLOAT_TYPES = ["float", "float2", "float3", "float4", "float8", "float16", "double", "double3", "double4"]
INT_TYPES = ["int", "int4", "uint3", "char2", "short8", "long2", "ulong4", "uchar16"]
BASE = {"float": np.float32, "double": np.float64, "int": np.int32, "uint": np.uint32, "char": np.int8,
        "uchar": np.uint8, "short": np.int16, "ushort": np.uint16, "long": np.int64, "ulong": np.uint64}


def _split(t: str) -> tuple[str, int]:
    base = t.rstrip("0123456789")
    return base, int(t[len(base):] or 1)


def _funcs_for(t: str) -> list[str]:
    table = INT_ARGS if BASE[_split(t)[0]] in (np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32,
                                              np.int64, np.uint64) else FLOAT_ARGS
    return [f for f in table if f"funcs.{f}:{t}" in PRELUDE_NAMES]


def _inputs(t: str, rng) -> dict[str, np.ndarray]:
    base, w = _split(t)
    dt = BASE[base]
    shape = (N, w)
    if np.issubdtype(dt, np.floating):
        x = rng.uniform(-3, 3, shape).astype(dt)
        x[0] = 0  # zero vector: normalize returns it unchanged
        y = rng.uniform(-3, 3, shape).astype(dt)
        n = rng.standard_normal(shape)
        n = (n / np.linalg.norm(n, axis=-1, keepdims=True)).astype(dt)
        return {"x": x, "y": y, "lo": rng.uniform(-2, -0.5, shape).astype(dt),
                "hi": rng.uniform(0.5, 2, shape).astype(dt), "t": rng.uniform(0, 1, shape).astype(dt), "n": n}
    info = np.iinfo(dt)
    low = 0 if info.min == 0 else -100
    x = rng.integers(low, 100, shape).astype(dt)
    if info.min < 0:
        x[1] = info.min  # abs(MIN) stays MIN, as in two's complement C
    lo = rng.integers(low, 10, shape).astype(dt) if info.min == 0 else rng.integers(-50, -1, shape).astype(dt)
    hi = rng.integers(20, 90, shape).astype(dt)
    return {"x": x, "y": rng.integers(low, 100, shape).astype(dt), "lo": lo, "hi": hi,
            "t": np.zeros(shape, dt), "n": np.zeros(shape, dt)}


def _kernel_source(t: str, names: list[str], native: bool, args_of: dict[str, str]) -> str:
    base, w = _split(t)
    load = (lambda a: f"{a}[i]") if w == 1 else (lambda a: f"vload{w}(i, {a})")
    lines = []
    for j, f in enumerate(names):
        call = f"pg_{f}_{t}({', '.join(load(a) for a in args_of[f].split())})"
        if FUNCS[f].types.result == "base" or w == 1:
            lines.append(f"  out[({j} * count + i) * {w}] = {call};")
        else:
            lines.append(f"  vstore{w}({call}, {j} * count + i, out);")
    pre = prelude_source("opencl", {f"funcs.{f}:{t}" for f in names}, native=native)
    params = ", ".join(f"__global const {base}* {a}" for a in ("x", "y", "lo", "hi", "t", "n"))
    return (pre + f"__kernel void run_funcs({params}, __global {base}* out, const int count) {{\n"
            f"  int i = get_global_id(0);\n  if (i >= count) return;\n" + "\n".join(lines) + "\n}\n")


def _host(f: str, args: list[np.ndarray]) -> np.ndarray:
    fn = getattr(funcs, f)
    return np.asarray(fn(*args))


@pytest.mark.parametrize("native", [True, False], ids=["opencl-builtins", "portable-bodies"])
@pytest.mark.parametrize("t", FLOAT_TYPES + INT_TYPES)
def test_funcs_on_device_match_host(t, native):
    run = opencl_runner()
    names = _funcs_for(t)
    args_of = INT_ARGS if t in INT_TYPES else FLOAT_ARGS
    base, w = _split(t)
    dt = BASE[base]
    ins = _inputs(t, np.random.default_rng(zlib.crc32(t.encode())))
    out = np.full(len(names) * N * w, 77, dt)
    src = _kernel_source(t, names, native, args_of)
    run(src, "run_funcs", (N,), None, [ins[k].ravel() for k in ("x", "y", "lo", "hi", "t", "n")] + [out, np.int32(N)])
    got = out.reshape(len(names), N, w)
    for j, f in enumerate(names):
        args = [ins[a] for a in args_of[f].split()]
        want = _host(f, args)
        dev = got[j, :, 0] if FUNCS[f].types.result == "base" else got[j]
        if f in ("dot", "length", "distance") and w == 1:
            want = want.reshape(N)
        assert dev.shape == want.shape, (f, dev.shape, want.shape)
        if np.issubdtype(dt, np.floating):
            tol = 2e-6 if dt == np.float32 else 1e-13
            scale = np.maximum(1.0, np.abs(want.astype(np.float64)))
            err = np.abs(dev.astype(np.float64) - want) / scale
            assert err.max() <= tol * 8, f"{f}:{t} max rel err {err.max()}\n{dev[:3]}\n{want[:3]}"
        else:
            np.testing.assert_array_equal(dev, want, err_msg=f"{f}:{t}")
