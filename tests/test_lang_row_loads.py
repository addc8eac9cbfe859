"""Row vector loads (issue 17, item 5; ``pygpgpu_translate._row_loads``): ``a[j, 0]`` .. ``a[j, 3]`` of
a read-only ``(n, 4)`` float32/int32 array read as one 128-bit load of the row, as a handwritten
``float4`` kernel does. Every test runs real kernels on the ``backend`` fixture and compares with
numpy: contiguous arrays, row views at offsets, non-4 trailing dims and their ``[:, :4]`` views,
Fortran order, int32, float2/double2 rows, 3-D arrays, resident gnp arrays and their views,
foreign memory at an offset (the pointer test at the kernel's entry), arrays of ``float4.dtype``,
and the cases that must keep their element loads (a store in between, loads only under a
condition, the debug mode, ``PYGPGPU_WIDE_LOADS=0``)."""
from __future__ import annotations

import numpy as np
import pytest

from pygpgpu_core import gnp, registry
from pygpgpu_core.vec_types import float4
from pygpgpu_translate import _wide, kernel

from _nbody_kernel import nbody

N = 77            # not a multiple of anything the launch rounds to




@kernel
def row_sum(a, out):
    for i in range(out.shape[0]):
        out[i] = a[i, 0] + a[i, 1] + a[i, 2] + a[i, 3]


@kernel
def row_weighted(a, out):
    """Rows of any width: the first two elements (float2/double2 rows, and the first half of a row of 4)."""
    for i in range(out.shape[0]):
        out[i] = a[i, 0] * 3 - a[i, 1]


@kernel
def cube_sum(a, out):
    """A 3-D array of rows: the row start is ((i * m) + j) * 4."""
    for i in range(out.shape[0]):
        s = 0
        for j in range(a.shape[1]):
            s += a[i, j, 0] + 2 * a[i, j, 1] + 3 * a[i, j, 2] + 4 * a[i, j, 3]
        out[i] = s


@kernel
def store_between(a, out):
    """A store between two reads of one row: when ``out`` is ``a`` the second read sees it."""
    for i in range(a.shape[0]):
        s = a[i, 0]
        out[i, 1] = s + 1
        out[i, 0] = s + a[i, 1] + a[i, 2] + a[i, 3]


@kernel
def guarded_rows(a, out):
    """Rows read only under a condition: past ``a``'s end no row may be loaded."""
    for i in range(out.shape[0]):
        out[i] = a[i, 0] + a[i, 1] + a[i, 2] + a[i, 3] if i < a.shape[0] else -1.0


@kernel
def reassigned_index(a, out):
    """The row index changes between two reads: two rows."""
    for i in range(out.shape[0]):
        j = i
        x = a[j, 0] + a[j, 1]
        j = out.shape[0] - 1 - i
        out[i] = x * 10 + a[j, 2] + a[j, 3]


def _pos(n=N, seed=3):
    rng = np.random.default_rng(seed)
    return (rng.random((n, 4)) * np.array([4, 4, 4, 1])).astype(np.float32)


def _nbody_ref(pos):
    p = np.asarray(pos, np.float64)
    d = p[None, :, :3] - p[:, None, :3]
    r2 = (d * d).sum(-1) + 1e-3
    sc = p[None, :, 3] / (r2 * np.sqrt(r2))
    out = np.zeros(p.shape)
    out[:, :3] = (d * sc[..., None]).sum(1)
    return out


def _row_sum_ref(a):
    a = np.asarray(a)
    return ((a[:, 0] + a[:, 1]) + a[:, 2]) + a[:, 3]        # the kernel's order, in the array's type


def _dev(backend):
    return registry.get_device(backend)


def _run_nbody(backend, pos):
    acc = np.full((np.asarray(pos).shape[0] if not isinstance(pos, gnp.DeviceArray) else pos.shape[0], 4), np.nan,
                  np.float32)
    nbody[backend](pos, acc)
    host = pos.get() if isinstance(pos, gnp.DeviceArray) else np.asarray(pos)
    np.testing.assert_allclose(acc, _nbody_ref(host), rtol=2e-3, atol=2e-3)
    return acc


def _check_row_sum(backend, a, ref=None):
    host = a.get() if isinstance(a, gnp.DeviceArray) else np.asarray(a)
    out = np.zeros(host.shape[0], host.dtype)
    row_sum[backend](a, out)
    np.testing.assert_array_equal(out, _row_sum_ref(host) if ref is None else ref)


# ---- the generated code ------------------------------------------------------------------------------------
def test_rows_of_four_load_as_one_vector_in_each_dialect(nvrtc_compile):
    pos = _pos()
    cu = nbody.inspect(pos, np.zeros_like(pos), backend="cuda").source
    assert "((const float4*)(pos))[j]" in cu and "pos[" not in cu        # every element from a row
    assert "_pyg_rows_aligned" not in cu            # staged on 16 bytes: no test in the kernel
    assert nvrtc_compile(cu)[:4] == b"\x7fELF"
    cl = nbody.inspect(pos, np.zeros_like(pos), backend="opencl").source
    assert "((__global const float4*)(pos))[j]" in cl
    hip = nbody.inspect(pos, np.zeros_like(pos), backend="hip").source
    assert "((const float4*)(pos))[j]" in hip


def test_the_hip_source_compiles(hiprtc_compile):
    pos = _pos()
    assert len(hiprtc_compile(nbody.inspect(pos, np.zeros_like(pos), backend="hip").source)) > 0


def test_unknown_alignment_tests_the_pointer_once(nvrtc_compile):
    """Arrays of float4.dtype promise no alignment: one test at the kernel's entry, the element
    loads where it fails."""
    pos = np.zeros(N, float4.dtype)
    src = nbody.inspect(pos, np.zeros((N, 4), np.float32), backend="cuda").source
    assert src.count("_pyg_rows_aligned0 = ((((unsigned long long)(pos)) & 15ULL) == 0ULL);") == 1
    assert "if (_pyg_rows_aligned0) {" in src and "pos[((j * 4) + 3)]" in src
    assert nvrtc_compile(src)[:4] == b"\x7fELF"


def test_what_keeps_its_element_loads():
    a = np.zeros((N, 4), np.float32)
    out = np.zeros(N, np.float32)
    # a store in between (out may be a): the elements read after it are loaded after it
    src = store_between.inspect(a, a.copy(), backend="opencl").source
    assert src.count("_pyg_row0 = ") == 1 and src.index("out[((i * 4) + 1)] = ") < src.index("_pyg_row0 = ")
    assert "a[((i * 4) + 0)]" in src
    # a row read only under a condition
    assert "_pyg_row" not in guarded_rows.inspect(a, out, backend="opencl").source
    # two rows when the index changes
    src = reassigned_index.inspect(a, out, backend="opencl").source
    assert src.count("_pyg_row0 = ") == src.count("_pyg_row1 = ") == 1 and "_pyg_row2" not in src
    assert src.index("_pyg_row0 = ") < src.index("j = ((int)") < src.index("_pyg_row1 = ")
    # 3 or 5 wide: no vector row; a written array: no promise that a load sees no store
    assert "_pyg_row" not in row_weighted.inspect(np.zeros((N, 3), np.float32), out, backend="cuda").source
    assert "_pyg_row" not in row_weighted.inspect(np.zeros((N, 5), np.float32), out, backend="cuda").source
    assert "_pyg_row" not in row_weighted.inspect(np.zeros((N, 4), np.float16), out, backend="cuda").source

    @kernel
    def read_write(a):
        for i in range(a.shape[0]):
            a[i, 0] = a[i, 1] + a[i, 2]
    assert "_pyg_row" not in read_write.inspect(a, backend="cuda").source
    # the debug mode checks every element load
    debug_sum = kernel(debug=True)(row_sum.py_func)
    assert "_pyg_row" not in debug_sum.inspect(a, out, backend="opencl").source


def test_switched_off(monkeypatch, backend):
    """``PYGPGPU_WIDE_LOADS=0`` (``_wide.ENABLED``) turns row loads off too, the source cache apart."""
    monkeypatch.setattr(_wide, "ENABLED", False)

    @kernel
    def plain_sum(a, out):
        for i in range(out.shape[0]):
            out[i] = a[i, 0] + a[i, 1] + a[i, 2] + a[i, 3]

    a, out = _pos(), np.zeros(N, np.float32)
    assert "_pyg_row" not in plain_sum.inspect(a, out, backend=backend).source
    plain_sum[backend](a, out)
    np.testing.assert_array_equal(out, _row_sum_ref(a))
    monkeypatch.setattr(_wide, "ENABLED", True)

    @kernel
    def plain_sum(a, out):       # the same source text: translated again, not served from the disk cache
        for i in range(out.shape[0]):
            out[i] = a[i, 0] + a[i, 1] + a[i, 2] + a[i, 3]

    assert "_pyg_row" in plain_sum.inspect(a, out, backend=backend).source


# ---- results ------------------------------------------------------------------------------------------------
def test_nbody_numpy_arrays_and_views(backend):
    pos = _pos(N + 3)
    assert "_pyg_row" in nbody.inspect(pos, np.zeros_like(pos), backend=backend).source
    _run_nbody(backend, pos)
    _run_nbody(backend, pos[1:])                    # row views at an offset (staged)
    _run_nbody(backend, pos[3:])
    _run_nbody(backend, np.asfortranarray(pos))
    flat = np.zeros(pos.size + 1, np.float32)       # starts one float in
    view = flat[1:].reshape(pos.shape)
    view[...] = pos
    _run_nbody(backend, view)
    wide = np.concatenate([pos, np.ones((pos.shape[0], 1), np.float32)], 1)     # (n, 5) and its [:, :4]
    _run_nbody(backend, wide[:, :4])
    _run_nbody(backend, np.ascontiguousarray(pos[:, :3][:, [0, 1, 2, 2]]))


def test_a_misaligned_numpy_row_view_is_staged_aligned(backend):
    """A large numpy view one float into its memory: host-unified devices (PoCL) would pass the
    host pointer as it is, which the unconditional vector loads must never see; it is staged."""
    n = 6000                                        # 96 KB: staged on its own, zero-copy where it can be
    flat = np.arange(n * 4 + 1, dtype=np.float32)
    view = flat[1:].reshape(n, 4)
    assert view.ctypes.data % 16
    out = np.zeros(n, np.float32)
    gnp.reset_transfer_stats()
    row_sum[backend](view, out)
    assert gnp.transfer_stats()["h2d"] >= 1         # copied to an aligned buffer
    np.testing.assert_array_equal(out, _row_sum_ref(view))
    aligned = np.arange(n * 4, dtype=np.float32).reshape(n, 4)
    row_sum[backend](aligned, out)
    np.testing.assert_array_equal(out, _row_sum_ref(aligned))


def test_nbody_device_arrays_and_views(backend):
    pos = _pos(N + 3)
    g = gnp.asarray(pos, device=backend)
    assert "_pyg_row" in nbody.inspect(g, np.zeros_like(pos), backend=backend).source
    _run_nbody(backend, g)
    _run_nbody(backend, g[1:])
    _run_nbody(backend, g[3:])
    g5 = gnp.asarray(np.concatenate([pos, pos[:, :1]], 1), device=backend)
    _run_nbody(backend, g5[:, :4])
    _run_nbody(backend, gnp.asarray(np.asfortranarray(pos), device=backend))


def test_nbody_float4_dtype_rows(backend):
    pos = _pos()
    vec = np.zeros(N, float4.dtype)
    for k, name in enumerate("xyzw"):
        vec[name] = pos[:, k]
    acc = np.full((N, 4), np.nan, np.float32)
    nbody[backend](vec, acc)
    np.testing.assert_allclose(acc, _nbody_ref(pos), rtol=2e-3, atol=2e-3)


def _foreign(g, offset):
    """A gnp array over another library's memory (what from_dlpack makes) starting ``offset`` bytes
    into ``g``'s buffer; None where the backend cannot start a buffer there."""
    try:
        buf = g.buffer.view(offset, g.nbytes - offset)
    except ValueError:        # OpenCL: sub-buffers start on CL_DEVICE_MEM_BASE_ADDR_ALIGN
        return None
    rows = (g.nbytes - offset) // 16
    return type(g)._wrap((rows, 4), np.dtype(np.float32), g.device, buf, g)


def test_foreign_memory_at_any_offset(backend):
    """No alignment promise for memory gnp does not own: the kernel tests the pointer. A pointer
    4 bytes into a buffer (CUDA) takes the element loads; an aligned one the vector loads."""
    flat = np.arange(4 * 200 + 8, dtype=np.float32) * np.float32(0.25)
    g = gnp.asarray(flat.reshape(-1, 4), device=backend)
    tried = 0
    for offset in (4, 8, 12, 16, 48, 128, 256, 1024):
        f = _foreign(g, offset)
        if f is None:
            continue
        tried += 1
        assert not f.owns_memory
        host = flat[offset // 4: offset // 4 + 4 * f.shape[0]].reshape(-1, 4)
        np.testing.assert_array_equal(f.get(), host)
        assert "_pyg_rows_aligned0" in row_sum.inspect(f, np.zeros(f.shape[0], np.float32), backend=backend).source
        _check_row_sum(backend, f, _row_sum_ref(host))
        acc = np.zeros((f.shape[0], 4), np.float32)
        nbody[backend](f, acc)
        np.testing.assert_allclose(acc, _nbody_ref(host), rtol=2e-3, atol=2e-3)
    assert tried


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint32])
def test_row_sums(backend, dtype):
    rng = np.random.default_rng(11)
    a = (rng.random((N, 4)) * 1000).astype(dtype)
    assert "_pyg_row" in row_sum.inspect(a, np.zeros(N, dtype), backend=backend).source
    _check_row_sum(backend, a)
    _check_row_sum(backend, a[1:])
    _check_row_sum(backend, a[3:])
    _check_row_sum(backend, np.asfortranarray(a))
    five = np.concatenate([a, a[:, :1] + 1], 1)
    _check_row_sum(backend, five[:, :4])
    g = gnp.asarray(a, device=backend)
    _check_row_sum(backend, g)
    _check_row_sum(backend, g[3:])
    _check_row_sum(backend, gnp.asarray(five, device=backend)[:, :4])


@pytest.mark.parametrize("dtype, width", [(np.float32, 2), (np.float64, 2), (np.int64, 2), (np.float32, 4),
                                          (np.float32, 3), (np.float32, 5)])
def test_first_elements_of_rows(backend, dtype, width):
    if dtype == np.float64 and not getattr(_dev(backend), "fp64", True):
        pytest.skip("the device has no float64")
    a = np.random.default_rng(5).integers(-100, 100, (N, width)).astype(dtype)    # exact, even contracted to fma
    out = np.zeros(N, dtype)
    src = row_weighted.inspect(a, out, backend=backend).source
    assert ("_pyg_row" in src) == (width in (2, 4))
    row_weighted[backend](a, out)
    np.testing.assert_array_equal(out, a[:, 0] * dtype(3) - a[:, 1])
    row_weighted[backend](a[1:], out[1:])
    np.testing.assert_array_equal(out[1:], a[1:, 0] * dtype(3) - a[1:, 1])


def test_rows_of_a_3d_array(backend):
    a = np.random.default_rng(2).integers(-50, 50, (N, 5, 4)).astype(np.int32)
    out = np.zeros(N, np.int32)
    assert "_pyg_row" in cube_sum.inspect(a, out, backend=backend).source
    cube_sum[backend](a, out)
    np.testing.assert_array_equal(out, (a * np.arange(1, 5, dtype=np.int32)).sum((1, 2), dtype=np.int32))
    cube_sum[backend](a[2:], out[2:])
    np.testing.assert_array_equal(out[2:], (a[2:] * np.arange(1, 5, dtype=np.int32)).sum((1, 2), dtype=np.int32))


def test_a_store_in_between_is_seen(backend):
    a = _pos()
    expected = a.copy()
    expected[:, 1] = a[:, 0] + 1
    expected[:, 0] = a[:, 0] + expected[:, 1] + a[:, 2] + a[:, 3]
    g = gnp.asarray(a, device=backend)
    store_between[backend](g, g)                    # one buffer as both: the second read sees the store
    np.testing.assert_array_equal(g.get(), expected)


def test_rows_read_under_a_condition_and_reassigned_indices(backend):
    a = _pos(40)
    out = np.zeros(N, np.float32)
    guarded_rows[backend](a, out)
    np.testing.assert_array_equal(out[:40], _row_sum_ref(a))
    np.testing.assert_array_equal(out[40:], -1)
    b = np.random.default_rng(4).integers(-50, 50, (N, 4)).astype(np.float32)     # exact, even contracted to fma
    out = np.zeros(N, np.float32)
    reassigned_index[backend](b, out)
    r = b[::-1]
    np.testing.assert_array_equal(out, (b[:, 0] + b[:, 1]) * np.float32(10) + r[:, 2] + r[:, 3])


def test_the_same_as_the_host_and_the_debug_mode(backend):
    a = _pos(33)
    out = np.zeros(33, np.float32)
    row_sum[backend](a, out)
    host = np.zeros(33, np.float32)
    row_sum.py_func(a, host)
    np.testing.assert_array_equal(out, host)
    debug = np.zeros(33, np.float32)
    kernel(debug=True)(row_sum.py_func)[backend](a, debug)
    np.testing.assert_array_equal(debug, host)
