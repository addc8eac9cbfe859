"""Record arrays (issue 15, item 6): a numpy structured array passed to a kernel is an array of C
structs in numpy's exact layout (explicit padding, packed where numpy's dtype is unaligned,
size and offsets checked by the compiler); ``p[i].mass``, ``p[i]["mass"]``, ``p[i].pos[k]`` and
nested fields read and write; a 1-D field of a vector width reads as a vector. Results are
compared with the same function run on the host over ``p.view(np.recarray)``."""
from __future__ import annotations

import numpy as np
import pytest

from pygpgpu_core.vec_types import float3, float4
from pygpgpu_translate import kernel
from pygpgpu_translate._dialects import dialect_for
from test_vec_helpers import rtc_compile  # noqa: F401 - fixture

UNALIGNED = np.dtype([("pos", np.float32, 3), ("mass", np.float32), ("alive", np.bool_), ("id", np.int64)])
ALIGNED = np.dtype([("pos", np.float32, 3), ("mass", np.float32), ("alive", np.bool_), ("id", np.int64)], align=True)
GAPS = np.dtype({"names": ["id", "pos", "mass", "alive"], "formats": [np.int64, (np.float32, 3), np.float32, np.bool_],
                 "offsets": [40, 4, 20, 33], "itemsize": 56})
TAGGED = np.dtype([("tag", np.uint8), ("x", np.float64), ("n", np.int16)])           # offsets 0, 1, 9: size 11
INNER = np.dtype([("a", np.int32), ("b", np.float64)], align=True)
NESTED = np.dtype([("flag", np.uint8), ("inner", INNER), ("pair", INNER, 2), ("m", np.float32, (2, 3))])


def particles(dtype, n=37):
    rng = np.random.default_rng(15)
    p = np.zeros(n, dtype)
    p["pos"] = rng.uniform(-1, 1, (n, 3))
    p["mass"] = rng.uniform(0.5, 2, n)
    p["id"] = np.arange(n) * 3 - 20
    return p


@kernel
def step(p, out, dt):
    for i in range(p.shape[0]):
        v = p[i].pos                      # a float3 on the device, a (3,) view on the host
        out[i] = v[0] + v[1] * 10 + p[i]["mass"]
        p[i].pos[0] = p[i].pos[0] + dt
        p[i]["mass"] *= 2
        p[i].alive = p[i].id % 2 == 0
        p[i].pos[2] += p[i].id
        k = p[i].id % 3 - 1               # -1, 0 or 1: a negative field index counts from the end
        p[i].pos[k] -= 0.25


@pytest.mark.parametrize("dtype", [UNALIGNED, ALIGNED, GAPS], ids=["unaligned", "aligned", "explicit-offsets"])
def test_fields_read_and_write_like_numpy(backend, dtype):
    p = particles(dtype)
    out = np.zeros(len(p), np.float32)
    want_p, want_out = p.copy(), out.copy()
    step.py_func(want_p.view(np.recarray), want_out, 0.5)
    step[backend](p, out, 0.5)
    for name in dtype.names:
        np.testing.assert_allclose(p[name], want_p[name], rtol=1e-6, err_msg=name)
    np.testing.assert_allclose(out, want_out, rtol=1e-6)


def test_recarray_arguments_work_too(backend):
    p = particles(ALIGNED).view(np.recarray)
    out = np.zeros(len(p), np.float32)
    want_p, want_out = p.copy(), out.copy()
    step.py_func(want_p, want_out, 0.25)
    step[backend](p, out, 0.25)
    np.testing.assert_allclose(p.mass, want_p.mass, rtol=1e-6)
    np.testing.assert_allclose(out, want_out, rtol=1e-6)


@kernel
def fill_fields(p, ids, xs):
    for i in range(p.shape[0]):
        p[i].id = ids[i]
        p[i].mass = xs[i]
        p[i].pos[1] = -xs[i]
        p[i].alive = ids[i] > 0


def test_layout_is_numpys_byte_for_byte(backend):
    """Every field lands at numpy's offset, and the padding bytes between fields stay as they were."""
    n = 29
    p = np.zeros(n, GAPS)
    raw = p.view(np.uint8).reshape(n, GAPS.itemsize)
    raw[:] = 0xAB
    before = raw.copy()
    ids = np.arange(n, dtype=np.int64) * 7 - 50
    xs = np.linspace(-3, 3, n).astype(np.float32)
    fill_fields[backend](p, ids, xs)
    np.testing.assert_array_equal(p["id"], ids)
    np.testing.assert_array_equal(p["mass"], xs)
    np.testing.assert_array_equal(p["pos"][:, 1], -xs)
    np.testing.assert_array_equal(p["alive"], ids > 0)
    written = np.zeros(GAPS.itemsize, bool)
    for name, (fdt, off) in ((k, GAPS.fields[k][:2]) for k in GAPS.names):
        written[off:off + fdt.itemsize] = True
    written[4:8] = written[12:16] = False           # pos[0] and pos[2] are not written either
    np.testing.assert_array_equal(raw[:, ~written], before[:, ~written])


@kernel
def tagged(p, out):
    for i in range(p.shape[0]):
        out[i] = p[i].x * p[i].n + p[i].tag
        p[i].x = out[i]
        p[i].tag = p[i].tag + 1


def test_unaligned_dtype_is_packed(backend):
    n = 50
    p = np.zeros(n, TAGGED)
    p["tag"] = np.arange(n) % 250
    p["x"] = np.linspace(-2, 2, n)
    p["n"] = np.arange(n) - 25
    out = np.zeros(n)
    want_p, want_out = p.copy(), out.copy()
    tagged.py_func(want_p.view(np.recarray), want_out)
    tagged[backend](p, out)
    np.testing.assert_allclose(out, want_out, rtol=1e-15)          # x * n + tag may be one fma on the device
    np.testing.assert_allclose(p["x"], want_p["x"], rtol=1e-15)
    np.testing.assert_array_equal(p["tag"], want_p["tag"])
    np.testing.assert_array_equal(p["n"], want_p["n"])
    src = tagged.inspect(p, out, backend="opencl").source
    assert "__attribute__((packed))" in src and "== 11) ? 1 : -1" in src


@kernel
def nested(p, out):
    for i in range(p.shape[0]):
        p[i].inner.b = p[i].inner.a * 0.5 + p[i]["pair"][1]["b"]
        p[i].pair[0]["a"] = p[i].inner.a + p[i].flag      # (numpy's host records lack .a here)
        for r in range(2):
            for c in range(3):
                p[i].m[r, c] = r * 10 + c + p[i].m[1 - r, 2 - c]
        out[i] = p[i].m[1, -1] + p[i].pair[-1]["a"]


def test_nested_records_and_subarrays(backend):
    n = 21
    rng = np.random.default_rng(3)
    p = np.zeros(n, NESTED)
    p["flag"] = np.arange(n)
    p["inner"]["a"] = np.arange(n) * 2
    p["pair"]["a"] = rng.integers(-9, 9, (n, 2))
    p["pair"]["b"] = rng.uniform(-1, 1, (n, 2))
    p["m"] = rng.uniform(-1, 1, (n, 2, 3)).astype(np.float32)
    out = np.zeros(n, np.float32)
    want_p, want_out = p.copy(), out.copy()
    nested.py_func(want_p.view(np.recarray), want_out)
    nested[backend](p, out)
    for path in (("flag",), ("inner", "a"), ("inner", "b"), ("pair", "a"), ("pair", "b"), ("m",)):
        got, want = p, want_p                       # (numpy's host writes leave garbage in padding bytes)
        for name in path:
            got, want = got[name], want[name]
        np.testing.assert_array_equal(got, want, err_msg=".".join(path))    # the same operations, rounded once
    np.testing.assert_array_equal(out, want_out)
    assert "__attribute__((packed))" in nested.inspect(p, out, backend="opencl").source   # inner at offset 1


@kernel
def vectors(p, q):
    for i in range(p.shape[0]):
        v = p[i].pos * 2.0                # a float3 read component by component
        q[i].pos = v + float3(1, 2, 3)
        q[i].vel = p[i].mass              # one number into every element, as numpy broadcasts
        q[i]["rgba"] = float4(p[i].mass, 0, 0, 1)


def test_vector_shaped_fields(backend):
    pd = np.dtype([("pos", np.float32, 3), ("mass", np.float32)])
    qd = np.dtype([("pos", np.float32, 3), ("vel", np.float32, 3), ("rgba", np.float32, 4)])
    p = np.zeros(33, pd)
    p["pos"] = np.random.default_rng(4).uniform(-1, 1, (33, 3))
    p["mass"] = np.arange(33)
    q = np.zeros(33, qd)
    vectors[backend](p, q)
    np.testing.assert_allclose(q["pos"], p["pos"] * 2 + [1, 2, 3], rtol=1e-6)
    np.testing.assert_array_equal(q["vel"], np.repeat(p["mass"][:, None], 3, axis=1))
    np.testing.assert_array_equal(q["rgba"], np.stack([p["mass"], 0 * p["mass"], 0 * p["mass"], 1 + 0 * p["mass"]], 1))


def bump(p, y, x, by):
    p[y, x].mass += by


@kernel
def grid_and_helper(g, by):
    for y, x in np.ndindex(g.shape):
        bump(g, y, x, by)
        g[y, x].id = y * 100 + x


def test_two_dimensional_record_arrays_and_helpers(backend):
    g = np.zeros((5, 7), ALIGNED)
    g["mass"] = 1.5
    want = g.copy()
    grid_and_helper.py_func(want.view(np.recarray), 2.0)
    grid_and_helper[backend](g, 2.0)
    np.testing.assert_array_equal(g["mass"], want["mass"])
    np.testing.assert_array_equal(g["id"], want["id"])


@kernel
def aliases(p, out):
    for i, r in enumerate(p):                 # r names p[i], as numpy's element view does
        out[i] = r.mass + r["pos"][1]
        q = p[p.shape[0] - 1 - i]
        r.mass = q.pos[0] * 2


def test_enumerate_and_names_of_elements_write_through(backend):
    p = particles(ALIGNED, 9)
    out = np.zeros(9, np.float32)
    want_p, want_out = p.copy(), out.copy()
    aliases.py_func(want_p.view(np.recarray), want_out)
    aliases[backend](p, out)
    np.testing.assert_array_equal(out, want_out)
    np.testing.assert_array_equal(p["mass"], want_p["mass"])


def test_vector_dtypes_stay_vectors_and_other_names_are_records():
    from pygpgpu_translate._records import RecordType
    from pygpgpu_translate._signature import arg_token, spec_from_token
    from pygpgpu_translate._types import FLOAT32

    vec = spec_from_token(arg_token(np.zeros(4, float4.dtype), "v"), "v", FLOAT32).type
    assert vec.row_width == 4 and vec.elem == FLOAT32
    rec = spec_from_token(arg_token(np.zeros(4, np.dtype([("a", np.float32), ("b", np.float32)])), "r"), "r", FLOAT32)
    assert isinstance(rec.type.elem, RecordType) and [f.name for f in rec.type.elem.fields] == ["a", "b"]


# ---- errors ------------------------------------------------------------------------------------------------------
@kernel
def read_mass(p, out):
    for i in range(p.shape[0]):
        out[i] = p[i].mass


@pytest.mark.parametrize("dtype, field, what", [
    (np.dtype([("mass", np.float32), ("name", object)]), "name", "Python objects"),
    (np.dtype([("mass", np.float32), ("label", "U8")]), "label", "strings"),
    (np.dtype([("mass", np.float32), ("h", np.float16)]), "h", "float16"),
    (np.dtype([("mass", np.float32), ("inner", [("ok", np.int32), ("when", "M8[s]")])]), "inner.when", "datetimes"),
    (np.dtype([("mass", np.float32), ("z", np.complex64)]), "z", "complex"),
])
def test_unsupported_fields_are_a_type_error_naming_the_field(dtype, field, what):
    with pytest.raises(TypeError, match=rf"argument 'p': field '{field}' has dtype .*\({what}"):
        read_mass.inspect(np.zeros(3, dtype), np.zeros(3, np.float32), backend="opencl")


def test_overlapping_fields_are_a_type_error():
    union = np.dtype({"names": ["mass", "bits"], "formats": [np.float32, np.uint32], "offsets": [0, 0]})
    with pytest.raises(TypeError, match="field 'bits' overlaps"):
        read_mass.inspect(np.zeros(3, union), np.zeros(3, np.float32), backend="opencl")


def _rejects(body_src, match, exc=SyntaxError, records=None):
    """The kernel ``k`` of ``body_src`` (written to a file: the translator reads source) refuses
    to translate for ``records`` (default: 4 ALIGNED particles) with ``exc`` matching ``match``."""
    ns: dict = {}
    src = "import numpy as np\n" + body_src
    path = f"/tmp/pygpgpu_records_{abs(hash(body_src))}.py"
    with open(path, "w") as f:
        f.write(src)
    exec(compile(src, path, "exec"), ns)
    k = kernel(ns["k"])
    with pytest.raises(exc, match=match):
        k.inspect(particles(ALIGNED, 4) if records is None else records, np.zeros(4, np.float32), backend="opencl")


@pytest.mark.parametrize("body, match", [
    ("    out[i] = p[i].weight", r"the record has no field 'weight' \(its fields: pos, mass, alive, id\)"),
    ("    out[i] = p[i] + 1", "a record has no single value"),
    ("    r = p[i]\n    r = 1.0", "'r' names a record element and cannot be assigned a value"),
    ("    r = p[0]\n    r = p[1]", "'r' refers to two different records"),
    ("    p[i] = 1.0", "a whole record cannot be assigned"),
    ("    p[i].mass = p[i].pos", "cannot store a float3 into the scalar field 'mass'"),
    ("    out[i] = p[i][0]", "a record is indexed by a field name"),
    ("    out[i] = p[i].pos[3]", r"index 3 is out of range for field 'pos' of shape \(3,\)"),
    ("    out[i] = p[i].pos.x", r"field 'pos' is an array of shape \(3,\); it has no attribute 'x'"),
    ("    out[i] = p[i]", "a record has no single value"),
])
def test_wrong_uses_are_errors(body, match):
    # KernelTypeError and SyntaxError both say where; the type errors are TypeErrors
    _rejects(f"def k(p, out):\n  for i in range(p.shape[0]):\n{body}\n", match, (SyntaxError, TypeError))


_COMPILE = {
    "step_unaligned": (step, lambda: (np.zeros(4, UNALIGNED), np.zeros(4, np.float32), 0.5)),
    "step_aligned": (step, lambda: (np.zeros(4, ALIGNED), np.zeros(4, np.float32), 0.5)),
    "step_gaps": (step, lambda: (np.zeros(4, GAPS), np.zeros(4, np.float32), 0.5)),
    "tagged": (tagged, lambda: (np.zeros(4, TAGGED), np.zeros(4))),
    "nested": (nested, lambda: (np.zeros(4, NESTED), np.zeros(4, np.float32))),
    "grid_and_helper": (grid_and_helper, lambda: (np.zeros((2, 3), ALIGNED), 1.0)),
    "aliases": (aliases, lambda: (np.zeros(4, ALIGNED), np.zeros(4, np.float32))),
}


@pytest.mark.parametrize("name", sorted(_COMPILE))
def test_record_kernels_compile_for_cuda_and_hip(name, rtc_compile):
    dialect, compile_ = rtc_compile
    k, args = _COMPILE[name]
    src = k.inspect(*args(), backend=dialect).source
    # the compiler checks numpy's layout, in the dialect's own offsetof (NVRTC 13.0 has no __builtin_offsetof)
    assert "_at_f_" in src and dialect_for(dialect).offsetof.split("{")[0] in src
    assert compile_(src)
