"""CUDA's and HIP's argument packer (pygpgpu_core.backend) with float32/float16 values past the
type's range: they become +-inf, as C converts them, as OpenCL's argument path (a ctypes
c_float) gives and as numpy gives for float32 + a huge Python float (NEP 50). struct refused
them ("float too large to pack with f format"), so k["cuda"](a, 1e300, out) raised where
k["opencl"] ran. No GPU: the packer only writes bytes, read back here."""
from __future__ import annotations

import ctypes
import struct
import warnings

import numpy as np
import pytest

from pygpgpu_core.backend.args import ArgumentLayout
from pygpgpu_core.backend.launcher import build_launcher

FLT_MAX = float(np.finfo(np.float32).max)
# values C (and ctypes, and OpenCL's path) converts to float32, struct's "<f" refusing the first four
VALUES = [1e300, -1e300, 2.0**128, FLT_MAX * (1 + 2**-23), FLT_MAX * (1 + 2**-26), FLT_MAX, 1e-50, 2**40,
          float("inf"), -0.0]


def _opencl_float32(v) -> float:
    return ctypes.c_float(v).value          # what pygpgpu_opencl's set_float stores


def _float32s(layout: ArgumentLayout) -> list:
    raw = bytes(layout.storage)
    return [struct.unpack_from("<f", raw, o)[0] for o, (_, k) in zip(layout.offsets, layout.params) if k.fmt == "f"]


def test_struct_refuses_what_the_packer_must_take():
    with pytest.raises(OverflowError):
        struct.pack("<f", 1e300)


@pytest.mark.parametrize("kind", [np.float32, np.dtype(np.float32), ctypes.c_float])
def test_layout_packs_out_of_range_float32_as_c_converts(kind):
    layout = ArgumentLayout([np.int32, kind, np.float64], "k")
    for v in VALUES:
        layout.pack([7, v, 1e300])
        (got,) = _float32s(layout)
        want = _opencl_float32(v)
        assert got == want and np.signbit(got) == np.signbit(want), (v, got, want)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)       # numpy warns about the overflow
            assert got == np.float32(v), (v, got)                # and converts the same way
        raw = bytes(layout.storage)
        assert struct.unpack_from("<i", raw, 0)[0] == 7 and struct.unpack_from("<d", raw, 8)[0] == 1e300


def test_layout_packs_out_of_range_float16_as_numpy_converts():
    layout = ArgumentLayout([np.float16, np.float32], "k")
    with pytest.warns(RuntimeWarning, match="overflow"):           # numpy's warning, as on OpenCL
        layout.pack([1e10, 1e300])
    raw = bytes(layout.storage)
    assert struct.unpack_from("<e", raw, 0)[0] == np.inf and struct.unpack_from("<f", raw, 4)[0] == np.inf


def test_other_packing_errors_still_name_the_argument():
    layout = ArgumentLayout([np.float32, np.int32, np.float64], "k")
    with pytest.raises(OverflowError, match=r"argument 1 of kernel 'k': 4294967296 does not fit in int32"):
        layout.pack([1e300, 2**32, 0.0])                          # the float32 overflow is not blamed
    with pytest.raises(OverflowError, match=r"argument 0 of kernel 'k': .* does not fit in float32"):
        layout.pack([10**400, 1, 0.0])                           # no float holds it (ctypes refuses too)
    with pytest.raises(TypeError, match=r"argument 0 of kernel 'k' must be float32, got str"):
        layout.pack(["1.0", 1, 0.0])


class _Calls:
    backend = "test"

    def __init__(self):
        self.launched = []

    def set_current_unchecked(self, token):
        pass

    def launch_unchecked(self, func, gx, gy, gz, bx, by, bz, shared, stream, params, extra):
        self.launched.append(params)
        return 0


class _FakeKernel:
    """What build_launcher needs of a CUDA/HIP kernel; the driver call records the void** array."""

    name = "add_scalar"
    shared_default_limit = 48 * 1024
    float16_arguments = True

    def __init__(self, param_sizes):
        self.param_sizes = param_sizes
        self.handle = ctypes.c_void_p(1)
        self._geometry_cache = {}
        self.calls = _Calls()
        self.context = type("Ctx", (), {"queue": type("Q", (), {"handle": None})(), "current_token": None,
                                        "calls": self.calls})()

    def geometry(self, global_size, local_size):
        return (1, 1, 1, 1, 1, 1)

    def ensure_shared(self, nbytes):
        pass

    def launch_failed(self, status):
        raise AssertionError(f"launch failed: {status}")


def test_generated_launcher_packs_out_of_range_float32_as_c_converts():
    kernel = _FakeKernel([4, 4, 2])
    launch = build_launcher(kernel, [np.int32, np.float32, np.float16])
    for v in VALUES:
        launch((4,), None, [3, v, 0.5])
        params = kernel.calls.launched[-1]
        got = ctypes.cast(params[1], ctypes.POINTER(ctypes.c_float))[0]
        assert got == _opencl_float32(v), (v, got)
        assert ctypes.cast(params[0], ctypes.POINTER(ctypes.c_int32))[0] == 3
        assert struct.unpack("<e", ctypes.string_at(params[2], 2))[0] == 0.5
    with pytest.raises(OverflowError, match="argument 0 of kernel 'add_scalar'"):
        launch((4,), None, [2**31, 1e300, 0.5])
