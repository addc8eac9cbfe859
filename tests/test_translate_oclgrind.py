"""Generated kernels under oclgrind: bounds guards, short-circuit evaluation, vector rows and
local-memory barriers must produce no invalid access and no data race.

oclgrind exits 0 whatever it finds, so the test reads its log; it is registered through a
private ICD folder in a subprocess so PoCL is not loaded next to it.
"""
from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from conftest import run_under_oclgrind

HERE = Path(__file__).parent

CASES = ["saxpy", "helpers_square_clamp_weight", "matrix_scale", "ndindex_3d", "ndenumerate_2d", "enumerate_1d",
         "range_start_stop_step_domain", "range_scalar_bound_partial_write", "work_size_2d_gid",
         "and_short_circuit", "short_circuit_and_conditional_with_temporaries", "funcs_on_float3_rows",
         "vector_ops_swizzles_ctor_broadcast", "arrays_of_float4_dtype", "local_memory_barrier_block_sum",
         "local_2d_array_local_atomics", "floor_div_mod_pow_true_div_bitwise", "histogram_atomic_add"]

SCRIPT = textwrap.dedent('''
    import sys
    sys.path.insert(0, {here!r})
    import numpy as np
    from pygpgpu_core import mempool
    mempool.size_class = lambda n: max(int(n), 4)   # exact-size buffers: one element past the end is caught
    import test_translate_catalogue as cat
    if sys.argv[1] == "control":
        from pygpgpu_translate import kernel

        @kernel
        def off_by_one(x, out):
            for i in range(out.shape[0]):
                out[i + 1] = x[i]
        off_by_one["opencl"](np.ones(10, np.float32), np.zeros(10, np.float32))
        print("RAN")
        sys.exit(0)
    by_name = {{c.name: c for c in cat.CASES}}
    for name in {cases!r}:
        c = by_name[name]
        if c.bracket is None:
            c.bracket = (None, 16)      # a local size that never divides the domain: guards must hold
        cat.run_case(c, "opencl")
        print("OK", name, flush=True)
''')


def _run(tmp_path, mode):
    return run_under_oclgrind(tmp_path, SCRIPT.format(here=str(HERE), cases=CASES), mode)


needs_oclgrind = pytest.mark.usefixtures("oclgrind_icd")   # skips without oclgrind; fails under PYGPGPU_REQUIRE_COMPILERS=1


@needs_oclgrind
def test_generated_kernels_are_clean_under_oclgrind(tmp_path):
    out, text, bad = _run(tmp_path, "cases")
    assert out.count("OK ") == len(CASES), out
    assert not bad, text[:4000]


@needs_oclgrind
def test_oclgrind_catches_an_out_of_bounds_store(tmp_path):
    out, text, bad = _run(tmp_path, "control")       # proves the check above can fail
    assert "RAN" in out and any("Invalid write" in ln for ln in bad), text[:2000]
