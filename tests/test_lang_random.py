"""Counter-based random numbers (issue 15, item 3): ``gpu.uniform``, ``gpu.normal`` and
``gpu.randint`` are Philox-4x32-10 of ``(seed, counter)``, the same on the host (plain Python
and numpy arrays of counters) and in kernels on every backend: uniform floats and randint bit
for bit, normal to a few ulp (each platform's log and cos). The distributions are checked on
1M device draws (mean, variance, Kolmogorov-Smirnov; no scipy needed)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from pygpgpu_core import gpu
from pygpgpu_core.gpu_random import philox4x32_10
from pygpgpu_translate import kernel
from pygpgpu_translate._source import KernelTypeError
from pygpgpu_translate.prelude import prelude_source
from test_vec_helpers import opencl_runner, rtc_compile  # noqa: F401 - fixture

# Random123's known-answer vectors for philox4x32_10: (counter words, key words) -> output words
KAT = [
    ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((0xFFFFFFFF,) * 4, (0xFFFFFFFF, 0xFFFFFFFF), (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
     (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
]
N = 1 << 20
FULL_LOW, FULL_HIGH = -2**63, 2**63 - 1     # randint over this range gives the raw 64-bit word back


@kernel
def draw_all(u, z, r, seed, low, high):
    for i in range(u.shape[0]):
        u[i] = gpu.uniform(seed, i)
        z[i] = gpu.normal(seed, i)
        r[i] = gpu.randint(seed, i, low, high)


@kernel(default_float=np.float64)
def draw_doubles(u, z, seed):
    for i in range(u.shape[0]):
        u[i] = gpu.uniform(seed, i)
        z[i] = gpu.normal(seed, i)


@kernel
def draw_at_counters(counters, u, r, seed):
    for i in range(counters.shape[0]):
        u[i] = gpu.uniform(seed, counters[i], dtype=np.float64)
        r[i] = gpu.randint(seed, counters[i], -9223372036854775808, 9223372036854775807)


def _helper_draw(seed, k):
    return gpu.uniform(seed, 2 * k) + gpu.uniform(seed, 2 * k + 1)


@kernel
def draw_in_helper(out, seed):
    for i in range(out.shape[0]):
        out[i] = _helper_draw(seed, i)


@kernel
def empty_range(r, seed, low):
    for i in range(r.shape[0]):
        r[i] = gpu.randint(seed, i, low, low)


# ---- the generator ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("counter, key, want", KAT)
def test_host_philox_known_answers(counter, key, want):
    assert tuple(int(w) for w in philox4x32_10(counter, key)) == want


def test_device_philox_known_answers():
    """The prelude's Philox, run as handwritten OpenCL, gives Random123's answers."""
    src = prelude_source("opencl", ["philox:uint"]) + """
__kernel void kat(__global const uint* in, __global uint* out) {
    int k = get_global_id(0);
    pg_philox4 x = pg_philox4x32_10(in[6*k], in[6*k+1], in[6*k+2], in[6*k+3], in[6*k+4], in[6*k+5]);
    for (int j = 0; j < 4; ++j) out[4*k + j] = x.w[j];
}
"""
    inputs = np.array([list(c) + list(k) for c, k, _ in KAT], np.uint32)
    out = np.zeros((len(KAT), 4), np.uint32)
    opencl_runner()(src, "kat", (len(KAT),), None, [inputs, out])
    assert [tuple(int(w) for w in row) for row in out] == [want for _, _, want in KAT]


def test_device_words_are_the_known_answer(backend):
    """Seed 0 and counter 0 are Philox's all-zero input on every backend: uniform is the first
    word's top 24 bits, randint over the whole int64 range hands back words 0 and 1."""
    u = np.zeros(1, np.float64)
    r = np.zeros(1, np.int64)
    draw_at_counters[backend](np.zeros(1, np.int64), u, r, 0)
    x0, x1 = KAT[0][2][:2]
    assert u[0] == (((x0 << 32) | x1) >> 11) * 2.0 ** -53
    assert int(r[0]) - FULL_LOW + 1 == (x0 << 32) | x1


# ---- host and device agree ------------------------------------------------------------------------------------
def test_host_and_device_agree(backend):
    n = 50_000
    u, z, r = np.zeros(n, np.float32), np.zeros(n, np.float32), np.zeros(n, np.int32)
    draw_all[backend](u, z, r, 2024, -7, 1000)
    c = np.arange(n)
    np.testing.assert_array_equal(u, gpu.uniform(2024, c))
    np.testing.assert_array_equal(r, gpu.randint(2024, c, -7, 1000))
    # log and cos are each platform's: a few ulp apart, never more than this (docs/kernels.md)
    np.testing.assert_allclose(z, gpu.normal(2024, c), rtol=4e-6, atol=4e-6)
    assert u.dtype == np.float32 and gpu.uniform(2024, c).dtype == np.float32


def test_host_and_device_agree_in_float64(backend):
    n = 50_000
    u, z = np.zeros(n), np.zeros(n)
    seed = 2**40 + 17                       # a seed past 32 bits: both key words matter
    draw_doubles[backend](u, z, seed)
    c = np.arange(n)
    np.testing.assert_array_equal(u, gpu.uniform(seed, c, np.float64))
    np.testing.assert_allclose(z, gpu.normal(seed, c, np.float64), rtol=1e-13, atol=1e-13)


def test_64_bit_counters_and_negative_values_agree(backend):
    counters = np.array([0, 1, 2**32 - 1, 2**32, 2**40 + 5, 2**63 - 1, -1, -2**63], np.int64)
    u, r = np.zeros(len(counters)), np.zeros(len(counters), np.int64)
    seed = -12345                            # modulo 2**64, as on the host
    draw_at_counters[backend](counters, u, r, seed)
    np.testing.assert_array_equal(u, gpu.uniform(seed, counters, np.float64))
    np.testing.assert_array_equal(r, gpu.randint(seed, counters, FULL_LOW, FULL_HIGH))
    assert len(set(u.tolist())) == len(counters)       # the high counter word is used
    assert gpu.uniform(seed, -1) == gpu.uniform(2**64 - 12345, 2**64 - 1)


def test_helper_draws_like_the_host(backend):
    out = np.zeros(1000, np.float32)
    draw_in_helper[backend](out, 5)
    want = np.zeros_like(out)
    draw_in_helper.py_func(want, 5)                     # the same function as plain Python
    np.testing.assert_array_equal(out, want)


def test_kernel_empty_range_gives_low_host_raises(backend):
    r = np.full(4, 99, np.int32)
    empty_range[backend](r, 1, 42)
    assert (r == 42).all()
    with pytest.raises(ValueError, match="empty range"):
        gpu.randint(1, 0, 42, 42)


# ---- the host functions ---------------------------------------------------------------------------------------
def test_host_scalars_match_vectorized():
    c = np.array([0, 7, 2**33 + 1])
    for k, cc in enumerate(c.tolist()):
        assert gpu.uniform(3, cc) == gpu.uniform(3, c)[k]
        assert gpu.normal(3, cc) == gpu.normal(3, c)[k]
        assert gpu.randint(3, cc, 0, 6) == gpu.randint(3, c, 0, 6)[k]
    assert isinstance(gpu.uniform(3, 1), np.float32) and isinstance(gpu.normal(3, 1, np.float64), np.float64)
    assert gpu.uniform(3, np.arange(6).reshape(2, 3)).shape == (2, 3)


def test_host_errors():
    with pytest.raises(TypeError, match="counter must be an integer"):
        gpu.uniform(1, 0.5)
    with pytest.raises(TypeError, match="seed must be an integer"):
        gpu.normal(True, 3)
    with pytest.raises(TypeError, match="dtype must be np.float32 or np.float64"):
        gpu.uniform(1, 2, np.float16)
    with pytest.raises(TypeError, match="low must be an integer"):
        gpu.randint(1, 2, 0.0, 5)


# ---- distributions (1M device draws) --------------------------------------------------------------------------
def _ks(sample, cdf) -> float:
    """The Kolmogorov-Smirnov statistic of ``sample`` against a continuous ``cdf``."""
    x = np.sort(np.asarray(sample, np.float64))
    f = cdf(x)
    n = len(x)
    return float(max((np.arange(1, n + 1) / n - f).max(), (f - np.arange(n) / n).max()))


def _phi(x):
    return 0.5 * (1.0 + np.vectorize(math.erf, otypes=[np.float64])(x / math.sqrt(2.0)))


# critical value of the KS statistic at the 0.1 % level: 1.95 / sqrt(n)
KS_LIMIT = 1.95 / math.sqrt(N)


def test_distributions_on_the_device(backend):
    u, z, r = np.zeros(N, np.float32), np.zeros(N, np.float32), np.zeros(N, np.int32)
    draw_all[backend](u, z, r, 31337, -3, 10)
    assert 0.0 <= u.min() and u.max() < 1.0
    assert abs(u.mean() - 0.5) < 5 * math.sqrt(1 / 12 / N)
    assert abs(u.var() - 1 / 12) < 5 * math.sqrt(1 / 180 / N)
    assert _ks(u, lambda x: x) < KS_LIMIT
    assert abs(z.mean()) < 5 / math.sqrt(N)
    assert abs(z.var() - 1.0) < 5 * math.sqrt(2 / N)
    assert np.isfinite(z).all() and np.abs(z).max() < 6.0        # u1 is never 0: at most 5.8 sigma
    assert _ks(z, _phi) < KS_LIMIT
    counts = np.bincount(r - (-3), minlength=13)
    assert r.min() == -3 and r.max() == 9 and len(counts) == 13
    expected = N / 13
    chi2 = float(((counts - expected) ** 2 / expected).sum())
    assert chi2 < 36.1                        # chi-square, 12 degrees of freedom, 0.1 % level


def test_kolmogorov_smirnov_check_rejects_a_biased_sample():
    """The small KS check itself: it catches a sample that is not uniform."""
    u = gpu.uniform(1, np.arange(N)).astype(np.float64)
    assert _ks(u, lambda x: x) < KS_LIMIT
    assert _ks(u ** 1.01, lambda x: x) > KS_LIMIT
    assert _ks(gpu.normal(1, np.arange(N)) * 1.01, _phi) > KS_LIMIT


# ---- translation rules ----------------------------------------------------------------------------------------
def test_float_seed_is_a_type_error():
    @kernel
    def bad(out, seed):
        for i in range(out.shape[0]):
            out[i] = gpu.uniform(seed, i)

    with pytest.raises(KernelTypeError, match=r"gpu.uniform\(\): seed must be an integer, got float32"):
        bad.inspect(np.zeros(4, np.float32), 1.5, backend="opencl")


def test_unknown_keyword_is_an_error():
    @kernel
    def bad(out, seed):
        for i in range(out.shape[0]):
            out[i] = gpu.randint(seed, i, 0, 5, dtype=np.int64)

    with pytest.raises(SyntaxError, match=r"gpu.randint\(\) takes no keyword argument 'dtype'"):
        bad.inspect(np.zeros(4, np.int32), 1, backend="opencl")


_COMPILE = {
    "draw_all": (draw_all, lambda: (np.zeros(8, np.float32), np.zeros(8, np.float32), np.zeros(8, np.int32), 1, 0, 5)),
    "draw_doubles": (draw_doubles, lambda: (np.zeros(8), np.zeros(8), 1)),
    "draw_at_counters": (draw_at_counters, lambda: (np.zeros(8, np.int64), np.zeros(8), np.zeros(8, np.int64), 1)),
    "draw_in_helper": (draw_in_helper, lambda: (np.zeros(8, np.float32), 1)),
}


@pytest.mark.parametrize("name", sorted(_COMPILE))
def test_kernels_compile_for_cuda_and_hip(name, rtc_compile):
    dialect, compile_ = rtc_compile
    k, args = _COMPILE[name]
    src = k.inspect(*args(), backend=dialect).source
    assert "pg_philox4x32_10" in src
    assert compile_(src)
