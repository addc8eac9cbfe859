"""Kernels and worker functions for the pickling, multiprocessing, Dask and several-device tests.

They live in an importable module (not in the test files) so that spawn/forkserver pool workers
and Dask workers can import them by name, as a user's own module would be imported.
"""
from __future__ import annotations

import numpy as np
import pygpgpu.numpy as gnp
from pygpgpu import kernel

SHIFT = 1.5


def _affine(v, alpha):                  # a plain helper, translated with the kernels that call it
    return v * alpha + SHIFT


@kernel
def scale(x, out, alpha):
    for i in range(out.shape[0]):
        out[i] = _affine(x[i], alpha)


@kernel
def reverse(x, out):                    # reads another work item's element: cannot be split
    for i in range(out.shape[0]):
        out[i] = x[x.shape[0] - 1 - i]


@kernel
def uses_index(out):                    # the value depends on the index itself: cannot be split
    for i in range(out.shape[0]):
        out[i] = i


@kernel
def count_to(x, out, n):                # the domain comes from a scalar: cannot be split
    for i in range(n):
        out[i] = x[i] * 2.0


@kernel
def add_one_to_both(a, out):            # k(x, x): both stores land in the one array
    for i in range(out.shape[0]):
        a[i] += 1.0
        out[i] += 1.0


@kernel
def heavy(x, out, iters):               # compute-bound per element (benchmarks, threads)
    for i in range(out.shape[0]):
        v = x[i]
        for _k in range(iters):
            v = v * 0.999 + 0.001 * np.sin(v)
        out[i] = v


class Model:
    """A kernel method whose ``self`` arrays are kernel arguments; pickles with its instance."""

    def __init__(self, n: int):
        self.weights = np.linspace(0.0, 1.0, n, dtype=np.float32)
        self.bias = 0.25

    @kernel
    def apply(self, x, out):
        for i in range(out.shape[0]):
            out[i] = x[i] * self.weights[i] + self.bias


def scale_host(x: np.ndarray, alpha: float) -> np.ndarray:
    """What ``scale`` computes, in numpy."""
    return (x * np.float32(alpha) + np.float32(SHIFT)).astype(x.dtype)


# ---- worker functions (run in pool / Dask worker processes) -------------------------------------
def scale_block(block: np.ndarray, alpha: float = 2.0) -> np.ndarray:
    """One block through the ``scale`` kernel on this process's default device."""
    out = np.empty_like(block)
    scale(np.ascontiguousarray(block), out, alpha)
    return out


def run_kernel(k, x: np.ndarray, *scalars) -> np.ndarray:
    """Call a kernel that arrived pickled (``k(x, out, *scalars)``) and return ``out``."""
    out = np.empty_like(x)
    k(x, out, *scalars)
    return out


def on_device_array(g):
    """Receives a device array, doubles it on the device with ``scale`` and returns a device array."""
    out = gnp.empty_like(g)
    scale(g, out, 2.0)
    return out


def describe_device(dev) -> str:
    return dev.selector
