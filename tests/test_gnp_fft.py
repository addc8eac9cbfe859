"""``gnp.fft`` (issue 32): numpy's transforms in our own kernels, checked against ``numpy.fft`` on
the same data. Lengths cover every path of ``pygpgpu_translate.array_ops._fft``: n = 1, powers
of two (radix-4 passes and a radix-2 one), mixed radix (12, 1000), small primes as one direct
pass (3, 5, 7, 17) and lengths with a prime factor above MAX_DIRECT_RADIX (97, 2 * 67) through
Bluestein. Each runs batched along the last axis and along the middle axis of a 3-D array (both
an outer and an inner batch), in single and double precision, with numpy's three norms; results
must match numpy's within a few float32/float64 epsilons of the largest magnitude."""
from __future__ import annotations

import numpy as np
import pygpgpu.numpy as gnp
import pytest
from pygpgpu_translate.array_ops._fft import MAX_DIRECT_RADIX, _bluestein_length, radices

LENGTHS = [1, 2, 3, 5, 7, 8, 12, 17, 97, 128, 134, 1000, 1024]
NORMS = [None, "backward", "ortho", "forward"]
TOLERANCE = {np.complex64: 2e-5, np.complex128: 1e-12, np.float32: 2e-5, np.float64: 1e-12}


@pytest.fixture(autouse=True)
def own_kernels(monkeypatch):
    """These tests are of our own kernels: the vendor FFTs (clFFT, cuFFT) have tests/test_vendor_*."""
    monkeypatch.setenv("PYGPGPU_CLFFT", "0")
    monkeypatch.setenv("PYGPGPU_CUFFT", "0")


def close(got, expected, dtype=None):
    """``got`` (a device array) has numpy's dtype and shape and its values to ``dtype``'s tolerance."""
    host = got.get()
    assert host.dtype == expected.dtype and host.shape == expected.shape
    scale = max(1.0, float(np.abs(expected).max())) if expected.size else 1.0
    tol = TOLERANCE[dtype or expected.dtype.type]
    np.testing.assert_allclose(host, expected, rtol=tol, atol=tol * scale)


def signal(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def test_lengths_cover_direct_passes_and_bluestein():
    assert radices(1) == [1] and radices(1024) == [8, 8, 8, 2] and radices(128) == [8, 8, 2]
    assert radices(1000) == [8, 5, 5, 5] and radices(12) == [4, 3] and radices(17) == [17]
    assert radices(88) == [8, 11] and radices(32) == [8, 4] and radices(2 * 3 * 5 * 7 * 59) == [2, 3, 5, 7, 59]
    assert radices(97) is None and radices(134) is None and 97 > MAX_DIRECT_RADIX and 67 > MAX_DIRECT_RADIX
    # Bluestein's convolution: the smallest 2-3-5-7-smooth length of at least 2n - 1 points
    assert _bluestein_length(97) == 196 and _bluestein_length(67) == 135 and _bluestein_length(1009) == 2025


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("n", LENGTHS)
def test_fft_and_ifft_match_numpy_along_last_and_middle_axes(backend, dtype, n):
    x = signal((3, n), dtype)
    g = gnp.asarray(x, device=backend)
    close(gnp.fft.fft(g), np.fft.fft(x))
    close(gnp.fft.ifft(g), np.fft.ifft(x))
    y = signal((2, n, 3), dtype, seed=1)             # outer and inner batch around the axis
    h = gnp.asarray(y, device=backend)
    close(gnp.fft.fft(h, axis=1), np.fft.fft(y, axis=1))
    close(gnp.fft.ifft(h, axis=-2), np.fft.ifft(y, axis=-2))


@pytest.mark.parametrize("n", [32, 88, 343, 2 * 3 * 5 * 7 * 59])
def test_mixed_unrolled_and_looped_passes_match_numpy(backend, n):
    x = signal((2, n), np.complex128, seed=n)
    g = gnp.asarray(x, device=backend)
    close(gnp.fft.fft(g), np.fft.fft(x))
    close(gnp.fft.ifft(g), np.fft.ifft(x))


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("n", [6, 97])
def test_norms_scale_as_numpy(backend, dtype, norm, n):
    x = signal((2, n), dtype)
    g = gnp.asarray(x, device=backend)
    close(gnp.fft.fft(g, norm=norm), np.fft.fft(x, norm=norm))
    close(gnp.fft.ifft(g, norm=norm), np.fft.ifft(x, norm=norm))
    # ifft(fft(x)) is x again under every norm
    close(gnp.fft.ifft(gnp.fft.fft(g, norm=norm), norm=norm), x)


@pytest.mark.parametrize("n", [1, 4, 9, 16, 100, 101])
def test_n_zero_pads_or_cuts_the_axis(backend, n):
    x = signal((4, 10), np.complex128)
    g = gnp.asarray(x, device=backend)
    close(gnp.fft.fft(g, n=n), np.fft.fft(x, n=n))
    close(gnp.fft.ifft(g, n=n, axis=0), np.fft.ifft(x, n=n, axis=0))


@pytest.mark.parametrize("dtype, result", [(np.float32, np.complex64), (np.float16, np.complex64),
                                           (np.complex64, np.complex64), (np.float64, np.complex128),
                                           (np.int32, np.complex128), (np.bool_, np.complex128)])
def test_result_dtypes_follow_cupy(backend, dtype, result):
    x = (np.arange(12) % 5).astype(dtype)
    g = gnp.asarray(x, device=backend)
    got = gnp.fft.fft(g)
    assert got.dtype == result
    close(got, np.fft.fft(x.astype(result)), dtype=np.complex64)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [1, 2, 3, 8, 12, 17, 97, 1000])
def test_real_transforms_match_numpy(backend, dtype, n):
    x = signal((3, n), dtype)
    g = gnp.asarray(x, device=backend)
    close(gnp.fft.rfft(g), np.fft.rfft(x))
    close(gnp.fft.ihfft(g), np.fft.ihfft(x))
    close(gnp.fft.rfft(g, axis=0), np.fft.rfft(x, axis=0))
    close(gnp.fft.rfft(g.T.copy(), axis=0), np.fft.rfft(x.T, axis=0))                  # an inner batch
    spectrum = np.fft.rfft(x).astype(np.complex64 if dtype == np.float32 else np.complex128)
    s = gnp.asarray(spectrum, device=backend)
    for m in ([2 * n - 2] if n > 1 else []) + [2 * n - 1, n + 4]:     # even and odd output lengths
        close(gnp.fft.irfft(s, n=m), np.fft.irfft(spectrum, n=m))
        close(gnp.fft.hfft(s, n=m), np.fft.hfft(spectrum, n=m))
        close(gnp.fft.irfft(s.T, n=m, axis=0), np.fft.irfft(spectrum.T, n=m, axis=0))   # an inner batch
    if n > 1:
        close(gnp.fft.irfft(s), np.fft.irfft(spectrum))                # default n = 2 * (m - 1)
        close(gnp.fft.irfft(gnp.fft.rfft(g), n=n), x)                   # the round trip


@pytest.mark.parametrize("norm", NORMS)
def test_real_transform_norms(backend, norm):
    x = signal((2, 15), np.float64)
    g = gnp.asarray(x, device=backend)
    close(gnp.fft.rfft(g, norm=norm), np.fft.rfft(x, norm=norm))
    close(gnp.fft.ihfft(g, norm=norm), np.fft.ihfft(x, norm=norm))
    s = np.fft.rfft(x)
    close(gnp.fft.irfft(gnp.asarray(s, device=backend), n=15, norm=norm), np.fft.irfft(s, n=15, norm=norm))
    close(gnp.fft.hfft(gnp.asarray(s, device=backend), n=15, norm=norm), np.fft.hfft(s, n=15, norm=norm))


def test_irfft_ignores_the_imaginary_parts_of_dc_and_nyquist_as_numpy(backend):
    s = signal((5,), np.complex128)                   # imaginary parts everywhere, also s[0] and s[4]
    g = gnp.asarray(s, device=backend)
    close(gnp.fft.irfft(g), np.fft.irfft(s))
    close(gnp.fft.irfft(g, n=9), np.fft.irfft(s, n=9))


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_n_dimensional_transforms_match_numpy(backend, dtype):
    x = signal((4, 6, 5), dtype)
    g = gnp.asarray(x, device=backend)
    close(gnp.fft.fftn(g), np.fft.fftn(x))
    close(gnp.fft.ifftn(g), np.fft.ifftn(x))
    close(gnp.fft.fft2(g), np.fft.fft2(x))
    close(gnp.fft.ifft2(g, norm="ortho"), np.fft.ifft2(x, norm="ortho"))
    close(gnp.fft.fftn(g, s=(3, 8), axes=(0, 2)), np.fft.fftn(x, s=(3, 8), axes=(0, 2)))
    close(gnp.fft.ifftn(g, s=(7, -1), axes=(2, 1), norm="forward"),
          np.fft.ifftn(x, s=(7, -1), axes=(2, 1), norm="forward"))
    close(gnp.fft.fft2(g, axes=(0, 1)), np.fft.fft2(x, axes=(0, 1)))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_real_n_dimensional_transforms_match_numpy(backend, dtype):
    x = signal((4, 6, 5), dtype)
    g = gnp.asarray(x, device=backend)
    close(gnp.fft.rfftn(g), np.fft.rfftn(x))
    close(gnp.fft.rfft2(g, s=(5, 7)), np.fft.rfft2(x, s=(5, 7)))
    close(gnp.fft.rfftn(g, axes=(0, 2), norm="ortho"), np.fft.rfftn(x, axes=(0, 2), norm="ortho"))
    spectrum = np.fft.rfftn(x)
    s = gnp.asarray(spectrum, device=backend)
    close(gnp.fft.irfftn(s), np.fft.irfftn(spectrum))
    close(gnp.fft.irfftn(s, s=(4, 6, 5), axes=(0, 1, 2)), x)
    close(gnp.fft.irfft2(s, s=(6, 9)), np.fft.irfft2(spectrum, s=(6, 9)))


def test_nd_deprecated_s_without_axes_warns_and_uses_the_last_axes(backend):
    x = signal((3, 4, 5), np.complex128)
    g = gnp.asarray(x, device=backend)
    with pytest.warns(DeprecationWarning):
        got = gnp.fft.fftn(g, s=(2, 6))
    with pytest.warns(DeprecationWarning):
        expected = np.fft.fftn(x, s=(2, 6))
    close(got, expected)


def test_fftn_of_no_axes_is_the_array_itself(backend):
    g = gnp.asarray(signal((3, 4), np.float32), device=backend)
    assert gnp.fft.fftn(g, axes=()) is g


def test_out_receives_the_result(backend):
    x = signal((2, 8), np.complex128)
    g = gnp.asarray(x, device=backend)
    out = gnp.empty((2, 8), np.complex128, device=backend)
    assert gnp.fft.fft(g, out=out) is out
    close(out, np.fft.fft(x))
    with pytest.raises(ValueError, match="wrong shape"):
        gnp.fft.fft(g, out=gnp.empty((2, 7), np.complex128, device=backend))


def test_bluestein_lengths_round_trip(backend):
    for n in (67, 251, 1009):
        x = signal((2, n), np.complex128, seed=n)
        g = gnp.asarray(x, device=backend)
        close(gnp.fft.fft(g), np.fft.fft(x))
        close(gnp.fft.ifft(gnp.fft.fft(g)), x)


def test_frequencies_are_numpys(backend):
    for n in (1, 8, 9):
        for d in (1.0, 0.3):
            got = gnp.fft.fftfreq(n, d, device=backend)
            assert got.dtype == np.float64
            np.testing.assert_array_equal(got.get(), np.fft.fftfreq(n, d))
            np.testing.assert_array_equal(gnp.fft.rfftfreq(n, d, device=backend).get(), np.fft.rfftfreq(n, d))


@pytest.mark.parametrize("axes", [None, 0, 1, (0, 2), (-1,)])
def test_shifts_are_numpys(backend, axes):
    x = np.arange(3 * 4 * 5).reshape(3, 4, 5)
    g = gnp.asarray(x, device=backend)
    np.testing.assert_array_equal(gnp.fft.fftshift(g, axes).get(), np.fft.fftshift(x, axes))
    np.testing.assert_array_equal(gnp.fft.ifftshift(g, axes).get(), np.fft.ifftshift(x, axes))
    np.testing.assert_array_equal(gnp.fft.ifftshift(gnp.fft.fftshift(g, axes), axes).get(), x)


def test_strided_views_and_lists_are_transformed(backend):
    x = signal((6, 10), np.complex128)
    g = gnp.asarray(x, device=backend)
    close(gnp.fft.fft(g[::2, 1::3]), np.fft.fft(x[::2, 1::3]))
    close(gnp.fft.fft(g.T, axis=0), np.fft.fft(x.T, axis=0))
    close(gnp.fft.fft([1.0, 2.0, 0.5]), np.fft.fft([1.0, 2.0, 0.5]))


def test_errors_say_what_went_wrong(backend):
    g = gnp.asarray(signal((4,), np.complex128), device=backend)
    with pytest.raises(ValueError, match="Invalid number of FFT data points"):
        gnp.fft.fft(g, n=0)
    with pytest.raises(ValueError, match="Invalid norm value"):
        gnp.fft.fft(g, norm="sideways")
    with pytest.raises(ValueError, match="Invalid norm value"):
        gnp.fft.hfft(g, norm="sideways")
    with pytest.raises(TypeError, match="real input"):
        gnp.fft.rfft(g)
    with pytest.raises(TypeError, match="gnp.asarray"):
        gnp.fft.fft(np.ones(4))
    with pytest.raises(np.exceptions.AxisError):
        gnp.fft.fft(g, axis=1)
    with pytest.raises(ValueError, match="Shape and axes"):
        gnp.fft.fftn(g, s=(4, 4), axes=(0,))
    with pytest.raises(IndexError, match="axes is empty"):        # numpy's and CuPy's IndexError
        gnp.fft.rfftn(gnp.asarray(np.ones((2, 3)), device=backend), axes=())
    with pytest.raises(IndexError, match="axes is empty"):
        gnp.fft.irfft2(g[None], axes=())


def test_transforms_copy_nothing_between_host_and_device(backend):
    """Also the first transform of a length: twiddles, chirps and Bluestein's filter are made on the device."""
    g = gnp.asarray(signal((4, 4099), np.complex64), device=backend)      # 4099: prime, Bluestein
    r = gnp.asarray(signal((4, 26), np.float32), device=backend)
    gnp.reset_transfer_stats()
    gnp.fft.fft(g), gnp.fft.ifft(g), gnp.fft.irfft(gnp.fft.rfft(r)), gnp.fft.fft2(r), gnp.fft.irfft(r, n=7)
    assert gnp.transfer_stats()["d2h"] == 0 and gnp.transfer_stats()["h2d"] == 0


@pytest.mark.parametrize("calc", [np.float32, np.float64])
def test_device_tables_are_the_roots_of_unity(backend, calc):
    """The twiddle and chirp tables' kernel, also with float32 angles (devices without float64)."""
    from pygpgpu_core import registry
    from pygpgpu_translate.array_ops._codegen import DEFAULT_CONFIG, launch
    from pygpgpu_translate.array_ops._fft_kernels import roots_kernel
    device = registry.get_device(backend)
    n = 1000
    k = np.arange(n)
    for d, sign, square, exact in ((n, -1, 0, np.exp(-2j * np.pi * k / n)),
                                   (2 * n, 1, 1, np.exp(1j * np.pi * ((k * k) % (2 * n)) / n))):
        table = gnp.zeros(2 * n, np.float32, device=backend)
        launch(roots_kernel(np.dtype(np.float32), np.dtype(calc)), device, DEFAULT_CONFIG,
               (table, np.int64(n), np.int64(d), np.int64(sign), np.int64(square)))
        got = table.get().view(np.complex64)
        np.testing.assert_allclose(got, exact, rtol=0, atol=1e-6)


def test_gnp_fft_is_a_module_not_a_stub():
    import importlib
    module = importlib.import_module("pygpgpu.numpy.fft")
    assert module is gnp.fft and set(module.__all__) >= {"fft", "ifft", "rfft", "irfft", "fftn", "ifftn", "fft2",
                                                          "ifft2", "fftfreq", "rfftfreq", "fftshift", "ifftshift"}
    from pygpgpu_core import gnp as core
    assert "fft" in core.__all__ and not isinstance(core.fft, core._not_implemented.NotInGnp)


def test_int64_indices_of_huge_arrays_give_the_same_results(backend, monkeypatch):
    """Arrays of 2**31 floats and more index in int64: the same kernels with int64 indices, forced
    here on small arrays (every pass kind, Bluestein and both real paths)."""
    from pygpgpu_translate.array_ops import _fft, _fft_real
    wide = lambda a, elements: ("int64", np.int64)          # noqa: E731
    monkeypatch.setattr(_fft, "_index_type", wide)
    monkeypatch.setattr(_fft_real, "_index_type", wide)
    x = signal((3, 2 * 3 * 5 * 7 * 8 * 11), np.complex128)
    close(gnp.fft.fft(gnp.asarray(x, device=backend)), np.fft.fft(x))
    y = signal((2, 71, 3), np.complex64)                   # Bluestein along the middle axis
    close(gnp.fft.ifft(gnp.asarray(y, device=backend), axis=1), np.fft.ifft(y, axis=1))
    r = signal((10, 3), np.float64)
    s = np.fft.rfft(r, axis=0)
    close(gnp.fft.rfft(gnp.asarray(r, device=backend), axis=0), s)
    close(gnp.fft.irfft(gnp.asarray(s, device=backend), n=10, axis=0), np.fft.irfft(s, n=10, axis=0))
    close(gnp.fft.irfft(gnp.asarray(s, device=backend), n=9, axis=0), np.fft.irfft(s, n=9, axis=0))
