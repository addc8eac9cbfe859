"""``gnp.dot`` and ``gnp.matmul`` / ``@``: the inner product of 1-D arrays is a reduction of the
products; matrix products of float and complex types go to the backend's BLAS where it has one
(``Context.gemm``: cuBLAS on CUDA, CLBlast on OpenCL, where installed), else, and for every
other type, run a tiled kernel (16 x 16 tiles of each operand in local memory, one output element per work item)."""
from __future__ import annotations

from typing import Any

import numpy as np
from pygpgpu_core.gnp import DeviceArray
from pygpgpu_core.gnp._array import check_out_writeable

from .._kernel import _Config
from ._codegen import kernel_from_source, launch, np_type
from ._half import narrow, stores_half_only, widen
from ._operands import check_dtype, check_same_device, classify, contiguous

__all__ = ["dot", "matmul"]

TILE = 16


def _matmul_source(kname: str, acc: np.dtype, out: np.dtype) -> str:
    a = np_type(acc)
    return f'''def {kname}(a, b, c, m, n, k):
    ta = gpu.local_array({TILE * TILE}, {a})
    tb = gpu.local_array({TILE * TILE}, {a})
    tx = gpu.get_local_id(0)
    ty = gpu.get_local_id(1)
    col = gpu.get_group_id(0) * {TILE} + tx
    row = gpu.get_group_id(1) * {TILE} + ty
    acc = {a}(0)
    t = 0
    while t < k:
        ta[ty * {TILE} + tx] = {a}(a[row * k + t + tx]) if row < m and t + tx < k else {a}(0)
        tb[ty * {TILE} + tx] = {a}(b[(t + ty) * n + col]) if t + ty < k and col < n else {a}(0)
        gpu.barrier()
        q = 0
        while q < {TILE}:
            acc = acc + ta[ty * {TILE} + q] * tb[q * {TILE} + tx]
            q += 1
        gpu.barrier()
        t += {TILE}
    if row < m and col < n:
        c[row * n + col] = {np_type(out)}(acc)
'''


def _operand(x: Any, op: str, position: int) -> DeviceArray:
    c = classify(x, op, position)
    if not isinstance(c, DeviceArray):
        raise TypeError(f"gnp.{op}: operand {position} must be a device array, got {type(x).__name__}")
    return c


def _dot_type(a: Any, b: Any) -> np.dtype:
    """The type ``np.dot`` computes in: the operands' result type with Python scalars taken as
    numpy arrays (``float32_array`` with the Python int 2 is float64), unlike the ufuncs' NEP 50."""
    return np.result_type(*(x.dtype if isinstance(x, DeviceArray) else np.asarray(x).dtype for x in (a, b)))


def _check_dot_out(out: Any, dtype: np.dtype, shape: tuple) -> None:
    """numpy's rule for ``np.dot(..., out=)``: exactly the result's dtype, number of dimensions
    and shape, C-contiguous (nothing is cast into it)."""
    if out is None:
        return
    if not isinstance(out, DeviceArray) or out.dtype != dtype or out.ndim != len(shape) or not out.is_contiguous:
        raise ValueError(f"output array is not acceptable (must have the right datatype, number of dimensions, and be "
                         f"a C-Array): np.dot here needs a C-contiguous {dtype} array of shape {shape}")
    if out.shape != shape:
        raise ValueError(f"output array has wrong dimensions: np.dot here needs shape {shape}, got {out.shape}")


def _check_matmul_out(out: Any, res_dt: np.dtype, shape: tuple) -> None:
    """numpy's matmul ufunc: the result casts to ``out``'s dtype by same_kind (checked first), of the result's shape."""
    if out is None:
        return
    if not np.can_cast(res_dt, out.dtype, "same_kind"):
        raise TypeError(f"Cannot cast ufunc 'matmul' output from {res_dt!r} to {out.dtype!r} with casting rule "
                        "'same_kind'")
    if out.shape != shape:
        raise ValueError(f"matmul: Output operand 0 has a mismatch in its core dimension (needs shape {shape}, "
                         f"got {out.shape})")


def _vendor_gemm(a: DeviceArray, b: DeviceArray, c: DeviceArray) -> bool:
    """``c = a @ b`` (2-D, ``c`` fresh) through the backend's BLAS where it has one (cuBLAS on
    CUDA, CLBlast on OpenCL, each when installed and not turned off) for operands of the result's
    float or complex type: ``context.gemm`` takes the views it can describe (CLBlast: any with
    contiguous rows or columns; cuBLAS: C-contiguous ones) and says False for the others. False:
    nothing done (the caller makes the operands contiguous on the device and asks once more, or
    runs our own kernel)."""
    gemm = getattr(c.buffer.context, "gemm", None)
    if gemm is None or a.dtype != c.dtype or b.dtype != c.dtype or c.dtype.kind not in "fc":
        return False
    return bool(gemm(a, b, c))


def matmul(a: Any, b: Any, out: Any = None) -> DeviceArray:
    """``np.matmul`` (numpy's result type; bool as numpy's); stacks of matrices in :mod:`._matmul_stacked`."""
    check_out_writeable(out)
    a, b = _operand(a, "matmul", 0), _operand(b, "matmul", 1)
    device = check_same_device([a, b], "matmul")
    if np.float16 in (a.dtype, b.dtype) and stores_half_only(device):
        # float32 products and sums, rounded to half once (numpy's float16 matmul rounds each step)
        res_dt = np.result_type(a.dtype, b.dtype)
        wa = widen(a) if a.dtype == np.float16 else a
        wb = widen(b) if b.dtype == np.float16 else b
        res = matmul(wa, wb)
        if res_dt == np.float16:
            res = narrow(res)
        if out is not None:
            out[...] = res
            return out
        return res
    for k, x in enumerate((a, b)):
        check_dtype(x.dtype, "matmul", k, device)
        if x.ndim == 0:
            raise ValueError(f"matmul: Input operand {k} does not have enough dimensions (has 0, gufunc core with "
                             "signature (n?,k),(k,m?)->(n?,m?) requires 1)")
    if a.ndim > 2 or b.ndim > 2:
        from ._matmul_stacked import stacked_matmul
        return stacked_matmul(a, b, out, device)
    res_dt = np.result_type(a.dtype, b.dtype)
    if a.ndim == 1 and b.ndim == 1:
        _check_matmul_out(out, res_dt, ())
        if out is None:
            return dot(a, b)
        out[...] = dot(a, b)
        return out
    a2 = a.reshape(1, -1) if a.ndim == 1 else a
    b2 = b.reshape(-1, 1) if b.ndim == 1 else b
    m, k = a2.shape
    k2, n = b2.shape
    if k != k2:
        raise ValueError(f"matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc signature "
                         f"(n?,k),(k,m?)->(n?,m?) (size {k2} is different from {k})")
    shape = tuple(s for s, keep in ((m, a.ndim == 2), (n, b.ndim == 2)) if keep)
    _check_matmul_out(out, res_dt, shape)
    acc = np.dtype(np.int64) if res_dt.kind == "b" else res_dt
    c = DeviceArray((m, n), res_dt, device.context())
    if c.size and k == 0:
        c.fill(0)
    elif c.size and not _vendor_gemm(a2, b2, c):
        ac, bc = contiguous(a2), contiguous(b2)
        if (ac is a2 and bc is b2) or not _vendor_gemm(ac, bc, c):
            if -(-m // TILE) > 65535:
                raise ValueError(f"gnp.matmul: {m} rows is more than this kernel's grid supports (65535 * {TILE})")
            kname = f"gnp_matmul_{acc.name}_{res_dt.name}"
            kern = kernel_from_source(kname, _matmul_source(kname, acc, res_dt))
            cfg = _Config(None, (-(-n // TILE) * TILE, -(-m // TILE) * TILE), (TILE, TILE))
            launch(kern, device, cfg, (ac.reshape(-1), bc.reshape(-1), c.reshape(-1), m, n, k))
    res = c.reshape(shape)
    if out is not None:
        out[...] = res
        return out
    return res


def dot(a: Any, b: Any, out: Any = None) -> DeviceArray:
    """``np.dot``: 1-D · 1-D is the inner product (a 0-d array, accumulated in numpy's result
    type), 2-D operands multiply as matrices, a scalar operand multiplies elementwise."""
    check_out_writeable(out)
    from ._elementwise import ufunc_call
    from ._reduction import reduce
    ca, cb = classify(a, "dot", 0), classify(b, "dot", 1)
    blas_dt = _dot_type(a, b) if ca is not None and cb is not None else None
    if not isinstance(ca, DeviceArray) or not isinstance(cb, DeviceArray) or ca.ndim == 0 or cb.ndim == 0:
        if blas_dt is not None and blas_dt.kind == "f":
            # numpy multiplies in the dot's type through BLAS, whose out= must be exactly that array
            shape = next((x.shape for x in (ca, cb) if isinstance(x, DeviceArray) and x.ndim), ())
            _check_dot_out(out, blas_dt, shape)
            return ufunc_call("multiply", (a, b), out=out, dtype=blas_dt)
        return ufunc_call("multiply", (a, b), out=out)       # numpy's multiply ufunc, out= by its casting
    if ca.ndim == 1 and cb.ndim == 1:
        if ca.shape != cb.shape:
            raise ValueError(f"shapes {ca.shape} and {cb.shape} not aligned: {ca.shape[0]} (dim 0) != "
                             f"{cb.shape[0]} (dim 0)")
        res_dt = np.result_type(ca.dtype, cb.dtype)
        _check_dot_out(out, res_dt, ())
        prod = ufunc_call("multiply", (ca, cb), dtype=res_dt if res_dt.kind != "b" else None)
        if res_dt.kind == "b":
            return reduce("any", prod, out=out)
        return reduce("sum", prod, dtype=res_dt, out=out)
    if ca.ndim <= 2 and cb.ndim <= 2:
        if ca.shape[-1] != cb.shape[0]:
            raise ValueError(f"shapes {ca.shape} and {cb.shape} not aligned: {ca.shape[-1]} (dim {ca.ndim - 1}) != "
                             f"{cb.shape[0]} (dim 0)")
        _check_dot_out(out, np.result_type(ca.dtype, cb.dtype), ca.shape[:-1] + cb.shape[1:])
        return matmul(ca, cb, out=out)
    from ._matmul_stacked import dot_nd
    return dot_nd(ca, cb, out)
