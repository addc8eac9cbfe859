"""The dialects' gpu.* spellings executed on an OpenCL device (work-item queries, fences, math)
against their host meaning, and the CUDA/HIP spellings compiled with NVRTC/hiprtc."""
from __future__ import annotations

import numpy as np
import pytest

from pygpgpu_core import gpu
from pygpgpu_translate._dialects import dialect_for
from pygpgpu_translate._types import FLOAT32, FLOAT64
from pygpgpu_translate.prelude import prelude_source
from pygpgpu_translate.prelude._native import NATIVE_PIECES
from test_vec_helpers import opencl_runner, rtc_compile  # noqa: F401 - fixture

WORKITEM = ["get_global_id", "get_local_id", "get_group_id", "get_global_size", "get_local_size", "get_num_groups"]
MATH2 = ["native_divide", "native_powr"]
MATH1 = ["rsqrt"] + [n for n in gpu.NATIVE_FUNCS if n not in MATH2]


def _math(dialect: str, name: str, args: list, t=FLOAT32) -> str:
    return dialect_for(dialect).math_call(name, t, args, fast=True)


def _workitem_body(dialect: str) -> str:
    lines = []
    for k, name in enumerate(WORKITEM):
        for d in (0, 1):
            e = dialect_for(dialect).work_item(name[len("get_"):], d)
            lines.append(f"  out[(({k} * 2 + {d}) * H + y) * W + x] = (int)({e});")
    return "\n".join(lines)


def test_workitem_spellings_on_opencl():
    run = opencl_runner()
    W, H, LX, LY = 16, 8, 4, 2
    opencl = dialect_for("opencl")
    gx, gy = opencl.work_item("global_id", 0), opencl.work_item("global_id", 1)
    src = (f"#define W {W}\n#define H {H}\n__kernel void wi(__global int* out) {{\n"
           f"  int x = {gx}, y = {gy};\n{_workitem_body('opencl')}\n"
           f"  {opencl.barrier('both')};\n"
           f"  {opencl.mem_fence('global')};\n}}\n")
    out = np.full(len(WORKITEM) * 2 * H * W, -1, np.int32)
    run(src, "wi", (W, H), (LX, LY), [out])
    got = out.reshape(len(WORKITEM), 2, H, W)
    y, x = np.mgrid[0:H, 0:W]
    expect = {
        "get_global_id": (x, y), "get_local_id": (x % LX, y % LY), "get_group_id": (x // LX, y // LY),
        "get_global_size": (W, H), "get_local_size": (LX, LY), "get_num_groups": (W // LX, H // LY),
    }
    for k, name in enumerate(WORKITEM):
        for d in (0, 1):
            np.testing.assert_array_equal(got[k, d], np.broadcast_to(expect[name][d], (H, W)), err_msg=f"{name}({d})")


def test_workitem_sync_and_math_spellings_compile(rtc_compile):
    dialect, compile_ = rtc_compile
    d = dialect_for(dialect)
    math = "\n".join(f"  f[{k}] = {_math(dialect, n, ['f[40]'])};" for k, n in enumerate(MATH1))
    math += "\n" + "\n".join(f"  f[{20 + k}] = {_math(dialect, n, ['f[40]', 'f[41]'])};"
                             for k, n in enumerate(MATH2))
    dmath = "\n".join(f"  d[{k}] = {_math(dialect, n, ['d[40]', 'd[41]'][:2 if n in MATH2 else 1], FLOAT64)};"
                      for k, n in enumerate(MATH1[1:] + MATH2))
    # the helpers the float32 spellings may call (CUDA's rsqrt), as a generated kernel asks for them
    src = prelude_source(dialect, set(NATIVE_PIECES.values()))
    src += (f"#define W 16\n#define H 8\nextern \"C\" __global__ void wi(int* out, float* f, double* d) {{\n"
            f"  {d.local_decl}float tile[64];\n  int x = {d.work_item('global_id', 0)};\n"
            f"  int y = {d.work_item('global_id', 1)};\n{_workitem_body(dialect)}\n"
            f"  tile[threadIdx.x] = f[0];\n  {d.barrier('local')};\n"
            f"  {d.mem_fence('both')};\n  f[50] = tile[0];\n{math}\n{dmath}\n}}\n")
    assert compile_(src)


def test_math_spellings_on_opencl_match_host():
    run = opencl_runner()
    x = np.linspace(0.1, 3.0, 64).astype(np.float32)
    y = np.linspace(0.5, 2.0, 64).astype(np.float32)
    names = MATH1 + MATH2
    body = "\n".join(
        f"  out[{k} * 64 + i] = {_math('opencl', n, ['x[i]', 'y[i]'] if n in MATH2 else ['x[i]'])};"
        for k, n in enumerate(names)
    )
    src = f"__kernel void m(__global const float* x, __global const float* y, __global float* out) {{\n" \
          f"  int i = get_global_id(0);\n{body}\n}}\n"
    out = np.zeros(len(names) * 64, np.float32)
    run(src, "m", (64,), None, [x, y, out])
    for k, n in enumerate(names):
        host = getattr(gpu, n)(x, y) if n in MATH2 else getattr(gpu, n)(x)
        # native_* are hardware approximations: OpenCL only promises an implementation-defined error.
        rtol = 1e-5 if n == "rsqrt" else 2e-3
        np.testing.assert_allclose(out[k * 64:(k + 1) * 64], host, rtol=rtol, atol=1e-6, err_msg=n)


@pytest.mark.parametrize("name", WORKITEM)
def test_workitem_dimension_checked(name):
    with pytest.raises(ValueError, match="0, 1 or 2"):
        dialect_for("opencl").work_item(name[len("get_"):], 3)
