"""The builtin registry: one row per builtin, carrying its arity, its lowering, its host
implementation and its docstring; pygpgpu-core keeps only the host functions, and each dialect
spells what the lowerings produce."""
from __future__ import annotations

import importlib
import inspect
import math

import numpy as np
import pytest

from pygpgpu import kernel
from pygpgpu_core import funcs, gpu
from pygpgpu_translate._builtins import BUILTINS, FUNCS, lookup_object
from pygpgpu_translate._dialects import dialect_for
from pygpgpu_translate._types import FLOAT32, FLOAT64
from pygpgpu_translate.prelude import PRELUDE_NAMES, piece_function


def _lowering(row):
    module, _, name = row.lowering.rpartition(":")
    return getattr(importlib.import_module(f"pygpgpu_translate.{module or '_calls'}"), name)


def test_every_row_carries_its_lowering_host_and_doc():
    assert len(BUILTINS) > 100
    for name, row in BUILTINS.items():
        assert row.name == name
        assert callable(_lowering(row)), name
        assert callable(row.host) and all(callable(h) for h in row.hosts), name
        assert row.doc, name
        lo, hi = row.arity
        assert 0 <= lo and (hi is None or lo <= hi), name
        for host in (row.host,) + row.hosts:
            assert lookup_object(host) is row or lookup_object(host).host is host, name


def test_every_host_function_of_gpu_and_funcs_has_its_row():
    for name in gpu.__all__:
        obj = getattr(gpu, name)
        if inspect.isfunction(obj):
            assert BUILTINS[f"gpu.{name}"].host is obj, name
    for name in funcs.__all__:
        assert BUILTINS[f"funcs.{name}"].host is getattr(funcs, name) is FUNCS[name].host
    assert lookup_object(math.sqrt) is lookup_object(np.sqrt) is BUILTINS["math.sqrt"]
    assert lookup_object(np.int8) is BUILTINS["np.int8"] and lookup_object(np.intc) is BUILTINS["np.int32"]


def test_core_keeps_only_the_host_side():
    for gone in ("GPU_TABLE", "GpuSpec", "FENCE_SPELLING"):
        assert not hasattr(gpu, gone), gone
    for gone in ("FUNCS_TABLE", "FuncSpec"):
        assert not hasattr(funcs, gone), gone


def test_the_dialects_spell_the_gpu_builtins():
    opencl, cuda, hip = (dialect_for(n) for n in ("opencl", "cuda", "hip"))
    assert opencl.work_item("global_id", 1) == "get_global_id(1)"
    assert cuda.work_item("global_id", 0) == "((long long)blockIdx.x * blockDim.x + threadIdx.x)"
    assert hip.work_item("global_id", 2) == "((long long)blockIdx.z * blockDim.z + threadIdx.z)"
    assert cuda.work_item("num_groups", 1) == "gridDim.y"
    with pytest.raises(ValueError, match="0, 1 or 2"):
        cuda.work_item("global_id", 3)
    assert opencl.barrier("local") == "barrier(CLK_LOCAL_MEM_FENCE)"
    assert opencl.mem_fence("both") == "mem_fence(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE)"
    assert cuda.barrier("global") == "__syncthreads()"
    assert cuda.math_call("native_exp", FLOAT32, ["x"], fast=True) == "__expf(x)"
    assert opencl.math_call("native_exp", FLOAT32, ["x"], fast=True) == "native_exp(x)"
    assert cuda.math_call("native_exp", FLOAT64, ["x"], fast=True) == "exp(x)"       # precise at float64
    assert cuda.math_call("sqrt", FLOAT32, ["x"]) == "sqrtf(x)" and opencl.math_call("sqrt", FLOAT32, ["x"]) == "sqrt(x)"
    assert cuda.math_call("isnan", FLOAT32, ["x"]) == "isnan(x)"                      # overloaded: no isnanf
    # atomics are prelude pieces: one meaning, one name in every dialect
    assert piece_function("atomic_add:float") == "pg_atomic_add_float"
    assert piece_function("atomic_inc.local:ulong") == "pg_atomic_inc_local_ulong"
    assert "atomic_xor:float" not in PRELUDE_NAMES


@kernel
def _rounded(x, out):
    for i in range(x.shape[0]):
        out[i] = round(x[i], digits=2)


def test_a_keyword_the_row_does_not_take_is_an_error():
    x = np.zeros(4, np.float32)
    with pytest.raises(Exception, match="round.. takes no keyword argument 'digits'"):
        _rounded.inspect(x, x, backend="opencl")


@kernel
def _conversions(x, out8, out64, outb):
    for i in range(x.shape[0]):
        out8[i] = np.int8(x[i])
        out64[i] = np.float64(x[i]) * 3
        outb[i] = np.bool_(x[i])


def test_numpy_conversion_rows_compute_what_numpy_does(backend):
    x = np.array([-3.7, -1.0, 0.0, 0.5, 2.9, 100.2, 127.0, -128.0], np.float32)
    out8, out64, outb = np.zeros(8, np.int8), np.zeros(8, np.float64), np.zeros(8, np.bool_)
    want = (np.zeros_like(out8), np.zeros_like(out64), np.zeros_like(outb))
    _conversions.py_func(x, *want)
    from pygpgpu_core import registry
    if not registry.get_device(backend).fp64:
        pytest.skip(f"{backend} has no float64")
    _conversions[backend](x, out8, out64, outb)
    np.testing.assert_array_equal(out8, want[0])
    np.testing.assert_allclose(out64, want[1])
    np.testing.assert_array_equal(outb, want[2])
