"""Records passed to helpers (issue 15, item 6 follow-up): a record element ``p[i]`` (also a
nested record ``p[i].inner``, an element of a record-array field ``p[i].pair[k]``) and a
fixed-shape field ``p[i].pos`` / ``p[i]["pos"]`` reach an undecorated helper by reference, as
numpy's element views and Numba's records do: reads and writes in the helper (and in helpers it
calls) are the caller's element. Each kernel is compared with the same Python function run on the
host over ``p.view(np.recarray)``; CUDA and HIP sources are compiled with NVRTC and hiprtc."""
from __future__ import annotations

import numpy as np
import pytest

from pygpgpu_core.vec_types import float3
from pygpgpu_translate import kernel
from test_lang_records import _rejects as records_rejects
from test_vec_helpers import rtc_compile  # noqa: F401 - fixture

P = np.dtype([("pos", np.float32, 3), ("mass", np.float32), ("vel", np.float32)])
MIXED = np.dtype([("pos", np.float32, 3), ("count", np.int32), ("energy", np.float64), ("m", np.float32, (2, 3)),
                  ("mass", np.float32)], align=True)
INNER = np.dtype([("a", np.int32), ("b", np.float64)], align=True)
NESTED = np.dtype([("flag", np.uint8), ("inner", INNER), ("pair", INNER, 2)])


def particles(dtype, n=29, seed=6):
    rng = np.random.default_rng(seed)
    p = np.zeros(n, dtype)
    for name in dtype.names:
        f = p[name]
        if f.dtype.kind == "f":
            p[name] = rng.uniform(-2, 2, f.shape)
        elif f.dtype.kind in "iu":
            p[name] = rng.integers(0, 50, f.shape)
    return p


def run_both(k, *args, backend):
    """``k`` on ``backend`` and its Python function on the host (record arrays as np.recarray views);
    returns (device arguments, host arguments) after the runs."""
    host = [a.copy() for a in args]
    k.py_func(*[a.view(np.recarray) if a.dtype.names else a for a in host])
    k[backend](*args)
    return args, host


def assert_records_equal(got, want, rtol=1e-5):
    for name in want.dtype.names:
        if want[name].dtype.names is not None:      # a nested record, or a field of records
            assert_records_equal(got[name], want[name], rtol)
        else:
            np.testing.assert_allclose(got[name], want[name], rtol=rtol, atol=1e-5, err_msg=name)


# ---- the issue's example: an array field, a whole record and a helper writing through the record ----------
def dist2(pos):                  # an array field (float32 x 3) passed to a helper
    return pos[0] * pos[0] + pos[1] * pos[1] + pos[2] * pos[2]


def mass_of(rec):                # a whole record passed to a helper
    return rec.mass + rec.pos[1]


def push(rec, dv):               # a helper that writes through the record
    rec.vel = rec.vel + dv
    rec.pos[0] = rec.pos[0] + 1.0


@kernel
def issue_example(p, out):
    for i in range(p.shape[0]):
        out[i] = dist2(p[i].pos) + mass_of(p[i])
        push(p[i], 2.0)


@kernel
def by_field_name(p, out):
    for i in range(p.shape[0]):
        out[i] = dist2(p[i]["pos"]) - mass_of(p[i])
        push(p[i], -0.5)


@pytest.mark.parametrize("k", [issue_example, by_field_name], ids=["attribute", "field-name"])
def test_records_and_array_fields_pass_to_helpers_by_reference(backend, k):
    (p, out), (want_p, want_out) = run_both(k, particles(P), np.zeros(29, np.float32), backend=backend)
    np.testing.assert_allclose(out, want_out, rtol=1e-5, atol=1e-5)   # fma contraction
    assert_records_equal(p, want_p)          # push()'s writes reached the caller's array


# ---- nested helpers, fields of several types, a 2-D field, writes through every level ---------------------
def tally(rec, by):                          # int32 and float64 fields, read and written
    rec.count += by
    rec.energy = rec.energy * 0.5 + rec.count


def trace(m):                                # a 2-D (2, 3) field: indexed, negative indices, written
    m[0, 2] = m[1, 0] * 2.0
    return m[0, 0] + m[1, 1] + m[1, -1] + m[0, 2]


def nudge(pos, k):                           # an array field written at a variable index
    pos[k] = pos[k] + 0.25


def level2(rec, k):                          # a helper passing the record and its fields on
    nudge(rec.pos, k)
    nudge(rec["pos"], -1)
    tally(rec, k + 1)
    return trace(rec.m) + dist2(rec.pos)


def level1(rec, k):
    r = rec                                  # a name for the helper's record is the same element
    r.mass = level2(r, k) * 0.5
    return r.count


@kernel
def nested_helpers(p, out):
    for i in range(p.shape[0]):
        out[i] = level1(p[i], i % 3)


def test_nested_helpers_and_fields_of_several_types(backend):
    (p, out), (want_p, want_out) = run_both(nested_helpers, particles(MIXED), np.zeros(29, np.int64),
                                            backend=backend)
    np.testing.assert_array_equal(out, want_out)
    assert_records_equal(p, want_p)
    assert p.dtype["energy"] == np.float64 and p.dtype["count"] == np.int32


# ---- a 3-vector field in a helper reads as a vector, as it does in the kernel ---------------------------
def scaled(v, s):
    w = v * s                                # v is a float3 on the device, a (3,) view on the host
    return w[0] + w[1] + w[2]


def speed(pos):
    return float3(pos[0], pos[1], pos[2])


@kernel
def vector_fields(p, out, tot):
    for i in range(p.shape[0]):
        out[i] = speed(p[i].pos) * 2.0 + p[i].mass
        tot[i] = scaled(p[i].pos, 3.0)


def test_vector_shaped_field_in_a_helper_reads_as_a_vector(backend):
    p = particles(P)
    out = np.zeros((29, 3), np.float32)
    tot = np.zeros(29, np.float32)
    host_out, host_tot = out.copy(), tot.copy()
    vector_fields.py_func(p.view(np.recarray), host_out, host_tot)
    vector_fields[backend](p, out, tot)
    np.testing.assert_allclose(out, host_out, rtol=1e-6)
    np.testing.assert_allclose(tot, host_tot, rtol=1e-6)


# ---- nested records, elements of a record-array field (variable index), 2-D record arrays ------------------
def bump_inner(rec, by):        # by name: numpy's host view of p[i].pair[k] has no attributes
    rec["a"] += by
    rec["b"] = rec["b"] * 2.0 + rec["a"]


def sum_pair(pair):
    return pair[0]["a"] + pair[1]["a"]


@kernel
def nested_records(p, out):
    for i in range(p.shape[0]):
        k = i % 2
        bump_inner(p[i].inner, 3)
        bump_inner(p[i].pair[k], i)          # the element is chosen at run time: its index is passed too
        bump_inner(p[i]["pair"][1 - k], 1)
        out[i] = sum_pair(p[i].pair) + p[i].flag


def test_nested_records_and_record_array_fields(backend):
    (p, out), (want_p, want_out) = run_both(nested_records, particles(NESTED, 17), np.zeros(17, np.int32),
                                            backend=backend)
    np.testing.assert_array_equal(out, want_out)
    assert_records_equal(p, want_p)


def move(rec, dy, dx):
    rec.pos[0] += dx
    rec.pos[1] += dy


def on_element(g, y, x):                     # a record of an array the helper itself was passed
    move(g[y, x], y, x)


@kernel
def grid(g):
    for y, x in np.ndindex(g.shape):
        if (y + x) % 2 == 0:
            move(g[y, x], y * 1.0, x * 1.0)
        else:
            on_element(g, y, x)


def test_two_dimensional_record_arrays(backend):
    (g,), (want,) = run_both(grid, particles(P, 35).reshape(5, 7), backend=backend)
    assert_records_equal(g, want)


# ---- reference semantics: two arguments naming the same element, two arrays ----------------------------------
def add_into(dst, src):
    dst.mass = dst.mass + src.mass           # dst and src may be the same element: read after the write
    dst.vel = src.mass


@kernel
def same_and_other(p, q):
    for i, r in enumerate(p):
        add_into(r, p[i])                    # one element, twice
        add_into(q[i], r)


def test_arguments_naming_the_same_element_see_each_others_writes(backend):
    (p, q), (want_p, want_q) = run_both(same_and_other, particles(P), particles(P, seed=7), backend=backend)
    assert_records_equal(p, want_p)
    assert_records_equal(q, want_q)


def test_a_record_only_read_through_a_helper_is_const_and_not_read_back():
    src = vector_fields.inspect(particles(P, 4), np.zeros((4, 3), np.float32), np.zeros(4, np.float32),
                                backend="opencl").source
    assert "__global const pg_rec_" in src   # every helper and the kernel only read p
    src = issue_example.inspect(particles(P, 4), np.zeros(4, np.float32), backend="opencl").source
    assert "void pyg_push(__global pg_rec_" in src


def shifted(rec_at, rec):                    # a parameter named like the element's hidden index parameter
    rec.mass = rec.mass + rec_at


@kernel
def name_clash(p):
    for i in range(p.shape[0]):
        shifted(i * 0.5, p[i])


def test_parameter_names_do_not_clash_with_the_elements_index(backend):
    (p,), (want,) = run_both(name_clash, particles(P, 9), backend=backend)
    assert_records_equal(p, want)


# ---- the debug mode checks the element where it is chosen ----------------------------------------------------
@kernel(debug=True)
def past_the_end(p, out):
    for i in range(p.shape[0]):
        out[i] = mass_of(p[i + 1])


@kernel(debug=True)
def checked(p, out):
    for i in range(p.shape[0]):
        out[i] = level1(p[i], i % 3)


def test_debug_mode_checks_records_passed_to_helpers(backend):
    p = particles(P, 8)
    with pytest.raises(IndexError, match="'p'"):
        past_the_end[backend](p, np.zeros(8, np.float32))
    (q, out), (want_q, want_out) = run_both(checked, particles(MIXED), np.zeros(29, np.int64), backend=backend)
    np.testing.assert_array_equal(out, want_out)
    assert_records_equal(q, want_q)


# ---- what stays refused, with what to do instead -------------------------------------------------------------
def _rejects(body_src, match):
    records_rejects(body_src, match, (SyntaxError, TypeError), particles(MIXED, 4))


@pytest.mark.parametrize("helper, call, match", [
    ("def h(rec):\n    return rec\n", "h(p[i])", r"helpers cannot return a record element"),
    ("def h(rec):\n    return rec.m\n", "h(p[i])", r"field 'm' of shape \(2, 3\) has no single value"),
    ("def h(rec):\n    rec = 1.0\n", "h(p[i])", r"'rec' names a record element and cannot be assigned a value"),
    ("def h(pos):\n    pos = 1.0\n", "h(p[i].pos)", r"'pos' names a record element and cannot be assigned a value"),
    ("def h(rec):\n    return rec + 1\n", "h(p[i])", r"a record has no single value"),
    ("def h(rec):\n    return rec.weight\n", "h(p[i])", r"the record has no field 'weight'"),
])
def test_unsupported_uses_in_helpers_say_what_to_do(helper, call, match):
    _rejects(f"{helper}\ndef k(p, out):\n  for i in range(p.shape[0]):\n    out[i] = {call}\n", match)


# ---- CUDA and HIP ---------------------------------------------------------------------------------------------
_COMPILE = {
    "issue_example": (issue_example, lambda: (particles(P, 4), np.zeros(4, np.float32))),
    "by_field_name": (by_field_name, lambda: (particles(P, 4), np.zeros(4, np.float32))),
    "nested_helpers": (nested_helpers, lambda: (particles(MIXED, 4), np.zeros(4, np.int64))),
    "vector_fields": (vector_fields, lambda: (particles(P, 4), np.zeros((4, 3), np.float32), np.zeros(4, np.float32))),
    "nested_records": (nested_records, lambda: (particles(NESTED, 4), np.zeros(4, np.int32))),
    "grid": (grid, lambda: (particles(P, 6).reshape(2, 3),)),
    "same_and_other": (same_and_other, lambda: (particles(P, 4), particles(P, 4))),
    "checked": (checked, lambda: (particles(MIXED, 4), np.zeros(4, np.int64))),
    "name_clash": (name_clash, lambda: (particles(P, 4),)),
}


@pytest.mark.parametrize("name", sorted(_COMPILE))
def test_record_helper_kernels_compile_for_cuda_and_hip(name, rtc_compile):
    dialect, compile_ = rtc_compile
    k, args = _COMPILE[name]
    src = k.inspect(*args(), backend=dialect).source
    assert "pg_rec_" in src and "pyg_" in src
    assert compile_(src)
