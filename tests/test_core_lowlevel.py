"""The launch conveniences CUDA and HIP share (pygpgpu_core.backend.lowlevel), against a stand-in
backend that records what the launcher receives; the real backends run them in
tests/test_cuda_device.py and tests/test_hip_device.py."""
from __future__ import annotations

import numpy as np
import pytest

from pygpgpu_core.errors import ClosedError
from pygpgpu_core.backend.lowlevel import bracket_call, launch_with_host_arrays, split_work_bracket


class FakeDevice:
    def __init__(self, selector):
        self.selector = selector


class FakeBuffer:
    def __init__(self, context, data):
        self.context, self.data, self.closed = context, data, False
        self.ptr = id(self)

    def read(self, host):
        host[...] = self.data.reshape(host.shape)

    def close(self):
        self.closed = True


class FakeContext:
    def __init__(self, selector="fake:0"):
        self.device = FakeDevice(selector)
        self.buffers, self.syncs = [], 0

    def buffer_from_host(self, host):
        buf = FakeBuffer(self, np.ascontiguousarray(host).copy())
        self.buffers.append(buf)
        return buf

    def synchronize(self):
        self.syncs += 1


class FakeKernel:
    """Its launcher doubles every buffer's data, as a kernel writing its arguments would."""

    name = "twice"

    def __init__(self, context, param_sizes=(8, 8, 4)):
        self.context, self.param_sizes, self.calls = context, param_sizes, []

    def launcher(self, kinds):
        def launch(global_size, local_size, args):
            self.calls.append((global_size, local_size, list(kinds), list(args)))
            for a in args:
                if isinstance(a, FakeBuffer):
                    a.data *= 2

        return launch

    def launch(self, global_size, local_size, args):
        launch_with_host_arrays(self, global_size, local_size, args, kind_of_value=kind_of_value,
                                buffer_type=FakeBuffer)


def kind_of_value(value, size):
    if isinstance(value, FakeBuffer):
        return "buffer"
    if value == "local":
        return "local"
    if isinstance(value, np.generic):
        return value.dtype
    raise TypeError(f"{type(value).__name__} cannot be a kernel argument")


def test_numpy_arrays_are_staged_read_back_and_released():
    ctx = FakeContext()
    k = FakeKernel(ctx)
    out = np.arange(6, dtype=np.float32).reshape(2, 3)
    src = np.ones(4, np.float32)
    src.flags.writeable = False                            # read-only: never read back into
    resident = FakeBuffer(ctx, np.zeros(2))
    k.launch(16, 8, [out, resident, "local", src])
    (gs, ls, kinds, args), = k.calls
    assert (gs, ls) == (16, 8) and kinds == ["buffer", "buffer", "local", "buffer"]
    assert args[1] is resident and args[2] == "local"
    np.testing.assert_array_equal(out, np.arange(6).reshape(2, 3) * 2)
    assert (src == 1).all() and ctx.syncs == 1
    assert all(b.closed for b in ctx.buffers) and not resident.closed



def test_one_array_for_two_parameters_is_one_buffer():
    """Staged apart, the copy read back last decided the result (here: doubled once per copy,
    so x came back doubled, not quadrupled as one buffer passed twice is); overlapping different
    arrays are refused (nothing says which parameters the kernel writes)."""
    ctx = FakeContext()
    k = FakeKernel(ctx)
    x = np.ones(4, np.float32)
    k.launch(4, None, [x, x])
    (_, _, kinds, args), = k.calls
    assert args[0] is args[1] and len(ctx.buffers) == 1
    np.testing.assert_array_equal(x, np.full(4, 4, np.float32))
    y = np.ones(8, np.float32)
    k.launch(4, None, [y[::2], y[1::2]])           # interleaved: two buffers
    np.testing.assert_array_equal(y, np.full(8, 2, np.float32))
    with pytest.raises(ValueError, match="argument 1 of kernel 'twice': it overlaps in memory with argument 0"):
        k.launch(4, None, [y[1:], y[:-1]])
    assert all(b.closed for b in ctx.buffers)

def test_argument_errors_name_the_argument_and_free_staged_buffers():
    ctx = FakeContext()
    k = FakeKernel(ctx)
    with pytest.raises(TypeError, match="argument 1 of kernel 'twice': object cannot be"):
        k.launch(4, None, [np.zeros(2), object()])
    with pytest.raises(ValueError, match="argument 0 of kernel 'twice': it lives on other:0"):
        k.launch(4, None, [FakeBuffer(FakeContext("other:0"), np.zeros(1))])
    assert ctx.buffers and all(b.closed for b in ctx.buffers) and not k.calls

    def closed(value):
        raise ClosedError("this buffer")

    with pytest.raises(ClosedError):                       # pygpgpu's own errors pass unchanged
        launch_with_host_arrays(k, 4, None, [1], kind_of_value=kind_of_value, buffer_type=FakeBuffer,
                                adapt=closed)


def test_adapt_runs_first_and_brackets_launch():
    ctx = FakeContext()
    k = FakeKernel(ctx)
    launch_with_host_arrays(k, 4, None, [np.float32(1)], kind_of_value=kind_of_value, buffer_type=FakeBuffer,
                            adapt=lambda v: FakeBuffer(ctx, np.zeros(1)) if isinstance(v, np.float32) else v)
    assert k.calls[-1][2] == ["buffer"]
    bracket_call(k, (32, 8))(np.int32(3))
    bracket_call(k, 64)(np.int32(3))
    assert [c[:2] for c in k.calls[1:]] == [(32, 8), (64, None)]
    assert split_work_bracket((5,), "k", "x") == (5, None)
    with pytest.raises(TypeError, match="already bound"):
        bracket_call(k, "cuda:0")


def test_kernel_symbols_of_cpp_modules():
    from pygpgpu_core.backend.lowlevel import kernel_symbol

    symbols = ["vecadd", "_Z5saxpyPKfPff", "_Z4fillIfEvPT_i", "_Z4fillIiEvPT_i", "_ZN3ops5scaleEPf"]
    assert kernel_symbol("vecadd", symbols, "CUDA program 'm'") == "vecadd"
    assert kernel_symbol("saxpy", symbols, "x") == "_Z5saxpyPKfPff"
    assert kernel_symbol("ops::scale", symbols, "x") == "_ZN3ops5scaleEPf"
    with pytest.raises(KeyError, match=r"several instantiations \(_Z4fillIfEvPT_i, _Z4fillIiEvPT_i\)"):
        kernel_symbol("fill", symbols, "x")
    with pytest.raises(KeyError, match="no kernel named 'nope' in HIP program 'm'; kernels in it: vecadd"):
        kernel_symbol("nope", symbols, "HIP program 'm'")
    assert kernel_symbol("anything", [], "x") == "anything"     # nothing listed: the driver decides


def test_kernels_as_program_attributes():
    from pygpgpu_core.backend.lowlevel import kernel_attribute

    class Program:
        def kernel(self, name):
            if name != "vecadd":
                raise KeyError(f"no kernel named {name!r}")
            return "the vecadd kernel"

    p = Program()
    assert kernel_attribute(p, "vecadd", True) == "the vecadd kernel"
    with pytest.raises(AttributeError, match="no kernel named 'other'"):
        kernel_attribute(p, "other", True)
    for name, ready in (("_private", True), ("vecadd", False)):
        with pytest.raises(AttributeError):
            kernel_attribute(p, name, ready)
