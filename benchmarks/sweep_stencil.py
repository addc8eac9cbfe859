"""Why the @kernel 5-point stencil runs 1-3% behind the handwritten CUDA one (issue 17 item 5):
variants of both kernels, built through the low-level API and timed interleaved in one process.

    python benchmarks/sweep_stencil.py [N]

Variants of the generated source are text edits of what ``@kernel`` emits for the stencil of
bench_cuda.py: signed index arithmetic in place of the wrapping ``(int)((uint)y - 1u)``, one row
stride for both arrays, and block shapes. Each row: the best ms of 15 interleaved rounds of 40
launches and one synchronize, and the ratio to the handwritten kernel at 32x8.
"""
from __future__ import annotations

import math
import re
import sys
import time

import numpy as np

from pygpgpu_core import gnp, registry
from pygpgpu_translate import kernel

N = int(sys.argv[1]) if len(sys.argv) > 1 else 8192

HANDWRITTEN = r"""
extern "C" __global__ void stencil(const float* u, float* out, int n) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= n || y >= n) return;
    if (x == 0 || y == 0 || x == n - 1 || y == n - 1) { out[y * n + x] = u[y * n + x]; return; }
    out[y * n + x] = 0.25f * (u[(y - 1) * n + x] + u[(y + 1) * n + x] + u[y * n + x - 1] + u[y * n + x + 1]);
}
"""


@kernel
def stencil(u, out):
    for y, x in np.ndindex(out.shape):
        if y == 0 or x == 0 or y == out.shape[0] - 1 or x == out.shape[1] - 1:
            out[y, x] = u[y, x]
        else:
            out[y, x] = 0.25 * (u[y - 1, x] + u[y + 1, x] + u[y, x - 1] + u[y, x + 1])


_WRAPPED = re.compile(r"\(\(int\)\(\(\(\(unsigned int\)\((\w+)\)\) ([-+]) \(\(unsigned int\)\((\d+)\)\)\)\)\)")


def signed(src: str) -> str:
    """``(int)((uint)a - (uint)c)`` -> ``(a - c)``: what the code would be if the translator proved no wrap."""
    return _WRAPPED.sub(r"(\1 \2 \3)", src)


def one_stride(src: str) -> str:
    return src.replace("out_shape1)", "u_shape1)")


def main() -> None:
    device = registry.backend_devices("cuda")[0]
    ctx = device.context()
    u = np.random.default_rng(0).random((N, N), dtype=np.float32)
    ref = u.copy()
    ref[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
    du, do = ctx.buffer_from_host(u), ctx.buffer(u.nbytes)
    gu, go = gnp.asarray(u, device="cuda"), gnp.asarray(np.empty_like(u), device="cuda")
    generated = stencil.inspect(gu, go, backend="cuda").source
    print(generated)
    params = re.search(r"void stencil\((.*?)\)", generated).group(1).split(", ")
    gen_kinds = ["buffer" if "*" in p else np.int32 for p in params]
    gen_args = tuple({"u": du, "out": do}.get(p.split()[-1].lstrip("*"), N) for p in params)

    sources = {"generated": generated, "generated, signed": signed(generated),
               "generated, one stride": one_stride(generated),
               "generated, signed + one stride": one_stride(signed(generated))}
    runs = {}
    hand = ctx.program(HANDWRITTEN, name="hand.cu").kernel("stencil").launcher(["buffer", "buffer", np.int32])
    for shape in ((32, 8), (32, 4), (64, 4), (128, 2), (32, 16), (256, 1)):
        grid = (N, N)   # the low-level launcher takes the global size, x first
        runs[f"handwritten {shape[0]}x{shape[1]}"] = (lambda f=hand, s=shape: f(grid, s, (du, do, N)))
    for label, src in sources.items():
        fn = ctx.program(src, name=f"{label}.cu").kernel("stencil").launcher(gen_kinds)
        for shape in ((32, 8), (64, 4), (128, 2)):
            runs[f"{label} {shape[0]}x{shape[1]}"] = (
                lambda f=fn, s=shape: f((N, N), s, gen_args))
    k = stencil["cuda"]
    runs["@kernel (gnp arrays)"] = lambda: k(gu, go)
    best = {name: math.inf for name in runs}
    for name, run in runs.items():       # warm up and check each one
        run()
        ctx.synchronize()
        out = go.get() if name.startswith("@kernel") else np.empty_like(u)
        if not name.startswith("@kernel"):
            do.read(out)
        assert np.allclose(out, ref, atol=1e-5), name
    for _ in range(15):
        for name, run in runs.items():
            t0 = time.perf_counter()
            for _ in range(40):
                run()
            ctx.synchronize()
            best[name] = min(best[name], (time.perf_counter() - t0) / 40)
    base = best["handwritten 32x8"]
    print(f"\nstencil {N}x{N}: best ms of 15 rounds x 40 launches; ratio to handwritten 32x8; GB/s counts 2 x N^2 x 4 bytes")
    for name, t in best.items():
        print(f"  {name:<40} {t * 1e3:8.4f} ms  {t / base:6.3f}x  {2 * N * N * 4 / t / 1e9:7.0f} GB/s")


if __name__ == "__main__":
    main()
