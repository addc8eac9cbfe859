"""Argument kinds are read once, by ``backend.args.normalize_kind``, for every backend (issue 33,
item 1): the ArgKind it gives carries the pointer-array packing (CUDA, HIP: float3 in 12 bytes)
and the declared by-value type OpenCL sets (float3 in 16 bytes); OpenCL's launcher takes the
same kinds, ArgKind objects included. Kernels run on OpenCL (PoCL on the CPU) and the results
are compared with numpy."""
from __future__ import annotations

import ctypes

import numpy as np
import pytest

import pygpgpu_opencl
from pygpgpu_core.backend.args import ArgumentLayout, normalize_kind
from pygpgpu_core.errors import BackendUnavailable
from pygpgpu_core.vec_types import float3
from pygpgpu_opencl import Context
from conftest import skip_no_device

SOURCE = """
typedef struct { int a; float b; } pair;
__kernel void take(__global float* out, float3 v, int n, pair p) {
    out[0] = v.x; out[1] = v.y; out[2] = v.z; out[3] = (float)n; out[4] = (float)p.a + p.b;
}
"""


class Pair(ctypes.Structure):
    _fields_ = [("a", ctypes.c_int), ("b", ctypes.c_float)]


@pytest.fixture(scope="module")
def ctx():
    try:
        devices = pygpgpu_opencl.backend.devices()
    except BackendUnavailable as exc:
        skip_no_device("opencl", f"no OpenCL runtime on this machine: {exc}")
    if not devices:
        skip_no_device("opencl", "the OpenCL runtime lists no device")
    context = Context(devices[0])
    yield context
    context.close()


def test_one_kind_carries_both_layouts():
    kind = normalize_kind(float3)
    assert (kind.tag, kind.size, kind.dtype.itemsize) == ("bytes", 12, 16)   # packed for CUDA/HIP, OpenCL's own
    scalar = normalize_kind(ctypes.c_int32)
    assert (scalar.tag, scalar.fmt, scalar.dtype, scalar.ctype) == ("scalar", "i", np.dtype(np.int32), ctypes.c_int32)
    record = normalize_kind(Pair)
    assert (record.tag, record.size, record.dtype, record.ctype) == ("bytes", 8, None, Pair)
    assert normalize_kind("buffer").dtype is None


@pytest.mark.parametrize("spelled", ["types", "kinds"])
def test_opencl_launches_with_the_shared_kinds(ctx, spelled):
    k = ctx.program(SOURCE).kernel("take")
    types = ["buffer", float3, np.int32, Pair]
    kinds = ArgumentLayout(types).kinds if spelled == "kinds" else types    # what CUDA's launcher reads
    fn = k.launcher(kinds)
    out = ctx.buffer(5 * 4)
    fn(1, None, (out, (1.5, 2.5, 3.5), 7, Pair(4, 0.25)))       # a vector by its components
    np.testing.assert_array_equal(out.read(np.empty(5, np.float32)), np.array([1.5, 2.5, 3.5, 7, 4.25], np.float32))
    with pytest.raises(TypeError, match="expects Pair"):
        fn(1, None, (out, (1, 2, 3), 7, 3))
