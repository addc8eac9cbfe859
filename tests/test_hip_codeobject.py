"""What the HIP backend reads from a compiled code object, and how kernel arguments are packed
for it (the driver kit's packer, shared with CUDA).

All of it runs without a GPU: kernels are compiled by hiprtc and the resulting ELF is read.
"""
from __future__ import annotations

import ctypes

import numpy as np
import pytest

from pygpgpu_core.errors import ClosedError
from pygpgpu_core.protocols import LocalMemory

SOURCE = """
struct Pair { float a; double b; };
extern "C" __global__ void plain(const float* a, float* b, int n) {
    __shared__ float tile[64];
    int i = threadIdx.x;
    tile[i % 64] = a[i];
    __syncthreads();
    if (i < n) b[i] = tile[i % 64];
}
__global__ void mangled(double* x, long long n, char c, Pair p) { x[0] = n + c + p.a + p.b; }
namespace ns { __global__ void inner(int* x) { x[0] = 1; } }
template <typename T> __global__ void scale(T* x, T s) { x[threadIdx.x] *= s; }
template __global__ void scale<float>(float*, float);
template __global__ void scale<double>(double*, double);
extern "C" __global__ __launch_bounds__(128) void bounded(float* x) { x[threadIdx.x] = 0.0f; }
"""


class Pair(ctypes.Structure):
    _fields_ = [("a", ctypes.c_float), ("b", ctypes.c_double)]


class Pointer:
    """A stand-in device buffer at address ``ptr``."""

    def __init__(self, ptr: int):
        self.ptr = ptr


@pytest.fixture(scope="module", params=["gfx90a", "gfx1030"])
def info(request, hiprtc_compile):
    from pygpgpu_hip._codeobject import read_code_object

    return read_code_object(hiprtc_compile(SOURCE, request.param)).kernels


def test_kernel_symbols_are_listed(info):
    assert "plain" in info and "bounded" in info
    assert any(s.startswith("_Z7mangled") for s in info)
    assert any(s.startswith("_ZN2ns5innerE") for s in info)
    assert sum(s.startswith("_Z5scale") for s in info) == 2


def test_parameter_sizes_come_from_the_metadata(info):
    from pygpgpu_core.backend.lowlevel import resolve_kernel_name

    assert info["plain"].param_sizes == (8, 8, 4)
    mangled = resolve_kernel_name("mangled", list(info))
    assert info[mangled].param_sizes == (8, 8, 1, ctypes.sizeof(Pair))
    assert info["plain"].static_shared == 64 * 4
    assert info["bounded"].max_threads == 128


def test_cpp_names_resolve_to_symbols(info):
    from pygpgpu_core.backend.lowlevel import resolve_kernel_name

    symbols = list(info)
    assert resolve_kernel_name("plain", symbols) == "plain"
    assert resolve_kernel_name("mangled", symbols).startswith("_Z7mangled")
    assert resolve_kernel_name("ns::inner", symbols).startswith("_ZN2ns5innerE")
    several = resolve_kernel_name("scale", symbols)
    assert isinstance(several, list) and len(several) == 2
    assert resolve_kernel_name("absent", symbols) == []


def test_packed_sizes_match_the_compiled_parameters(info):
    from pygpgpu_core.backend.lowlevel import resolve_kernel_name
    from pygpgpu_core.backend.args import ArgumentLayout, check_param_kinds

    def kinds(layout):
        return [kind for _, kind in layout.params]

    mangled = resolve_kernel_name("mangled", list(info))
    layout = ArgumentLayout(["buffer", np.int64, "local", np.int8, Pair], "mangled")
    check_param_kinds("mangled", info[mangled].param_sizes, kinds(layout))
    wrong = ArgumentLayout(["buffer", np.int32, np.int8, Pair], "mangled")
    with pytest.raises(TypeError, match="argument 1 of kernel 'mangled': the parameter is 8 bytes"):
        check_param_kinds("mangled", info[mangled].param_sizes, kinds(wrong))
    with pytest.raises(TypeError, match="has 3 parameters, but 2 arguments"):
        check_param_kinds("plain", info["plain"].param_sizes, kinds(ArgumentLayout(["buffer", "buffer"])))


def test_layout_matches_the_c_struct_layout():
    from pygpgpu_core.backend.args import ArgumentLayout

    class Expected(ctypes.Structure):
        _fields_ = [("p", ctypes.c_void_p), ("f", ctypes.c_float), ("q", ctypes.c_int64), ("c", ctypes.c_int8),
                    ("s", Pair), ("d", ctypes.c_double), ("u", ctypes.c_uint16)]

    layout = ArgumentLayout(["buffer", np.float32, "local", np.int64, ctypes.c_int8, Pair, np.dtype("float64"),
                             np.uint16])
    shared = layout.pack([Pointer(0), np.float32(2.5), LocalMemory(64), 7, ctypes.c_int8(-1), Pair(1.0, 2.0), 3.0,
                          np.uint16(65535)])
    assert shared == 64
    assert layout.offsets == [getattr(Expected, f).offset for f, _ in Expected._fields_]
    expected = Expected(None, 2.5, 7, -1, Pair(1.0, 2.0), 3.0, 65535)
    n = layout.offsets[-1] + 2
    assert layout.storage.raw[:n] == bytes(expected)[:n]
    # each kernelParams entry points at its argument inside the one storage buffer
    base = ctypes.addressof(layout.storage)
    assert [p - base for p in layout.pointers] == layout.offsets


def test_bad_arguments_are_named():
    from pygpgpu_core.backend.args import ArgumentLayout, kind_of_value

    layout = ArgumentLayout(["buffer", np.float32, "local", np.int32], "k")
    null = Pointer(0)
    with pytest.raises(TypeError, match="argument 0 of kernel 'k' must be a device Buffer"):
        layout.pack([None, 1.0, LocalMemory(4), 1])
    with pytest.raises(TypeError, match="argument 1 of kernel 'k' must be float32"):
        layout.pack([null, "two", LocalMemory(4), 1])
    with pytest.raises(TypeError, match="argument 2 of kernel 'k' must be LocalMemory"):
        layout.pack([null, 1.0, 4, 1])
    with pytest.raises(OverflowError, match="argument 3 of kernel 'k': 1099511627776 does not fit"):
        layout.pack([null, 1.0, LocalMemory(4), 2**40])
    with pytest.raises(TypeError, match="takes 4 arguments"):
        layout.pack([null, 1.0, LocalMemory(4)])
    with pytest.raises(TypeError, match="float16"):
        ArgumentLayout([np.float16], float16=False)
    with pytest.raises(TypeError, match="no fixed C type"):
        kind_of_value(3, None)
    assert kind_of_value(3, 8) == np.int64 and kind_of_value(3, 4) == np.int32
    assert kind_of_value(0.5, 4) == np.float32 and kind_of_value(0.5, 8) == np.float64

    class Closed:
        closed = True

        @property
        def ptr(self):
            raise ClosedError("this Buffer")

    with pytest.raises(ClosedError):
        layout.pack([Closed(), 1.0, LocalMemory(4), 1])
    assert layout.pack([null, 1.0, LocalMemory(4), 1]) == 4
