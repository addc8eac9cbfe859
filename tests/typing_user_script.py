# pyright: strict
"""A user program that must type-check clean under ``mypy --strict`` and ``pyright`` in strict mode
(tests/test_typing.py).

pytest does not collect it (the name does not start with ``test_``); tests/test_typing.py type-checks
it and runs it. It uses the public API the way the README does: ``@kernel`` bare and with options,
brackets, ``.inspect``, ``gnp`` arrays, vector types, ``funcs`` and ``gpu``.
"""
from __future__ import annotations

import sys

import numpy as np
import numpy.typing as npt

import pygpgpu
import pygpgpu.numpy as gnp
from pygpgpu import Inspection, KernelFunction, float3, float4, funcs, gpu, int4, kernel

# what a kernel parameter holding float32 data accepts: a numpy array or a device array
Floats = pygpgpu.Array[np.float32]
Ints = npt.NDArray[np.int32]


def clamp01(v: float) -> float:                  # a plain helper, translated where a kernel calls it
    return 0.0 if v < 0.0 else (1.0 if v > 1.0 else v)


@kernel
def saxpy(x: Floats, y: Floats, out: Floats, alpha: float) -> None:
    for i in range(out.shape[0]):
        out[i] = x[i] * alpha + y[i]


@kernel(default_float=np.float64, debug=True)
def lengths(vecs: npt.NDArray[np.float32], out: npt.NDArray[np.float32]) -> None:
    for i, v in enumerate(vecs):                 # an (n, 4) float32 array yields float4 rows
        out[i] = clamp01(funcs.length(v) * gpu.rsqrt(4.0))


@kernel
def histogram(data: Ints, counts: Ints) -> None:
    gpu.work_size(data)
    i = gpu.get_global_id(0)
    gpu.atomic_add(counts, data[i], 1)


def run(n: int, backend: str) -> float:
    x = np.arange(n, dtype=np.float32)
    out = np.zeros_like(x)
    saxpy(x, x, out, 2.0)                                 # call: the function's own parameters
    saxpy[backend](x, x, out, 2.0)                        # a backend
    saxpy[backend][(n, 64)](x, x, out, 2.0)               # a backend, then a work size
    saxpy[backend, (n, 64)](x, x, out, 2.0)               # both at once
    assert np.array_equal(out, x * 3)

    info: Inspection = saxpy.inspect(x, x, out, 2.0, backend=backend)
    again = saxpy[backend].inspect(x, x, out, 2.0)
    source: str = info.source

    g = gnp.asarray(x, device=backend)                    # device arrays pass for Floats
    doubled = gnp.zeros(n, dtype=np.float32, device=backend)
    saxpy[backend](g, g, doubled, 1.0)
    host = doubled.get()
    assert np.array_equal(host, x * 2)

    k: KernelFunction[[npt.NDArray[np.float32], npt.NDArray[np.float32]]] = lengths
    vecs = np.ones((n, 4), np.float32)
    k[backend](vecs, out)
    counts = np.zeros(4, np.int32)
    histogram[backend](np.arange(n, dtype=np.int32) % 4, counts)
    assert counts.tolist() == [n // 4] * 4

    v = float4(1.0, 2.0, 3.0, 4.0)
    w: float4 = v * 2.0 + float4(1.0) - v / 2
    mask: int4 = v < w                                    # comparisons give the signed integer vector
    xyz: float3 = w.xyz
    total = float(funcs.dot(v, w)) + float(w.x) + float(funcs.length(xyz)) + float(out[0])
    counted = int(mask.x) + len(source) + len(again.source) + float4.dtype.itemsize
    print(pygpgpu.__version__, len(pygpgpu.available_devices()), total, counted)
    return total


if __name__ == "__main__":
    run(256, sys.argv[1] if len(sys.argv) > 1 else "opencl")
