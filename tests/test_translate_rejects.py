"""The catalogue of rejected constructs: each raises SyntaxError at the offending line of this
file, with the source line and a hint. The ``# REJECT`` comment marks the expected line."""
from __future__ import annotations

import inspect
import math

import numpy as np
import pytest

from pygpgpu_core import funcs, gpu
from pygpgpu_core.vec_types import float2, float4
from pygpgpu_translate import kernel

TABLE = np.zeros(4)
NAME = "abc"
REJECTS = []


def rejects(fragment):
    def deco(k):
        REJECTS.append((k, fragment))
        return k
    return deco


@rejects("strings")
@kernel
def k_string(x):
    for i in range(x.shape[0]):
        x[i] = len("abc")  # REJECT


@rejects("cannot be inside a magic loop")
@kernel
def k_barrier_in_magic_loop(x):
    for i in range(x.shape[0]):
        if i > 2:
            gpu.barrier()  # REJECT


def sync_then_read(x, i):
    gpu.barrier()  # REJECT (reached from the magic loop below)
    return x[i]


@rejects("gpu.barrier() cannot be inside a magic loop")
@kernel
def k_barrier_in_helper_in_magic_loop(x):
    for i in range(x.shape[0]):
        x[i] = sync_then_read(x, i) + 1.0


@rejects("f-strings")
@kernel
def k_fstring(x):
    for i in range(x.shape[0]):
        s = f"{i}"  # REJECT


@rejects("list literals")
@kernel
def k_list(x):
    for i in range(x.shape[0]):
        v = [1, 2]  # REJECT


@rejects("dicts")
@kernel
def k_dict(x):
    for i in range(x.shape[0]):
        v = {1: 2}  # REJECT


@rejects("sets")
@kernel
def k_set(x):
    for i in range(x.shape[0]):
        v = {1, 2}  # REJECT


@rejects("list comprehensions")
@kernel
def k_listcomp(x):
    for i in range(x.shape[0]):
        v = [j for j in range(3)]  # REJECT


@rejects("generator expressions")
@kernel
def k_genexp(x):
    for i in range(x.shape[0]):
        x[i] = sum(j for j in range(3))  # REJECT


@rejects("lambda")
@kernel
def k_lambda(x):
    for i in range(x.shape[0]):
        f = lambda v: v  # REJECT  # noqa: E731


@rejects("try/except")
@kernel
def k_try(x):
    for i in range(x.shape[0]):
        try:  # REJECT
            x[i] = 1.0
        except ValueError:
            pass


@rejects("with")
@kernel
def k_with(x):
    for i in range(x.shape[0]):
        with open("f"):  # REJECT
            pass


@rejects("global statements")
@kernel
def k_global(x):
    global TABLE  # REJECT
    for i in range(x.shape[0]):
        x[i] = 1.0


@rejects("yield")
@kernel
def k_yield(x):
    for i in range(x.shape[0]):
        yield i  # REJECT


@rejects("import inside a kernel")
@kernel
def k_import(x):
    import os  # REJECT  # noqa: F401
    for i in range(x.shape[0]):
        x[i] = 1.0


@rejects("import inside a kernel")
@kernel
def k_import_from(x):
    from os import path  # REJECT  # noqa: F401
    for i in range(x.shape[0]):
        x[i] = 1.0


@rejects("starred")
@kernel
def k_starred(x):
    for i in range(x.shape[0]):
        x[i] = max(*x)  # REJECT


@rejects("slices")
@kernel
def k_slice(x):
    for i in range(x.shape[0]):
        x[i] = x[1:3]  # REJECT


@rejects("assert")
@kernel
def k_assert(x):
    for i in range(x.shape[0]):
        assert i >= 0  # REJECT


@rejects("raise")
@kernel
def k_raise(x):
    for i in range(x.shape[0]):
        raise ValueError()  # REJECT


@rejects("nested functions (closures)")
@kernel
def k_nested_def(x):
    def inner(v):  # REJECT
        return v
    for i in range(x.shape[0]):
        x[i] = 1.0


@rejects("assignment expressions")
@kernel
def k_walrus(x):
    for i in range(x.shape[0]):
        x[i] = (y := 2.0)  # REJECT


@rejects("the @ operator")
@kernel
def k_matmul(x):
    for i in range(x.shape[0]):
        x[i] = x[i] @ x[i]  # REJECT


@rejects("'is' comparisons")
@kernel
def k_is(x):
    for i in range(x.shape[0]):
        if i is x:  # REJECT
            x[i] = 1.0


@rejects("'in' tests")
@kernel
def k_in(x):
    for i in range(x.shape[0]):
        if i in (1, 2):  # REJECT
            x[i] = 1.0


@rejects("None")
@kernel
def k_none(x):
    for i in range(x.shape[0]):
        v = None  # REJECT


@rejects("kernels cannot return values")
@kernel
def k_return_value(x):
    for i in range(x.shape[0]):
        x[i] = 1.0
    return x  # REJECT


def countdown(n):
    if n <= 0:
        return 0
    return countdown(n - 1) + 1  # REJECT (reported where the recursion closes)


@rejects("recursion is not supported")
@kernel
def k_recursion(x):
    for i in range(x.shape[0]):
        x[i] = countdown(i)


def make_closure(weights):
    def scaled(v):
        return v * weights[0]  # REJECT (a captured list, reached from k_closure)
    return scaled


scaled_by_list = make_closure([2.0, 3.0])


@rejects("'weights' is a list")
@kernel
def k_closure(x):
    for i in range(x.shape[0]):
        x[i] = scaled_by_list(x[i])


@rejects("dynamic shape indexing is not supported")
@kernel
def k_dynamic_shape(x, k):
    for i in range(x.shape[0]):
        x[i] = x.shape[k]  # REJECT


@rejects("for/else")
@kernel
def k_for_else(x):
    for i in range(x.shape[0]):
        for j in range(3):
            x[i] = j
        else:
            x[i] = 0.0  # REJECT


@rejects("while/else")
@kernel
def k_while_else(x):
    for i in range(x.shape[0]):
        while i > 0:
            i -= 1
        else:
            x[i] = 0.0  # REJECT


@rejects("chained assignment")
@kernel
def k_chained_assign(x):
    for i in range(x.shape[0]):
        a = b = 1.0  # REJECT


@rejects("class definitions")
@kernel
def k_classdef(x):
    class Inner:  # REJECT
        pass
    for i in range(x.shape[0]):
        x[i] = 1.0


@rejects("print() cannot print a whole array")
@kernel
def k_print(x):
    for i in range(x.shape[0]):
        print(x)  # REJECT


@rejects("cannot be called from a kernel")
@kernel
def k_unknown_call(x):
    for i in range(x.shape[0]):
        x[i] = np.linalg.norm(x)  # REJECT


@rejects("is a string")
@kernel
def k_global_string(x):
    for i in range(x.shape[0]):
        x[i] = NAME  # REJECT


@rejects("**kwargs in calls")
@kernel
def k_kwargs_call(x):
    for i in range(x.shape[0]):
        x[i] = math.sqrt(**{"x": 1.0})  # REJECT


@rejects("bytes")
@kernel
def k_bytes(x):
    for i in range(x.shape[0]):
        v = b"ab"  # REJECT


@rejects("complex ** works with")
@kernel
def k_complex(x):
    for i in range(x.shape[0]):
        x[i] = (2j ** 0.5).real  # REJECT



@rejects("vector comparisons")
@kernel
def k_vector_compare(x):
    for i in range(x.shape[0]):
        v = float4(1.0)
        w = v < float4(2.0)  # REJECT


@rejects("only supported as the kernel's top-level iteration domain")
@kernel
def k_nested_ndindex(x):
    for i in range(x.shape[0]):
        for a, b in np.ndindex(x.shape):  # REJECT
            x[i] = a


@rejects("statements after the kernel's iteration-domain loop")
@kernel
def k_after_domain(x):
    for i in range(x.shape[0]):
        x[i] = 1.0
    x[0] = 2.0  # REJECT


@rejects("must iterate over range")
@kernel
def k_iterate_array(x):
    for i in range(x.shape[0]):
        for v in x:  # REJECT
            x[i] = v


@rejects("del")
@kernel
def k_del(x):
    for i in range(x.shape[0]):
        v = 1.0
        del v  # REJECT


@rejects("break outside a loop")
@kernel
def k_break_in_domain(x):
    for i in range(x.shape[0]):
        break  # REJECT


@rejects("tuple unpacking needs a tuple")
@kernel
def k_unpack_non_tuple(x):
    for i in range(x.shape[0]):
        a, b = x[i]  # REJECT


@rejects("*args/**kwargs parameters")
@kernel
def k_varargs(x, *rest):  # REJECT
    for i in range(x.shape[0]):
        x[i] = 1.0


@rejects("is not defined")
@kernel
def k_undefined(x):
    for i in range(x.shape[0]):
        x[i] = undefined_name  # REJECT  # noqa: F821


@rejects("vector has no single truth value")
@kernel
def k_vector_truth(x):
    for i in range(x.shape[0]):
        if float4(1.0):  # REJECT
            x[i] = 1.0


class Calculator:
    def twice(self, v):
        return 2 * v


CALC = Calculator()


@rejects("calling methods from a kernel")
@kernel
def k_method_call(x):
    for i in range(x.shape[0]):
        x[i] = CALC.twice(x[i])  # REJECT


def _marker_line(obj):
    lines, start = inspect.getsourcelines(obj)
    for k, text in enumerate(lines):
        if "# REJECT" in text:
            return start + k
    raise AssertionError(f"{obj} has no # REJECT marker")


def _expected_line(k):
    if k is k_recursion:
        return _marker_line(countdown)
    if k is k_barrier_in_helper_in_magic_loop:
        return _marker_line(sync_then_read)
    if k is k_closure:
        return _marker_line(scaled_by_list)
    return _marker_line(k.py_func)


def test_catalogue_has_at_least_30_constructs():
    assert len(REJECTS) >= 30


@pytest.mark.parametrize("k,fragment", REJECTS, ids=[k.__name__ for k, _ in REJECTS])
@pytest.mark.parametrize("dialect", ["opencl", "cuda"])
def test_rejected_construct(k, fragment, dialect):
    x = np.zeros(8, np.float32)
    args = (x,) if k is not k_dynamic_shape else (x, 0)
    with pytest.raises(SyntaxError) as info:
        k.inspect(*args, backend=dialect)
    err = info.value
    assert fragment in err.msg, err.msg
    assert err.filename == __file__
    assert err.lineno == _expected_line(k), f"{err.msg} at line {err.lineno}"
    assert err.text and "REJECT" in err.text
    assert "hint:" in err.msg or "recursion" in err.msg or "not defined" in err.msg
    assert err.offset >= 1


def test_no_domain_error_says_how_to_give_one(backend):
    @kernel
    def no_domain(x):
        i = 0
        x[i] = 1.0

    with pytest.raises(ValueError, match=r"no iteration domain.*gpu\.work_size"):
        no_domain[backend](np.zeros(4, np.float32))


def test_vector_width_mismatch_is_a_type_error():
    @kernel
    def widths(x):
        for i in range(x.shape[0]):
            v = float4(1.0) + funcs.cross(float4(1.0), float4(2.0)).xyz
    with pytest.raises(TypeError, match="different widths"):
        widths.inspect(np.zeros(2, np.float32), backend="opencl")


# ---- semantic errors: each is a clear SyntaxError or TypeError, never an internal crash -----------------
def _helper_returns_array(a):
    return a


def _helper_two_args(a, b):
    return a + b


def _helper_mixed_returns(a):
    if a > 0:
        return a


SEMANTIC = []


def semantic(pattern, exc=(SyntaxError, TypeError)):
    def deco(k):
        SEMANTIC.append((k, pattern, exc))
        return k
    return deco


@semantic("can only be indexed|only arrays")
@kernel
def s_index_scalar(x, s):
    for i in range(x.shape[0]):
        x[i] = s[0]


@semantic("len\\(\\) needs an array")
@kernel
def s_len_scalar(x, s):
    for i in range(x.shape[0]):
        x[i] = len(s)


@semantic("an array is used where a number is expected")
@kernel
def s_sqrt_array(x, s):
    for i in range(x.shape[0]):
        x[i] = math.sqrt(x)


@semantic("no attribute 'foo'")
@kernel
def s_array_attr(x, s):
    for i in range(x.shape[0]):
        x[i] = x.foo


@semantic("range\\(\\) needs integers")
@kernel
def s_float_range(x, s):
    for i in range(x.shape[0]):
        for j in range(s):
            x[i] = j


@semantic("missing argument 'b'")
@kernel
def s_helper_arity(x, s):
    for i in range(x.shape[0]):
        x[i] = _helper_two_args(x[i])


@semantic("cannot return arrays")
@kernel
def s_helper_returns_array(x, s):
    for i in range(x.shape[0]):
        y = _helper_returns_array(x)


@semantic("returns a value on some paths")
@kernel
def s_helper_mixed(x, s):
    for i in range(x.shape[0]):
        x[i] = _helper_mixed_returns(x[i])


@semantic("out of range")
@kernel
def s_shape_out_of_range(x, s):
    for i in range(x.shape[0]):
        x[i] = x.shape[3]


@semantic("too many indices")
@kernel
def s_too_many_indices(x, s):
    for i in range(x.shape[0]):
        x[i, 0] = 1.0


@semantic(r"vector \(4 x float32\) is used where")
@kernel
def s_vector_into_scalar(x, s):
    for i in range(x.shape[0]):
        x[i] = float4(1.0)


@semantic("assigned float4 and float2")
@kernel
def s_vector_join(x, s):
    for i in range(x.shape[0]):
        v = float4(1.0)
        v = float2(1.0, 2.0)


@semantic("must be an integer")
@kernel
def s_float_index(x, s):
    for i in range(x.shape[0]):
        x[i * 0.5] = 1.0


@semantic("needs integers")
@kernel
def s_float_shift(x, s):
    for i in range(x.shape[0]):
        x[i] = s << 2


@semantic("cannot assign to array")
@kernel
def s_assign_array(x, s):
    for i in range(x.shape[0]):
        x = 1.0


@semantic("needs a compile-time shape")
@kernel
def s_local_dynamic(x, s):
    t = gpu.local_array(x.shape[0], np.float32)
    x[gpu.get_global_id(0)] = t[0]


@pytest.mark.parametrize("k,pattern,exc", SEMANTIC, ids=[k.__name__ for k, _, _ in SEMANTIC])
def test_semantic_errors_are_clear(k, pattern, exc):
    with pytest.raises(exc, match=pattern):
        k.inspect(np.zeros(4, np.float32), 1.5, backend="opencl")


def test_kernel_capturing_an_unsupported_value_is_rejected_at_the_use():
    scale = {0: 2.0}            # numbers, vectors, tuples, modules, functions and arrays are captured

    @kernel
    def captures(x):
        for i in range(x.shape[0]):
            x[i] = scale[0]

    with pytest.raises(SyntaxError, match="'scale' is a dict") as info:
        captures.inspect(np.zeros(3, np.float32), backend="opencl")
    assert info.value.lineno == captures.py_func.__code__.co_firstlineno + 3     # the line using `scale`
