"""``gnp.random`` (issue 32): numpy's Generator API over the Philox streams of ``gpu.uniform`` /
``gpu.normal`` / ``gpu.randint``. Element i of a call's result is the draw at counter
``counter + i`` and the call advances the counter by the elements it drew, so every array is
checked against ``pygpgpu_core.gpu_random`` on the host at those counters (uniform floats and
integers bit for bit, normals to the few ulp of each platform's log and cos) and against a
user's kernel drawing ``gpu.uniform(seed, i)``. Distributions: mean, variance and
Kolmogorov-Smirnov on fixed seeds; integers in bounds with even counts; choice frequencies follow
``p``; permutations are permutations."""
from __future__ import annotations

import math

import numpy as np
import pygpgpu.numpy as gnp
import pytest
from pygpgpu_core import gpu
from pygpgpu_core import gpu_random as host
from pygpgpu_translate import kernel


def counters(start: int, n: int) -> np.ndarray:
    """The counters a call that starts at ``start`` gives its n elements (wrapping mod 2**64)."""
    return np.uint64(start) + np.arange(n, dtype=np.uint64)


def rng_on(backend, seed):
    return gnp.random.default_rng(seed, device=backend)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_random_is_the_uniform_stream_and_advances_the_counter(backend, dtype):
    rng = rng_on(backend, 1234)
    first = rng.random((3, 4), dtype=dtype)
    assert rng.counter == 12
    second = rng.random(5, dtype=dtype)
    assert rng.counter == 17
    assert first.dtype == dtype and first.shape == (3, 4)
    np.testing.assert_array_equal(first.get(), host.uniform(1234, counters(0, 12), dtype).reshape(3, 4))
    np.testing.assert_array_equal(second.get(), host.uniform(1234, counters(12, 5), dtype))
    # two calls are the same stream as one call of their total size
    whole = rng_on(backend, 1234).random(17, dtype=dtype).get()
    np.testing.assert_array_equal(np.concatenate([first.get().ravel(), second.get()]), whole)


def test_counter_wraps_modulo_2_64(backend):
    rng = gnp.random.Generator(99, device=backend, counter=2**64 - 3)
    got = rng.integers(-2**63, 2**63 - 1, size=6).get()
    assert rng.counter == 3
    np.testing.assert_array_equal(got, host.randint(99, counters(2**64 - 3, 6), -2**63, 2**63 - 1))


@kernel
def kernel_uniform(out, seed, start):
    for i in range(out.shape[0]):
        out[i] = gpu.uniform(seed, start + i, dtype=np.float64)


def test_generator_draws_what_a_kernel_draws(backend):
    rng = rng_on(backend, 77)
    rng.random(10)                                   # counters 0..9 used
    got = rng.random(1000)
    mine = gnp.empty(1000, dtype=np.float64, device=backend)
    kernel_uniform[backend](mine, np.uint64(77), np.int64(10))
    np.testing.assert_array_equal(got.get(), mine.get())


@pytest.mark.parametrize("dtype, tol", [(np.float32, 4e-6), (np.float64, 1e-13)])
def test_standard_normal_is_the_normal_stream(backend, dtype, tol):
    rng = rng_on(backend, 2024)
    rng.random(3)
    z = rng.standard_normal((10, 50), dtype=dtype)
    assert z.dtype == dtype and rng.counter == 503
    np.testing.assert_allclose(z.get(), host.normal(2024, counters(3, 500), dtype).reshape(10, 50), rtol=tol, atol=tol)


def test_uniform_and_normal_use_numpys_formulas_on_the_streams(backend):
    rng = rng_on(backend, 5)
    u = rng.uniform(-2.0, 3.5, size=400).get()
    np.testing.assert_array_equal(u, -2.0 + 5.5 * host.uniform(5, counters(0, 400), np.float64))
    z = rng.normal(10.0, 0.5, size=(20, 20)).get()
    want = 10.0 + 0.5 * host.normal(5, counters(400, 400), np.float64).reshape(20, 20)
    np.testing.assert_allclose(z, want, rtol=1e-13, atol=1e-12)
    # broadcast parameters (a device array and a host list) set the shape when size is None
    lows = gnp.asarray(np.array([0.0, 10.0, 20.0]), device=backend)
    b = rng.uniform(lows, [1.0, 11.0, 30.0]).get()
    np.testing.assert_array_equal(b, np.array([0.0, 10.0, 20.0]) + np.array([1.0, 1.0, 10.0])
                                  * host.uniform(5, counters(800, 3), np.float64))
    assert rng.counter == 803
    ints = rng.uniform(0, 10, size=4).get()          # integer bounds are converted to float64 first
    np.testing.assert_array_equal(ints, 0.0 + 10.0 * host.uniform(5, counters(803, 4), np.float64))


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.int32, np.uint32, np.int64])
def test_integers_are_the_randint_stream_in_bounds(backend, dtype):
    info = np.iinfo(dtype)
    lo, hi = int(max(info.min, -1000)), int(min(info.max, 100))
    rng = rng_on(backend, 31)
    got = rng.integers(lo, hi, size=(40, 50), dtype=dtype)
    assert got.dtype == dtype and got.shape == (40, 50)
    g = got.get()
    np.testing.assert_array_equal(g, host.randint(31, counters(0, 2000), lo, hi).reshape(40, 50))
    assert g.min() >= lo and g.max() < hi


def test_integers_endpoint_one_argument_and_full_dtype_range(backend):
    rng = rng_on(backend, 8)
    a = rng.integers(6, size=3000).get()                        # [0, 6)
    np.testing.assert_array_equal(a, host.randint(8, counters(0, 3000), 0, 6))
    b = rng.integers(1, 6, size=3000, endpoint=True).get()      # [1, 6]
    np.testing.assert_array_equal(b, host.randint(8, counters(3000, 3000), 1, 7))
    assert set(np.unique(b)) == {1, 2, 3, 4, 5, 6}
    c = rng.integers(-128, 127, size=20000, dtype=np.int8, endpoint=True).get()
    assert c.min() == -128 and c.max() == 127
    d = rng.integers(0, 2, size=100, dtype=np.bool_).get()
    assert d.dtype == np.bool_ and 20 < d.sum() < 80


def test_integers_counts_are_even(backend):
    # chi-square over 10 buckets of 200,000 draws: 9 degrees of freedom, 0.1 % critical value 27.9
    n, k = 200_000, 10
    counts = np.bincount(rng_on(backend, 3).integers(0, k, size=n).get(), minlength=k)
    chi2 = float(((counts - n / k) ** 2 / (n / k)).sum())
    assert chi2 < 27.9, counts


def _ks(sample: np.ndarray, cdf) -> float:
    x = np.sort(sample.astype(np.float64))
    n = x.size
    f = cdf(x)
    return float(max((np.arange(1, n + 1) / n - f).max(), (f - np.arange(n) / n).max()))


def _phi(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.vectorize(math.erf, otypes=[np.float64])(x / math.sqrt(2.0)))


N = 200_000
KS_LIMIT = 1.95 / math.sqrt(N)        # the KS statistic's 0.1 % critical value


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_distributions(backend, dtype):
    rng = rng_on(backend, 20261206)
    u = rng.random(N, dtype=dtype).get()
    assert u.min() >= 0 and u.max() < 1
    assert abs(u.mean() - 0.5) < 4 * math.sqrt(1 / 12 / N)
    assert abs(u.var() - 1 / 12) < 0.003
    assert _ks(u, lambda x: x) < KS_LIMIT
    z = rng.standard_normal(N, dtype=dtype).get()
    assert abs(z.mean()) < 4 / math.sqrt(N)
    assert abs(z.var() - 1) < 0.015
    assert _ks(z, _phi) < KS_LIMIT
    w = rng.normal(3.0, 2.0, N).get()
    assert abs(w.mean() - 3.0) < 8 / math.sqrt(N) and abs(w.std() - 2.0) < 0.02
    v = rng.uniform(-1.0, 1.0, N).get()
    assert _ks(v, lambda x: (x + 1) / 2) < KS_LIMIT


def test_choice_with_replacement(backend):
    rng = rng_on(backend, 11)
    idx = rng.choice(7, size=(30, 3))
    np.testing.assert_array_equal(idx.get(), host.randint(11, counters(0, 90), 0, 7).reshape(30, 3))
    pool = np.array([10.0, 20.0, 30.0, 40.0])
    picked = rng.choice(pool, size=50).get()
    np.testing.assert_array_equal(picked, pool[host.randint(11, counters(90, 50), 0, 4)])
    one = rng.choice(gnp.asarray(pool, device=backend))
    assert one.shape == () and float(one) in pool


def test_choice_with_p_follows_the_probabilities(backend):
    p = np.array([0.1, 0.0, 0.6, 0.3])
    rng = rng_on(backend, 12)
    n = 100_000
    got = rng.choice(4, size=n, p=p).get()
    # the draw is the first index whose cumulative probability (over its last, as numpy's) exceeds
    # the uniform at its counter
    u = host.uniform(12, counters(0, n), np.float64)
    cdf = np.cumsum(p)
    np.testing.assert_array_equal(got, np.searchsorted(cdf / cdf[-1], u, side="right"))
    counts = np.bincount(got, minlength=4)
    assert counts[1] == 0
    assert np.all(np.abs(counts / n - p) < 4 * np.sqrt(p * (1 - p) / n) + 1e-12), counts
    rows = rng.choice(np.arange(8).reshape(4, 2), size=5, p=gnp.asarray(p, device=backend)).get()
    assert rows.shape == (5, 2) and set(rows[:, 0]) <= {0, 4, 6}


def test_choice_without_replacement(backend):
    rng = rng_on(backend, 13)
    s = rng.choice(50, size=20, replace=False).get()
    assert len(set(s)) == 20 and s.min() >= 0 and s.max() < 50
    assert rng.counter == 50                         # one key per member of the population
    full = rng.choice(9, size=9, replace=False).get()
    np.testing.assert_array_equal(np.sort(full), np.arange(9))
    p = np.array([0.5, 0.0, 0.25, 0.25])
    first = np.array([rng.choice(4, size=2, replace=False, p=p).get() for _ in range(400)])
    assert not np.any(first == 1) and all(a != b for a, b in first)
    # weighted sampling without replacement: the first pick follows p (0.5 for index 0)
    assert 0.4 < np.mean(first[:, 0] == 0) < 0.6


def test_permutation_and_shuffle_are_permutations(backend):
    rng = rng_on(backend, 14)
    perm = rng.permutation(1000).get()
    np.testing.assert_array_equal(np.sort(perm), np.arange(1000))
    assert not np.array_equal(perm, np.arange(1000))
    assert rng.counter == 1000
    x = np.arange(24.0).reshape(4, 6)
    cols = rng.permutation(x, axis=1).get()
    np.testing.assert_array_equal(np.sort(cols, axis=1), x)
    np.testing.assert_array_equal(cols - cols[:, :1], np.zeros((4, 1)) + (cols[0] - cols[0, 0]))
    g = gnp.asarray(x, device=backend)
    rng.shuffle(g)
    rows = g.get()
    np.testing.assert_array_equal(rows[np.argsort(rows[:, 0])], x)
    # every position is equally likely: where element 0 lands over 300 permutations of 5
    lands = np.bincount([int(np.argmin(rng.permutation(5).get())) for _ in range(300)], minlength=5)
    assert lands.min() > 30, lands


def test_out_and_scalar_results(backend):
    rng = rng_on(backend, 15)
    out = gnp.empty((2, 5), dtype=np.float32, device=backend)
    assert rng.random(dtype=np.float32, out=out) is out
    np.testing.assert_array_equal(out.get(), host.uniform(15, counters(0, 10), np.float32).reshape(2, 5))
    rng.standard_normal(out=out, dtype=np.float32)
    np.testing.assert_allclose(out.get(), host.normal(15, counters(10, 10)).reshape(2, 5), atol=4e-6, rtol=4e-6)
    x = rng.random()
    assert x.shape == () and float(x) == host.uniform(15, 20, np.float64)
    with pytest.raises(TypeError, match="dtype"):
        rng.random(out=out)                           # float64 requested, out is float32
    with pytest.raises(ValueError, match="size must match"):
        rng.random(size=3, dtype=np.float32, out=out)


def test_seeds_and_the_import_path():
    import pygpgpu.numpy.random as gr

    assert gr is gnp.random
    a = gnp.random.default_rng(2**64 - 1)
    assert gnp.random.default_rng(a) is a and a.seed == 2**64 - 1 and a.counter == 0
    fresh = gnp.random.default_rng()
    assert 0 <= fresh.seed < 2**64
    with pytest.raises(ValueError, match="seed"):
        gnp.random.default_rng(-1)
    with pytest.raises(TypeError, match="seed"):
        gnp.random.default_rng(1.5)


def test_errors_say_what_to_do(backend):
    rng = rng_on(backend, 16)
    with pytest.raises(TypeError, match="float32 or np.float64"):
        rng.random(3, dtype=np.int32)
    with pytest.raises(ValueError, match="low >= high"):
        rng.integers(5, 5)
    with pytest.raises(ValueError, match="high is out of bounds for int8"):
        rng.integers(0, 300, dtype=np.int8)
    with pytest.raises(ValueError, match="low is out of bounds for uint8"):
        rng.integers(-1, 3, dtype=np.uint8)
    with pytest.raises(ValueError, match="inside int64"):
        rng.integers(0, 2**63 - 1, endpoint=True)
    with pytest.raises(NotImplementedError, match="gpu.randint"):
        rng.integers([1, 2], 5)
    with pytest.raises(ValueError, match="larger sample"):
        rng.choice(3, size=4, replace=False)
    with pytest.raises(ValueError, match="sum to 1"):
        rng.choice(3, p=[0.5, 0.2, 0.2])
    with pytest.raises(ValueError, match="non-negative"):
        rng.choice(2, p=[1.5, -0.5])
    with pytest.raises(ValueError, match="Fewer non-zero"):
        rng.choice(3, size=2, replace=False, p=[1.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="scale < 0"):
        rng.normal(0.0, -1.0)
    with pytest.raises(ValueError, match="negative dimensions"):
        rng.random(-1)
    with pytest.raises(TypeError, match="use permutation"):
        rng.shuffle(np.arange(4))
    assert rng.counter == 0                           # nothing was drawn by a refused call


def test_weighted_lookup_is_searchsorted_right_and_skips_zero_probabilities(backend):
    from pygpgpu_translate.array_ops import random_search

    cdf = np.array([0.1, 0.1, 0.75, 1.0, 1.0])        # p = [0.1, 0, 0.65, 0.25, 0]
    u = np.array([0.0, 0.09999, 0.1, 0.5, 0.75, np.nextafter(1.0, 0.0)])
    got = random_search(gnp.asarray(u, device=backend), gnp.asarray(cdf, device=backend)).get()
    np.testing.assert_array_equal(got, np.searchsorted(cdf, u, side="right"))
    np.testing.assert_array_equal(got, [0, 0, 2, 2, 3, 3])


def test_exponential_and_lognormal(backend):
    rng = rng_on(backend, 17)
    e = rng.standard_exponential(N, dtype=np.float32)
    assert e.dtype == np.float32 and rng.counter == N
    u = host.uniform(17, counters(0, N), np.float32)
    np.testing.assert_allclose(e.get(), -np.log1p(-u), rtol=4e-6, atol=4e-7)
    assert _ks(e.get(), lambda x: -np.expm1(-x)) < KS_LIMIT
    x = rng.exponential(3.0, N).get()
    np.testing.assert_allclose(x, 3.0 * -np.log1p(-host.uniform(17, counters(N, N), np.float64)), rtol=1e-13)
    assert abs(x.mean() - 3.0) < 0.04
    ln = rng.lognormal(0.5, 0.25, 1000).get()
    np.testing.assert_allclose(ln, np.exp(0.5 + 0.25 * host.normal(17, counters(2 * N, 1000), np.float64)),
                               rtol=1e-12)


def test_module_functions_draw_from_a_reseedable_generator(backend):
    import pygpgpu

    with pygpgpu.device(backend):
        gnp.random.seed(7)
        a = gnp.random.rand(2, 3)
        b = gnp.random.randn(4)
        k = gnp.random.randint(5, size=6)
        r = gnp.random.random_sample((2, 2))
        gnp.random.seed(7)
        again = gnp.random.rand(2, 3)
    np.testing.assert_array_equal(a.get(), host.uniform(7, counters(0, 6), np.float64).reshape(2, 3))
    np.testing.assert_allclose(b.get(), host.normal(7, counters(6, 4), np.float64), rtol=1e-13, atol=1e-13)
    np.testing.assert_array_equal(k.get(), host.randint(7, counters(10, 6), 0, 5))
    np.testing.assert_array_equal(r.get(), host.uniform(7, counters(16, 4), np.float64).reshape(2, 2))
    np.testing.assert_array_equal(again.get(), a.get())
    assert gnp.random.get_random_state().counter == 6


def test_numpys_other_random_names_exist_and_say_what_to_use():
    assert callable(gnp.random.poisson) and callable(gnp.random.default_rng(1).binomial)
    with pytest.raises(NotImplementedError, match="gpu.uniform"):
        gnp.random.poisson(3.0, size=4)
    with pytest.raises(NotImplementedError, match="Generator.gamma"):
        gnp.random.default_rng(1).gamma(2.0)
    with pytest.raises(AttributeError):
        gnp.random.no_such_function
    with pytest.raises(AttributeError):
        gnp.random.default_rng(1).no_such_method


def test_choice_p_never_picks_past_the_last_nonzero_probability(backend):
    # p sums to 1 - 1e-8 (inside numpy's tolerance); a uniform above that sum (found by searching the host
    # stream of seed 12) must still land on the last nonzero p, as numpy's cdf / cdf[-1] makes it
    start = 56_599_367
    u = host.uniform(12, start, np.float64)
    assert u > 1 - 1e-8                               # the premise, from the host stream itself
    p = np.array([0.5, 0.5 - 1e-8, 0.0])
    rng = gnp.random.Generator(12, device=backend, counter=start)
    got = rng.choice(3, size=1, p=p).get()
    cdf = np.cumsum(p)
    np.testing.assert_array_equal(got, np.searchsorted(cdf / cdf[-1], [u], side="right"))
    assert got[0] == 1


def test_permutation_is_the_stable_argsort_of_the_documented_keys(backend):
    rng = rng_on(backend, 18)
    rng.random(4)
    perm = rng.permutation(500).get()
    keys = host.randint(18, counters(4, 500), -2**63, 2**63 - 1)
    np.testing.assert_array_equal(perm, np.argsort(keys, kind="stable"))
    s = rng.choice(500, size=7, replace=False).get()
    np.testing.assert_array_equal(s, np.argsort(host.randint(18, counters(504, 500), -2**63, 2**63 - 1),
                                                kind="stable")[:7])
