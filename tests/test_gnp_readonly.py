"""numpy's WRITEABLE flag on pygpgpu.numpy arrays: which views are read-only (broadcast_to,
diagonal, views of a read-only array), ``g.flags.writeable = False``, and every write path
refusing a read-only destination with numpy's ValueError (assignment, fill, copyto, in-place
operators, ``out=``, @kernel and handwritten kernel files), each compared with numpy."""
from __future__ import annotations

import gc
import warnings

import numpy as np
import pygpgpu
import pygpgpu.numpy as gnp
import pytest
from pygpgpu import kernel


def up(x, backend):
    return gnp.asarray(x, device=backend)


def both_raise(host_fn, dev_fn):
    """``host_fn`` and ``dev_fn`` raise the same exception type with the same message."""
    with pytest.raises(Exception) as want:
        host_fn()
    with pytest.raises(want.type) as got:
        dev_fn()
    assert str(got.value) == str(want.value)


def read_only_pair(backend, host=None):
    h = np.arange(12, dtype=np.float32).reshape(3, 4) if host is None else host
    g = up(h, backend)
    h.flags.writeable = False
    g.flags.writeable = False
    return h, g


def test_flags_match_numpy(backend):
    h = np.arange(24, dtype=np.int32).reshape(4, 6)
    g = up(h, backend)
    for key in (np.s_[...], np.s_[1], np.s_[:, 1], np.s_[::2], np.s_[:, ::-1], np.s_[1:3, 2:]):
        for name in ("c_contiguous", "f_contiguous", "writeable"):
            assert getattr(g[key].flags, name) == getattr(h[key].flags, name), (key, name)
    assert g.T.flags.f_contiguous and not g.T.flags.c_contiguous
    assert g.flags.owndata and not g[1:].flags.owndata and not g.T.flags.owndata
    assert g.flags["WRITEABLE"] and g.flags["W"] and g.flags["C_CONTIGUOUS"]
    g.flags["WRITEABLE"] = False
    assert not g.flags.writeable
    with pytest.raises(KeyError):
        g.flags["OWNDATA"] = False


VIEWS = {
    "slice": lambda m, a: a[1:, ::2],
    "index": lambda m, a: a[1],
    "newaxis": lambda m, a: a[None],
    "T": lambda m, a: a.T,
    "transpose": lambda m, a: m.transpose(a, (1, 0)),
    "reshape": lambda m, a: a.reshape(4, 3),
    "ravel": lambda m, a: a.ravel(),
    "view": lambda m, a: a.view(np.int32),
    "expand_dims": lambda m, a: m.expand_dims(a, 0),
    "squeeze": lambda m, a: m.squeeze(a[None]),
    "moveaxis": lambda m, a: m.moveaxis(a, 0, 1),
    "swapaxes": lambda m, a: m.swapaxes(a, 0, 1),
    "atleast_3d": lambda m, a: m.atleast_3d(a),
    "flip": lambda m, a: m.flip(a),
    "fliplr": lambda m, a: m.fliplr(a),
    "flipud": lambda m, a: m.flipud(a),
    "rot90": lambda m, a: m.rot90(a),
    "split": lambda m, a: m.split(a, 3)[1],
    "hsplit": lambda m, a: m.hsplit(a, 2)[0],
    "diagonal": lambda m, a: m.diagonal(a),
    "diagonal_method": lambda m, a: a.diagonal(1),
    "broadcast_to": lambda m, a: m.broadcast_to(a, (2, 3, 4)),
    "copy": lambda m, a: a.copy(),
    "astype": lambda m, a: a.astype(np.float64),
    "add": lambda m, a: a + 1,
    "ascontiguousarray": lambda m, a: m.ascontiguousarray(a[:, ::2]),
}


@pytest.mark.parametrize("read_only", [False, True])
def test_views_have_numpys_writeable_flag(backend, read_only):
    h = np.arange(12, dtype=np.float32).reshape(3, 4)
    g = up(h, backend)
    if read_only:
        h.flags.writeable = g.flags.writeable = False
    for name, make in VIEWS.items():
        assert make(gnp, g).flags.writeable == make(np, h).flags.writeable, name


def test_broadcast_to_is_read_only(backend):
    h = np.arange(3, dtype=np.int32)
    g = up(h, backend)
    hb, gb = np.broadcast_to(h, (4, 3)), gnp.broadcast_to(g, (4, 3))
    assert not gb.flags.writeable and not hb.flags.writeable
    both_raise(lambda: hb.__setitem__((0, 0), 5), lambda: gb.__setitem__((0, 0), 5))
    both_raise(lambda: hb.fill(5), lambda: gb.fill(5))
    both_raise(lambda: np.add(hb, 1, out=hb), lambda: np.add(gb, 1, out=gb))
    np.testing.assert_array_equal(g.get(), h)
    assert g.flags.writeable                         # the base stays writable
    g[0] = 7
    assert gb.get()[3, 0] == 7


def test_broadcast_arrays_views_are_read_only(backend):
    """numpy 2 still writes through broadcast_arrays' views with a DeprecationWarning saying they may be
    read-only; gnp refuses now (a write reaches every element sharing the memory)."""
    h = np.arange(3, dtype=np.int32)
    g = up(h, backend)
    hb, _ = np.broadcast_arrays(h, np.zeros((2, 3), np.int32))
    gb, gz = gnp.broadcast_arrays(g, gnp.zeros((2, 3), np.int32, device=backend))
    with pytest.warns(DeprecationWarning):
        hb[0, 0] = 5
    with pytest.raises(ValueError, match="assignment destination is read-only"):
        gb[0, 0] = 5
    assert gz.flags.writeable                       # already of the shape: the array itself
    np.testing.assert_array_equal(g.get(), np.arange(3))


def test_diagonal_is_read_only_but_may_be_made_writable(backend):
    h = np.zeros((3, 3), np.float32)
    g = up(h, backend)
    hd, gd = h.diagonal(), g.diagonal()
    both_raise(lambda: hd.__setitem__(0, 1), lambda: gd.__setitem__(0, 1))
    hd.flags.writeable = True                        # numpy allows it: the base is writable
    gd.flags.writeable = True
    hd[...] = 2
    gd[...] = 2
    np.testing.assert_array_equal(g.get(), h)


def test_writeable_flag_rules(backend):
    h = np.arange(6, dtype=np.int64)
    g = up(h, backend)
    hv, gv = h[1:], g[1:]                            # made before: stays writable
    h.flags.writeable = g.flags.writeable = False
    assert gv.flags.writeable and hv.flags.writeable
    both_raise(lambda: setattr(h[1:].flags, "writeable", True), lambda: setattr(g[1:].flags, "writeable", True))
    gv[0] = 10
    hv[0] = 10
    np.testing.assert_array_equal(g.get(), h)
    g.flags.writeable = h.flags.writeable = True     # the array owning the memory may be made writable again
    g[0] = h[0] = -1
    np.testing.assert_array_equal(g.get(), h)
    h.flags.writeable = g.flags.writeable = False
    hw, gw = h[2:], g[2:]
    assert not gw.flags.writeable
    gc = g.copy()
    assert gc.flags.writeable and gc.flags.owndata
    gc[0] = 5                                        # reads and copies still work
    assert g.sum() == h.sum() and (g[::2] * 2).get().tolist() == (h[::2] * 2).tolist()


WRITES = {
    "setitem": lambda m, a: a.__setitem__((0, 0), 1),
    "setitem_slice": lambda m, a: a.__setitem__(np.s_[1:, ::2], 1),
    "setitem_array": lambda m, a: a.__setitem__(np.s_[...], m.ones((3, 4), np.float32)),
    "setitem_mask": lambda m, a: a.__setitem__(a > 3, 0),
    "setitem_index": lambda m, a: a.__setitem__(np.array([0, 2]), 0),
    "fill": lambda m, a: a.fill(2),
    "copyto": lambda m, a: m.copyto(a, 3),
    "copyto_where": lambda m, a: m.copyto(a, 3, where=a > 2),
    "iadd": lambda m, a: a.__iadd__(1),
    "imul": lambda m, a: a.__imul__(a),
    "ufunc_out": lambda m, a: np.add(a, 1, out=a),
    "unary_out": lambda m, a: np.negative(a, out=a),
    "cumsum_out": lambda m, a: np.cumsum(a, axis=0, out=a),
    "sum_out": lambda m, a: a.sum(axis=0, out=a[0]),
    "clip_out": lambda m, a: np.clip(a, 1, 2, out=a),
    "round_out": lambda m, a: np.round(a, 1, out=a),
    "matmul_out": lambda m, a: np.matmul(a[:, :3], a[:3, :3], out=a[:, :3]),
    "sort": lambda m, a: a.sort(),
    "nanmax_out": lambda m, a: m.nanmax(a, axis=0, out=a[0]),
    "nanvar_out": lambda m, a: m.nanvar(a, axis=0, out=a[0]),
    "var_out": lambda m, a: a.var(axis=1, out=a[:, 0]),
    "cumsum_method_out": lambda m, a: a.cumsum(axis=1, out=a),
    "view_setitem": lambda m, a: a.T.__setitem__((0, 0), 1),
    "reshape_setitem": lambda m, a: a.reshape(-1).__setitem__(0, 1),
}


@pytest.mark.parametrize("warm", [False, True], ids=["cold", "warm"])
@pytest.mark.parametrize("name", sorted(WRITES))
def test_every_write_refuses_a_read_only_array(backend, name, warm):
    """Cold: the write's first call. Warm: the same write ran before on writable arrays of the
    same shape and dtype (filling the fast paths: gnp's elementwise cache, kernel plans), then
    refuses the read-only array on the first and on later calls."""
    with pygpgpu.device(backend):      # what a write makes (m.ones(...)) lives beside the array
        if warm:
            for _ in range(3):
                WRITES[name](gnp, up(np.arange(12, dtype=np.float32).reshape(3, 4), backend))
        h, g = read_only_pair(backend)
        before = h.copy()
        with pytest.raises(Exception) as want:
            WRITES[name](np, h)
        for _ in range(3 if warm else 1):
            with pytest.raises(want.type) as got:
                WRITES[name](gnp, g)
            assert str(got.value) == str(want.value)
    np.testing.assert_array_equal(h, before)
    np.testing.assert_array_equal(g.get(), before)


def test_reads_of_a_read_only_array(backend):
    h, g = read_only_pair(backend)
    out = gnp.empty((3, 4), np.float32, device=backend)
    np.add(g, g, out=out)
    np.testing.assert_array_equal(out.get(), h + h)
    for name, fn in {"sum": lambda m, a: a.sum(axis=1), "cumsum": lambda m, a: m.cumsum(a, axis=0),
                     "sort": lambda m, a: m.sort(a[::-1], axis=0), "take": lambda m, a: a[np.array([2, 0])],
                     "mask": lambda m, a: a[a > 4], "matmul": lambda m, a: a @ a.T,
                     "concatenate": lambda m, a: m.concatenate([a, a]), "where": lambda m, a: m.where(a > 3, a, 0),
                     "diagonal": lambda m, a: m.diagonal(a).copy(), "broadcast": lambda m, a: m.broadcast_to(a, (2, 3, 4)) + 0}.items():
        np.testing.assert_allclose(np.asarray(fn(gnp, g)), fn(np, h), err_msg=name)


@kernel
def _bump(x):
    for i in range(x.shape[0]):
        x[i] += 1


@kernel
def _copy(src, dst):
    for i in range(dst.shape[0]):
        dst[i] = src[i]


def test_kernel_refuses_a_read_only_written_argument(backend):
    g = up(np.zeros(8, np.float32), backend)
    bump = _bump[backend]
    bump(g)
    bump(g)                                          # a warm call, kept by the memo
    g.flags.writeable = False
    with pytest.raises(ValueError, match=r"argument 'x' of kernel '_bump'.*read-only"):
        bump(g)                                      # the memo's call is not taken
    with pytest.raises(ValueError, match=r"argument 'x' of kernel '_bump'.*read-only"):
        bump(g[2:])                                  # a view: run on a copy, still refused
    with pytest.raises(ValueError, match=r"argument 'x' of kernel '_bump'.*read-only"):
        bump(gnp.broadcast_to(up(np.zeros(1, np.float32), backend), (8,)))
    np.testing.assert_array_equal(g.get(), np.full(8, 2, np.float32))
    dst = gnp.zeros(8, np.float32, device=backend)
    _copy[backend](g, dst)                           # read-only arrays are read as before
    _copy[backend](g[::-1], dst)
    np.testing.assert_array_equal(dst.get(), np.full(8, 2, np.float32))
    with pytest.raises(ValueError, match=r"argument 'dst' of kernel '_copy'.*read-only"):
        _copy[backend](dst, g)
    with pytest.raises(ValueError, match=r"argument 'dst' of kernel '_copy'.*read-only"):
        _copy[backend](np.ones(8, np.float32), g)    # with a numpy argument: the staging path
    g.flags.writeable = True
    bump(g)
    np.testing.assert_array_equal(g.get(), np.full(8, 3, np.float32))


def test_kernel_refuses_a_read_only_array_beside_a_large_numpy_argument(backend):
    g = up(np.zeros(8, np.float32), backend)
    g.flags.writeable = False
    with pytest.raises(ValueError, match=r"argument 'dst' of kernel '_copy'.*read-only"):
        _copy[backend](np.ones(1 << 21, np.float32), g)      # staged alone, not in a small batch
    np.testing.assert_array_equal(g.get(), np.zeros(8, np.float32))


def test_kernel_refuses_a_read_only_numpy_array(backend):
    h = np.zeros(8, np.float32)
    h.flags.writeable = False
    with pytest.raises(ValueError, match=r"argument 'x' of kernel '_bump'.*read-only"):
        _bump[backend](h)
    with pytest.raises(ValueError, match=r"argument 'dst' of kernel '_copy'.*read-only"):
        _copy[backend](np.ones(8, np.float32), h)
    dst = np.zeros(8, np.float32)
    _copy[backend](np.broadcast_to(np.float32(4), (8,)), dst)
    np.testing.assert_array_equal(dst, np.full(8, 4, np.float32))
    assert not h.any()


KERNEL_FILE = """
__kernel void bump(__global float *x, int n) { int i = get_global_id(0); if (i < n) x[i] += 1.0f; }
__kernel void copy(__global const float *src, __global float *dst, int n) {
    int i = get_global_id(0); if (i < n) dst[i] = src[i];
}
"""


def test_kernel_file_refuses_a_read_only_device_array(backend, tmp_path):
    if not backend.startswith("opencl"):
        pytest.skip("the handwritten kernel here is OpenCL C")
    from pygpgpu_core import kernel_files as kf
    (tmp_path / "ro_kernels.cl").write_text(KERNEL_FILE)
    m = kf.load(tmp_path / "ro_kernels.cl")
    g = up(np.zeros(8, np.float32), backend)
    dst = gnp.zeros(8, np.float32, device=backend)
    m.bump(g, 8)
    g.flags.writeable = False
    with pytest.raises(ValueError, match=r"parameter 'x'.*read-only"):
        m.bump(g, 8)
    with pytest.raises(ValueError, match=r"parameter 'x'.*read-only"):
        m.bump(g[1:], 7)
    with pytest.raises(ValueError, match=r"parameter 'dst'.*read-only"):
        m.copy(dst, g, 8)
    m.copy(g, dst, 8)                                # a const pointer reads it
    np.testing.assert_array_equal(dst.get(), np.ones(8, np.float32))
    np.testing.assert_array_equal(g.get(), np.ones(8, np.float32))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        g.flags.writeable = True
    m.bump(g, 8)
    np.testing.assert_array_equal(g.get(), np.full(8, 2, np.float32))


def test_dlpack_carries_the_read_only_flag(backend):
    g = up(np.arange(4, dtype=np.float32), backend)
    if g.__dlpack_device__()[0] != 1:
        pytest.skip("numpy reads DLPack host memory only; this array is in device memory")
    g.flags.writeable = False
    h = np.arange(4, dtype=np.float32)
    h.flags.writeable = False
    both_raise(h.__dlpack__, g.__dlpack__)           # legacy capsules cannot say it: refused, as numpy's
    n = np.from_dlpack(g)                            # DLPack 1.0: the read-only flag travels
    assert not n.flags.writeable and n.tolist() == [0, 1, 2, 3]
    g.flags.writeable = True
    w = np.from_dlpack(g)
    assert w.flags.writeable
    del n, w                                         # other tests count the live exports
    gc.collect()


def test_kernel_refuses_read_only_captured_and_self_arrays(backend):
    g = up(np.zeros(4, np.float32), backend)

    @kernel
    def fill_captured(n):
        for i in range(n):
            g[i] = 1.0

    class Holder:
        def __init__(self, x):
            self.x = x

        @kernel
        def bump(self, n):
            for i in range(n):
                self.x[i] += 1.0

    fill_captured[backend](4)
    holder = Holder(g)
    holder.bump[backend](4)
    g.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        fill_captured[backend](4)
    with pytest.raises(ValueError, match="read-only"):
        holder.bump[backend](4)
    np.testing.assert_array_equal(g.get(), np.full(4, 2, np.float32))
