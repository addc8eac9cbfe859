"""The WebGPU backend against CUDA (or, without CUDA, OpenCL) in one run: the four float32 kernels
of bench_cpu.py (saxpy, 5-point stencil, mandelbrot, n-body), each the same @kernel function on
both devices, on device arrays, checked against each other before timing (issue 35, item 5).

On the GPU machine WebGPU runs on NVIDIA's Vulkan driver; in CI and here, on lavapipe (Vulkan on
the CPU), where the numbers say only that it runs. ``python benchmarks/bench_webgpu.py [SCALE]``;
SCALE divides the sizes (default 1; 16 for a quick run on a CPU).
"""
from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import pygpgpu  # noqa: E402
import pygpgpu.numpy as gnp  # noqa: E402
from _timing import timed_ms  # noqa: E402
from bench_cpu import mandelbrot, nbody, saxpy, stencil  # noqa: E402

SCALE = int(sys.argv[1]) if len(sys.argv) > 1 else 1


def _peer() -> str:
    devices = pygpgpu.available_devices()
    for backend in ("cuda", "opencl"):
        found = [d for d in devices if d.startswith(backend + ":")]
        if found:
            return found[0]
    raise SystemExit(f"no CUDA or OpenCL device to compare with (devices: {devices})")


def main() -> int:
    webgpu = pygpgpu.get_device("webgpu")
    peer = pygpgpu.get_device(_peer())
    rng = np.random.default_rng(0)
    n = (1 << 24) // SCALE
    side = 2048 // int(math.sqrt(SCALE))
    mside = 1024 // int(math.sqrt(SCALE))
    bodies = 4096 // SCALE
    x, y = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    grid = rng.random((side, side), dtype=np.float32)
    pos = rng.random((bodies, 4), dtype=np.float32)
    cases = [
        (f"saxpy {n >> 20}M" if n >= 1 << 20 else f"saxpy {n}", saxpy,
         lambda put, z: (np.float32(2.0), put(x), put(y), z((n,), np.float32)), 10),
        (f"stencil 5-point {side}²", stencil, lambda put, z: (put(grid), z((side, side), np.float32)), 10),
        (f"mandelbrot {mside}², 200 iterations", mandelbrot, lambda put, z: (z((mside, mside), np.int32), 200), 3),
        (f"n-body {bodies}", nbody, lambda put, z: (put(pos), z((bodies, 3), np.float32)), 2),
    ]
    rows = []
    for name, k, make, reps in cases:
        times, results = {}, {}
        for dev in (webgpu, peer):
            args = make(lambda a, d=dev: gnp.asarray(a, device=d), lambda s, t, d=dev: gnp.zeros(s, t, device=d))
            run = k[dev.selector]
            run(*args)
            out = [a for a in args if isinstance(a, gnp.ndarray)][-1]
            results[dev.backend.name] = out.get()
            ctx = dev.context()
            times[dev.backend.name] = timed_ms(lambda run=run, args=args: run(*args), ctx.synchronize, reps)
        ours, theirs = results["webgpu"], results[peer.backend.name]
        if ours.dtype.kind == "i":
            # chaotic near the set's boundary: float32 rounding (contraction, division) moves ~0.1% of the
            # pixels between any two devices; PoCL against the host differs as much at 512² (1.0e-3)
            assert np.mean(ours != theirs) < 5e-3, name
        else:
            np.testing.assert_allclose(ours, theirs, rtol=1e-3, atol=1e-3, err_msg=name)
        rows.append({"row": name, "webgpu_ms": round(times["webgpu"], 4), "peer": peer.selector,
                     "peer_ms": round(times[peer.backend.name], 4),
                     "ratio": round(times["webgpu"] / times[peer.backend.name], 3),
                     "webgpu_device": webgpu.name, "peer_device": peer.name})
        print(json.dumps(rows[-1]), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
