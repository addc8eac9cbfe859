"""pygpgpu.numpy views and shapes: basic slicing without copies, reshape/ravel/transpose/squeeze,
astype and copy on the device, creation functions, concatenate/stack, advanced indexing and
assignment, views passed to @kernel functions, and views through DLPack."""
from __future__ import annotations

import numpy as np
import pygpgpu.numpy as gnp
import pytest
from pygpgpu import kernel


def up(x, backend):
    return gnp.asarray(x, device=backend)


def check(got, want):
    assert isinstance(got, gnp.ndarray), type(got)
    want = np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape, want.dtype, want.shape)
    np.testing.assert_array_equal(got.get(), want)


NO_TRANSFERS = {"h2d": 0, "d2h": 0, "h2d_bytes": 0, "d2h_bytes": 0}


def test_slicing_makes_views_without_copies(backend):
    host = np.arange(4 * 6 * 5, dtype=np.int32).reshape(4, 6, 5)
    g = up(host, backend)
    keys = [np.s_[2:10:2], np.s_[:, 1], np.s_[..., -1], np.s_[::-1], np.s_[1, ::2, 3:], np.s_[None, :, None, 2],
            np.s_[-1, -1, -1], np.s_[3:1], np.s_[:, ::-2, ::3], np.s_[1:3, ...]]
    gnp.reset_transfer_stats()
    views = [g[k] for k in keys]
    assert gnp.transfer_stats() == NO_TRANSFERS
    for v, k in zip(views, keys, strict=True):
        assert v.buffer is g.buffer                       # the same memory
        assert v.shape == host[k].shape and v.strides == host[k].strides
        check(v, host[k])
    check(g[1:3][::-1, 2][1:], host[1:3][::-1, 2][1:])   # views of views


def test_writes_through_views_reach_the_base(backend):
    host = np.zeros((5, 6), np.float32)
    g = up(host, backend)
    g[1:4, ::2] = 7                                      # device fill of a strided view
    host[1:4, ::2] = 7
    g[:, 5] = up(np.arange(5, dtype=np.float32), backend)
    host[:, 5] = np.arange(5)
    g[0] = np.arange(6)                                  # a contiguous row from the host
    host[0] = np.arange(6)
    v = g.T[::2]
    v += 1
    host.T[::2] += 1
    g[4, ::-1] = g[0]                                    # device -> device with a negative stride
    host[4, ::-1] = host[0]
    check(g, host)
    with pytest.raises(ValueError, match="could not broadcast input array from shape \\(3,\\) into shape \\(5,\\)"):
        g[:, 1] = np.arange(3)


def test_reshape_ravel_transpose_squeeze(backend):
    host = np.arange(60, dtype=np.int64).reshape(3, 4, 5)
    g = up(host, backend)
    gnp.reset_transfer_stats()
    assert g.reshape(12, 5).buffer is g.buffer and g.ravel().buffer is g.buffer
    assert gnp.transfer_stats() == NO_TRANSFERS
    check(g.reshape(-1, 3), host.reshape(-1, 3))
    check(g.T, host.T)
    check(g.transpose(1, 0, 2), host.transpose(1, 0, 2))
    check(g.transpose((2, 0, 1)), host.transpose((2, 0, 1)))
    check(g.swapaxes(0, 2), host.swapaxes(0, 2))
    check(g[:, :1].squeeze(), host[:, :1].squeeze())
    check(g[:, 1:3].reshape(3, 10), host[:, 1:3].reshape(3, 10))     # not contiguous: reshape copies
    check(g.T.ravel(), host.T.ravel())
    check(g[1:].reshape(2, 20), host[1:].reshape(2, 20))              # contiguous with an offset: a view
    assert g[1:].reshape(2, 20).buffer is g.buffer
    check(gnp.transpose(g), np.transpose(host))
    check(g.flatten(), host.flatten())
    assert g.T.flags.f_contiguous and not g.T.flags.c_contiguous and g.flags.c_contiguous
    with pytest.raises(ValueError, match="cannot reshape array of size 60 into shape"):
        g.reshape(7, -1)


@pytest.mark.parametrize("src", [np.bool_, np.int8, np.uint16, np.int32, np.int64, np.float32, np.float64])
def test_astype_on_the_device(backend, src):
    host = (np.arange(-20, 20) * 3.7).astype(src) if np.dtype(src).kind == "f" else np.arange(-20, 20).astype(src)
    g = up(host, backend)
    for dst in (np.bool_, np.int8, np.uint8, np.int32, np.int64, np.float32, np.float64):
        gnp.reset_transfer_stats()
        got = g.astype(dst)
        assert gnp.transfer_stats() == NO_TRANSFERS
        with np.errstate(all="ignore"):
            want = host.astype(dst)
        if np.dtype(src).kind == "f" and np.dtype(dst).kind == "u":
            continue          # negative floats to unsigned: undefined in C and platform-dependent in numpy
        check(got, want)
    check(g[::3].astype(np.float64), host[::3].astype(np.float64))
    assert g.astype(g.dtype, copy=False) is g
    if src is not np.bool_:
        with pytest.raises(TypeError, match="Cannot cast"):
            g.astype(np.int8 if np.dtype(src).kind == "f" else np.bool_, casting="safe")


def test_copy_of_views_and_complex(backend):
    host = np.arange(30, dtype=np.float64).reshape(5, 6)
    g = up(host, backend)
    c = g[::2, 1::2].copy()
    assert type(c) is gnp.DeviceArray and c.buffer is not g.buffer
    check(c, host[::2, 1::2])
    z = up((np.arange(12) + 1j * np.arange(12)).astype(np.complex128).reshape(3, 4), backend)
    check(z[:, ::-2].copy(), (np.arange(12) + 1j * np.arange(12)).astype(np.complex128).reshape(3, 4)[:, ::-2])
    check(gnp.copy(g.T), host.T.copy())


def test_creation_functions(backend):
    check(gnp.arange(10, device=backend), np.arange(10))
    check(gnp.arange(3, 20, 4, device=backend), np.arange(3, 20, 4))
    check(gnp.arange(10, 0, -3, dtype=np.int16, device=backend), np.arange(10, 0, -3, dtype=np.int16))
    check(gnp.arange(5, 5, device=backend), np.arange(5, 5))
    got = gnp.arange(0.5, 7.25, 0.25, device=backend)
    assert got.dtype == np.float64 and got.shape == np.arange(0.5, 7.25, 0.25).shape
    np.testing.assert_allclose(got.get(), np.arange(0.5, 7.25, 0.25), rtol=1e-15)
    got = gnp.arange(0, 1, 0.1, dtype=np.float32, device=backend)
    np.testing.assert_allclose(got.get(), np.arange(0, 1, 0.1, dtype=np.float32), rtol=1e-6)
    gnp.reset_transfer_stats()
    big = gnp.arange(1_000_000, device=backend)
    assert gnp.transfer_stats()["h2d"] == 0                 # computed on the device, not uploaded
    assert int(big[-1]) == 999_999
    for args in [(0, 1, 7), (2.5, -1, 5), (0, 10, 4), (1, 2, 1), (0, 1, 0)]:
        np.testing.assert_allclose(gnp.linspace(*args, device=backend).get(), np.linspace(*args), rtol=1e-15)
    np.testing.assert_allclose(gnp.linspace(0, 1, 5, endpoint=False, device=backend).get(),
                               np.linspace(0, 1, 5, endpoint=False))
    check(gnp.linspace(0, 10, 4, dtype=int, device=backend), np.linspace(0, 10, 4, dtype=int))
    s, step = gnp.linspace(0, 2, 5, retstep=True, device=backend)
    assert step == np.linspace(0, 2, 5, retstep=True)[1]
    check(gnp.full((2, 3), 7, np.int8, device=backend), np.full((2, 3), 7, np.int8))
    g = up(np.ones((2, 3), np.float32), backend)
    check(gnp.ones_like(g), np.ones((2, 3), np.float32))
    check(gnp.zeros_like(g, dtype=np.int32), np.zeros((2, 3), np.int32))
    assert gnp.empty_like(g).shape == (2, 3) and gnp.empty_like(g).device == g.device


def test_concatenate_and_stack(backend):
    a = np.arange(6, dtype=np.int32).reshape(2, 3)
    b = np.arange(9, dtype=np.float32).reshape(3, 3)
    ga, gb = up(a, backend), up(b, backend)
    check(gnp.concatenate([ga, gb]), np.concatenate([a, b]))
    check(gnp.concatenate([ga, ga.T.T], axis=1), np.concatenate([a, a], axis=1))
    check(gnp.concatenate([ga, gb], axis=None), np.concatenate([a, b], axis=None))
    check(gnp.concatenate([ga[:, ::-1], ga[:0]]), np.concatenate([a[:, ::-1], a[:0]]))
    check(gnp.stack([ga, ga * 2]), np.stack([a, a * 2]))
    check(gnp.stack([ga, ga], axis=-1), np.stack([a, a], axis=-1))
    check(gnp.concatenate([ga, gb], dtype=np.float64), np.concatenate([a, b], dtype=np.float64))
    with pytest.raises(ValueError) as ours:
        gnp.concatenate([ga, gb], axis=1)
    with pytest.raises(ValueError) as numpy_error:
        np.concatenate([a, b], axis=1)
    assert str(ours.value) == str(numpy_error.value)
    with pytest.raises(ValueError, match="same shape"):
        gnp.stack([ga, gb])
    with pytest.raises(TypeError, match="host \\(numpy\\) array"):
        gnp.concatenate([ga, a])


def test_advanced_indexing_and_assignment(backend):
    host = np.arange(40, dtype=np.float64).reshape(8, 5)
    g = up(host, backend)
    check(g[[0, 7, -1, 3]], host[[0, 7, -1, 3]])
    check(g[up(np.array([[1, 2], [3, 4]]), backend)], host[np.array([[1, 2], [3, 4]])])
    check(g[host > 17], host[host > 17])
    check(g[g[:, 0] > 10], host[host[:, 0] > 10])
    check(gnp.take(g, [4, 0], axis=1), np.take(host, [4, 0], axis=1))
    check(gnp.take(g, [39, 0]), np.take(host, [39, 0]))
    idx = gnp.nonzero(g % 7 == 0)
    for got, want in zip(idx, np.nonzero(host % 7 == 0), strict=True):
        check(got, want)
    check(gnp.where(g > 30)[1], np.where(host > 30)[1])
    g[g > 30] = -1
    host[host > 30] = -1
    g[[1, 2]] = 0
    host[[1, 2]] = 0
    g[[5]] = up(np.arange(5, dtype=np.float64), backend)
    host[[5]] = np.arange(5)
    g[host < 0] = up(np.full(int((host < 0).sum()), 9.5), backend)
    host[host < 0] = 9.5
    check(g, host)
    with pytest.raises(IndexError, match="out of bounds"):
        g[[0, 8]]
    with pytest.raises(IndexError, match="boolean index did not match"):
        g[np.ones(3, bool)]


@kernel
def _scale_into(x, out, k):
    for i in range(x.shape[0]):
        out[i] = x[i] * k


@kernel
def _bump(x):
    for i in range(x.shape[0]):
        x[i] = x[i] + 1


def test_kernels_take_views(backend):
    host = np.arange(20, dtype=np.float32).reshape(4, 5)
    g = up(host, backend)
    out = gnp.zeros((4, 5), np.float32, device=backend)
    _scale_into[backend](g[:, 1], out[:, 2], np.float32(10))       # read a column, write a column
    _scale_into[backend](g[2, 1:], out[3, 1:], np.float32(-1))     # contiguous rows with an offset
    want = np.zeros((4, 5), np.float32)
    want[:, 2] = host[:, 1] * 10
    want[3, 1:] = -host[2, 1:]
    check(out, want)
    _bump[backend](g[::-2, 0])                                     # read-modify-write through a view
    host[::-2, 0] += 1
    check(g, host)
    before = g.get()
    _scale_into[backend](g[1], out[0], np.float32(1))              # the read-only view is not written back
    check(g, before)


def test_dlpack_of_views_on_host_memory(backend):
    from pygpgpu_core import registry

    dev = registry.get_device(backend)
    if g_host_visible(dev) is False:
        pytest.skip("DLPack export of device memory to numpy needs host-visible memory (PoCL)")
    host = np.arange(12, dtype=np.float32).reshape(3, 4)
    g = up(host, backend)
    row = np.from_dlpack(g[1])                    # contiguous with an offset: shares memory
    np.testing.assert_array_equal(row, host[1])
    g[1, 0] = 100
    g.synchronize()                               # the device's queue writes that memory
    assert row[0] == 100
    col = np.from_dlpack(g[:, 2])                 # strided: exported as a contiguous copy
    np.testing.assert_array_equal(col, host[:, 2])


def g_host_visible(dev):
    return bool(getattr(dev, "host_unified_memory", False)) and dev.backend.name == "opencl"
