#!/usr/bin/env python3
"""Mutation check: does the test suite notice when a rule of the translator, a cache key or a
fast path breaks?

Each entry of ``MUTATIONS`` is a one-line breakage of one rule (Python's float floor division,
modulo, weak typing, the sign proofs behind negative-index wraps, the bounds guards, the read/write
analysis...; a field of a cache key; a check that gnp's elementwise fast path, the launch memo or
the native launcher makes; read-only arrays, DLPack, kernel files, pickling, processes, the debug
mode, printing, device selection). The script copies ``packages/`` to a temporary folder, applies
one mutation at a time to the copy (never to the working tree: other people edit it), runs that
mutation's tests against the copy (``PYTHONPATH`` puts the copy in front of the editable installs; a
fresh ``PYGPGPU_CACHE_DIR`` per run, so no translation or binary built from other source is reused)
and reports which mutations survive. A mutation is *caught* when a test fails (or the run crashes or
hangs); a strict xfail that starts passing does not count. None may survive: when one does, add the
test that catches it. When a rule is added to the translator (or a field to a key, a check to a fast
path), add its mutation here.

Run on demand (it takes minutes; not part of CI):

    .venv/bin/python scripts/mutation_check.py            # every mutation, then a summary
    .venv/bin/python scripts/mutation_check.py --list     # names and rules only
    .venv/bin/python scripts/mutation_check.py -k guard   # the mutations whose name contains "guard"

Exit status: 0 when every mutation is caught, 1 when some survive, 2 when the unmutated copy
already fails its tests or a mutation's anchor text is no longer in the source (update it).
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TRANSLATE = "pygpgpu-translate/src/pygpgpu_translate"

FLOAT_DIV = "tests/test_translate_float_div.py"
PYSEM = "tests/test_translate_pysem.py"
FUZZ_TYPED = "tests/test_translate_fuzz.py::test_typed_integer_expressions_match_numpy"
FUZZ_INT32 = "tests/test_translate_fuzz.py::test_random_integer_expressions_match_python"
FUZZ_FLOAT = "tests/test_translate_fuzz.py::test_random_float_expressions_match_python"
INT_SEMANTICS = "tests/test_trust_int_semantics.py"
GUARDS = "tests/test_translate_guards.py"
NEG_INDEX = "tests/test_translate_negative_index.py"
CATALOGUE = "tests/test_translate_catalogue.py::test_execute"
SIGN_PROOFS = "tests/test_translate_sign_proofs.py"
GUARD_SIGNS = "tests/test_translate_guard_signs.py"
ACCESS_WORDS = "tests/test_translate_launch.py::test_access_analysis_reads_writes_aliases_atomics_helpers"
ACCESS_EFFECTS = "tests/test_translate_access_effects.py"
ROW_LOADS = "tests/test_lang_row_loads.py"
PY_SEMANTICS = "tests/test_lang_python_semantics.py"
TRUST_MORE = "tests/test_lang_trust_more.py"
ALIASING = "tests/test_trust_aliasing.py"
NATIVE = "tests/test_backend_native_launch.py"
NATIVE_REPEAT = "tests/test_opencl_native_repeat.py"
CORE_BACKEND = "pygpgpu-core/src/pygpgpu_core/backend"
CORE = "pygpgpu-core/src/pygpgpu_core"
ELEMENTWISE = f"{TRANSLATE}/array_ops/_elementwise.py"
WARM_COLD = "tests/test_warm_equals_cold.py"
KEYS = "tests/test_cache_keys.py"
VIEW_KEYS = "tests/test_cache_keys_view_staging.py"
READ_ONLY = "tests/test_gnp_readonly.py"
STAGING_KEY = "key = (id(v.buffer), v.offset, v.shape, v.strides, v.dtype)"


@dataclass(frozen=True)
class Mutation:
    name: str
    path: str              # relative to packages/
    old: str               # must occur exactly once in the file
    new: str
    tests: tuple           # pytest arguments (node ids, -k expressions) that must catch it
    rule: str              # what the mutation breaks


MUTATIONS = [
    # ---- Python float // and % (prelude/_pysem.py, CPython's float_divmod) ----
    Mutation("float-floordiv-rounding-step", f"{TRANSLATE}/prelude/_pysem.py",
             'f"{t} f; if (d != {zero}) {{ f = {m(\'floor\')}(d); if (d - f > {half}) f += {one}; }} "',
             'f"{t} f; if (d != {zero}) {{ f = {m(\'floor\')}(d); }} "',
             (FLOAT_DIV,), "float //: round floor((a - fmod(a, b)) / b) up when it lies more than 0.5 below"),
    Mutation("float-floordiv-sign-fix", f"{TRANSLATE}/prelude/_pysem.py",
             'f"if (m != {zero}) {{ if ((b < {zero}) != (m < {zero})) d -= {one}; }} "',
             'f"if (m != {zero}) {{ }} "',
             (FLOAT_DIV,), "float //: one less when the remainder and the divisor differ in sign"),
    Mutation("float-mod-sign-fix", f"{TRANSLATE}/prelude/_pysem.py",
             'f"if (m != {zero}) {{ if ((b < {zero}) != (m < {zero})) m += b; }} else',
             'f"if (m != {zero}) {{ }} else',
             (FLOAT_DIV,), "float %: the result takes the divisor's sign"),
    Mutation("float-mod-signed-zero", f"{TRANSLATE}/prelude/_pysem.py",
             "else {{ m = {m('copysign')}({zero}, b); }} ",
             "else {{ m = {m('copysign')}({zero}, a); }} ",
             (FLOAT_DIV,), "float %: a zero remainder has the divisor's sign"),
    Mutation("float-floordiv-by-zero", f"{TRANSLATE}/prelude/_pysem.py",
             'f"if (b == {zero}) return a / b; "',
             'f"if (b == {zero}) return {zero}; "',
             (FLOAT_DIV,), "float x // 0.0 is x / 0.0 (numpy), not 0"),
    # ---- Python integer // and % ----
    Mutation("int-floordiv-rounding", f"{TRANSLATE}/prelude/_pysem.py",
             'f"if (r != 0 && ((r < 0) != (d < 0))) {{ q -= 1; r += d; }} "',
             'f"if (r != 0 && ((r < 0) != (d < 0))) {{ r += d; }} "',
             (PYSEM, FUZZ_INT32), "int //: floors toward -inf, C truncates toward 0"),
    Mutation("int-mod-sign", f"{TRANSLATE}/prelude/_pysem.py",
             'f"if (r != 0 && ((r < 0) != (d < 0))) {{ q -= 1; r += d; }} "',
             'f"if (r != 0 && ((r < 0) != (d < 0))) {{ q -= 1; }} "',
             (PYSEM, FUZZ_INT32), "int %: the result takes the divisor's sign"),
    Mutation("int-floordiv-min-by-minus-one", f"{TRANSLATE}/prelude/_pysem.py",
             'body += f"return b == 0 ? ({t})0 : (b == -1 ? {negation(dialect, s)} : q);"',
             'body += f"return b == 0 ? ({t})0 : q;"',
             (PYSEM,), "int MIN // -1 wraps to MIN (numpy) instead of trapping or giving -MIN"),
    Mutation("int-division-by-zero", f"{TRANSLATE}/prelude/_pysem.py",
             'body += f"return b == 0 ? ({t})0 : (b == -1 ? {negation(dialect, s)} : q);"',
             'body += f"return b == -1 ? {negation(dialect, s)} : q;"',
             (PYSEM, "tests/test_translate_catalogue.py::test_integer_division_by_zero_does_not_crash"),
             "int x // 0 gives 0 like numpy (the C division runs on a safe divisor, its result is dropped)"),
    Mutation("python-min-nan-order", f"{TRANSLATE}/prelude/_pysem.py",
             '"pymin": "return b < a ? b : a;",', '"pymin": "return a < b ? a : b;",',
             (f"{CATALOGUE}", "-k", "nan_semantics"), "min(nan, 1.0) is nan, min(1.0, nan) is 1.0 (Python's order)"),
    Mutation("int-pow-negative-exponent", f"{TRANSLATE}/prelude/_pysem.py",
             "(a == -1 ? ((b & 1) ? ({t})-1 : ({t})1) : ({t})0)", "(a == -1 ? ((b & 1) ? ({t})1 : ({t})-1) : ({t})0)",
             (PYSEM,), "(-1) ** -3 is -1: integer powers with negative exponents as numpy wraps them"),
    Mutation("numpy-minimum-nan", f"{TRANSLATE}/prelude/_pysem.py",
             '"npminimum": "return (a != a || b != b) ? a + b : (b < a ? b : a);",',
             '"npminimum": "return b < a ? b : a;",',
             (f"{CATALOGUE}", "-k", "nan_semantics"), "np.minimum is NaN when either operand is"),
    Mutation("round-half-to-even", f"{TRANSLATE}/_calls.py",
             '            r = call_math(self, "rint", [x], node)', '            r = call_math(self, "round", [x], node)',
             (f"{CATALOGUE}", "-k", "round"), "round(2.5) is 2: Python rounds half to even"),
    Mutation("int-true-division", f"{TRANSLATE}/_expressions.py",
             '        if opname == "/":\n            if not t.is_float:\n',
             '        if opname == "/":\n            if False:\n',
             (f"{CATALOGUE}", "-k", "py_semantics or floor_div_mod"), "int / int is true division (a float)"),
    # ---- weak typing (_types.py) and narrow-integer wrap (_expressions.py) ----
    Mutation("weak-int-widens-narrow-ints", f"{TRANSLATE}/_types.py",
             "        if strong.kind == \"b\":\n            return Scalar(\"int32\") if weak.is_int else default_float\n"
             "        return strong\n",
             "        if strong.kind == \"b\":\n            return Scalar(\"int32\") if weak.is_int else default_float\n"
             "        return strong if strong.bits >= 32 or not strong.is_int else Scalar(\"int32\")\n",
             (FUZZ_TYPED, "-k", "int8 or int16"), "int8 + weak int literal stays int8 and wraps (NEP 50)"),
    Mutation("weak-float-with-int-array", f"{TRANSLATE}/_types.py",
             "            return default_float           # int32_array * 2.0 -> default float",
             "            return strong                  # int32_array * 2.0 -> default float",
             (f"{CATALOGUE}", "-k", "casts or py_semantics or mixed or floor_div", FUZZ_FLOAT),
             "int array * weak float is float math, not int"),
    Mutation("narrow-int-results-unwrapped", f"{TRANSLATE}/_expressions.py",
             "            return ir.Cast(e, e.type)\n        if ct.kind == \"i\" and",
             "            return e\n        if ct.kind == \"i\" and",
             (FUZZ_TYPED, "-k", "int8 or int16"), "int8/int16 arithmetic wraps like numpy (C computes it in int)"),
    Mutation("out-of-range-literal-wraps", f"{TRANSLATE}/_expressions.py",
             "                elif e.type.weak and isinstance(v, int) and not _fits(v, t):",
             "                elif False:",
             ("tests/test_translate_fuzz.py::test_out_of_range_literal_raises_overflow_error",),
             "a Python int literal that does not fit the type it meets raises OverflowError (NEP 50)"),
    Mutation("compare-by-value-dropped", f"{TRANSLATE}/_expressions.py",
             "            ct, known = self.by_value(self._CMPOPS[type(op)], left, right, ct)",
             "            known = None",
             ("tests/test_translate_fuzz.py::test_comparisons_with_out_of_range_scalars_follow_numpy", INT_SEMANTICS,
              "-k", "comparisons"), "a Python int compares with integer data by value (np.int8(5) < 300 is True)"),
    Mutation("compare-fold-direction", f"{TRANSLATE}/_expressions.py",
             '                if weak is left:                      # 300 > x reads as x < 300',
             '                if False:',
             (INT_SEMANTICS, "-k", "comparisons"), "-1 < uint64 data is True: a literal on the left mirrors the operator"),
    Mutation("loop-index-strong", f"{TRANSLATE}/_expressions.py",
             "        if node.id in self.index_names and isinstance(v, ir.Var):",
             "        if False:",
             ("tests/test_translate_fuzz.py::test_loop_index_is_weak_like_python", INT_SEMANTICS, "-k", "index"),
             "the loop index is weak in arithmetic with data (int8_data[i] + i stays int8, as on the host)"),
    Mutation("index-weak-inside-subscripts", f"{TRANSLATE}/_expressions.py",
             "        if self.index_depth or self.prog.index_type != INT32 or e.type != INT32:",
             "        if self.prog.index_type != INT32 or e.type != INT32:",
             (INT_SEMANTICS, "-k", "index_arithmetic"), "inside a subscript the index keeps the index type (a[i + off[i]])"),
    Mutation("divmod-items-swapped", f"{TRANSLATE}/_calls.py",
             'return TupleRef([self.binop("//", a, d, node), self.binop("%", a, d, node)])',
             'return TupleRef([self.binop("%", a, d, node), self.binop("//", a, d, node)])',
             (INT_SEMANTICS, "-k", "divmod"), "divmod(a, b) is (a // b, a % b)"),
    # ---- no undefined behaviour in C integer arithmetic (GPU compilers exploit it; PoCL happens not to) ----
    Mutation("narrow-mul-shift-in-int", f"{TRANSLATE}/_expressions.py",
             '            if isinstance(e, ir.Bin) and e.op in ("*", "<<"):\n',
             '            if False:\n',
             (INT_SEMANTICS, "-k", "undefined"), "int8/int16 * and << run in uint32 (ushort * ushort, -x << n overflow int)"),
    Mutation("signed-arithmetic-in-signed-type", f"{TRANSLATE}/_expressions.py",
             '        if ct.kind == "i" and isinstance(e, (ir.Bin, ir.Un)) and e.op in ("+", "-", "*", "<<"):',
             '        if False and isinstance(e, (ir.Bin, ir.Un)) and e.op in ("+", "-", "*", "<<"):',
             (INT_SEMANTICS, "-k", "undefined"), "int32/int64 + - * << and unary - run in the unsigned type"),
    Mutation("narrow-negation-in-int", f"{TRANSLATE}/_expressions.py",
             '            if isinstance(ct, Scalar) and ct.kind == "i" and ct.bits < 32:\n',
             '            if False:\n',
             (INT_SEMANTICS, "-k", "undefined"), "int8/int16 unary - goes through the prelude's pyneg (NVRTC 13.0 widened (short)-a wrongly)"),
    Mutation("narrow-negation-not-in-top-bits", f"{TRANSLATE}/prelude/_pysem.py",
             "    if bits(s) < 32:\n        shift = 32 - bits(s)",
             "    if False:\n        shift = 32 - bits(s)",
             (INT_SEMANTICS, "-k", "negations"), "abs, -a and MIN // -1 on int8/int16 negate in the top bits of a uint"),
    Mutation("shift-count-unchecked", f"{TRANSLATE}/_expressions.py",
             "        if count_in_range or (isinstance(cb, ir.Const) and 0 <= cb.value < ct.bits):",
             "        if True:",
             (FUZZ_TYPED, INT_SEMANTICS, "-k", "follow_numpy or typed"), "a shift count past the width gives 0 (numpy), not C's undefined result"),
    Mutation("shift-right-sign-fill", f"{TRANSLATE}/prelude/_pysem.py",
             'beyond = f"({t})0" if is_unsigned(s) else f"(a < 0 ? ({t})-1 : ({t})0)"',
             'beyond = f"({t})0"',
             (INT_SEMANTICS, "-k", "follow_numpy"), "a negative value shifted right by the width or more is -1"),
    Mutation("vector-shift-count-unmasked", f"{TRANSLATE}/_expressions.py",
             "            mask = ir.Const(base.bits - 1, base)",
             "            mask = ir.Const(-1, base)",
             (INT_SEMANTICS, "-k", "vector"), "vector shifts take the count modulo the bit width, as the host classes do"),
    Mutation("pow-products-unwrapped", f"{TRANSLATE}/_expressions.py",
             "                out = self.wrap_narrow(ir.Bin(\"*\", out, x, t))",
             "                out = ir.Bin(\"*\", out, x, t)",
             ("tests/test_translate_fuzz.py::test_power_and_invert_wrap_like_numpy",), "x ** 3 wraps after each product"),
    Mutation("invert-narrow-unwrapped", f"{TRANSLATE}/_expressions.py",
             '        return self.wrap_narrow(ir.Un("~", v, v.type))',
             '        return ir.Un("~", v, v.type)',
             ("tests/test_translate_fuzz.py::test_power_and_invert_wrap_like_numpy",), "~uint8(10) is 245"),
    # ---- negative indices and the sign proofs that skip their wrap ----
    Mutation('negative-index-wrap-dropped', f"{TRANSLATE}/_subscripts.py",
             'i = ir.Ternary(ir.Bin("<", i, ir.Const(0, it), BOOL), ir.Bin("+", i, arr.shape[k], it), i, it)',
             'i = ir.Ternary(ir.Bin("<", i, ir.Const(-(2**30), it), BOOL), ir.Bin("+", i, arr.shape[k], it), i, it)',
             (NEG_INDEX,), "a negative run-time index counts from the end"),
    Mutation('negative-constant-index', f"{TRANSLATE}/_subscripts.py",
             '            i = ir.Bin("+", arr.shape[k], ir.Const(i.value, it), it)',
             '            i = ir.Const(-i.value, it)',
             (f"{CATALOGUE}", "-k", "negative_constant", NEG_INDEX), "a[-1] is the last element"),
    Mutation("sign-proof-subtraction", f"{TRANSLATE}/_signs.py",
             "                return _difference_non_negative(a.a, a.b, known)",
             "                return _unsigned_of_non_negative(a.a, known) and _unsigned_of_non_negative(a.b, known)",
             (NEG_INDEX, SIGN_PROOFS), "i - k is not provably >= 0 (its index needs the wrap)"),
    Mutation("sign-proof-any-variable", f"{TRANSLATE}/_signs.py",
             "        return e.name in known\n", "        return True\n",
             (NEG_INDEX,), "only variables proven non-negative (loop counters, ids) skip the wrap"),
    Mutation("sign-proof-modulo-divisor", f"{TRANSLATE}/_signs.py",
             "        return is_non_negative(e.args[1], known)   # Python's % takes the divisor's sign",
             "        return True",
             (SIGN_PROOFS,), "x % n is >= 0 only for a non-negative divisor"),
    Mutation("sign-proof-narrowing-cast", f"{TRANSLATE}/_signs.py",
             "        return t.bits >= src.bits and is_non_negative(a, known)",
             "        return is_non_negative(a, known)",
             (SIGN_PROOFS,), "a value cast to fewer bits may turn negative"),
    # ---- bounds from loop starts and if guards (y - 1 in range(1, n), i - 1 under if i > 0) ----
    Mutation("sign-proof-guard-greater", f"{TRANSLATE}/_signs.py",
             '    if op == ">":\n        low = k + 1\n', '    if op == ">":\n        low = k + 2\n',
             (GUARD_SIGNS,), "if i > 0 proves i >= 1, not more (i - 2 still wraps)"),
    Mutation("sign-proof-guard-else-negated", f"{TRANSLATE}/_signs.py",
             "    op = c.op if holds else _NEGATED[c.op]", "    op = c.op",
             (GUARD_SIGNS,), "the else branch of if i > 0 knows i <= 0, not i >= 1"),
    Mutation("sign-proof-guard-disjunction", f"{TRANSLATE}/_signs.py",
             '    if (c.op == "&&" and holds) or (c.op == "||" and not holds):', '    if c.op in ("&&", "||"):',
             (GUARD_SIGNS,), "if a or b proves neither alone"),
    Mutation("sign-proof-guard-not-equal", f"{TRANSLATE}/_signs.py",
             'elif op == "!=" and lower_bound(ir.Var(name, None), known) == k:', 'elif op == "!=":',
             (GUARD_SIGNS,), "k != 0 proves k >= 1 only when k >= 0 is known"),
    Mutation("sign-proof-guard-reassigned", f"{TRANSLATE}/_statements.py",
             "if c in pynames and not stores_name(body, pynames[c])}", "if c in pynames}",
             (GUARD_SIGNS,), "a variable the branch assigns loses what its test proved"),
    Mutation("sign-proof-guard-scope", f"{TRANSLATE}/_statements.py",
             "                    lower.pop(n, None)\n", "                    pass\n",
             (GUARD_SIGNS,), "a bound holds inside its branch or loop only"),
    Mutation('sign-proof-loop-start', f"{TRANSLATE}/_loops.py",
             'lower_bound(start_c, fb.non_negative) if counts_up else None',
             '1 if counts_up else None',
             (GUARD_SIGNS,), "a range counter is at least its start, range(0, n) proves y >= 0 only"),
    Mutation("sign-proof-difference-bound", f"{TRANSLATE}/_signs.py",
             "    return c is not None and c >= 0 and low is not None and low >= c\n",
             "    return c is not None and c >= 0 and low is not None and low + 1 >= c\n",
             (GUARD_SIGNS, NEG_INDEX), "i - c is >= 0 only when i >= c is proven"),
    # ---- bounds guards ----
    Mutation("work-size-guard", f"{TRANSLATE}/_entry.py",
             'beyond = [ir.Bin(">=", ir.Cast(ir.WorkItem("global_id"',
             'beyond = [ir.Bin(">", ir.Cast(ir.WorkItem("global_id"',
             (GUARDS, "-k", "work_size"), "work items at or past gpu.work_size(...) return"),
    Mutation('range-guard', f"{TRANSLATE}/_loops.py",
             '        cond: ir.Expr = ir.Bin("<", gid[0], bounds[0], BOOL)',
             '        cond: ir.Expr = ir.Bin("<=", gid[0], bounds[0], BOOL)',
             (GUARDS, "-k", "range"), "a range() domain runs only items below its count"),
    Mutation('ndindex-guard', f"{TRANSLATE}/_loops.py",
             'cond = ir.Bin("<", ir.Var(fb.cname(names[0]), idx), bounds[0], BOOL)',
             'cond = ir.Bin("<=", ir.Var(fb.cname(names[0]), idx), bounds[0], BOOL)',
             (GUARDS, "-k", "ndindex or enumerate"), "np.ndindex / enumerate / ndenumerate domains stop at their shape"),
    # ---- read/write analysis (_access.py) and the upload rule: what is uploaded and copied back ----
    Mutation("covers-any-shape", f"{TRANSLATE}/_launch.py",
             "            a.shape == tuple(domain) if not covered", "            True if not covered",
             (f"{CATALOGUE}", "-k", "partial_write"), "an output skips its upload only when the domain writes all of it"),
    Mutation("access-loads-not-reads", f"{TRANSLATE}/_access.py",
             '        acc.setdefault(e.array.cname, set()).add("r")', '        acc.setdefault(e.array.cname, set()).add("w")',
             (ACCESS_EFFECTS, ACCESS_WORDS), "an array the kernel loads is read (uploaded, never copied back)"),
    Mutation("access-stores-not-writes", f"{TRANSLATE}/_access.py",
             '            acc.setdefault(s.array.cname, set()).add("w")', '            acc.setdefault(s.array.cname, set()).add("r")',
             (f"{CATALOGUE}", "-k", "saxpy or dtype_float32"), "an array the kernel stores to is copied back"),
    # (an atomic's "r" is also implied by the element address it loads: dropping only "r" is an equivalent mutant)
    Mutation("access-atomics-not-written", f"{TRANSLATE}/_access.py",
             '            acc.setdefault(name, set()).update("rw")', '            acc.setdefault(name, set()).update("r")',
             (ACCESS_WORDS, f"{CATALOGUE}", "-k", "atomics"), "an atomic's array is written (copied back)"),
    Mutation("access-helper-summary", f"{TRANSLATE}/_access.py",
             "acc.setdefault(a.cname, set()).update(helper.access.get(p.name, ()))",
             "acc.setdefault(a.cname, set())",
             (f"{CATALOGUE}", "-k", "helpers_with_array_params"), "arrays passed to helpers take the helper's access"),
    # ---- row vector loads (_row_loads.py) and numpy arguments sharing memory (_aliases.py) ----
    Mutation("row-loads-index-reassigned", f"{TRANSLATE}/_row_loads.py",
             "self.close(body, open_rows, [k for k, r in open_rows.items() if s.target.name in r.names])",
             "self.close(body, open_rows, [])",
             (ROW_LOADS, "-k", "reassigned"), "a row load ends where a variable of its row index is assigned"),
    Mutation("row-loads-alignment", f"{TRANSLATE}/_row_loads.py",
             "    if row.ref.type.align >= vector_bytes:", "    if True:",
             (ROW_LOADS, "-k", "foreign_memory or float4_dtype or unknown_alignment"),
             "a row loads as a vector unconditionally only where the signature promises its alignment"),
    Mutation("numpy-alias-one-copy", f"{TRANSLATE}/_aliases.py",
             "            if _same_view(a, b):", "            if False:",
             (ALIASING,), "a numpy array passed to several parameters is one device copy"),
    Mutation("numpy-overlap-raises", f"{TRANSLATE}/_aliases.py",
             "            if (writes or rep_writes) and _overlap(a, b):", "            if False:",
             (ALIASING, "-k", "overlapping"), "overlapping different views that the kernel writes raise"),
    # ---- Python's meanings of and/or, ~ of a bool and range loops (_expressions.py, _statements.py) ----
    Mutation('and-or-value-is-bool', f"{TRANSLATE}/_choices.py",
             '    if not as_test and any(not (isinstance(v.type, Scalar) and v.type.kind == "b") for v in operands):',
             '    if False:',
             (PY_SEMANTICS, "-k", "deciding_operand"), "x and 5 or 7 is 5 or 7, not True"),
    Mutation("invert-bool-as-int", f"{TRANSLATE}/_expressions.py",
             '            return ir.Un("!", v, BOOL)\n',
             '            return ir.Un("-", ir.Bin("+", self.convert(v, INT32), ir.Const(1, INT32), INT32), INT32)\n',
             (PY_SEMANTICS, "-k", "invert_of_a_bool"), "~mask[i] is numpy's logical not"),
    Mutation('loop-variable-is-the-c-counter', f"{TRANSLATE}/_loops.py",
             '    if stores_name(s.body, s.target.id) or _read_outside(fb.src.tree, s, s.target.id):',
             '    if False:',
             (PY_SEMANTICS, "-k", "loop_variable_is_pythons"), "k keeps the last item; assigning k does not steer the loop"),
    Mutation('range-bound-read-each-turn', f"{TRANSLATE}/_loops.py",
             '        if name is not None and (name == loop.target.id or stores_name(loop.body, name)):',
             '        if False:',
             (PY_SEMANTICS, "-k", "range_is_evaluated_once"), "range(n) is evaluated once, whatever the body does to n"),
    Mutation("python-number-math-in-float32", f"{TRANSLATE}/_calls.py",
             "        folded = _fold_python_numbers(b, node, args) if fn.__name__ in _FOLDED else None",
             "        folded = None",
             (PY_SEMANTICS, "-k", "folded_in_double"), "x_f64 * math.sqrt(2.0) is not multiplied by sqrt(2.0f)"),
    Mutation("weak-choice-converted-early", f"{TRANSLATE}/_expressions.py",
             "        if isinstance(e, ir.Ternary) and isinstance(e.type, Scalar) and e.type.weak:",
             "        if False:",
             (PY_SEMANTICS, "-k", "stay_double"), "x_f64 * (0.1 if c else 0.2) multiplies by the double 0.1"),
    Mutation('augmented-index-evaluated-twice', f"{TRANSLATE}/_assignments.py",
             '            if not any(isinstance(n, ast.Call) for n in ast.walk(e)):',
             '            if True:',
             (PY_SEMANTICS, "-k", "evaluates_its_index_once"), "x[f()] += 1 calls f once"),
    # ---- more of Python's meanings (tests/test_lang_trust_more.py) ----
    Mutation('private-index-out-of-range-unchecked', f"{TRANSLATE}/_subscripts.py",
             'and not -n <= i.value < n and not fb.dead_depth:',
             'and False:',
             (TRUST_MORE, "-k", "out_of_a_private_array"), "a[5] of a 4-element private array raises, as numpy does"),
    Mutation("dead-branch-index-raises", f"{TRANSLATE}/_expressions.py",
             "        dead = isinstance(cond, ir.Const) and bool(cond.value) != taken",
             "        dead = False",
             (TRUST_MORE, "-k", "never_runs"), "a[4] under if N > 4 with N = 4 never runs, so it is no error"),
    Mutation("counter-of-uint64-is-float64", f"{TRANSLATE}/_expressions.py",
             "        if not is_signed_and_uint64(a.type, b.type) or a.type.weak or b.type.weak:",
             "        if True:",
             (TRUST_MORE, "-k", "counter_of_uint64"), "acc = 0; acc += x_u64[j] is uint64, as numpy's 0 + uint64"),
    Mutation("int64-uint64-is-int64", f"{TRANSLATE}/_types.py",
             "    return Scalar(np.promote_types(a.dtype, b.dtype).name)\n",
             "    return Scalar(\"int64\" if {a.name, b.name} == {\"int64\", \"uint64\"} else np.promote_types(a.dtype, b.dtype).name)\n",
             (TRUST_MORE, "-k", "float64_and_compare"), "x_i64[i] + y_u64[i] is float64 as in numpy"),
    Mutation("int-uint64-compared-in-float64", f"{TRANSLATE}/_expressions.py",
             "            elif is_signed_and_uint64(left.type, right.type) and not (left.type.weak or right.type.weak):",
             "            elif False:",
             (TRUST_MORE, "-k", "float64_and_compare"), "int64 and uint64 compare exactly, as numpy 2 does"),
    Mutation('range-variable-always-non-negative', f"{TRANSLATE}/_loops.py",
             '    return ir.Const(0 if up else -1, t)\n',
             '    return ir.Const(0, t)\n',
             (TRUST_MORE, "-k", "below_zero"), "for k in range(-2, 3): x[k] reads x[-2] from the end"),
    Mutation("negative-power-of-minus-one", f"{TRANSLATE}/prelude/_pysem.py",
             "(a == -1 ? ((b & 1) ? ({t})-1 : ({t})1) : ({t})0)", "(a == -1 ? ({t})1 : ({t})0)",
             (TRUST_MORE, "-k", "negative_integer_power"), "(-1) ** -5 of numpy ints is -1, as documented"),
    Mutation("numpy-bools-add-as-ints", f"{TRANSLATE}/_expressions.py",
             '        if ta.kind == "b" and tb.kind == "b" and not (self.is_python_bool(a) and self.is_python_bool(b)):',
             "        if False:",
             (TRUST_MORE, "-k", "bools_add"), "mask[i] + mask[j] is True (numpy's or), not 2"),
    Mutation("python-comparison-is-numpy-bool", f"{TRANSLATE}/_expressions.py",
             "                c = self.python_bool(c)", "                pass",
             (TRUST_MORE, "-k", "bools_add"), "(i > 0) + (i > 1) of Python ints is 2, not True"),
    Mutation("python-bool-local-is-numpy-bool", f"{TRANSLATE}/_types.py",
             "        return t           # a Python bool stays one", "        return t.strong()  # a Python bool stays one",
             (TRUST_MORE, "-k", "bools_add"), "c = i > 0; c + c is 2"),
    Mutation("bool-call-is-numpy-bool", f"{TRANSLATE}/_calls.py",
             "        return self.python_bool(self.truth(x, node))", "        return self.truth(x, node)",
             (TRUST_MORE, "-k", "bools_add"), "bool(a) + bool(b) is 2 (Python bools)"),
    Mutation('tuple-loop-item-is-a-local', f"{TRANSLATE}/_loops.py",
             '    return (kinds in ({"i"}, {"f"}) and fb.store_counts.get(name) == 1',
             '    return (False and fb.store_counts.get(name) == 1',
             (TRUST_MORE, "-k", "tuple_of_numbers"), "for w in (0.1, 0.3): p * w of float64 data multiplies by the double 0.1"),
    Mutation("counter-arithmetic-meets-uint64-as-numpy", f"{TRANSLATE}/_expressions.py",
             "        return _arithmetic_of(e, names) or is_non_negative(e, self.non_negative)",
             "        return isinstance(e, ir.Var) and e.name in names or is_non_negative(e, self.non_negative)",
             (TRUST_MORE, "-k", "counter_of_uint64"), "h = h * 31 + x_u64[j] with h = 0 first is uint64"),
    Mutation("math-isnan-is-numpy-bool", f"{TRANSLATE}/_calls.py",
             "    return c if c is None else self.python_bool(c)", "    return c",
             (TRUST_MORE, "-k", "bools_add"), "math.isfinite(a) + math.isfinite(b) is 2 (Python bools)"),
    Mutation("module-helper-not-watched", f"{TRANSLATE}/_expressions.py",
             "                    if lookup_object(value) is None:      # mod.helper: rebinding it retranslates, as for a global",
             "                    if False:",
             ("tests/test_trial_kernel_runtime.py", "-k", "rebound"), "mod.f rebound after the first call is called anew"),
    Mutation("python-bool-argument-is-numpy-bool", f"{TRANSLATE}/_signature.py",
             '        return KernelParamSpec(name, "scalar", Scalar("bool", weak=True))',
             '        return KernelParamSpec(name, "scalar", Scalar("bool"))',
             ("tests/test_lang_trust_more.py", "-k", "bool_arguments"), "a Python bool argument adds as an int: flag + flag is 2"),
    # ---- gnp: a fill of part of a buffer (g[0] of a matrix) writes only its own bytes ----
    Mutation("gnp-prefix-fills-whole-buffer", "pygpgpu-core/src/pygpgpu_core/gnp/_array.py",
             "        if type(self) is not DeviceArray or not self._covers_allocation():",
             "        if type(self) is not DeviceArray:",
             ("tests/test_gnp_numpy_parity.py", "-k", "prefix"), "g[0] = 5 of a matrix leaves the other rows"),
    # ---- read-only device arrays (numpy's WRITEABLE flag): views inherit it, written kernel parameters refuse it ----
    Mutation("gnp-readonly-views-inherit", "pygpgpu-core/src/pygpgpu_core/gnp/_array.py",
             "            a._readonly = base._readonly", "            a._readonly = False",
             ("tests/test_gnp_readonly.py", "-k", "views_have or every_write"),
             "g[1:] of a read-only array is read-only, and writing through it raises"),
    Mutation("kernel-readonly-written-argument", "pygpgpu-translate/src/pygpgpu_translate/_launch.py",
             "            if pos in plan.written:      # refused before the launch (LaunchPlan.read_only)",
             "            if False:",
             ("tests/test_gnp_readonly.py", "-k", "kernel_refuses"),
             "a @kernel writing a read-only gnp array raises before launching"),
    # ---- the native launcher (C): what it packs, and what it hands back to the Python launcher ----
    Mutation("native-int32-range", f"{CORE_BACKEND}/_native_launch.c",
             "case 'i': if (v < INT32_MIN || v > INT32_MAX) return -1;", "case 'i':",
             (NATIVE, "-k", "refuses"), "an int past a parameter's range is the Python launcher's error, not truncated"),
    Mutation("native-closed-kernel", f"{CORE_BACKEND}/_native_launch.c",
             "    if (func == NULL) return hand_over(self, args);", "",
             (NATIVE, "-k", "closed"), "a kernel whose program closed is not launched (the Python launcher raises)"),
    Mutation("native-float16-bits", f"{CORE_BACKEND}/_native_launch.c",
             ": PyFloat_Pack2(v, (char *)slot, 1);", ": PyFloat_Pack4(v, (char *)slot, 1);",
             (NATIVE, "-k", "packs_every_scalar"), "a float16 argument is packed as IEEE half"),
    Mutation("native-repeat-same-arguments", f"{CORE_BACKEND}/_native_launch.c",
             "        if (value != PyList_GET_ITEM(self->last, i)) return 0;", "",
             (NATIVE_REPEAT, "-k", "count"), "OpenCL's C repeat only takes a launch whose arguments are all set already"),
    Mutation("native-repeat-closed-buffer", f"{CORE_BACKEND}/_native_launch.c",
             "            if (closed) { PyErr_Clear(); return 0; }", "",
             (NATIVE_REPEAT, "-k", "closed"), "OpenCL's C repeat hands a closed Buffer to the Python launcher, which raises"),
    # ---- gnp's elementwise fast path: what it checks before skipping the full path ----
    Mutation("gnp-fast-path-read-only-out", ELEMENTWISE, "                            or out._readonly):",
             "                            or False):",
             (READ_ONLY, WARM_COLD, "-k", "(every_write and warm) or (elementwise and read_only)"),
             "a read-only out= refuses on the warm path too (np.add(a, 1, out=ro) after a writable call)"),
    Mutation('gnp-fast-path-broadcasts', ELEMENTWISE,
             'elif x._shape != first._shape or x.buffer.context is not first.buffer.context:',
             'elif x.buffer.context is not first.buffer.context:',
             (WARM_COLD, "-k", "elementwise and broadcast"), "operands of other shapes broadcast, warm as cold"),
    Mutation("gnp-fast-path-float32-range", ELEMENTWISE,
             'if dt.kind != "f" or (dt.itemsize == 4 and not -_F32_MAX <= x <= _F32_MAX):', 'if dt.kind != "f":',
             (WARM_COLD, "-k", "elementwise and past_float32"), "a Python float past float32 converts as numpy does, warm as cold"),
    Mutation("gnp-fast-path-int-range", ELEMENTWISE, "if info is None or not info[0] <= x <= info[1]:",
             "if info is None:", (WARM_COLD, "-k", "elementwise and (past_int8 or negative or huge)"),
             "a Python int past the array's type raises numpy's OverflowError, warm as cold"),
    # ---- view staging: views reach a kernel as contiguous copies, equal views share one ----
    Mutation("view-staging-key-strides", f"{TRANSLATE}/_kernel.py", STAGING_KEY,
             "key = (id(v.buffer), v.offset, v.shape, v.dtype)", (VIEW_KEYS,),
             "g[0:12:2] and g[0:18:3] (same start, shape, dtype) get a copy each"),
    Mutation("view-staging-key-offset", f"{TRANSLATE}/_kernel.py", STAGING_KEY,
             "key = (id(v.buffer), v.shape, v.strides, v.dtype)", (VIEW_KEYS,), "g[0::2] and g[1::2] get a copy each"),
    Mutation("view-staging-key-dtype", f"{TRANSLATE}/_kernel.py", STAGING_KEY,
             "key = (id(v.buffer), v.offset, v.shape, v.strides)", (VIEW_KEYS,),
             "g[::2] and g.view(np.int32)[::2] get a copy each"),
    Mutation("view-staging-key-shape", f"{TRANSLATE}/_kernel.py", STAGING_KEY,
             "key = (id(v.buffer), v.offset, v.strides, v.dtype)", (VIEW_KEYS,), "g[0:12:2] and g[0:8:2] get a copy each"),
    Mutation("view-staging-key-buffer", f"{TRANSLATE}/_kernel.py", STAGING_KEY,
             "key = (v.offset, v.shape, v.strides, v.dtype)", (VIEW_KEYS,), "views of two arrays get a copy each"),
    # ---- the launch memo ----
    Mutation("memo-int-range-unchecked", f"{TRANSLATE}/_memo.py",
             'lines += [f"        if not {lo} <= {a} <= {hi}:", "            return False"]', "pass",
             ("tests/test_launch_memo.py", WARM_COLD, "-k", "past_int32 or range_checked or memo_warm"),
             "an int past the kept call's int32 token misses the memo (no false refusal, no truncation)"),
    Mutation("memo-equal-int-misses", f"{TRANSLATE}/_memo.py", 'same = f"(type({a}) is not T{i} or {a} != S[{slot}])"',
             'same = "True"', ("tests/test_launch_memo.py", "-k", "equal_int"),
             "an equal int that is another object (int('700') twice) hits the memo"),
    Mutation("memo-read-only-after-keep", f"{TRANSLATE}/_memo.py", 'own += f" or {a}._readonly"', 'own += ""',
             (READ_ONLY, "-k", "kernel"), "an array made read-only after its call was kept is refused"),
    # ---- DLPack ----
    Mutation("dlpack-byte-offset-ignored", f"{CORE}/gnp/_dlpack.py", "ptr = (t.data or 0) + int(t.byte_offset)",
             "ptr = t.data or 0", ("tests/test_gnp_dlpack_offsets.py",), "a device tensor's data starts at data + byte_offset"),
    # ---- kernel files ----
    Mutation("kernel-file-key-driver-version", f"{CORE}/kernel_files/_program.py",
             'version, *self.options, *getattr(context, "own_build_options", ()))',
             '*self.options, *getattr(context, "own_build_options", ()))',
             (KEYS, "-k", "kernel_file"), "a binary kept beside a kernel file is rebuilt after a driver update"),
    Mutation("kernel-file-key-build-options", f"{CORE}/kernel_files/_program.py",
             'version, *self.options, *getattr(context, "own_build_options", ()))', "version, *self.options)",
             (KEYS, "-k", "kernel_file"), "the options a backend adds to every build (PoCL's device define) are in the key"),
    Mutation("kernel-file-stub-keyword-names", f"{CORE}/kernel_files/_stub.py",
             'f"{kw}: {_param_annotation(p.type)}" for kw, p in', 'f"{p.name}: {_param_annotation(p.type)}" for kw, p in',
             ("tests/test_kernel_file_stub_keywords.py",), "a parameter named lambda is lambda_ in the .pyi"),
    Mutation("kernel-file-keyword-parameters", f"{CORE}/kernel_files/_names.py",
             'return c_name + "_" if keyword.iskeyword(c_name) or c_name in _TAKEN else c_name', "return c_name",
             ("tests/test_kernel_file_stub_keywords.py",), "a kernel file with a parameter named in imports"),
    Mutation("kernel-file-read-only-pointer", f"{CORE}/kernel_files/_args.py",
             'if not self.read_only and getattr(value, "_readonly", False):', "if False:",
             (READ_ONLY, "-k", "kernel_file"), "a non-const pointer refuses a read-only device array"),
    # ---- binary caches of @kernel and the generated-source cache ----
    Mutation("cuda-key-driver-version", "pygpgpu-cuda/src/pygpgpu_cuda/_program.py", "drv, __version__)",
             "__version__)", (KEYS, "-k", "cuda"), "a CUBIN is rebuilt after a driver update"),
    Mutation("hip-key-compiler", "pygpgpu-hip/src/pygpgpu_hip/compiler.py",
             "compiler_identity(kind), arch, tuple(opts), source)", "arch, tuple(opts), source)",
             (KEYS, "-k", "hip"), "a code object is rebuilt by another HIP compiler"),
    Mutation("opencl-key-driver-version", "pygpgpu-opencl/src/pygpgpu_opencl/_program.py",
             "        device.driver_version,\n", "", (KEYS, "-k", "opencl_program"),
             "an OpenCL binary is rebuilt after a driver update"),
    Mutation("translate-key-signature", f"{TRANSLATE}/_translate.py", "repr(sig_key), dialect_name,", "dialect_name,",
             (KEYS, "-k", "translation_key"), "another argument signature is another generated source"),
    Mutation("translate-key-debug", f"{TRANSLATE}/_translate.py",
             '"bounds-checked" if bounds_check else "", "fast-math"', '"", "fast-math"',
             (KEYS, "-k", "translation_key"), "a debug (bounds-checked) source is cached apart"),
    Mutation("translate-key-closure", f"{TRANSLATE}/_translate.py", "closure_fingerprint(func, _fingerprint_text))",
             '"")', (KEYS, "-k", "translation_key"), "another value of a captured variable is another source"),
    # ---- the disk cache's size bound and clearing ----
    Mutation("cache-young-temp-file-deleted", f"{CORE}/_cachesize.py",
             'if entry.name.startswith(".tmp-") and now - st.st_mtime < _TEMP_GRACE:', "if False:",
             ("tests/test_caches_temp_files.py",), "trim and clear leave another process's write in progress alone"),
    Mutation("cache-trim-newest-first", f"{CORE}/_cachesize.py", "for _mtime, size, path in sorted(entries):",
             "for _mtime, size, path in sorted(entries, reverse=True):", ("tests/test_caches_temp_files.py",),
             "trimming deletes the least recently used entries first"),
    # ---- pickling kernels by value ----
    Mutation("pickle-by-value-drops-debug", f"{TRANSLATE}/_pickling.py", '"debug": kf.debug,', '"debug": False,',
             ("tests/test_pickling_options.py",), "an unpickled @kernel(debug=True) still checks bounds"),
    Mutation("pickle-by-value-drops-fastmath", f"{TRANSLATE}/_pickling.py", '"fastmath": kf.fastmath,',
             '"fastmath": False,', ("tests/test_pickling_options.py",), "an unpickled fastmath kernel stays fastmath"),
    Mutation("pickle-by-value-key-ignores-options", f"{TRANSLATE}/_pickling.py",
             "+ repr(sorted(options.items())).encode()).digest()", ").digest()", ("tests/test_pickling_options.py",),
             "one function pickled as a debug and as a plain kernel unpickles as two kernels"),
    # ---- processes ----
    Mutation("forked-error-loses-fields", f"{CORE}/forking.py", "return (type(self), (self.backend, self.what))",
             "return (type(self), (self.backend,))", ("tests/test_processes.py", "-k", "pickles or fork_pool"),
             "ForkedProcessError crosses a process boundary with its class, message and fields"),
    # ---- debug mode ----
    Mutation("debug-reports-last-axis", f"{TRANSLATE}/_bounds.py", "for k in reversed(range(n)):", "for k in range(n):",
             ("tests/test_debug_first_axis.py",), "a[5, 7] of a (2, 3) array names axis 0, as numpy does"),
    Mutation("debug-negative-index-unwrapped", f"{TRANSLATE}/_bounds_host.py", "index -= extents[dim]",
             "index += 0", ("tests/test_debug_first_axis.py",), "a[-3, 0] of a (2, 3) array reports index -3"),
    # ---- printing ----
    Mutation("print-minus-sign-left-justifies", f"{TRANSLATE}/_print.py", '(m["sign"] if m["sign"] != "-" else "")',
             'm["sign"]', ("tests/test_print_format_flags.py",), 'f"{x:-5d}" right-aligns (- is the default sign)'),
    # ---- device selection ----
    Mutation("probe-order-alphabetical", f"{CORE}/registry.py",
             "return [n for n in PROBE_ORDER if n in names] + sorted(names - set(PROBE_ORDER))", "return sorted(names)",
             ("tests/test_registry_probe_order.py",), "cuda, hip, opencl are probed before plug-ins"),
    # ---- the read/write analysis ----
    Mutation("access-else-branch-unseen", f"{TRANSLATE}/_access.py", "            _walk_stmts(s.orelse, acc)",
             "            pass", ("tests/test_translate_access_branches.py",),
             "an array read or written only in an else/elif branch is uploaded / read back"),
    # ---- more keys and fast-path checks ----
    Mutation('gnp-fast-path-key-out-dtype', ELEMENTWISE,
             'entry = _fast.get((name, tuple(sig), None if out is None else out._dtype, id(device), id(ctx)))',
             'entry = _fast.get((name, tuple(sig), None, id(device), id(ctx)))',
             (WARM_COLD, "-k", "fast_path_key"), "np.add(g, 1.5, out=float64_array) after np.add(g, 1.5) writes float64"),
    Mutation("translation-memory-key-bits", f"{TRANSLATE}/_kernel.py",
             "key = (dialect, tokens, bits, self.debug,", "key = (dialect, tokens, self.debug,",
             (KEYS, "-k", "memory_key"), "a 64-bit-index translation is kept apart from the 32-bit one"),
    Mutation("translate-key-default-float", f"{TRANSLATE}/_translate.py", "default_float.name, index_bits,",
             "index_bits,", (KEYS, "-k", "translation_key"), "@kernel(default_float='float64') is another source"),
    Mutation("memo-int-past-int32-refused", f"{TRANSLATE}/_memo.py",
             'lines += [f"        if not {lo} <= {a} <= {hi}:", "            return False"]',
             'lines += [f"        if not {lo} <= {a} <= {hi}:", "            raise OverflowError(\'int32\')"]',
             ("tests/test_launch_memo.py", "-k", "past_int32"),
             "an int past int32 after a kept int32 call is not refused when it fits the data"),
    Mutation("probe-takes-first-installed", f"{CORE}/registry.py", "if _try_devices(name):", "if True:",
             ("tests/test_registry_probe_order.py",), "the default backend is the first with a device"),
    Mutation("cache-key-package-version", f"{CORE}/cache.py", "h.update(PACKAGE_VERSION.encode())", "pass",
             (KEYS, "-k", "digest"), "another pygpgpu version never reads this one's cached binaries"),
    Mutation("cache-key-parts-run-together", f"{CORE}/cache.py", 'h.update(len(data).to_bytes(8, "little"))',
             "pass", (KEYS, "-k", "digest"), 'cache_key("ab", "c") differs from cache_key("a", "bc")'),
    Mutation("small-batch-key-mapped-max", f"{CORE}/gnp/_staging.py", "batch = self._free.pop((key, mapped_max), None)",
             "batch = self._free.pop((key, None), None)", (KEYS, "-k", "small_batch"),
             "a staging layout kept in host-mapped memory is not lent for another mapped_max"),
    Mutation("translate-key-contract", f"{TRANSLATE}/_translate.py", '"" if contract else "no-contract",', '"",',
             (KEYS, "-k", "translation_key"), "a @kernel(contract=False) source is cached apart"),
    Mutation("pickle-by-value-drops-contract", f"{TRANSLATE}/_pickling.py", '"contract": kf.contract,',
             '"contract": True,', ("tests/test_pickling_options.py",), "an unpickled contract=False kernel stays so"),
    Mutation("native-argument-count", f"{CORE_BACKEND}/_native_launch.c",
             "if (!PyTuple_CheckExact(values) || PyTuple_GET_SIZE(values) != self->nargs) {",
             "if (!PyTuple_CheckExact(values)) {", (NATIVE, "-k", "hundredth"),
             "a call with too many or too few arguments is the Python launcher's error, warm as cold"),
    # this session's kernel-language additions (issue 31) and trust fixes (issue 30)
    Mutation("subgroup-shuffle-xor-lane", f"{TRANSLATE}/prelude/_subgroups.py",
             '"shuffle_xor": ("me ^ (uint)k", "((me & 31u) ^ (uint)k) < 32u"),',
             '"shuffle_xor": ("base | ((uint)k & 31u)", "((me & 31u) ^ (uint)k) < 32u"),',
             ("tests/test_lang_subgroups.py", "-k", "model"), "OpenCL's emulated shuffle_xor reads lane ^ mask"),
    Mutation("subgroup-down-past-the-run", f"{TRANSLATE}/prelude/_subgroups.py",
             '"k >= 0 && (me & 31u) + (uint)k < 32u"', '"k >= 0"',
             ("tests/test_lang_subgroups.py", "-k", "model"), "shuffle_down past the 32nd lane keeps the caller's value"),
    Mutation("subgroup-early-return", f"{TRANSLATE}/_entry.py", 'and "subgroups" not in prog.features):', "):",
             ("tests/test_lang_subgroups.py", "-k", "keeps_every"),
             "a subgroup kernel keeps the work items past the end (they take part in the exchange)"),
    Mutation("contract-off-pragma", f"{TRANSLATE}/_dialects.py", 'lines.append("#pragma OPENCL FP_CONTRACT OFF")',
             "pass", ("tests/test_lang_ports.py", "-k", "contraction"), "contract=False reaches OpenCL C"),
    Mutation("global-ids-order", f"{TRANSLATE}/_calls.py",
             "ir.Cast(ir.WorkItem(b.key, n - 1 - k, INT64), self.prog.index_type) for k in range(n)",
             "ir.Cast(ir.WorkItem(b.key, k, INT64), self.prog.index_type) for k in range(n)",
             ("tests/test_lang_ports.py", "-k", "global_ids"), "gpu.global_ids(2) is in array order, as np.ndindex"),
    Mutation("launch-local-bytes", f"{TRANSLATE}/_launch.py", "return LocalMemory(n * itemsize)", "return LocalMemory(n)",
             ("tests/test_lang_oclgrind_ports.py", "-k", "clean"), "a launch-sized local array holds n elements, not n bytes"),
    Mutation("module-array-capture", f"{TRANSLATE}/_captures.py", "return closure_cells(func) + global_array_cells(func)",
             "return closure_cells(func)", ("tests/test_lang_ports.py", "-k", "module"),
             "a kernel takes the module-level arrays it names"),
    Mutation('component-store-keeps-others', f"{TRANSLATE}/_assignments.py",
             'comps = [fb.comp(old, k) for k in range(base.type.width)]',
             'comps = [ir.Const(0, base.type.base) for k in range(base.type.width)]',
             ("tests/test_lang_ports.py", "-k", "component"), "v.x = ... keeps v's other components"),
    Mutation("log-places-named", f"{CORE}/cdecl/_source.py", "return _UNNAMED_PLACE_RE.sub(named, log)", "return log",
             ("tests/test_import_opencl.py", "-k", "program_text"), "a log naming <kernel>:N: is given the file's places"),
    # ---- targets as plug-ins (issue 34), complex and float16 in gnp (issue 32), fast math (issue 33) ----
    Mutation("target-reserved-words", f"{TRANSLATE}/_dialects.py", "        RESERVED.add_words(dialect.reserved_words)",
             "        pass", ("tests/test_target_plugin.py",), "a target's reserved words are renamed away in kernels"),
    Mutation("target-implicit-values", f"{TRANSLATE}/_emit.py",
             "                args += [name for _type, name in self.d.implicit_values(reads)]", "                pass",
             ("tests/test_target_plugin.py",), "a helper reading the thread id gets it passed on every call"),
    Mutation("target-vector-views", f"{TRANSLATE}/_translate.py", "bounds_check, dialect.vector_views, wide)",
             "bounds_check, True, wide)", ("tests/test_target_plugin.py",),
             "a language without pointer casts gets no wide kernels or row loads"),
    Mutation("target-namespaces-unloaded", f"{CORE}/targets.py",
             "        return {t.namespace for t in _targets.values()} | (set(_scan()) - set(_targets))",
             "        return {t.namespace for t in _targets.values()}", ("tests/test_target_plugin.py", "-k", "namespaces"),
             "an entry-point target's cache namespace is known before it is loaded"),
    Mutation("mempool-zero-copy-default", f"{CORE}/mempool.py",
             'if block.host is None or not option(block.buffer, "zero_copy"):',
             'if block.host is None or not getattr(block.buffer, "zero_copy", True):',
             ("tests/test_capability_defaults.py",), "capability defaults are the protocol's (zero_copy: False)"),
    Mutation("complex-multiply-fma", f"{TRANSLATE}/array_ops/_complex_ufuncs.py",
             '_MULTIPLY = "    return {M}(funcs.fma(a.real, b.real, -(a.imag * b.imag)), funcs.fma(a.real, b.imag, a.imag * b.real))\\n"',
             '_MULTIPLY = "    return {M}(a.real * b.real - a.imag * b.imag, a.real * b.imag + a.imag * b.real)\\n"',
             ("tests/test_gnp_complex.py", "-k", "binary_arithmetic"), "complex multiply rounds as numpy's loop (two FMAs)"),
    Mutation("complex-sort-nan-imag", f"{TRANSLATE}/array_ops/_complex_ufuncs.py",
             '"        return a.imag == a.imag or b.imag != b.imag\\n"', '"        return True\\n"',
             ("tests/test_gnp_complex.py", "-k", "sort"), "complex sort puts NaN imaginary parts where numpy does"),
    Mutation("half-rounds-to-nearest", f"{TRANSLATE}/array_ops/_half_kernels.cl",
             "__global half* dst, const long n) {\n    long i = get_global_id(0);\n    if (i < n) vstore_half_rte(src[i], i, dst);\n}\n\n#pragma",
             "__global half* dst, const long n) {\n    long i = get_global_id(0);\n    if (i < n) vstore_half_rtz(src[i], i, dst);\n}\n\n#pragma",
             ("tests/test_gnp_half.py", "-k", "bit_for_bit"), "float16 results round to nearest even, as numpy's"),
    Mutation("complex-imag-view-offset", f"{CORE}/gnp/_complex_parts.py",
             'offset = a.offset + (part.itemsize if which == "imag" else 0)',
             'offset = a.offset + (part.itemsize if which == "real" else 0)',
             ("tests/test_gnp_complex.py", "-k", "real or imag"), "a.imag views the second half of each element"),
    Mutation("cuda-fast-math-ptxas", f"{TRANSLATE}/_dialects.py",
             'fast_math_options: tuple[str, ...] = ("--use_fast_math", "--ptxas-options=-O3")',
             'fast_math_options: tuple[str, ...] = ("--use_fast_math",)',
             ("tests/test_fastmath.py", "-k", "per_dialect"),
             "CUDA fast math names a ptxas option (NVRTC 13.0 ignores the flags in a CUBIN build without one)"),
    # ---- the CallPlan and launch generator (issue 33 item 1), typing worklist (issue 34), gnp speed ----
    Mutation("call-plan-sealed", f"{TRANSLATE}/_launch.py",
             'if name not in _SETTABLE and self.__dict__.get("_sealed"):', "if False:",
             ("tests/test_call_plan.py",), "a plan's facts cannot be set after its constructor"),
    Mutation("call-plan-narrow", f"{TRANSLATE}/_launch.py", "        self.narrow = bits == 32",
             "        self.narrow = False", ("tests/test_call_plan.py",), "a 32-bit plan refuses a larger domain"),
    Mutation("arg-kind-declared-dtype", f"{CORE_BACKEND}/args.py",
             "declared = dtype_attr if isinstance(dtype_attr, np.dtype) else None", "declared = None",
             ("tests/test_backend_arg_kinds.py",), "an argument kind keeps its declared layout (float3 = 16 bytes)"),
    Mutation("opencl-aggregate-kind", "pygpgpu-opencl/src/pygpgpu_opencl/_kernel.py",
             "aggregate = kind.ctype if kind.dtype is None else None", "aggregate = None",
             ("tests/test_backend_arg_kinds.py",), "OpenCL sets struct arguments by their ctypes class"),
    Mutation("fastpath-extra", f"{CORE_BACKEND}/fastpath.py", "    if recipe.extra:", "    if False:",
             ("tests/test_fastpath.py", "tests/test_backend_launch_again.py"), "a launch recipe's extra lines are generated"),
    Mutation("infer-reruns-changed", f"{TRANSLATE}/_infer.py", "for name in fb.changed:", "for name in ():",
             ("tests/test_translate_inference_chains.py",), "the worklist re-runs what read a changed type"),
    Mutation("final-pass-fallback", f"{TRANSLATE}/_builder.py", "if out is None or self.changed:", "if out is None:",
             ("tests/test_translate_inference_chains.py",), "an early final pass that changes a type is dropped"),
    Mutation("races-reachability", f"{TRANSLATE}/_races.py", "todo.extend(readers.get(name, ()))", "pass",
             ("tests/test_trust_shared_stores.py", "tests/test_translate_inference_chains.py"),
             "a value varying along a chain of locals is varying"),
    Mutation("single-pass-counter-reset", f"{TRANSLATE}/array_ops/_reduction.py", "            counter[row] = 0",
             "            counter[row] = counter[row]", ("tests/test_gnp_reduce_warm.py", "-k", "single_pass"),
             "a one-launch reduction resets its row counter for the next call"),
    Mutation("mask-select-place", f"{TRANSLATE}/array_ops/_scan.py", "out[cs[i] - 1] = x[i]", "out[cs[i]] = x[i]",
             ("tests/test_gnp_mask_select.py",), "g[mask] puts each selected element at its count"),
    Mutation("stacked-matmul-first", f"{TRANSLATE}/array_ops/_matmul_stacked.py", "    z = first + gpu.get_group_id(2)",
             "    z = gpu.get_group_id(2)", ("tests/test_gnp_matmul_stacked.py",), "a long stack's later launches start at their first matrix"),
    # ---- gnp on the operands' device, numpy-version answers, sub-group paths ----
    Mutation("operand-device-scope", f"{CORE}/gnp/_operand_device.py",
             "if dev is None or (scopes[-1] is dev if scopes else dev is LAST_DEFAULT[0]):", "if True:",
             ("tests/test_gnp_operand_device.py",), "gnp temporaries land on the operands' device"),
    Mutation("cross-numpy-2-5", f"{CORE}/gnp/_cross.py", "if (na == 2 or nb == 2) and _TWO_COMPONENTS_REMOVED:",
             "if False:", ("tests/test_gnp_cross.py", "-k", "raise_as_numpy_2_5"),
             "2-component cross raises ValueError beside numpy 2.5"),
    Mutation("native-subgroups-gpu-only", f"{TRANSLATE}/prelude/_subgroups.py",
             'dialect != "opencl" or not getattr(device, "is_gpu", False)', 'dialect != "opencl"',
             ("tests/test_subgroups_native.py",), "CPU OpenCL devices emulate 32-lane sub-groups"),
    # ---- the WGSL target (packages/pygpgpu-webgpu; lavapipe runs it here) ----
    Mutation("wgsl-int-floordiv", "pygpgpu-webgpu/src/pygpgpu_webgpu/_prelude.py",
             '"if (r != 0 && ((r < 0) != (b < 0))) { q = q - 1; }"', '"if (r != 0 && ((r < 0) != (b < 0))) { q = q + 1; }"',
             ("tests/test_webgpu_kernels.py",), "WGSL int // floors toward -inf"),
    Mutation("wgsl-exact-fmod-halving", "pygpgpu-webgpu/src/pygpgpu_webgpu/_prelude.py",
             "if (d > r) {{ d = d * {t}(0.5); }}", "if (d > r) {{ d = d * {t}(0.25); }}",
             ("tests/test_webgpu_kernels.py",), "WGSL float % by exact long division"),
    Mutation("wgsl-atomic-inc", "pygpgpu-webgpu/src/pygpgpu_webgpu/_prelude.py",
             '"inc": "atomicAdd({0}, {one})"', '"inc": "atomicSub({0}, {one})"',
             ("tests/test_webgpu_kernels.py",), "WGSL atomic_inc adds one"),
    Mutation("wgsl-atomic-plain-read", f"{TRANSLATE}/_emit.py",
             "return self.d.atomic_load(element) if e.array.cname in self.atomic_arrays else element",
             "return element", ("tests/test_webgpu_kernels.py", "tests/test_target_example_hooks.py"),
             "plain reads of an atomically updated array go through the dialect's atomic load"),
    Mutation("wgsl-uint-divide-by-zero", "pygpgpu-webgpu/src/pygpgpu_webgpu/_prelude.py",
             "return f\"return select(a {'/' if op == 'pyfloordiv' else '%'} b, 0u, b == 0u);\"",
             "return f\"return a {'/' if op == 'pyfloordiv' else '%'} b;\"",
             ("tests/test_webgpu_kernels.py",), "WGSL uint // and % by zero give 0 as numpy"),
    Mutation("reduction-32-bit-index", f"{TRANSLATE}/array_ops/_reduction.py",
             'return _INT64 if option(device, "int64") else np.dtype(np.int32)', "return _INT64",
             ("tests/test_webgpu_reductions.py",), "a device without int64 reduces with 32-bit indices"),
    Mutation("reduction-rows-layout-ids64", f"{TRANSLATE}/array_ops/_reduction.py",
             "if (chunked and ids64) or wide:", "if chunked or wide:",
             ("tests/test_webgpu_reductions.py",), "the chunked rows kernel forces 64-bit ids only where it needs them"),
    # ---- gnp.fft (our own kernels) ----
    Mutation("fft-quarter-turn", f"{TRANSLATE}/array_ops/_fft_kernels.py",
             "        times_minus_i = quarter != inverse", "        times_minus_i = quarter == inverse",
             ("tests/test_gnp_fft.py",), "a radix-4 butterfly turns by -i forward and +i inverse"),
    Mutation("fft-irfft-dc-imaginary", f"{TRANSLATE}/array_ops/_fft_kernels.py",
             "            yi = {real}(0)", "            yi = yi",
             ("tests/test_gnp_fft.py",), "irfft ignores the imaginary parts of DC and Nyquist"),
    Mutation("fft-ortho-norm", f"{CORE}/gnp/fft/_arguments.py", "        return 1.0 / math.sqrt(n)",
             "        return 1.0 / n", ("tests/test_gnp_fft.py",), "norm='ortho' scales by 1/sqrt(n)"),
    Mutation("fft-real-even-path", f"{TRANSLATE}/array_ops/_fft_real.py", "    if x.size == 0 or n % 2:",
             "    if x.size == 0 or n % 2 == 0:", ("tests/test_gnp_fft.py",),
             "even-length real transforms go through a half-length complex FFT"),
    Mutation("fft-radix-plan", f"{TRANSLATE}/array_ops/_fft.py", "        out.append(n & -n)", "        out.append(2)",
             ("tests/test_gnp_fft.py",), "the pass plan factors a length into its radices"),
    # ---- gnp.linalg (our own kernels) ----
    Mutation("linalg-cholesky-triangle", f"{TRANSLATE}/array_ops/_linalg_cholesky.py", "            if c <= i:",
             "            if c < i:", ("tests/test_gnp_linalg.py",), "Cholesky fills the lower triangle with the diagonal"),
    Mutation("linalg-eig-rotation-conj", f"{TRANSLATE}/array_ops/_linalg_eig.py",
             "                h[H + k * n + c] = conj(co) * p + conj(sn) * q",
             "                h[H + k * n + c] = co * p + conj(sn) * q",
             ("tests/test_gnp_linalg.py",), "the QR step's rotation applies conj(c) on the left"),
    # ---- CPU devices (cpu33) ----
    Mutation("cpu-choices-only-on-cpus", f"{TRANSLATE}/_cpu_choices.py",
             'return ENABLED and bool(option(device, "is_cpu"))', "return ENABLED",
             ("tests/test_cpu_choices.py",), "GPUs keep the wide kernels and the runtime's group pick"),
    Mutation("cpu-row-groups", f"{TRANSLATE}/_launch.py", "            elif derived and self.cpu_groups is not None:",
             "            elif False:", ("tests/test_cpu_choices.py",), "CPU launches get row-shaped groups"),
    Mutation("cpu-no-wide-kernel", f"{TRANSLATE}/_translate.py",
             "debug=prog.bounds is not None) if vector_views and wide else None",
             "debug=prog.bounds is not None) if vector_views else None",
             ("tests/test_cpu_choices.py",), "CPU devices get one-element kernels, not float4-wide ones"),
    Mutation("cpu-groups-that-show", f"{TRANSLATE}/_launch.py",
             "and not (self.local_sized or translation.uses_barrier or translation.local_shapes)",
             "and not (translation.uses_barrier or translation.local_shapes)",
             ("tests/test_cpu_choices.py",), "kernels whose groups show keep the runtime's pick"),
    Mutation("cpu-radix-slot", f"{TRANSLATE}/array_ops/_radix_cpu.py",
             '"            slot[d] = np.uint32(incl[d * T + t] - cnt[d * T + t])",',
             '"            slot[d] = np.uint32(incl[d * T + t])",',
             ("tests/test_gnp_radix_cpu.py",), "the chunked radix sort scatters from the exclusive prefix"),
    Mutation("cpu-radix-chosen", f"{TRANSLATE}/array_ops/_radix.py", "    if on_cpu(x.device):", "    if False:",
             ("tests/test_gnp_radix_cpu.py",), "gnp.sort on a CPU device takes the chunked radix sort"),
    # ---- typing: UNKNOWN stays in the inference (typing34b) ----
    Mutation('typing-loop-head-stop', f"{TRANSLATE}/_loops.py",
             '    for v in (stop, step):',
             '    for v in (step,):',
             ("tests/test_translate_inference_chains.py",), "a range head's stop widens the loop variable"),
    Mutation("typing-not-yet-typed", f"{TRANSLATE}/_builder.py",
             "                raise NotYetTyped(name)          # the statement reading it runs again later (_infer)",
             "                return ir.Var(self.cname(name), INT32)",
             ("tests/test_translate_inference_chains.py",), "a read of a not-yet-typed local defers its statement"),
    # ---- gnp breadth (gnp-names) ----
    Mutation("gnp-spacing-direction", f"{CORE}/gnp/_float_parts.py",
             'toward = ops().where(_u("less", x, 0), dt.type(-np.inf), dt.type(np.inf))',
             'toward = ops().where(_u("less_equal", x, 0), dt.type(-np.inf), dt.type(np.inf))',
             ("tests/test_gnp_float_parts.py",), "spacing of +0 steps toward +inf"),
    Mutation("gnp-ldexp-subnormal-floor", f"{CORE}/gnp/_float_parts.py", "low = 2 - lay.bias - lay.mant - 3",
             "low = 2 - lay.bias - lay.mant - 1", ("tests/test_gnp_float_parts.py",),
             "ldexp scales in steps that never skip the subnormal range"),
    Mutation("gnp-lcm-narrow-ints", f"{TRANSLATE}/array_ops/_elementwise.py",
             'w = "np.int32" if t.itemsize < 4 else np_type(t)', "w = np_type(t)",
             ("tests/test_gnp_integer_ufuncs.py",), "lcm of 8/16-bit ints computes in int32 and wraps as numpy"),
    Mutation("gnp-multi-index-placement", f"{TRANSLATE}/array_ops/_multi_index.py", "and advanced[0] > 0:",
             "and advanced[0] > 1:", ("tests/test_gnp_multi_index.py",),
             "index arrays split by a slice put their axes first, as numpy"),
    Mutation("gnp-nan-reductions-complex", f"{CORE}/gnp/_nan_reductions.py", 'kinds: str = "fc"', 'kinds: str = "f"',
             ("tests/test_gnp_stats_complex.py",), "nan-reductions treat complex NaN as NaN"),
    # ---- rule modules moved out of the mixins (typing34c) ----
    Mutation("dtype-object-float", f"{TRANSLATE}/_dtype_objects.py", "            return fb.prog.default_float",
             "            return INT32", ("tests/test_translate_dtype_args.py",), "dtype=float is the default float"),
    Mutation("tuple-slice-walk", f"{TRANSLATE}/_tuple_items.py", "    for j in range(n - 2, -1, -1):",
             "    for j in range(n - 2, 0, -1):", ("tests/test_lang_ports.py", "-k", "tuple_slices"),
             "a negative-step tuple slice reaches the first item"),
    Mutation("local-array-group-sized", f"{TRANSLATE}/_local_arrays.py", "    if group_dims:", "    if False:",
             ("tests/test_lang_launch_local.py",), "gpu.local_array(gpu.get_local_size(0), ...) is sized by the group"),
    # ---- einsum, pad, placing ----
    Mutation("einsum-batch-labels", f"{CORE}/gnp/_einsum.py", "    batch = [c for c in la if c in lb and c in later]",
             "    batch = [c for c in la if c in lb and c in later and c in la[:1]]",
             ("tests/test_gnp_einsum_pad_place.py", "-k", "einsum"), "labels both operands share and later need are batch"),
    Mutation("pad-reflect-period", f"{CORE}/gnp/_padding.py", "    return np.where(m < n, m, period - m)",
             "    return np.where(m < n, m, period - 1 - m)", ("tests/test_gnp_einsum_pad_place.py", "-k", "pad"),
             "reflect mirrors without repeating the edge"),
    Mutation("place-rank", f"{CORE}/gnp/_placing.py",
             "    order = m.ravel().astype(np.int64).cumsum() - 1            # the rank of each true entry",
             "    order = m.ravel().astype(np.int64).cumsum()", ("tests/test_gnp_einsum_pad_place.py", "-k", "place"),
             "place gives the k-th true entry the k-th value"),
    Mutation("setitem-positions-view", f"{TRANSLATE}/array_ops/_indexing.py", "    a[...] = flat.reshape(a.shape)",
             "    pass", ("tests/test_gnp_multi_index_assign.py",), "assignment through index arrays into a strided view writes back"),
    # wave 3, fourth session: several devices, vendor libraries, WebGPU reductions, radix sweep, typing moves
    Mutation("peer-access-enabled-earlier", f"{CORE_BACKEND}/driver/peer.py",
             "if status not in (0, _ALREADY_ENABLED):", "if status != 0:",
             ("tests/test_multi_copy_driver.py",), "peer access enabled earlier in the process counts as access"),
    Mutation("split-halo-rows", f"{TRANSLATE}/_split.py", "v[lo:hi + halo[name]] if name in halo",
             "v[lo:hi] if name in halo", ("tests/test_multi_split.py",), "a split stencil reads its halo rows"),
    Mutation("device-copy-staged-way", f"{CORE}/gnp/_device_copy.py", 'if way in ("staged", "host"):',
             'if way == "host":', ("tests/test_multi_copy_opencl.py",), "a copy between devices is staged once"),
    Mutation("clblast-leading-dimension", "pygpgpu-opencl/src/pygpgpu_opencl/_clblast.py",
             "ld = s0 // size if rows > 1 else cols", "ld = cols", ("tests/test_vendor_clblast.py",),
             "a view goes to CLBlast with its own leading dimension"),
    Mutation("cusolver-uplo", f"{TRANSLATE}/array_ops/_linalg_vendor.py", "uplo = _LOWER if upper else _UPPER",
             "uplo = _UPPER if upper else _LOWER", ("tests/test_vendor_cusolver.py",),
             "row-major lower is column-major upper"),
    Mutation("cufft-batch-distances", "pygpgpu-cuda/src/pygpgpu_cuda/_cufft.py",
             "return outer, inner, inner, 1, 1, points_in * inner, points_out * inner",
             "return outer, inner, inner, 1, 1, points_in, points_out", ("tests/test_vendor_cufft.py",),
             "a first-axis transform's batches lie inner elements apart"),
    Mutation("webgpu-packed-store-mask", "pygpgpu-webgpu/src/pygpgpu_webgpu/_packed.py",
             "atomicAnd(&{word}, ~({mask}u << s));", "atomicAnd(&{word}, ({mask}u << s));",
             ("tests/test_webgpu_reductions.py",), "a packed byte store keeps its neighbours"),
    Mutation("count-index-type-without-int64", f"{CORE}/gnp/_statistics.py",
             'return np.dtype(np.intp) if option(a.device, "int64") else np.dtype(np.int32)',
             "return np.dtype(np.intp)", ("tests/test_webgpu_reductions.py",), "counts are int32 without int64"),
    Mutation("radix-sweep-look-back-step", f"{TRANSLATE}/array_ops/_radix.py", '"                    j -= 1",',
             '"                    j -= 2",', ("tests/test_gnp_radix.py",), "the look-back visits every earlier tile"),
    Mutation("radix-sweep-tile-start", f"{TRANSLATE}/array_ops/_radix.py",
             '"    start[t] = np.int32(pre_g + excl) - np.int32(pre)",', '"    start[t] = np.int32(pre_g + excl)",',
             ("tests/test_gnp_radix.py",), "a tile's output starts at its digit's offset less the tile's own prefix"),
    Mutation("choice-of-python-bools", f"{TRANSLATE}/_choices.py", "        return PYBOOL if ta.weak and tb.weak else BOOL",
             "        return BOOL", (TRUST_MORE, "-k", "python_bools_is"), "a choice between Python bools is a Python bool"),
    Mutation("swap-materializes-values", f"{TRANSLATE}/_assignments.py",
             "        vals = [materialize_for_swap(fb, v) for v in vals]", "        vals = list(vals)",
             (CATALOGUE, "-k", "swap"), "a, b = b, a reads both before writing"),
    Mutation("refusal-names-the-line", f"{TRANSLATE}/_located.py", "exc.filename, exc.lineno = filename, line",
             "exc.filename, exc.lineno = filename, None", ("tests/test_webgpu_refusals.py",),
             "a refusal names the user's line"),
    Mutation("kernel-file-plan-after-close", f"{CORE}/kernel_files/_module.py",
             'if hit is not None and hit[0] is device and not getattr(hit[1].context, "closed", False):',
             "if hit is not None and hit[0] is device:", ("tests/test_gnp_bound_launch.py", "-k", "kernel_file"),
             "a kernel file's plan is made again once its context closed"),
    Mutation("pocl-binary-scope-vars", "pygpgpu-opencl/src/pygpgpu_opencl/_binary_check.py",
             "pos = _HEADER + (8 if version >= 10 and flags & _HAS_SCOPE_VARS else 0)", "pos = _HEADER",
             ("tests/test_caches_binaries.py", "-k", "pocl_5_and_6"), "PoCL 4-6 binaries carry a u64 after the header"),
    Mutation("meshgrid-numpys-container", f"{CORE}/gnp/_patterns.py", "return _numpy_container(copy, sparse)(grids)",
             "return tuple(grids)", ("tests/test_gnp_half_paths.py", "-k", "meshgrid"),
             "meshgrid returns the container the numpy beside it returns"),
]


def _copy_packages(dest: Path) -> Path:
    target = dest / "packages"
    shutil.copytree(REPO / "packages", target, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info"))
    return target


def _env(packages: Path, cache: Path) -> dict:
    env = dict(os.environ)
    src = [str(p) for p in sorted(packages.glob("*/src"))]
    env["PYTHONPATH"] = os.pathsep.join(src + [env["PYTHONPATH"]] if env.get("PYTHONPATH") else src)
    env["PYGPGPU_CACHE_DIR"] = str(cache)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["COLUMNS"] = "400"                      # untruncated failure lines in the report
    return env


def _check_copy_is_imported(packages: Path, tmp: Path) -> None:
    code = "import pygpgpu_translate, pygpgpu_core; print(pygpgpu_translate.__file__); print(pygpgpu_core.__file__)"
    out = subprocess.run([sys.executable, "-c", code], env=_env(packages, tmp / "probe-cache"), cwd=REPO,
                         capture_output=True, text=True, check=False)
    paths = out.stdout.split()
    if out.returncode or len(paths) != 2 or not all(p.startswith(str(packages)) for p in paths):
        sys.exit(f"the copy under {packages} is not what Python imports ({out.stdout}{out.stderr}); "
                 "run with the project's venv: .venv/bin/python scripts/mutation_check.py")


def _pytest(packages: Path, tmp: Path, tests: tuple, timeout: int) -> tuple[str, str]:
    """(verdict, detail): verdict 'pass', 'fail', 'crash', 'timeout' or 'error'."""
    cache = Path(tempfile.mkdtemp(prefix="cache-", dir=tmp))
    cmd = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "-rfE", *tests]
    try:
        r = subprocess.run(cmd, cwd=REPO, env=_env(packages, cache), capture_output=True, text=True, timeout=timeout,
                           check=False)
    except subprocess.TimeoutExpired:
        return "timeout", f"no result after {timeout} s"
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    lines = (r.stdout + r.stderr).splitlines()
    failed = [ln for ln in lines if ln.startswith(("FAILED", "ERROR"))]
    if r.returncode == 0:
        return "pass", (lines[-1] if lines else "")
    if r.returncode < 0:
        return "crash", f"signal {-r.returncode}"
    if r.returncode == 1 and failed:
        if all("XPASS" in ln for ln in failed):
            return "error", f"only a strict xfail passed (not a catch): {failed[0]}"
        return "fail", next(ln for ln in failed if "XPASS" not in ln)
    return "error", "\n".join(lines[-15:])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-k", dest="select", help="only mutations whose name contains this text")
    ap.add_argument("--list", action="store_true", help="list the mutations and exit")
    ap.add_argument("--timeout", type=int, default=900, help="seconds per pytest run (a hang counts as caught)")
    ap.add_argument("--keep", action="store_true", help="keep the temporary copy")
    args = ap.parse_args(argv)
    chosen = [m for m in MUTATIONS if not args.select or args.select in m.name]
    if args.list:
        for m in chosen:
            print(f"{m.name:34s} {m.rule}")
        return 0
    if not chosen:
        print(f"no mutation matches {args.select!r}")
        return 2
    tmp = Path(tempfile.mkdtemp(prefix="pygpgpu-mutation-"))
    try:
        packages = _copy_packages(tmp)
        _check_copy_is_imported(packages, tmp)
        sources = {m.path: (packages / m.path).read_text() for m in chosen}
        missing = [m for m in chosen if sources[m.path].count(m.old) != 1]
        for m in missing:
            print(f"ANCHOR  {m.name}: the text to mutate occurs {sources[m.path].count(m.old)} times in {m.path} "
                  "(the source changed: update the mutation)")
        t0 = time.time()
        print(f"baseline: {len({m.tests for m in chosen})} test selections on the unmutated copy ...", flush=True)
        for tests in dict.fromkeys(m.tests for m in chosen):
            verdict, detail = _pytest(packages, tmp, tests, args.timeout)
            if verdict != "pass":
                print(f"BASELINE FAILS ({' '.join(tests)}): {detail}")
                return 2
        print(f"baseline passes ({time.time() - t0:.0f} s)", flush=True)
        results = []
        for m in chosen:
            if m in missing:
                results.append((m, "anchor", "anchor text not found"))
                continue
            path = packages / m.path
            original = sources[m.path]
            path.write_text(original.replace(m.old, m.new))
            t0 = time.time()
            try:
                verdict, detail = _pytest(packages, tmp, m.tests, args.timeout)
            finally:
                path.write_text(original)
            state = {"fail": "caught", "crash": "caught", "timeout": "caught", "pass": "SURVIVED"}.get(verdict, "error")
            results.append((m, state, detail))
            print(f"{state:8s} {m.name:34s} {time.time() - t0:5.0f} s  {detail[:160]}", flush=True)
        print()
        survivors = [m.name for m, s, _ in results if s == "SURVIVED"]
        broken = [m.name for m, s, _ in results if s in ("error", "anchor")]
        print(f"{len(results)} mutations: {sum(s == 'caught' for _, s, _ in results)} caught, "
              f"{len(survivors)} survived {survivors or ''}, {len(broken)} could not be judged {broken or ''}")
        return 1 if survivors else (2 if broken else 0)
    finally:
        if args.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
