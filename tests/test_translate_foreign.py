"""Kernels take torch/CuPy device arrays on CUDA without a copy (via gnp.as_device_array)."""
from __future__ import annotations

import numpy as np
import pytest

from pygpgpu_core import registry
from pygpgpu_core.errors import GPGPUError
from pygpgpu_translate import kernel
from conftest import assert_code_object, assert_cubin, skip_no_device


@kernel
def scale_rows(pos, out, factor):
    for i in range(out.shape[0]):
        out[i, 0] = pos[i, 0] * factor
        out[i, 1] = pos[i, 1] * factor
        out[i, 2] = pos[i, 2] * factor
        out[i, 3] = pos[i, 3] + 1.0


def _cuda_device():
    try:
        return registry.get_device("cuda")
    except GPGPUError as exc:
        skip_no_device("cuda", f"no CUDA device: {exc}")


def _foreign_modules():
    found = []
    try:
        import torch
        if torch.cuda.is_available():
            found.append("torch")
    except ImportError:
        pass
    try:
        import cupy
        if cupy.cuda.runtime.getDeviceCount() > 0:
            found.append("cupy")
    except Exception:
        pass
    return found


@pytest.mark.parametrize("lib", ["torch", "cupy"])
def test_foreign_cuda_arrays_run_zero_copy(lib):
    _cuda_device()
    if lib not in _foreign_modules():
        pytest.skip(f"{lib} with a CUDA device is not installed here")
    host = np.random.default_rng(1).random((37, 4), dtype=np.float32)
    if lib == "torch":
        import torch
        pos = torch.from_numpy(host).cuda()
        out = torch.zeros_like(pos)
        # a row slice starting at an odd element: no alignment may be assumed for foreign memory
        flat = torch.zeros(37 * 4 + 1, device="cuda")
        odd = flat[1:].view(37, 4)
        scale_rows["cuda"](pos, out, 2.0)
        scale_rows["cuda"](pos, odd, 2.0)
        got, got_odd = out.cpu().numpy(), odd.cpu().numpy()
    else:
        import cupy
        pos = cupy.asarray(host)
        out = cupy.zeros_like(pos)
        flat = cupy.zeros(37 * 4 + 1, dtype=cupy.float32)
        odd = flat[1:].reshape(37, 4)
        scale_rows["cuda"](pos, out, 2.0)
        scale_rows["cuda"](pos, odd, 2.0)
        got, got_odd = cupy.asnumpy(out), cupy.asnumpy(odd)
    want = np.concatenate([host[:, :3] * 2, host[:, 3:] + 1], axis=1)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    np.testing.assert_allclose(got_odd, want, rtol=1e-6)


def test_foreign_kernel_sources_compile(nvrtc_compile, hiprtc_compile):
    pos = np.zeros((8, 4), np.float32)
    src = scale_rows.inspect(pos, pos, 2.0, backend="cuda").source
    assert_cubin(nvrtc_compile(src), src)
    src = scale_rows.inspect(pos, pos, 2.0, backend="hip").source
    assert_code_object(hiprtc_compile(src, "gfx1030"), src)


def test_foreign_kernel_with_numpy_arrays(backend):
    """The kernel the foreign-array tests compile, run against its host reference on every backend
    (CUDA too where a device is present, without torch or CuPy)."""
    host = np.random.default_rng(3).standard_normal((37, 4)).astype(np.float32)
    out = np.zeros_like(host)
    odd = np.zeros(37 * 4 + 1, np.float32)[1:].reshape(37, 4)     # rows off the 16-byte boundary
    scale_rows[backend](host, out, 2.0)
    scale_rows[backend](host, odd, 2.0)
    want = np.concatenate([host[:, :3] * 2, host[:, 3:] + 1], axis=1)
    np.testing.assert_allclose(out, want, rtol=1e-6)
    np.testing.assert_allclose(odd, want, rtol=1e-6)


def test_foreign_host_memory_is_refused_with_advice(backend):
    """A DLPack producer over host memory is not device memory: the error says what to do."""
    class HostDLPack:
        def __init__(self, a):
            self.a = a

        def __dlpack__(self, **kw):
            return self.a.__dlpack__(**kw)

        def __dlpack_device__(self):
            return self.a.__dlpack_device__()

    pos = np.zeros((8, 4), np.float32)
    with pytest.raises(TypeError, match="gnp.asarray"):
        scale_rows[backend](HostDLPack(pos), pos.copy(), 2.0)
