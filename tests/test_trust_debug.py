"""The bounds-checked debug mode (issue 12, item 3): ``@kernel(debug=True)`` and
``PYGPGPU_BOUNDS_CHECK=1`` check every array subscript on the device; the first one out of
bounds is skipped and raised after the launch as IndexError naming the array, the index, the
shape and the Python line. In-bounds kernels give the same results with and without it, and a
kernel built without it has no checks at all."""
from __future__ import annotations

import inspect
import threading

import numpy as np
import pytest
from pygpgpu import gpu, kernel
from pygpgpu_core import gnp
from pygpgpu_core.gnp import _staging

ENV = "PYGPGPU_BOUNDS_CHECK"


def _where(func, snippet) -> str:
    """``file:line`` of the first line of ``func`` containing ``snippet``."""
    func = getattr(func, "py_func", func)
    lines, start = inspect.getsourcelines(func)
    for k, text in enumerate(lines):
        if snippet in text:
            return f"{inspect.getsourcefile(func)}:{start + k}"
    raise AssertionError(f"{snippet!r} not in {func.__name__}")


def _assert_names(exc, *parts):
    text = str(exc.value)
    for part in parts:
        assert part in text, f"{part!r} missing from the IndexError: {text}"


# ---- kernels with one out-of-bounds access each --------------------------------------------------

@kernel(debug=True)
def shifted_read(x, out):
    for i in range(out.shape[0]):
        out[i] = x[i + 1]


@kernel(debug=True)
def shifted_write(x, out):
    for i in range(x.shape[0]):
        out[i + 1] = x[i]


@kernel(debug=True)
def right_neighbour(img, out):
    for y, x in np.ndindex(out.shape):
        out[y, x] = img[y, x + 1]


@kernel(debug=True)
def back_eleven(x, out):
    for i in range(out.shape[0]):
        out[i] = x[i - 11]


def pick(a, k):
    return a[k]


@kernel(debug=True)
def gather(x, idx, out):
    for i in range(out.shape[0]):
        out[i] = pick(x, idx[i])


@kernel(debug=True)
def histogram(values, counts):
    for i in range(values.shape[0]):
        gpu.atomic_add(counts, values[i], 1)


@kernel(debug=True)
def next_row(pts, out):
    for i in range(out.shape[0]):
        out[i] = pts[i + 1]


@kernel(debug=True)
def small_tile(x, out):
    gpu.work_size(x)
    tile = gpu.local_array(4, np.float32)
    lid = gpu.get_local_id(0)
    i = gpu.get_global_id(0)
    tile[lid] = x[i]
    out[i] = tile[lid]


def test_out_of_bounds_read(backend):
    x = np.arange(10, dtype=np.float32)
    out = np.full(10, -1, np.float32)
    with pytest.raises(IndexError) as exc:
        shifted_read[backend](x, out)
    _assert_names(exc, "'x'", "index 10 ", "size 10", "(10,)", "reading", "kernel 'shifted_read'",
                  _where(shifted_read, "x[i + 1]"), "out[i] = x[i + 1]")
    np.testing.assert_array_equal(out[:9], x[1:])
    assert out[9] == 0            # the skipped read gave 0


def test_out_of_bounds_write_is_skipped(backend):
    x = np.arange(1, 11, dtype=np.float32)
    out = np.full(10, -1, np.float32)
    with pytest.raises(IndexError) as exc:
        shifted_write[backend](x, out)
    _assert_names(exc, "'out'", "index 10 ", "(10,)", "writing", _where(shifted_write, "out[i + 1] = x[i]"))
    assert out[0] == -1
    np.testing.assert_array_equal(out[1:], x[:9])


def test_two_dimensional_index_names_the_axis(backend):
    img = np.arange(20, dtype=np.float32).reshape(4, 5)
    out = np.full((4, 5), -1, np.float32)
    # without the check, img[y, 5] silently reads img[y + 1, 0]
    with pytest.raises(IndexError) as exc:
        right_neighbour[backend](img, out)
    _assert_names(exc, "'img'", "index 5 ", "axis 1", "size 5", "(4, 5)", _where(right_neighbour, "img[y, x + 1]"))
    np.testing.assert_array_equal(out[:, :4], img[:, 1:])
    np.testing.assert_array_equal(out[:, 4], 0)


def test_negative_index_past_minus_len(backend):
    x = np.arange(1, 11, dtype=np.float32)
    out = np.full(10, -1, np.float32)
    with pytest.raises(IndexError) as exc:
        back_eleven[backend](x, out)
    # only i == 0 (x[-11]) is out of bounds; x[-10] .. x[-2] wrap as in Python
    _assert_names(exc, "'x'", "index -11 ", "size 10", "(10,)", _where(back_eleven, "x[i - 11]"))
    np.testing.assert_array_equal(out[1:], [x[i - 11] for i in range(1, 10)])
    assert out[0] == 0


def test_access_in_a_helper(backend):
    x = np.arange(5, dtype=np.float32) * 10
    idx = np.array([0, 4, 2, 7], np.int32)
    out = np.full(4, -1, np.float32)
    with pytest.raises(IndexError) as exc:
        gather[backend](x, idx, out)
    _assert_names(exc, "'a'", "pick()", "kernel 'gather'", "index 7 ", "(5,)", _where(pick, "return a[k]"))
    np.testing.assert_array_equal(out, [0, 40, 20, 0])


def test_atomic_index(backend):
    values = np.array([0, 1, 1, 3, 9, 3, 3, 7], np.int32)
    counts = np.zeros(8, np.int32)
    with pytest.raises(IndexError) as exc:
        histogram[backend](values, counts)
    _assert_names(exc, "'counts'", "index 9 ", "(8,)", "atomic", _where(histogram, "gpu.atomic_add"))
    np.testing.assert_array_equal(counts, np.bincount(values[values < 8], minlength=8))


def test_vector_row_access(backend):
    pts = np.arange(32, dtype=np.float32).reshape(8, 4)
    out = np.full((8, 4), -1, np.float32)
    with pytest.raises(IndexError) as exc:
        next_row[backend](pts, out)
    _assert_names(exc, "'pts'", "index 8 ", "axis 0", "(8, 4)", _where(next_row, "pts[i + 1]"))
    np.testing.assert_array_equal(out[:7], pts[1:])
    np.testing.assert_array_equal(out[7], 0)


def test_local_array_index(backend):
    x = np.arange(1, 9, dtype=np.float32)
    out = np.full(8, -1, np.float32)
    with pytest.raises(IndexError) as exc:
        small_tile[backend][(8, 8)](x, out)      # local ids 4..7 are past the 4-element tile
    _assert_names(exc, "'tile'", "size 4", "(4,)", "writing", _where(small_tile, "tile[lid] = x[i]"))
    np.testing.assert_array_equal(out[:4], x[:4])
    np.testing.assert_array_equal(out[4:], 0)


PARTICLE = np.dtype([("pos", np.float32, 3), ("mass", np.float32)])


@kernel(debug=True)
def field_read(p, out, j):
    for i in range(p.shape[0]):
        out[i] = p[i].pos[j]


def field_of(pos, j):
    pos[j] = 5.0


@kernel(debug=True)
def field_write_in_helper(p, j):
    for i in range(p.shape[0]):
        field_of(p[i].pos, j)


def test_record_field_index(backend):
    """A variable index into a record's subarray field is checked against the field's extent: past
    it, the access would reach the next field (``mass``) of the same element."""
    p = np.zeros(4, PARTICLE)
    p["mass"] = 7
    p["pos"][:, 2] = 3
    out = np.full(4, -1, np.float32)
    field_read[backend](p, out, -1)                 # Python's negative index: the last component
    np.testing.assert_array_equal(out, 3)
    with pytest.raises(IndexError) as exc:
        field_read[backend](p, out, 3)
    _assert_names(exc, "pos", "index 3 ", "size 3", "reading", _where(field_read, "p[i].pos[j]"))
    np.testing.assert_array_equal(out, 0)            # skipped reads give 0, not the mass
    with pytest.raises(IndexError) as exc:
        field_write_in_helper[backend](p, -4)
    _assert_names(exc, "pos", "index -4 ", "writing", "field_of()", _where(field_of, "pos[j] = 5.0"))
    np.testing.assert_array_equal(p["mass"], 7)     # the skipped writes left the next field alone
    np.testing.assert_array_equal(p["pos"][:, 2], 3)


@pytest.mark.parametrize("how", ["small batch", "staged", "device arrays", "mixed"])
def test_every_way_of_passing_arrays(backend, how):
    n = 10 if how in ("small batch", "mixed") else (_staging.SMALL_ARRAY_MAX // 4) + 1000
    x = np.arange(n, dtype=np.float32)
    out = np.full(n, -1, np.float32)
    args = (x, out)
    if how == "device arrays":
        args = (gnp.asarray(x, device=backend), gnp.asarray(out, device=backend))
    elif how == "mixed":
        args = (gnp.asarray(x, device=backend), out)
    with pytest.raises(IndexError) as exc:
        shifted_read[backend](*args)
    _assert_names(exc, "'x'", f"index {n} ", f"({n},)", _where(shifted_read, "x[i + 1]"))
    got = args[1].get() if how == "device arrays" else out
    np.testing.assert_array_equal(got[:-1], x[1:])
    # the buffer is cleared for each launch: an in-bounds call afterwards raises nothing
    short = np.zeros(n - 1, np.float32)
    shifted_read[backend](x, short)
    np.testing.assert_array_equal(short, x[1:])


def test_threads_each_get_their_own_error(backend):
    """Launches of one debug kernel from several threads at once: exactly the bad calls raise."""
    x = np.arange(10, dtype=np.float32)
    shifted_read[backend](x, np.zeros(9, np.float32))      # built before the threads start
    start = threading.Barrier(6)
    outcomes = {}

    def calls(k):
        start.wait()
        for r in range(25):
            bad = (k + r) % 2 == 1
            out = np.zeros(10 if bad else 9, np.float32)     # 10: one read past the end of x
            try:
                shifted_read[backend](x, out)
                outcomes[k, r] = "ok" if np.array_equal(out, x[1:]) else "wrong"
            except IndexError:
                outcomes[k, r] = "IndexError"

    threads = [threading.Thread(target=calls, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert outcomes == {(k, r): "IndexError" if (k + r) % 2 else "ok" for k in range(6) for r in range(25)}


# ---- in-bounds kernels: same results with and without the checks --------------------------------

def _stencil(x, out):
    n = x.shape[0]
    for i in range(n):
        out[i] = x[i - 1] + 2.0 * x[i] + x[(i + 1) % n]


def _blur(img, out):
    for y, x in np.ndindex(out.shape):
        acc = 0.0
        for dy in range(-1, 2):
            for dx in range(-1, 2):
                yy = min(max(y + dy, 0), img.shape[0] - 1)
                xx = min(max(x + dx, 0), img.shape[1] - 1)
                acc += img[yy, xx]
        out[y, x] = acc / 9.0


def _scale_rows(pts, s, out):
    for i in range(pts.shape[0]):
        out[i] = pts[i] * s[i]


def _gather_helper(x, idx, out):
    for i in range(out.shape[0]):
        out[i] = pick(x, idx[i]) + pick(x, -1 - idx[i])


def _bins(values, counts):
    for i in range(values.shape[0]):
        gpu.atomic_add(counts, values[i] % counts.shape[0], 1)


def _matmul(a, b, out):
    for i, j in np.ndindex(out.shape):
        acc = 0.0
        for k in range(a.shape[1]):
            acc += a[i, k] * b[k, j]
        out[i, j] = acc


def _cases():
    rng = np.random.default_rng(12)
    x = rng.standard_normal(257).astype(np.float32)
    img = rng.standard_normal((13, 17)).astype(np.float32)
    pts = rng.standard_normal((33, 4)).astype(np.float32)
    s = rng.standard_normal(33).astype(np.float32)
    idx = rng.integers(0, 257, 100).astype(np.int32)
    values = rng.integers(0, 1000, 500).astype(np.int32)
    a = rng.standard_normal((9, 7)).astype(np.float32)
    b = rng.standard_normal((7, 5)).astype(np.float32)
    return {
        "stencil": (_stencil, lambda: (x, np.zeros_like(x))),
        "blur": (_blur, lambda: (img, np.zeros_like(img))),
        "rows": (_scale_rows, lambda: (pts, s, np.zeros_like(pts))),
        "helper": (_gather_helper, lambda: (x, idx, np.zeros(100, np.float32))),
        "atomics": (_bins, lambda: (values, np.zeros(16, np.int32))),
        "matmul": (_matmul, lambda: (a, b, np.zeros((9, 5), np.float32))),
    }


CASES = _cases()


@pytest.mark.parametrize("name", sorted(CASES))
def test_in_bounds_results_identical_with_debug(backend, name):
    func, make = CASES[name]
    plain, checked = kernel(func), kernel(debug=True)(func)
    host_args = make()
    want = [a.copy() for a in host_args]
    func(*want)                               # the Python function itself, on the host
    got_plain = [a.copy() for a in host_args]
    got_checked = [a.copy() for a in host_args]
    plain[backend](*got_plain)
    checked[backend](*got_checked)
    for p, c, w in zip(got_plain, got_checked, want):
        np.testing.assert_array_equal(c, p)
        np.testing.assert_allclose(c, w, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dialect", ["opencl", "cuda", "hip"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_no_checks_without_debug(name, dialect):
    func, make = CASES[name]
    args = make()
    plain = kernel(func).inspect(*args, backend=dialect).source
    checked = kernel(debug=True)(func).inspect(*args, backend=dialect).source
    assert "_pyg_bounds" not in plain and "_pyg_err" not in plain
    assert "_pyg_bounds" in checked and "_pyg_err" in checked


def test_environment_variable_turns_checks_on(monkeypatch, backend):
    def copy_next(x, out):
        for i in range(out.shape[0]):
            out[i] = x[i + 1]

    x, out = np.arange(4, dtype=np.float32), np.zeros(4, np.float32)
    monkeypatch.setenv(ENV, "0")
    off = kernel(copy_next)
    assert not off.debug and "_pyg_bounds" not in off.inspect(x, out).source
    monkeypatch.setenv(ENV, "1")
    on = kernel(copy_next)
    assert on.debug and "_pyg_bounds" in on.inspect(x, out).source
    with pytest.raises(IndexError) as exc:
        on[backend](x, out)
    _assert_names(exc, "'x'", "index 4 ", "(4,)", _where(copy_next, "x[i + 1]"))


def test_debug_translations_cached_apart():
    """The disk cache key includes the debug flag: a debug kernel never reuses plain source, nor
    the other way round, in either order."""
    def twice(x, out):
        for i in range(out.shape[0]):
            out[i] = 2.0 * x[i]

    x, out = np.arange(4, dtype=np.float32), np.zeros(4, np.float32)
    plain = kernel(twice).inspect(x, out).source                 # stored on disk first
    checked = kernel(debug=True)(twice).inspect(x, out).source
    assert "_pyg_bounds" not in plain and "_pyg_bounds" in checked
    assert kernel(twice).inspect(x, out).source == plain         # a fresh kernel: the plain entry
    assert kernel(debug=True)(twice).inspect(x, out).source == checked


# ---- CUDA and HIP: the checked sources compile ---------------------------------------------------

ALL_OOB = {
    "read": (shifted_read, lambda: (np.zeros(4, np.float32), np.zeros(4, np.float32))),
    "2d": (right_neighbour, lambda: (np.zeros((2, 3), np.float32), np.zeros((2, 3), np.float32))),
    "helper": (gather, lambda: (np.zeros(4, np.float32), np.zeros(4, np.int32), np.zeros(4, np.float32))),
    "atomic": (histogram, lambda: (np.zeros(4, np.int32), np.zeros(4, np.int32))),
    "rows": (next_row, lambda: (np.zeros((4, 4), np.float32), np.zeros((4, 4), np.float32))),
    "local": (small_tile, lambda: (np.zeros(4, np.float32), np.zeros(4, np.float32))),
    "float64 atomics": (histogram, lambda: (np.zeros(4, np.int64), np.zeros(4, np.float64))),
    "record field": (field_read, lambda: (np.zeros(4, PARTICLE), np.zeros(4, np.float32), 1)),
    "record field in a helper": (field_write_in_helper, lambda: (np.zeros(4, PARTICLE), 1)),
}


@pytest.mark.parametrize("name", sorted(ALL_OOB))
def test_cuda_checked_source_compiles(name, nvrtc_compile):
    k, make = ALL_OOB[name]
    src = k.inspect(*make(), backend="cuda").source
    assert "atomicCAS(err, 0, 1)" in src
    nvrtc_compile(src)


@pytest.mark.parametrize("name", sorted(ALL_OOB))
def test_hip_checked_source_compiles(name, hiprtc_compile):
    k, make = ALL_OOB[name]
    src = k.inspect(*make(), backend="hip").source
    assert "atomicCAS(err, 0, 1)" in src
    hiprtc_compile(src, "gfx1030")
