"""The memo of a configured kernel's last resident warm call (issue 17, item 1; _memo.py): a call
whose arguments are the same objects as the last call's launches the same packed arguments
again. These tests prove it is a miss, and the call does everything it did before, whenever an
input of a check or of the packing changed: another array (shape, dtype, buffer, device), the
same buffer with another shape, a view, a numpy array in place of a gnp array, a scalar's
value (its sign, its type, its int range), a scalar the work size reads, a rebound helper or
global, a closed program. Each kernel runs for real and is compared with numpy; the tests also
check that the memo was there to be missed (``k._memo``)."""
from __future__ import annotations

import gc
import os
import subprocess
import sys
import textwrap
import threading
import weakref
from pathlib import Path

import numpy as np
import pytest

from pygpgpu_core import gnp, registry
from pygpgpu_core.errors import ClosedError, PyGPGPUWarning
from pygpgpu_translate import kernel


def add_one(x):
    for i in range(x.shape[0]):
        x[i] += 1


def axpy(x, out, a):
    for i in range(out.shape[0]):
        out[i] = out[i] + a * x[i]


def put(out, a):
    for i in range(out.shape[0]):
        out[i] = a


def first_n(x, out, n):
    for i in range(n):
        out[i] = x[i] * 2


def add_small(x, c):
    for i in range(x.shape[0]):
        x[i] = x[i] + c          # int8 + a Python int: the int must fit int8 (OverflowError otherwise)


def copy_in(x, out):
    for i in range(out.shape[0]):
        out[i] = x[i]


def _scale(v):
    return v * 2


def _scale3(v):
    return v * 3


def scaled(x, out):
    for i in range(out.shape[0]):
        out[i] = _scale(x[i])


N_GLOBAL = 4


def global_domain(out):
    for i in range(N_GLOBAL):
        out[i] += 1


def shifted(out, k):
    for i in range(out.shape[0]):
        out[i + k] = 1.0


def _fresh(func, backend):
    """A new kernel object for ``func`` on ``backend`` (no memo or plan from another test)."""
    return kernel(func)[backend]


def _dev(backend):
    return registry.get_device(backend)


def test_repeated_calls_go_through_the_memo(backend):
    dev = _dev(backend)
    k = _fresh(add_one, backend)
    x = gnp.zeros(100, np.float32, device=dev)
    k(x)
    assert k._memo is None                     # the first call builds the plan (full path)
    k(x)
    assert k._memo is not None                 # the warm call kept itself
    for _ in range(5):
        k(x)
    np.testing.assert_array_equal(np.asarray(x), np.full(100, 7, np.float32))


def _only_memo(kf, dev, monkeypatch):
    """Make the ordinary warm path of ``kf``'s plan on ``dev`` raise: only a memo hit launches."""
    (plan,) = [p for p in kf._plans.values() if p.device is dev]

    def ordinary(*args, **kwargs):
        raise AssertionError("the ordinary warm path ran")

    monkeypatch.setattr(plan, "run", ordinary)


def test_a_hit_skips_the_ordinary_path_and_a_miss_takes_it(backend, monkeypatch):
    dev = _dev(backend)
    kf = kernel(axpy)
    k = kf[backend]
    x = gnp.asarray(np.arange(16, dtype=np.float32), device=dev)
    out = gnp.zeros(16, np.float32, device=dev)
    k(x, out, 1.0)
    k(x, out, 1.0)
    _only_memo(kf, dev, monkeypatch)
    k(x, out, 1.0)                             # a hit
    k(x, out, 0.5)                             # a hit: a changed scalar is packed in a copy
    with pytest.raises(AssertionError, match="ordinary warm path"):
        k(out, x, 1.0)                         # the arrays swapped: a miss
    monkeypatch.undo()
    np.testing.assert_array_equal(np.asarray(out), np.arange(16, dtype=np.float32) * 3.5)


def test_two_calls_taking_turns_both_hit(backend, monkeypatch):
    """Double buffers: ``step(a, b); step(b, a)`` keeps both calls (the memo has two entries)."""
    dev = _dev(backend)
    kf = kernel(copy_in)
    k = kf[backend]
    a = gnp.asarray(np.arange(8, dtype=np.float32), device=dev)
    b = gnp.zeros(8, np.float32, device=dev)
    k(a, b)
    k(b, a)
    k(a, b)
    _only_memo(kf, dev, monkeypatch)
    for _ in range(3):
        k(b, a)
        k(a, b)
    monkeypatch.undo()
    np.testing.assert_array_equal(np.asarray(b), np.arange(8, dtype=np.float32))


def test_the_undecorated_kernel_and_its_brackets_keep_their_own_memos(backend):
    dev = _dev(backend)
    kf = kernel(axpy)
    x = gnp.asarray(np.arange(64, dtype=np.float32), device=dev)
    out = gnp.zeros(64, np.float32, device=dev)
    k, k16 = kf[backend], kf[backend][(16, 8)]          # the second reaches the first 16 elements only
    with pytest.warns(PyGPGPUWarning, match="runs only 16"):
        for _ in range(3):
            k(x, out, 1.0)
            k16(x, out, 1.0)
    assert k._memo is not None and k16._memo is not None and k._memo is not k16._memo
    want = np.arange(64, dtype=np.float32) * 3
    want[:16] *= 2
    np.testing.assert_array_equal(np.asarray(out), want)


def test_another_array_of_another_shape_or_dtype(backend):
    dev = _dev(backend)
    k = _fresh(add_one, backend)
    a = gnp.zeros(50, np.float32, device=dev)
    k(a)
    k(a)
    assert k._memo is not None
    b = gnp.asarray(np.arange(7, dtype=np.float32), device=dev)     # another buffer and shape
    k(b)
    c = gnp.asarray(np.arange(9, dtype=np.int32), device=dev)       # another dtype: another plan
    k(c)
    k(c)
    k(a)
    np.testing.assert_array_equal(np.asarray(a), np.full(50, 3, np.float32))
    np.testing.assert_array_equal(np.asarray(b), np.arange(7, dtype=np.float32) + 1)
    np.testing.assert_array_equal(np.asarray(c), np.arange(9, dtype=np.int32) + 2)


def test_the_same_buffer_with_another_shape(backend):
    """``g[:4]`` is a gnp array over g's very buffer with shape (4,): the work size must follow."""
    dev = _dev(backend)
    k = _fresh(add_one, backend)
    g = gnp.zeros(8, np.float32, device=dev)
    k(g)
    k(g)
    head = g[:4]
    assert head.buffer is g.buffer
    k(head)
    k(head)
    k(g)
    np.testing.assert_array_equal(np.asarray(g), [5, 5, 5, 5, 3, 3, 3, 3])


def test_the_same_buffer_and_shape_with_another_dtype(backend):
    """``g.view(np.int32)`` shares g's buffer and its very shape tuple: only the dtype differs."""
    dev = _dev(backend)
    k = _fresh(add_one, backend)
    g = gnp.zeros(6, np.float32, device=dev)
    k(g)
    k(g)
    as_int = g.view(np.int32)
    assert as_int.buffer is g.buffer and as_int.shape is g.shape
    k(as_int)                                  # integer + 1 on the float bits
    k(g)
    want = np.full(6, 2, np.float32)
    want.view(np.int32)[:] += 1
    want += 1
    np.testing.assert_array_equal(np.asarray(g), want)


def test_a_view_and_its_base(backend):
    dev = _dev(backend)
    k = _fresh(add_one, backend)
    host = np.zeros(10, np.float32)
    g = gnp.asarray(host, device=dev)
    k(g)
    k(g)
    assert k._memo is not None
    k(g[1:])                   # a view (offset): copied, run, written back
    k(g[::2])                  # strided
    k(g)
    want = np.full(10, 3, np.float32)
    want[1:] += 1
    want[::2] += 1
    np.testing.assert_array_equal(np.asarray(g), want)


def test_numpy_and_gnp_arrays_alternate(backend):
    """A numpy array in place of the remembered gnp array is staged, run and copied back; the gnp
    array stays resident (no host-device copies for its calls)."""
    dev = _dev(backend)
    k = _fresh(axpy, backend)
    gx = gnp.asarray(np.arange(32, dtype=np.float32), device=dev)
    gout = gnp.zeros(32, np.float32, device=dev)
    hx = np.arange(32, dtype=np.float32)
    hout = np.zeros(32, np.float32)
    k(gx, gout, 1.0)
    k(gx, gout, 1.0)
    assert k._memo is not None
    gnp.reset_transfer_stats()
    for _ in range(3):
        k(hx, hout, 2.0)                       # host arrays: read back after each call
        k(gx, gout, 1.0)
        k(gx, hout, 1.0)                       # mixed: the host output is still copied back
    np.testing.assert_array_equal(hout, hx * 9)
    stats = gnp.transfer_stats()
    assert stats["h2d"] > 0 and stats["d2h"] > 0
    gnp.reset_transfer_stats()
    for _ in range(3):
        k(gx, gout, 1.0)
    assert gnp.transfer_stats()["h2d"] == 0 and gnp.transfer_stats()["d2h"] == 0
    np.testing.assert_array_equal(np.asarray(gout), np.arange(32, dtype=np.float32) * 8)


def test_a_changed_float_scalar_is_packed_and_its_sign_counts(backend):
    dev = _dev(backend)
    k = _fresh(put, backend)
    out = gnp.zeros(16, np.float32, device=dev)
    for a in (2.0, 2.0, 3.5, 3.5):
        k(out, a)
        np.testing.assert_array_equal(np.asarray(out), np.full(16, a, np.float32))
    assert k._memo is not None
    k(out, 0.0)
    k(out, 0.0)
    k(out, -0.0)               # equal to 0.0, but another value: the sign bit must arrive
    assert np.signbit(np.asarray(out)).all()
    k(out, 0.0)
    assert not np.signbit(np.asarray(out)).any()


def test_scalars_of_another_type(backend):
    dev = _dev(backend)
    k = _fresh(put, backend)
    out = gnp.zeros(8, np.float32, device=dev)
    k(out, 1.5)
    k(out, 1.5)
    for a in (np.float32(2.5), np.float32(2.5), np.float64(3.25), True, False, 7, 2**40, -3):
        k(out, a)
        np.testing.assert_array_equal(np.asarray(out), np.full(8, np.float32(a), np.float32), err_msg=repr(a))


def test_an_int_scalar_is_range_checked_after_a_hit(backend):
    dev = _dev(backend)
    k = _fresh(add_small, backend)
    x = gnp.zeros(10, np.int8, device=dev)
    k(x, 3)
    k(x, 3)
    assert k._memo is not None
    k(x, 100)                                  # a changed int that fits int8: packed in place
    np.testing.assert_array_equal(np.asarray(x), np.full(10, 106, np.int8))
    with pytest.raises(OverflowError, match="300"):
        k(x, 300)                              # does not fit int8: raises as before, nothing runs
    np.testing.assert_array_equal(np.asarray(x), np.full(10, 106, np.int8))
    k(x, -6)
    np.testing.assert_array_equal(np.asarray(x), np.full(10, 100, np.int8))


def test_a_scalar_the_work_size_reads(backend):
    dev = _dev(backend)
    k = _fresh(first_n, backend)
    x = gnp.asarray(np.arange(20, dtype=np.float32), device=dev)
    for n in (4, 4, 11, 11, 2, 20):
        out = gnp.zeros(20, np.float32, device=dev)
        k(x, out, n)
        want = np.zeros(20, np.float32)
        want[:n] = np.arange(n) * 2
        np.testing.assert_array_equal(np.asarray(out), want, err_msg=f"n={n}")


def test_an_equal_int_that_is_another_object_hits_the_memo(backend, monkeypatch):
    """The work size reads ``n``: an equal int that is another object launches the kept call; an
    int of another value is a miss. Ints past 256 are built at run time, so that CPython's small-int
    cache cannot make them the same object."""
    dev = _dev(backend)
    kf = kernel(first_n)
    k = kf[backend]
    x = gnp.asarray(np.arange(1000, dtype=np.float32), device=dev)
    out = gnp.zeros(1000, np.float32, device=dev)
    kept = int("700")
    k(x, out, kept)
    k(x, out, kept)
    assert k._memo is not None
    equal = int("7" + "00")
    assert equal == kept and equal is not kept
    _only_memo(kf, dev, monkeypatch)
    out[...] = 0
    k(x, out, equal)                           # a hit: equal value, another object
    np.testing.assert_array_equal(np.asarray(out)[:700], np.arange(700) * 2)
    assert not np.asarray(out)[700:].any()
    with pytest.raises(AssertionError, match="ordinary warm path"):
        k(x, out, int("701"))                  # another value: a miss
    monkeypatch.undo()
    out[...] = 0
    k(x, out, int("701"))
    np.testing.assert_array_equal(np.asarray(out)[:701], np.arange(701) * 2)
    assert not np.asarray(out)[701:].any()


def add_wide(x, c):
    for i in range(x.shape[0]):
        x[i] = x[i] + c          # int64 data: any int that fits int64 is fine


def test_an_int_past_int32_after_a_kept_int32_call(backend):
    """The memo kept a call whose int fit 32 bits; a later int past int32 that still fits the
    int64 data is no error (the memo's int32 token must not refuse or truncate it), warm as cold."""
    dev = _dev(backend)
    big = 2**33 + 5
    cold = _fresh(add_wide, backend)
    y = gnp.zeros(4, np.int64, device=dev)
    cold(y, big)
    np.testing.assert_array_equal(np.asarray(y), np.full(4, big, np.int64))
    k = _fresh(add_wide, backend)
    x = gnp.zeros(4, np.int64, device=dev)
    k(x, 3)
    k(x, 3)
    assert k._memo is not None
    for c in (big, -big, 2**63 - 1 - 2 * big, 7):
        x[...] = 0
        k(x, c)
        np.testing.assert_array_equal(np.asarray(x), np.full(4, c, np.int64), err_msg=repr(c))


def test_an_extent_check_still_runs_for_a_shorter_array(backend):
    dev = _dev(backend)
    k = _fresh(copy_in, backend)
    x = gnp.asarray(np.arange(16, dtype=np.float32), device=dev)
    out = gnp.zeros(16, np.float32, device=dev)
    k(x, out)
    k(x, out)
    assert k._memo is not None
    with pytest.raises(ValueError, match="every work item indexes"):
        k(x[:8], out)                          # x's own buffer, fewer elements than the domain
    np.testing.assert_array_equal(np.asarray(out), np.arange(16, dtype=np.float32))


def test_a_rebound_helper_translates_again(backend):
    dev = _dev(backend)
    k = _fresh(scaled, backend)
    x = gnp.asarray(np.arange(8, dtype=np.float32), device=dev)
    out = gnp.zeros(8, np.float32, device=dev)
    k(x, out)
    k(x, out)
    assert k._memo is not None
    global _scale
    saved = _scale
    try:
        _scale = _scale3                 # a rebound helper: the kernel translates again
        k(x, out)
        np.testing.assert_array_equal(np.asarray(out), np.arange(8) * 3)
    finally:
        _scale = saved
    k(x, out)
    np.testing.assert_array_equal(np.asarray(out), np.arange(8) * 2)


def test_a_work_size_from_a_global_is_not_memoized_and_follows_the_global(backend):
    dev = _dev(backend)
    kf = kernel(global_domain)
    k = kf[backend]
    out = gnp.zeros(10, np.float32, device=dev)
    k(out)
    k(out)
    (plan,) = [p for p in kf._plans.values() if p.device is dev]
    assert plan._memo_hit is False and k._memo is None
    global N_GLOBAL
    try:
        N_GLOBAL = 7
        k(out)
    finally:
        N_GLOBAL = 4
    np.testing.assert_array_equal(np.asarray(out), [3] * 4 + [1] * 3 + [0] * 3)


def test_a_work_size_from_a_closure_follows_the_cell(backend):
    dev = _dev(backend)
    n = 3

    def head(out):
        for i in range(n):
            out[i] += 1

    k = kernel(head)[backend]
    out = gnp.zeros(10, np.float32, device=dev)
    k(out)
    k(out)
    n = 6                                      # noqa: F841 (read by head through its cell)
    k(out)
    assert k._memo is None
    np.testing.assert_array_equal(np.asarray(out), [3] * 3 + [1] * 3 + [0] * 4)


def test_a_closed_program_raises_closed_error(backend):
    dev = _dev(backend)
    kf = kernel(add_one)
    k = kf[backend]
    x = gnp.zeros(4, np.float32, device=dev)
    k(x)
    k(x)
    assert k._memo is not None
    (plan,) = [p for p in kf._plans.values() if p.device is dev]
    plan.program.close()
    with pytest.raises(ClosedError):
        k(x)
    assert k._memo is None
    with pytest.raises(ClosedError):
        k(x)
    np.testing.assert_array_equal(np.asarray(x), np.full(4, 2, np.float32))


def test_the_debug_mode_is_not_memoized_and_still_checks(backend):
    dev = _dev(backend)
    k = kernel(debug=True)(shifted)[backend]
    out = gnp.zeros(8, np.float32, device=dev)
    k(out, 0)
    k(out, 0)
    assert k._memo is None
    with pytest.raises(IndexError):
        k(out, 1)


def test_keyword_arguments(backend):
    dev = _dev(backend)
    k = _fresh(axpy, backend)
    x = gnp.asarray(np.ones(8, np.float32), device=dev)
    out = gnp.zeros(8, np.float32, device=dev)
    k(x, out, 1.0)
    k(x, out, 1.0)
    k(x, out, a=5.0)
    k(x=x, out=out, a=1.0)
    np.testing.assert_array_equal(np.asarray(out), np.full(8, 8, np.float32))


def test_the_memo_keeps_no_array_alive(backend):
    dev = _dev(backend)
    k = _fresh(add_one, backend)
    x = gnp.zeros(8, np.float32, device=dev)
    k(x)
    k(x)
    assert k._memo is not None
    ref = weakref.ref(x)
    del x
    gc.collect()
    assert ref() is None
    y = gnp.zeros(8, np.float32, device=dev)   # may reuse the pool block (and buffer) x had
    k(y)
    k(y)
    np.testing.assert_array_equal(np.asarray(y), np.full(8, 2, np.float32))


def test_an_array_over_memory_it_does_not_own_is_not_memoized(backend):
    """A gnp array over another library's memory (DLPack, ``__cuda_array_interface__``): its
    buffer may hold that library's array alive, so no memo keeps it (the calls run as before)."""
    dev = _dev(backend)
    k = _fresh(add_one, backend)
    g = gnp.zeros(5, np.float32, device=dev)
    foreign = type(g)._wrap(g.shape, g.dtype, g.device, g.buffer, g)    # what from_dlpack makes
    assert not foreign.owns_memory
    for _ in range(3):
        k(foreign)
    assert k._memo is None
    np.testing.assert_array_equal(np.asarray(g), np.full(5, 3, np.float32))


def test_threads_calling_one_configured_kernel(backend):
    dev = _dev(backend)
    k = _fresh(put, backend)
    outs = [gnp.zeros(64, np.float32, device=dev) for _ in range(4)]
    errors = []

    def work(t):
        try:
            for j in range(50):
                k(outs[t], float(t * 100 + j))
                got = np.asarray(outs[t])
                assert (got == t * 100 + j).all(), (t, j, got[:4])
        except BaseException as exc:          # reported by the main thread
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors[0]


def test_an_array_on_another_device_is_refused_after_a_hit(tmp_path):
    """On two PoCL devices (``POCL_DEVICES``, read when PoCL starts: a fresh interpreter): the
    memo of a launch on opencl:0 never launches an opencl:1 array."""
    from test_multi_device import _pocl_or_skip

    _pocl_or_skip()
    code = textwrap.dedent("""
        import numpy as np
        from pygpgpu_core import gnp, registry
        from pygpgpu_translate import kernel

        def add_one(x):
            for i in range(x.shape[0]):
                x[i] += 1

        d0, d1 = registry.get_device("opencl:0"), registry.get_device("opencl:1")
        k = kernel(add_one)["opencl:0"]
        x0 = gnp.zeros(8, np.float32, device=d0)
        x1 = gnp.zeros(8, np.float32, device=d1)
        k(x0); k(x0)
        assert k._memo is not None
        try:
            k(x1)
        except ValueError as exc:
            assert "lives on opencl:1" in str(exc), exc
        else:
            raise SystemExit("an opencl:1 array was launched on opencl:0")
        k(x0)
        assert np.asarray(x0).tolist() == [3.0] * 8 and np.asarray(x1).tolist() == [0.0] * 8
        print("ok")
    """)
    tests = Path(__file__).parent
    env = dict(os.environ, POCL_DEVICES="pthread pthread",
               PYTHONPATH=os.pathsep.join([str(tests)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep)
                                                         if p]))
    env.pop("PYGPGPU_BACKEND", None)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=str(tmp_path),
                          timeout=300, check=False)
    assert proc.returncode == 0 and proc.stdout.strip().endswith("ok"), proc.stdout + proc.stderr
