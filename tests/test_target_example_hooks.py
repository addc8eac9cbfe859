"""The public target surface's hooks for languages that are not C (issue 35: what the WGSL target
needed), each shown by a dialect subclassing the public ``OpenCL`` one: it writes its own prelude
piece, writes atomics inline instead of calling the prelude, gives an atomically updated array its
own element type and reads and writes it through its own spellings, writes an expression statement
and a conditional its own way. The opencl backend is pointed at that dialect for the test, so the
source it writes runs on the OpenCL device and is compared with the kernel run as Python."""
from __future__ import annotations

import numpy as np
import pytest

from pygpgpu import gpu, kernel
from pygpgpu_core import registry, targets

from conftest import skip_no_device


def _hookish_dialect():
    from pygpgpu_translate.target import OpenCL

    class Hookish(OpenCL):
        calls: "list[str]" = []

        def prelude_piece(self, name):
            if name == "pymod:int":           # Python's %, written differently from the shared piece
                return (), ("static inline int pg_pymod_int(int a, int b) { if (b == 0) return 0; "
                            "int r = a - (a / b) * b; if (r != 0 && ((r ^ b) < 0)) r += b; return r; } /* hookish */\n")
            if name.startswith("atomic_"):    # written inline by prelude_call
                return (), ""
            return None

        def prelude_call(self, function, args):
            if function == "pg_atomic_add_int":
                return f"atomic_add({args[0]}, {args[1]})"
            return super().prelude_call(function, args)

        def atomic_element(self, elem_text):
            return f"volatile {elem_text}"

        def atomic_load(self, element):
            return f"atomic_add(&{element}, 0)"

        def atomic_store(self, element, value):
            return f"atomic_xchg(&{element}, {value});"

        def expression_statement(self, expr):
            return f"(void)({expr});"

        def ternary(self, cond, a, b):
            return f"select_ternary({cond}, {a}, {b})"

        def headers(self, features):
            return ["#define select_ternary(c, a, b) ((c) ? (a) : (b))"]

    return Hookish()


@pytest.fixture
def opencl_on_hookish(monkeypatch):
    from pygpgpu_translate import _dialects
    from pygpgpu_translate.target import Target, register_target
    try:
        devices = registry.backend_devices("opencl")
    except Exception as exc:  # noqa: BLE001 (any reason there is no OpenCL device)
        skip_no_device("opencl", f"no OpenCL device: {exc}")
    register_target(Target("hookish", _hookish_dialect()))
    monkeypatch.setattr(devices[0].backend, "dialect", "hookish")
    yield devices[0]
    _dialects.DIALECTS.pop("hookish", None)
    targets._reset_for_tests()


def _counts(v, counts, seen, out, step):
    for i in range(v.shape[0]):
        gpu.atomic_add(counts, v[i] % 4, 1)
        seen[0] = 7                          # a plain write of an atomically updated array
        out[i] = seen[1] + v[i] % 5          # and a plain read
        s = 0
        for k in range(0, 6, step):          # a step known at run time: the loop test is a conditional
            s += k
        out[i] += s if v[i] > 0 else -s
        gpu.atomic_add(seen, 1, 0)


def test_a_dialect_writes_its_pieces_atomics_and_conditionals_its_own_way(opencl_on_hookish):
    k = kernel(_counts)
    v = np.random.default_rng(0).integers(-40, 40, 257).astype(np.int32)
    args = (v, np.zeros(4, np.int32), np.array([0, 3], np.int32), np.zeros(v.size, np.int32), 2)
    src = k.inspect(*args, backend="hookish").source
    assert "/* hookish */" in src and "atomic_add((&counts[" in src and "static inline int pg_atomic" not in src
    assert "__global volatile int* counts" in src and "atomic_xchg(&seen[0], 7);" in src
    assert "atomic_add(&seen[1], 0)" in src and "(void)(atomic_add(" in src
    assert "select_ternary(" in src and "?" not in src.replace("((c) ? (a) : (b))", "")
    got = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    k[opencl_on_hookish](*got)
    want = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    _counts(*want)
    for g, w in zip(got[:4], want[:4]):
        np.testing.assert_array_equal(g, w)


def test_a_narrow_literal_is_written_through_the_dialects_cast():
    from pygpgpu_translate.target import OpenCL

    class Casting(OpenCL):
        def cast(self, type_text, expr):
            return f"CAST<{type_text}>({expr})"

    from pygpgpu_translate import _dialects
    from pygpgpu_translate.target import Target, register_target
    register_target(Target("casting", Casting()))
    try:
        @kernel
        def narrow(x, out):
            for i in range(out.shape[0]):
                out[i] = x[i] + np.int16(3)

        x = np.ones(4, np.int16)
        src = narrow.inspect(x, np.zeros_like(x), backend="casting").source
        assert "CAST<short>(3)" in src and "((short)3)" not in src
    finally:
        _dialects.DIALECTS.pop("casting", None)
        targets._reset_for_tests()


def _element_dialect():
    from pygpgpu_translate.target import OpenCL

    class Elements(OpenCL):
        """Reads and writes kernel-array elements through macros of its own (as WGSL reads bytes
        from 32-bit words), and writes a float ``!=`` through a function of its own."""

        def element_load(self, array, index, elem_text):
            return f"LOAD_{elem_text}({array}, {index})"

        def element_store(self, array, index, elem_text, value):
            return f"STORE_{elem_text}({array}, {index}, {value});"

        def float_not_equal(self, a, b, type_text):
            return f"ne_{type_text}({a}, {b})"

        def headers(self, features):
            return ["#define LOAD_float(a, i) (a)[(i)]", "#define LOAD_uchar(a, i) ((a)[(i)] & 0xff)",
                    "#define STORE_float(a, i, v) (a)[(i)] = (v)", "#define STORE_uchar(a, i, v) (a)[(i)] = (v) ? 1 : 0",
                    "static inline bool ne_float(float a, float b) { return isnan(a) || isnan(b) || a != b; }"]

    return Elements()


def _nonzero(x, m, out):
    for i in range(out.shape[0]):
        m[i] = x[i] != 0.0
        out[i] = x[i] * 2.0 if m[i] else -1.0


def test_a_dialect_reads_and_writes_array_elements_and_float_inequality_its_own_way(monkeypatch):
    from pygpgpu_translate import _dialects
    from pygpgpu_translate.target import Target, register_target
    try:
        devices = registry.backend_devices("opencl")
    except Exception as exc:  # noqa: BLE001 (any reason there is no OpenCL device)
        skip_no_device("opencl", f"no OpenCL device: {exc}")
    register_target(Target("elements", _element_dialect()))
    monkeypatch.setattr(devices[0].backend, "dialect", "elements")
    try:
        k = kernel(_nonzero)
        x = np.array([0.0, 1.5, np.nan, -0.0, 3.0], np.float32)
        args = (x, np.zeros(5, bool), np.zeros(5, np.float32))
        src = k.inspect(*args, backend="elements").source
        assert "STORE_uchar(m, " in src and "LOAD_uchar(m, " in src and "LOAD_float(x, " in src
        assert "STORE_float(out, " in src and "ne_float(LOAD_float(x, " in src
        got = [a.copy() for a in args]
        k[devices[0]](*got)
        want = [a.copy() for a in args]
        _nonzero(*want)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)
    finally:
        _dialects.DIALECTS.pop("elements", None)
        targets._reset_for_tests()
