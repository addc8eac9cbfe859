"""Device arrays (pygpgpu.numpy): creation, round trips, host indexing, printing, moves, copies."""
from __future__ import annotations

import numpy as np
import pytest

import pygpgpu_core.gnp as gnp
from pygpgpu_core import registry
from pygpgpu_core.errors import GPGPUError
from conftest import first_device, skip_no_device

DTYPES = [np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64,
          np.float16, np.float32, np.float64, np.complex64, np.complex128]


def _sample(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return rng.integers(0, 2, shape).astype(dtype)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(max(info.min, -1000), min(info.max, 1000), shape, endpoint=True).astype(dtype)
    data = rng.standard_normal(shape) * 100
    if dtype.kind == "c":
        data = data + 1j * rng.standard_normal(shape)
    return data.astype(dtype)


# -- creation -----------------------------------------------------------------------------------
def test_creation_functions(device):
    e = gnp.empty((3, 5), np.float32, device=device)
    assert (e.shape, e.dtype, e.size, e.ndim, e.nbytes) == ((3, 5), np.float32, 15, 2, 60)
    assert e.device == device and e.strides == (20, 4) and e.itemsize == 4 and len(e) == 3
    assert e.buffer.nbytes >= e.nbytes and e.buffer.context is device.context()

    np.testing.assert_array_equal(gnp.zeros(7, np.int32, device=device).get(), np.zeros(7, np.int32))
    np.testing.assert_array_equal(gnp.ones((2, 3), np.uint8, device=device).get(), np.ones((2, 3), np.uint8))
    np.testing.assert_array_equal(gnp.full((4,), -2.5, np.float32, device=device).get(), np.full(4, -2.5, np.float32))
    f = gnp.full(3, 7, device=device)  # dtype from the fill value, like numpy
    assert f.dtype == np.asarray(7).dtype
    np.testing.assert_array_equal(f.get(), np.full(3, 7))

    z = gnp.zeros(4, device=device)
    assert z.dtype == np.float64  # numpy's and CuPy's default

    host = np.arange(12, dtype=np.int16).reshape(3, 4)
    for like, expected in ((gnp.zeros_like(host, device=device), np.zeros_like(host)),
                           (gnp.ones_like(host, device=device), np.ones_like(host)),
                           (gnp.full_like(host, 9, device=device), np.full_like(host, 9))):
        assert like.shape == host.shape and like.dtype == host.dtype
        np.testing.assert_array_equal(like.get(), expected)
    el = gnp.empty_like(host, device=device)
    assert el.shape == host.shape and el.dtype == host.dtype

    g = gnp.asarray(host, device=device)
    zl = gnp.zeros_like(g, dtype=np.float32)  # a device array's device is kept
    assert zl.device == device and zl.dtype == np.float32
    np.testing.assert_array_equal(zl.get(), np.zeros((3, 4), np.float32))

    a = gnp.arange(2, 20, 3, dtype=np.int64, device=device)
    np.testing.assert_array_equal(a.get(), np.arange(2, 20, 3, dtype=np.int64))


def test_default_device_and_selector(backend):
    g = gnp.asarray([1.0, 2.0, 3.0], device=backend)
    assert g.device == registry.get_device(backend)
    d = gnp.zeros(3, device=g.device.selector)
    assert d.device == g.device


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_round_trip_every_dtype(device, dtype):
    host = _sample((5, 7), dtype)
    g = gnp.asarray(host, device=device)
    assert g.dtype == host.dtype and g.shape == host.shape
    np.testing.assert_array_equal(g.get(), host)
    np.testing.assert_array_equal(np.asarray(g), host)
    np.testing.assert_array_equal(g.numpy(), host)
    out = np.empty_like(host)
    assert g.get(out=out) is out
    np.testing.assert_array_equal(out, host)
    # fill and copy keep the bit patterns of every dtype
    value = host.flat[3]
    g.fill(value)
    np.testing.assert_array_equal(g.copy().get(), np.full(host.shape, value, host.dtype))


def test_asarray_inputs(device):
    np.testing.assert_array_equal(gnp.asarray([[1, 2], [3, 4]], device=device).get(), np.array([[1, 2], [3, 4]]))
    s = gnp.asarray(3.5, device=device)
    assert s.shape == () and s.ndim == 0 and s.size == 1 and float(s) == 3.5
    nc = np.arange(20, dtype=np.float32).reshape(4, 5)[:, ::2]  # non-contiguous input is copied
    np.testing.assert_array_equal(gnp.asarray(nc, device=device).get(), nc)
    be = np.arange(6, dtype=">i4")  # big-endian data arrives as native values
    np.testing.assert_array_equal(gnp.asarray(be, device=device).get(), be)
    conv = gnp.asarray([1, 2, 3], dtype=np.float32, device=device)
    assert conv.dtype == np.float32

    g = gnp.asarray(np.arange(4.0), device=device)
    assert gnp.asarray(g) is g and gnp.asarray(g, device=device) is g
    c = gnp.array(g)
    assert c is not g and c.buffer is not g.buffer
    np.testing.assert_array_equal(c.get(), g.get())
    f32 = gnp.asarray(g, dtype=np.float32)
    assert f32.dtype == np.float32 and f32 is not g
    np.testing.assert_array_equal(f32.get(), np.arange(4.0, dtype=np.float32))
    np.testing.assert_array_equal(gnp.asnumpy(g), np.arange(4.0))
    np.testing.assert_array_equal(gnp.asnumpy([1, 2]), np.array([1, 2]))


def test_empty_and_zero_size(device):
    for shape in [(0,), (3, 0), (0, 4)]:
        z = gnp.zeros(shape, np.float32, device=device)
        assert z.size == 0 and z.nbytes == 0 and z.shape == shape
        assert z.get().shape == shape
        z.fill(1)  # nothing to do, no error
        assert z.copy().shape == shape
    assert gnp.asarray(np.zeros((0, 2)), device=device).get().shape == (0, 2)
    assert repr(gnp.zeros(0, np.int32, device=device)).startswith("array([]")


# -- host indexing and assignment ------------------------------------------------------------
def test_indexing_gives_device_views(device):
    """Basic indexing makes views of the same memory (no copy, no transfer); integer arrays and
    masks gather on the device; the host sees the data only when it asks (get, np.asarray)."""
    host = np.arange(24, dtype=np.float32).reshape(4, 6)
    g = gnp.asarray(host, device=device)
    gnp.reset_transfer_stats()
    row = g[2]
    assert isinstance(row, gnp.DeviceArray) and row.buffer is g.buffer
    views = [g[2], g[-1], g[1:3], g[1:100], g[3:1], g[...], g[::2], g[:, 1], g[::-1, ::-2], g[None, 1:, 2]]
    assert gnp.transfer_stats() == {"h2d": 0, "d2h": 0, "h2d_bytes": 0, "d2h_bytes": 0}
    for got, want in zip(views, [host[2], host[-1], host[1:3], host[1:100], host[3:1], host[...], host[::2],
                                 host[:, 1], host[::-1, ::-2], host[None, 1:, 2]]):
        assert got.shape == want.shape and got.strides == want.strides
        np.testing.assert_array_equal(got.get(), want)
    el = g[2, 3]
    assert isinstance(el, gnp.DeviceArray) and el.shape == () and el == host[2, 3]
    assert float(el) == host[2, 3] and g[-1, -1] == host[-1, -1]
    np.testing.assert_array_equal(g[host > 10].get(), host[host > 10])
    np.testing.assert_array_equal(g[g > 10].get(), host[host > 10])
    flat = gnp.asarray(np.arange(10, dtype=np.int64), device=device)
    assert flat[3] == 3 and flat[3].item() == 3 and isinstance(flat[3].item(), int)
    assert flat[np.int32(-2)] == 8
    np.testing.assert_array_equal(flat[[1, 5]].get(), [1, 5])
    np.testing.assert_array_equal(flat[gnp.asarray(np.array([9, 0, 9]), device=device)].get(), [9, 0, 9])
    with pytest.raises(IndexError):
        flat[10]
    with pytest.raises(IndexError):
        g[4, 0]
    with pytest.raises(IndexError):
        flat[[1, 10]]


def test_setitem_from_host(device):
    g = gnp.zeros((4, 3), np.int32, device=device)
    host = np.arange(12, dtype=np.int32).reshape(4, 3)
    g[:] = host
    np.testing.assert_array_equal(g.get(), host)
    g[...] = 5                                    # scalar: a device-side fill
    np.testing.assert_array_equal(g.get(), np.full((4, 3), 5, np.int32))
    g[1] = [7, 8, 9]
    g[2:4] = 1
    g[0, 2] = -4
    expected = np.full((4, 3), 5, np.int32)
    expected[1] = [7, 8, 9]
    expected[2:4] = 1
    expected[0, 2] = -4
    np.testing.assert_array_equal(g.get(), expected)
    g[:, 0] = 0                                   # strided: filled on the device
    expected[:, 0] = 0
    np.testing.assert_array_equal(g.get(), expected)
    g[:] = np.arange(3)                           # broadcast like numpy
    np.testing.assert_array_equal(g.get(), np.broadcast_to(np.arange(3, dtype=np.int32), (4, 3)))
    src = gnp.asarray(host, device=device)
    g[:] = src                                    # device -> device
    np.testing.assert_array_equal(g.get(), host)
    with pytest.raises(ValueError):
        g[:] = np.arange(5)


# -- printing and conversions -------------------------------------------------------------------
def test_repr_and_str_synchronize(device):
    host = np.array([1.5, -2.0, 3.25], np.float32)
    g = gnp.asarray(host, device=device)
    r = repr(g)
    assert r == f"array([ 1.5 , -2.  ,  3.25], dtype=float32, device='{device.selector}')"
    assert str(g) == str(host)
    g.fill(0)                                     # printing always shows the current device data
    assert str(g) == str(np.zeros(3, np.float32))
    assert f"{gnp.asarray(np.float64(2.0), device=device):.3f}" == "2.000"


def test_scalar_conversions_and_iteration(device):
    one = gnp.asarray(np.array([42], np.int32), device=device)
    assert int(one) == 42 and float(one) == 42.0 and bool(one) and one.item() == 42
    assert [1, 2, 3, 4, 5][gnp.asarray(np.int64(2), device=device)] == 3  # __index__
    many = gnp.asarray(np.arange(3), device=device)
    with pytest.raises(TypeError, match="size-1"):
        float(many)
    assert list(many) == [0, 1, 2]
    assert many.tolist() == [0, 1, 2]
    with pytest.raises(TypeError, match="0-d"):
        len(gnp.asarray(1.0, device=device))


# -- device-side operations -----------------------------------------------------------------
def test_copy_is_independent(device):
    host = np.linspace(0, 1, 1000, dtype=np.float32)
    g = gnp.asarray(host, device=device)
    c = g.copy()
    assert c.buffer is not g.buffer and c.device == g.device
    g.fill(3)
    np.testing.assert_array_equal(c.get(), host)
    np.testing.assert_array_equal(g.get(), np.full(1000, 3, np.float32))


def test_reshape_and_view_share_memory(device):
    g = gnp.asarray(np.arange(12, dtype=np.int32), device=device)
    r = g.reshape(3, 4)
    assert r.shape == (3, 4) and r.buffer is g.buffer
    assert g.reshape((2, -1)).shape == (2, 6)
    r.fill(2)
    np.testing.assert_array_equal(g.get(), np.full(12, 2, np.int32))
    np.testing.assert_array_equal(r.ravel().get(), np.full(12, 2, np.int32))
    v = g.view(np.uint8)
    assert v.shape == (48,) and v.get()[0] == 2
    with pytest.raises(ValueError):
        g.reshape(5, 3)
    with pytest.raises(ValueError):
        g.reshape(-1, -1)
    del g, r
    np.testing.assert_array_equal(v.get().view(np.int32), np.full(12, 2, np.int32))  # the view keeps the memory


def test_astype(device):
    g = gnp.asarray(np.array([1.7, -2.2, 3.9]), device=device)
    i = g.astype(np.int32)
    assert i.dtype == np.int32 and i.device == device
    np.testing.assert_array_equal(i.get(), np.array([1.7, -2.2, 3.9]).astype(np.int32))
    assert g.astype(np.float64, copy=False) is g
    same = g.astype(np.float64)
    assert same is not g
    np.testing.assert_array_equal(same.get(), g.get())


def test_to_same_device_and_forced_copy(device):
    g = gnp.asarray(np.arange(5.0), device=device)
    assert g.to(device) is g
    assert g.to(device.selector) is g
    c = g.to(device, copy=True)
    assert c is not g and c.buffer is not g.buffer
    np.testing.assert_array_equal(c.get(), np.arange(5.0))


def test_to_another_context():
    """A private context is a different memory space: the move goes through the host."""
    from pygpgpu_opencl import Context

    device = first_device("opencl")
    with Context(device) as other:
        g = gnp.asarray(np.arange(8, dtype=np.float32), device=device)
        gnp.reset_transfer_stats()
        moved = g.to(other)
        assert moved.context is other and moved.buffer.context is other
        assert gnp.transfer_stats()["h2d"] == 1 and gnp.transfer_stats()["d2h"] == 1
        np.testing.assert_array_equal(moved.get(), np.arange(8, dtype=np.float32))
        back = moved.to(device)
        assert back.context is device.context()
        np.testing.assert_array_equal(back.get(), np.arange(8, dtype=np.float32))
        z = gnp.zeros(4, np.int32, device=other)  # creation functions take a Context too
        assert z.context is other


def _devices_of(name):
    try:
        return registry.backend_devices(name)
    except GPGPUError as exc:
        return exc


def test_to_between_backends():
    cuda, opencl = _devices_of("cuda"), _devices_of("opencl")
    if isinstance(cuda, Exception) or not cuda:
        skip_no_device("cuda", f"no CUDA device here ({cuda}); cuda<->opencl moves need one")
    if isinstance(opencl, Exception) or not opencl:
        skip_no_device("opencl", f"no OpenCL device here ({opencl})")
    host = np.arange(1000, dtype=np.float32)
    g = gnp.asarray(host, device="cuda:0")
    o = g.to("opencl:0")
    assert o.device.selector == "opencl:0"
    back = o.to("cuda:0")
    assert back.device.selector == "cuda:0"
    np.testing.assert_array_equal(back.get(), host)


def test_bad_input_errors(device):
    with pytest.raises(TypeError, match="dtype"):
        gnp.empty(3, dtype=object, device=device)
    with pytest.raises(TypeError, match="dtype"):
        gnp.asarray(["a", "b"], device=device)
    from pygpgpu_core.vec_types import float4
    vecs = np.zeros(3, float4.dtype)
    with pytest.raises(TypeError, match=r"host.view\(float32\).reshape\(-1, 4\)"):
        gnp.asarray(vecs, device=device)
    assert gnp.asarray(vecs.view(np.float32).reshape(-1, 4), device=device).shape == (3, 4)
    with pytest.raises(ValueError, match="negative"):
        gnp.empty((2, -1), device=device)
    with pytest.raises(TypeError, match="shape"):
        gnp.empty("abc", device=device)
    with pytest.raises(TypeError, match="device"):
        gnp.zeros(3, device=3.5)
    with pytest.raises(LookupError):
        gnp.zeros(3, device="opencl:99")
    g = gnp.zeros(4, np.float32, device=device)
    with pytest.raises(ValueError, match="out has shape"):
        g.get(out=np.empty(5, np.float32))
    with pytest.raises(ValueError, match="writable"):
        ro = np.empty(4, np.float32)
        ro.flags.writeable = False
        g.get(out=ro)
    with pytest.raises(ValueError, match="fill"):
        g.fill([1, 2])
    with pytest.raises(ValueError, match="without a copy"):
        np.asarray(g, copy=False)
