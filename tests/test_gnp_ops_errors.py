"""pygpgpu.numpy bad input and the no-silent-host rule: numpy's error messages for shape
mismatches, TypeError naming the operand for unsupported dtypes and operations, ValueError
saying how to move arrays between devices, numpy functions with no device implementation
refused, chains of operations that make no host transfers, and how core reaches the
operations (imported on first use, a clear error without the translator)."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pygpgpu.numpy as gnp
import pytest
from conftest import first_device

NO_TRANSFERS = {"h2d": 0, "d2h": 0, "h2d_bytes": 0, "d2h_bytes": 0}


def up(x, backend):
    return gnp.asarray(x, device=backend)


def test_chains_of_operations_stay_on_the_device(backend):
    x = np.random.default_rng(0).random((64, 48)).astype(np.float32)
    g, h = up(x, backend), up(x[::-1].copy(), backend)
    gnp.reset_transfer_stats()
    y = 2.0 * g + h
    z = gnp.sqrt(abs(y - y.mean(axis=0))) @ g.T
    s = gnp.sort(z.ravel())[-10:].cumsum()
    m = gnp.where(g > 0.5, g, -h).max(axis=1)
    c = gnp.concatenate([m, s]).astype(np.float64)
    k = np.sum(c) + np.concatenate([c, c]).std()
    assert gnp.transfer_stats() == NO_TRANSFERS          # nothing moved to or from the host
    xy = 2.0 * x + x[::-1]
    zz = np.sqrt(abs(xy - xy.mean(axis=0))) @ x.T
    ss = np.sort(zz.ravel())[-10:].cumsum()
    mm = np.where(x > 0.5, x, -x[::-1]).max(axis=1)
    cc = np.concatenate([mm, ss]).astype(np.float64)
    np.testing.assert_allclose(float(k), np.sum(cc) + np.concatenate([cc, cc]).std(), rtol=1e-5)


def test_numpy_functions_dispatch_or_refuse(backend):
    a = np.arange(12, dtype=np.float64).reshape(3, 4)
    g = up(a, backend)
    for fn, args in [(np.sum, (g,)), (np.mean, (g,)), (np.concatenate, ([g, g],)), (np.stack, ([g, g],)),
                     (np.where, (g > 3, g, 0.0)), (np.clip, (g, 1, 5)), (np.sort, (g,)), (np.cumsum, (g,)),
                     (np.transpose, (g,)), (np.dot, (g, g.T)), (np.take, (g, [0, 2]))]:
        got = fn(*args)
        assert isinstance(got, gnp.ndarray), fn.__name__
        def host(v):
            return v.get() if isinstance(v, gnp.ndarray) else v
        host_args = tuple([host(x) for x in arg] if isinstance(arg, list) else host(arg) for arg in args)
        np.testing.assert_allclose(got.get(), fn(*host_args))
    assert np.shape(g) == (3, 4) and np.ndim(g) == 2 and np.size(g) == 12
    assert np.allclose(g, g + 1e-9) is True and np.allclose(g, g + 1) is False
    assert np.array_equal(g, up(a.copy(), backend)) and not np.array_equal(g, g.T)
    np.testing.assert_array_equal(np.isclose(g, g + 1e-9).get(), np.ones((3, 4), bool))
    with pytest.raises(TypeError, match=r"np\.polyfit is not implemented for pygpgpu device arrays.*g\.get\(\)"):
        np.polyfit(g[0], g[1], 1)
    with pytest.raises(TypeError, match="np.apply_along_axis"):
        np.apply_along_axis(np.sum, 0, g)
    # np.fft and np.linalg on device arrays run gnp.fft and gnp.linalg, on the device
    got = np.fft.rfft(g, axis=0)
    assert isinstance(got, gnp.ndarray)
    np.testing.assert_allclose(got.get(), np.fft.rfft(a, axis=0), rtol=1e-5, atol=1e-5)
    got = np.linalg.norm(g, axis=1)
    assert isinstance(got, gnp.ndarray)
    np.testing.assert_allclose(got.get(), np.linalg.norm(a, axis=1), rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(g), a)           # explicit conversions still work
    np.testing.assert_array_equal(np.median(g.get()), np.median(a))


def test_shape_mismatches_raise_numpys_messages(backend):
    a, b = np.ones((2, 3)), np.ones((3, 2))
    ga, gb = up(a, backend), up(b, backend)
    for op in (lambda x, y: x + y, lambda x, y: np.maximum(x, y), lambda x, y: x @ x,
               lambda x, y: np.concatenate([x, y])):
        with pytest.raises(ValueError) as numpy_error:
            op(a, b)
        with pytest.raises(ValueError) as ours:
            op(ga, gb)
        assert str(ours.value) == str(numpy_error.value)
    with pytest.raises(ValueError, match="could not broadcast input array from shape"):
        ga[...] = gb
    with pytest.raises(ValueError, match="wrong number of dimensions"):
        ga.sum(axis=0, out=gnp.empty((4,), device=backend))


def test_unsupported_dtypes_name_the_operand(backend):
    c = up(np.ones(4, np.complex64), backend)
    for fn, match in [(lambda: gnp.fmod(c, c), "gnp.fmod is not supported for operands of type complex64"),
                      (lambda: gnp.floor(c), "gnp.floor is not supported for operands of type complex64"),
                      (lambda: c // c, r"gnp.floor_divide \(//\) is not supported for operands of type complex64")]:
        with pytest.raises(TypeError, match=match):
            fn()
    f = up(np.ones(4, np.float32), backend)
    with pytest.raises(TypeError, match=r"gnp.left_shift \(<<\).*float32"):
        f << 2
    with pytest.raises(TypeError, match=r"gnp.invert \(~\).*float32"):
        ~f
    with pytest.raises(TypeError, match="host \\(numpy\\) array"):
        gnp.where(f > 0, np.ones(4), f)
    with pytest.raises(TypeError, match="host \\(numpy\\) array"):
        gnp.dot(f, np.ones(4))
    with pytest.raises(TypeError, match="takes a device array"):
        gnp.sum(np.ones(3))


def test_arrays_on_different_contexts_say_how_to_move_them():
    from pygpgpu_opencl import Context

    dev = first_device("opencl")
    g = gnp.asarray(np.arange(4, dtype=np.float32), device=dev)
    with Context(dev) as other:
        h = gnp.asarray(np.arange(4, dtype=np.float32), device=other)
        for fn in (lambda: g + h, lambda: gnp.where(g > 1, g, h), lambda: gnp.concatenate([g, h]),
                   lambda: g @ h, lambda: h.sum(), lambda: gnp.sort(h), lambda: h.cumsum()):
            with pytest.raises(ValueError, match=r"\.to\("):
                fn()
        moved = h.to(dev)                       # what the message says to do
        np.testing.assert_array_equal((g + moved).get(), np.arange(4) * 2)


def test_core_imports_no_translator_and_finds_it_on_first_use():
    code = ("import sys, numpy as np\n"
            "import pygpgpu_core.gnp as gnp\n"
            "assert 'pygpgpu_translate' not in sys.modules, 'core imported the translator'\n"
            "g = gnp.asarray(np.arange(3.0))\n"
            "assert 'pygpgpu_translate' not in sys.modules\n"
            "print((g + 1).get().tolist(), 'pygpgpu_translate.array_ops' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["[1.0,", "2.0,", "3.0]", "True"]


def test_operations_without_the_translator_raise_a_clear_error(backend, monkeypatch):
    from pygpgpu_core.gnp import _dispatch

    g = up(np.arange(3.0), backend)
    monkeypatch.setattr(_dispatch, "_provider", None)
    monkeypatch.setitem(sys.modules, _dispatch.PROVIDER_MODULE, None)   # as if it were not installed
    with pytest.raises(gnp.OperationsUnavailable, match="pygpgpu-translate, which is not installed"):
        g + 1
    with pytest.raises(ImportError):              # it is an ImportError too
        gnp.sum(g)
    np.testing.assert_array_equal(g.get(), [0.0, 1.0, 2.0])     # what needs no kernel still works
    assert g[1:].shape == (2,)
