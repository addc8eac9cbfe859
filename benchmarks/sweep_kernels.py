"""Where an @kernel runs behind its handwritten CUDA twin (issue 17 item 5): variants of both,
built through the low-level API and timed interleaved in one process.

    python benchmarks/sweep_kernels.py [stencil] [nbody]

Variants of the generated source are text edits of what ``@kernel`` emits: signed index
arithmetic in place of the wrapping ``(int)((uint)y - 1u)``, one row stride for both arrays,
64-bit element offsets, -ftz, and block shapes. The generated source run through the low-level
launcher beside ``@kernel`` itself separates the code from the launch path. Each row: the best
ms of 15 interleaved rounds of back-to-back launches and one synchronize, and the ratio to the
workload's first (handwritten) row.
"""
from __future__ import annotations

import math
import re
import sys
import time

import numpy as np

from bench_cuda import CUDA_SOURCE        # the handwritten kernels (stencil, nbody) of bench_cuda.py
from pygpgpu_core import gnp, gpu, registry
from pygpgpu_translate import kernel

STENCIL_N = 8192
NBODY_N = 32 * 1024

@kernel
def stencil(u, out):
    for y, x in np.ndindex(out.shape):
        if y == 0 or x == 0 or y == out.shape[0] - 1 or x == out.shape[1] - 1:
            out[y, x] = u[y, x]
        else:
            out[y, x] = 0.25 * (u[y - 1, x] + u[y + 1, x] + u[y, x - 1] + u[y, x + 1])


@kernel
def nbody(pos, acc):
    for i in range(acc.shape[0]):
        ax = 0.0
        ay = 0.0
        az = 0.0
        for j in range(pos.shape[0]):
            dx = pos[j, 0] - pos[i, 0]
            dy = pos[j, 1] - pos[i, 1]
            dz = pos[j, 2] - pos[i, 2]
            r2 = dx * dx + dy * dy + dz * dz + 1e-3
            inv = gpu.rsqrt(r2)
            sc = pos[j, 3] * inv * inv * inv
            ax += dx * sc
            ay += dy * sc
            az += dz * sc
        acc[i, 0] = ax
        acc[i, 1] = ay
        acc[i, 2] = az
        acc[i, 3] = 0.0


_WRAPPED = re.compile(r"\(\(int\)\(\(\(\(unsigned int\)\((\w+)\)\) ([-+]) \(\(unsigned int\)\((\d+)\)\)\)\)\)")


def signed(src: str) -> str:
    """``(int)((uint)a - (uint)c)`` -> ``(a - c)``: what the code would be if the translator proved no wrap."""
    return _WRAPPED.sub(r"(\1 \2 \3)", src)


def one_stride(src: str) -> str:
    return src.replace("out_shape1)", "u_shape1)")


def wide_offsets(src: str) -> str:
    """``pos + (j * 4)`` -> ``pos + ((long long)j * 4)``: element offsets in 64 bits."""
    return re.sub(r"\((\w+) \+ \((\w+) \* (\d+)\)\)", r"(\1 + ((long long)\2 * \3))", src)


def generated_launcher(ctx, source: str, name: str, arrays: dict, n: int, options=()):
    """The low-level launcher of a generated source and its arguments: pointers by parameter name,
    every int parameter (shapes, domain) ``n``, as for the square arrays here."""
    params = re.search(rf"void {name}\((.*?)\)", source).group(1).split(", ")
    kinds = ["buffer" if "*" in p else np.int32 for p in params]
    args = tuple(arrays.get(p.split()[-1].lstrip("*"), n) for p in params)
    return ctx.program(source, list(options), name=f"{name}.cu").kernel(name).launcher(kinds), args


def read_back(label: str, device_array, buffer, like: np.ndarray) -> np.ndarray:
    """The result of run ``label``: ``@kernel`` rows wrote the gnp array, the others the buffer."""
    if label.startswith("@kernel"):
        return device_array.get()
    out = np.empty_like(like)
    buffer.read(out)
    return out


def sweep(ctx, runs: dict, check, reps: int) -> None:
    best = {label: math.inf for label in runs}
    for label, run in runs.items():       # warm up and check each one
        run()
        ctx.synchronize()
        assert check(label), label
    for _ in range(15):
        for label, run in runs.items():
            t0 = time.perf_counter()
            for _ in range(reps):
                run()
            ctx.synchronize()
            best[label] = min(best[label], (time.perf_counter() - t0) / reps)
    base = next(iter(best.values()))
    for label, t in best.items():
        print(f"  {label:<44} {t * 1e3:8.4f} ms  {t / base:6.3f}x", flush=True)


def sweep_stencil(ctx) -> None:
    n = STENCIL_N
    u = np.random.default_rng(0).random((n, n), dtype=np.float32)
    ref = u.copy()
    ref[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
    du, do = ctx.buffer_from_host(u), ctx.buffer(u.nbytes)
    gu, go = gnp.asarray(u, device="cuda"), gnp.asarray(np.empty_like(u), device="cuda")
    generated = stencil.inspect(gu, go, backend="cuda").source
    print(generated)
    runs = {}
    hand = ctx.program(CUDA_SOURCE, name="bench.cu").kernel("stencil").launcher(["buffer", "buffer", np.int32])
    for shape in ((32, 8), (32, 4), (64, 4), (128, 2), (32, 16), (256, 1)):
        runs[f"handwritten {shape[0]}x{shape[1]}"] = (lambda s=shape: hand((n, n), s, (du, do, n)))
    for label, src in {"generated": generated, "generated, signed": signed(generated),
                       "generated, one stride": one_stride(generated),
                       "generated, signed + one stride": one_stride(signed(generated))}.items():
        fn, args = generated_launcher(ctx, src, "stencil", {"u": du, "out": do}, n)
        for shape in ((32, 8), (64, 4), (128, 2)):
            runs[f"{label} {shape[0]}x{shape[1]}"] = (lambda f=fn, s=shape, a=args: f((n, n), s, a))
    k = stencil["cuda"]
    runs["@kernel (gnp arrays)"] = lambda: k(gu, go)

    def check(label):
        return np.allclose(read_back(label, go, do, u), ref, atol=1e-5)
    print(f"\nstencil {n}x{n}: best ms of 15 rounds x 40 launches, ratio to the first row")
    sweep(ctx, runs, check, 40)


def sweep_nbody(ctx) -> None:
    n = NBODY_N
    pos = np.random.default_rng(0).random((n, 4), dtype=np.float32)
    d = pos[None, :, :3] - pos[:64, None, :3]
    r2 = (d * d).sum(2) + 1e-3
    ref = (d * (pos[None, :, 3] / (r2 * np.sqrt(r2)))[:, :, None]).sum(1)
    dp, da = ctx.buffer_from_host(pos), ctx.buffer(pos.nbytes)
    gp, ga = gnp.asarray(pos, device="cuda"), gnp.asarray(np.zeros_like(pos), device="cuda")
    generated = nbody.inspect(gp, ga, backend="cuda").source
    print(generated)
    runs = {}
    for label, options in {"handwritten -ftz": ["-ftz=true"], "handwritten": []}.items():
        fn = ctx.program(CUDA_SOURCE, options, name=f"{label}.cu").kernel("nbody").launcher(
            ["buffer", "buffer", np.int32])
        for group in (256, 128):
            runs[f"{label}, {group}"] = (lambda f=fn, g=group: f((n,), (g,), (dp, da, n)))
    for label, src, options in (("generated", generated, ()), ("generated -ftz", generated, ("-ftz=true",)),
                                ("generated, 64-bit offsets", wide_offsets(generated), ())):
        fn, args = generated_launcher(ctx, src, "nbody", {"pos": dp, "acc": da}, n, options)
        for group in (256, 128):
            runs[f"{label}, {group}"] = (lambda f=fn, g=group, a=args: f((n,), (g,), a))
    k = nbody["cuda"]
    runs["@kernel (gnp arrays)"] = lambda: k(gp, ga)

    def check(label):
        return np.allclose(read_back(label, ga, da, pos)[:64, :3], ref, rtol=2e-3, atol=1e-2)
    print(f"\nn-body {n}: best ms of 15 rounds x 5 launches, ratio to the first row")
    sweep(ctx, runs, check, 5)


def main() -> None:
    ctx = registry.backend_devices("cuda")[0].context()
    chosen = sys.argv[1:] or ["stencil", "nbody"]
    for name in chosen:
        {"stencil": sweep_stencil, "nbody": sweep_nbody}[name](ctx)


if __name__ == "__main__":
    main()
