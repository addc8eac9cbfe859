"""``gnp.matmul`` of stacks of matrices (an operand with more than 2 dimensions) and ``gnp.dot``
beyond 2-D, as numpy: the leading (batch) axes broadcast against each other, a 1-D operand
takes part as a row (first operand) or column (second) whose axis leaves the result.

The batch runs as the third axis of one launch of the tiled kernel (each work group multiplies a
16 x 16 tile of one matrix of the stack); broadcast operands are first copied into a contiguous
stack, so every matrix of the stack is at ``batch * rows * cols``.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np
from pygpgpu_core.gnp import DeviceArray

from .._kernel import _Config
from ._codegen import kernel_from_source, launch, np_type

__all__ = ["stacked_matmul", "dot_nd"]

TILE = 16
MAX_STACK = 65535       # the third grid axis of CUDA and HIP launches: longer stacks run in several launches


def _stacked_source(kname: str, acc: np.dtype, out: np.dtype) -> str:
    a = np_type(acc)
    return f'''def {kname}(a, b, c, m, n, k, first):
    ta = gpu.local_array({TILE * TILE}, {a})
    tb = gpu.local_array({TILE * TILE}, {a})
    tx = gpu.get_local_id(0)
    ty = gpu.get_local_id(1)
    z = first + gpu.get_group_id(2)
    col = gpu.get_group_id(0) * {TILE} + tx
    row = gpu.get_group_id(1) * {TILE} + ty
    abase = z * m * k
    bbase = z * k * n
    acc = {a}(0)
    t = 0
    while t < k:
        ta[ty * {TILE} + tx] = {a}(a[abase + row * k + t + tx]) if row < m and t + tx < k else {a}(0)
        tb[ty * {TILE} + tx] = {a}(b[bbase + (t + ty) * n + col]) if t + ty < k and col < n else {a}(0)
        gpu.barrier()
        q = 0
        while q < {TILE}:
            acc = acc + ta[ty * {TILE} + q] * tb[q * {TILE} + tx]
            q += 1
        gpu.barrier()
        t += {TILE}
    if row < m and col < n:
        c[z * m * n + row * n + col] = {np_type(out)}(acc)
'''


def _stack(x: DeviceArray, shape: tuple) -> DeviceArray:
    """``x`` broadcast to ``shape`` as a C-contiguous 1-D array (a copy unless it already is one)."""
    from pygpgpu_core.gnp import broadcast_to

    if x.shape != shape:
        x = broadcast_to(x, shape)
    if type(x) is not DeviceArray:
        x = x.copy()
    return x.reshape(-1)


def stacked_matmul(a: DeviceArray, b: DeviceArray, out: Any, device: Any) -> DeviceArray:
    """numpy's matmul where an operand has more than 2 dimensions (dtype and ``out`` checks as 2-D)."""
    from ._linalg import _check_matmul_out

    a2 = a.reshape(1, -1) if a.ndim == 1 else a
    b2 = b.reshape(-1, 1) if b.ndim == 1 else b
    m, k = a2.shape[-2:]
    k2, n = b2.shape[-2:]
    if k != k2:
        raise ValueError(f"matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc signature "
                         f"(n?,k),(k,m?)->(n?,m?) (size {k2} is different from {k})")
    try:
        batch = np.broadcast_shapes(a2.shape[:-2], b2.shape[:-2])
    except ValueError:
        raise ValueError(f"operands could not be broadcast together with remapped shapes [original->remapped]: "
                         f"{a.shape} and {b.shape} (the leading axes {a2.shape[:-2]} and {b2.shape[:-2]} "
                         "do not broadcast)") from None
    shape = batch + ((m,) if a.ndim >= 2 else ()) + ((n,) if b.ndim >= 2 else ())
    res_dt = np.result_type(a.dtype, b.dtype)
    _check_matmul_out(out, res_dt, shape)
    stack = math.prod(batch)
    acc = np.dtype(np.int64) if res_dt.kind == "b" else res_dt
    c = DeviceArray((stack * m * n,), res_dt, device.context())
    if c.size:
        if k == 0:
            c.fill(0)
        else:
            if -(-m // TILE) > 65535:
                raise ValueError(f"gnp.matmul: {m} rows is more than this kernel's grid supports (65535 * {TILE})")
            kname = f"gnp_matmul_stacked_{acc.name}_{res_dt.name}"
            kern = kernel_from_source(kname, _stacked_source(kname, acc, res_dt))
            sa, sb = _stack(a2, batch + (m, k)), _stack(b2, batch + (k, n))
            for first in range(0, stack, MAX_STACK):
                count = min(MAX_STACK, stack - first)
                cfg = _Config(None, (-(-n // TILE) * TILE, -(-m // TILE) * TILE, count), (TILE, TILE, 1))
                launch(kern, device, cfg, (sa, sb, c, m, n, k, first))
    res = c.reshape(shape)
    if out is not None:
        out[...] = res
        return out
    return res


def dot_nd(a: DeviceArray, b: DeviceArray, out: Any) -> DeviceArray:
    """numpy's dot beyond 2-D: ``dot(a, b)[i, j, k, m] = sum(a[i, j, :] * b[k, :, m])`` (a sum over
    the last axis of ``a`` and the second-to-last of ``b``), as one matrix product of ``a``'s rows
    with ``b``'s columns."""
    from pygpgpu_core.gnp import moveaxis

    from ._linalg import _check_dot_out, matmul

    kb = b.shape[-2] if b.ndim >= 2 else b.shape[0]
    if a.shape[-1] != kb:
        raise ValueError(f"shapes {a.shape} and {b.shape} not aligned: {a.shape[-1]} (dim {a.ndim - 1}) != "
                         f"{kb} (dim {max(b.ndim - 2, 0)})")
    shape = a.shape[:-1] + b.shape[:-2] + b.shape[-1:] if b.ndim >= 2 else a.shape[:-1]
    _check_dot_out(out, np.result_type(a.dtype, b.dtype), shape)
    a2 = a.reshape(math.prod(a.shape[:-1]), kb)         # explicit sizes: -1 is ambiguous with an empty axis
    b2 = moveaxis(b, -2, 0).reshape(kb, math.prod(b.shape[:-2] + b.shape[-1:])) if b.ndim >= 2 else b
    res = matmul(a2, b2).reshape(shape)
    if out is not None:
        out[...] = res
        return out
    return res
