"""Vector comparisons and Python-semantics division helpers executed on an OpenCL device,
against the host vector classes / Python's own operators."""
from __future__ import annotations

import numpy as np
import pytest

from pygpgpu_core.vec_types import VECTOR_TYPES, comparison_type
from pygpgpu_translate.prelude import prelude_source
from test_vec_helpers import opencl_runner

N = 48
BASE = {"float": np.float32, "double": np.float64, "int": np.int32, "uint": np.uint32, "char": np.int8,
        "uchar": np.uint8, "short": np.int16, "ushort": np.uint16, "long": np.int64, "ulong": np.uint64}
CMP = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal}


def _split(t: str) -> tuple[str, int]:
    base = t.rstrip("0123456789")
    return base, int(t[len(base):] or 1)


@pytest.mark.parametrize("native", [True, False], ids=["opencl-operators", "portable-bodies"])
@pytest.mark.parametrize("t", ["float4", "double3", "int2", "uint8", "uchar16", "long4", "short3"])
def test_vector_comparisons(t, native):
    run = opencl_runner()
    base, w = _split(t)
    dt = BASE[base]
    ct = np.dtype(comparison_type(dt))
    cname = {1: "char", 2: "short", 4: "int", 8: "long"}[ct.itemsize]
    rng = np.random.default_rng(5)
    a = rng.integers(0, 4, (N, w)).astype(dt)
    b = rng.integers(0, 4, (N, w)).astype(dt)  # many equal components
    outs = {k: np.zeros((N, w), ct) for k in CMP}
    body = "\n".join(f"  vstore{w}(pg_{k}_{t}(va, vb), i, o_{k});" for k in CMP)
    src = prelude_source("opencl", {f"vec_cmp:{t}"}, native=native) + (
        f"__kernel void cmp(__global const {base}* a, __global const {base}* b, "
        + ", ".join(f"__global {cname}* o_{k}" for k in CMP)
        + f") {{\n  int i = get_global_id(0);\n  {t} va = vload{w}(i, a), vb = vload{w}(i, b);\n{body}\n}}\n"
    )
    run(src, "cmp", (N,), None, [a.ravel(), b.ravel()] + [o.reshape(-1) for o in outs.values()])
    cls = VECTOR_TYPES[t]
    for k, fn in CMP.items():
        np.testing.assert_array_equal(outs[k], np.where(fn(a, b), -1, 0).astype(ct), err_msg=k)
    # the host classes agree
    for i in range(4):
        va, vb = cls(a[i]), cls(b[i])
        assert np.asarray(va < vb).tolist() == outs["lt"][i].tolist()
        assert np.asarray(va.eq(vb)).tolist() == outs["eq"][i].tolist()


PY_TYPES = ["int", "char", "short", "long", "uint", "uchar", "ulong", "float", "double", "int4", "float3", "long2"]


def _py_operands(dt, rng):
    if np.issubdtype(dt, np.floating):
        a = rng.uniform(-20, 20, N).round(1)
        b = rng.choice([-7.5, -3.0, -1.25, 0.5, 2.0, 3.0, 6.5], N)
        a[:4] = [-0.0, 0.0, 6.0, -6.0]
        b[:4] = [3.0, -3.0, 3.0, 3.0]  # exact multiples and signed zeros
        return a.astype(dt), b.astype(dt)
    info = np.iinfo(dt)
    if info.min < 0:
        a = rng.integers(max(info.min, -1000), min(info.max, 1000), N)
        b = rng.choice([-7, -3, -2, -1, 0, 1, 2, 3, 7], N)
        a[0], b[0] = info.min, -1  # MIN // -1 wraps around
        a[1], b[1] = 5, 0  # integer division by zero gives 0
        a[2], b[2] = -5, 0
    else:
        a = rng.integers(0, min(info.max, 1000), N)
        b = rng.choice([0, 1, 2, 3, 7], N)
    return np.asarray(a).astype(dt), np.asarray(b).astype(dt)


def _py_reference(op: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    out = np.zeros_like(a)
    for i, (x, y) in enumerate(zip(a.tolist(), b.tolist())):
        if y == 0 and np.issubdtype(a.dtype, np.integer):
            out[i] = 0
            continue
        r = x // y if op == "pyfloordiv" else x % y
        if np.issubdtype(a.dtype, np.integer):
            bits = a.dtype.itemsize * 8
            r &= (1 << bits) - 1
            out[i] = np.array(r, dtype=f"u{a.dtype.itemsize}").view(a.dtype)
        else:
            out[i] = r
    return out


@pytest.mark.parametrize("t", PY_TYPES)
def test_python_floor_division_and_modulo(t):
    run = opencl_runner()
    base, w = _split(t)
    dt = BASE[base]
    rng = np.random.default_rng(11)
    a, b = _py_operands(dt, rng)
    q, r = np.zeros_like(a), np.zeros_like(a)
    if w == 1:
        load_a, load_b, store = "a[i]", "b[i]", lambda fn, o: f"{o}[i] = pg_{fn}_{t}(va, vb);"
        cnt = N
    else:
        load_a, load_b = f"vload{w}(i, a)", f"vload{w}(i, b)"
        store = lambda fn, o: f"vstore{w}(pg_{fn}_{t}(va, vb), i, {o});"  # noqa: E731
        cnt = N // w
    src = prelude_source("opencl", {f"pyfloordiv:{t}", f"pymod:{t}"}) + (
        f"__kernel void py(__global const {base}* a, __global const {base}* b, __global {base}* q, "
        f"__global {base}* r) {{\n  int i = get_global_id(0);\n  {t} va = {load_a}, vb = {load_b};\n"
        f"  {store('pyfloordiv', 'q')}\n  {store('pymod', 'r')}\n}}\n"
    )
    run(src, "py", (cnt,), None, [a, b, q, r])
    want_q, want_r = _py_reference("pyfloordiv", a, b), _py_reference("pymod", a, b)
    np.testing.assert_array_equal(q, want_q)
    np.testing.assert_array_equal(r, want_r)
    if np.issubdtype(dt, np.floating):  # signed zeros match Python's too
        np.testing.assert_array_equal(np.signbit(q), np.signbit(want_q))
        np.testing.assert_array_equal(np.signbit(r), np.signbit(want_r))
