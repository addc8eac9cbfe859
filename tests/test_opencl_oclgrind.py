"""Kernels run under oclgrind (an OpenCL device simulator that reports invalid accesses).

oclgrind never fails an API call and its process exits 0, so the test reads its log. It is
registered through a private ICD folder (OCL_ICD_VENDORS) in a subprocess, so PoCL is not
loaded alongside it.
"""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

OCLGRIND_ICD_LIB = Path("/usr/lib/oclgrind/liboclgrind-rt-icd.so")

_SCRIPT = textwrap.dedent(
    """
    import sys
    import numpy as np
    import pygpgpu_opencl
    dev = pygpgpu_opencl.devices()[0]
    print("DEVICE", dev.name)
    prog = dev.context().program('''
    __kernel void vecadd(__global const float* a, __global const float* b, __global float* out, int n) {
        int i = get_global_id(0);
        if (i < n) out[i] = a[i] + b[i];
    }
    __kernel void off_by_one(__global const float* a, __global float* out, int n) {
        int i = get_global_id(0);
        if (i < n) out[i + 1] = a[i];
    }''')
    n = 100
    a = np.arange(n, dtype=np.float32)
    out = np.zeros(n, np.float32)
    if sys.argv[1] == "correct":
        prog.kernel("vecadd")[(n, 16)](a, a, out, np.int32(n))
        print("CORRECT", bool((out == 2 * a).all()))
    else:
        prog.kernel("off_by_one")[(n, 16)](a, out, np.int32(n))
        print("RAN")
    """
)


def _run_under_oclgrind(tmp_path: Path, mode: str) -> tuple[str, str]:
    vendors = tmp_path / "vendors"
    vendors.mkdir(exist_ok=True)
    (vendors / "oclgrind.icd").write_text(f"{OCLGRIND_ICD_LIB}\n")
    log = tmp_path / f"oclgrind-{mode}.log"
    env = dict(
        os.environ,
        OCL_ICD_VENDORS=str(vendors),
        OCLGRIND_LOG=str(log),
        OCLGRIND_DATA_RACES="1",
        OCLGRIND_CHECK_API="1",
        PYGPGPU_CACHE_DIR=str(tmp_path / "cache"),
    )
    env.pop("PYGPGPU_OPENCL_LIB", None)
    proc = subprocess.run(
        [sys.executable, "-c", _SCRIPT, mode], capture_output=True, text=True, env=env, timeout=180
    )
    assert proc.returncode == 0, proc.stderr
    assert "DEVICE Oclgrind" in proc.stdout, proc.stdout
    return proc.stdout, (log.read_text() if log.exists() else "")


def _problems(log: str) -> list[str]:
    return [line for line in log.splitlines() if "Invalid" in line or "data race" in line.lower()]


@pytest.mark.usefixtures("oclgrind_icd")   # skips without oclgrind; fails under PYGPGPU_REQUIRE_COMPILERS=1
def test_correct_kernel_is_clean_and_out_of_bounds_is_reported(tmp_path):
    out, log = _run_under_oclgrind(tmp_path, "correct")
    assert "CORRECT True" in out
    assert _problems(log) == [], log
    out, log = _run_under_oclgrind(tmp_path, "bad")
    assert "RAN" in out
    problems = _problems(log)
    assert any("Invalid write" in line for line in problems), log  # proves the check sees errors
