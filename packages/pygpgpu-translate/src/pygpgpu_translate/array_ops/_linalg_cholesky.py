"""``gnp.linalg.cholesky``'s kernel: right-looking Cholesky of the lower triangle (LAPACK potrf
with 'L': the upper triangle is never read; L L^H for complex), one work group per matrix of a stack. A pivot
that is not > 0 (or NaN) marks the matrix not positive definite, as LAPACK's info does."""
from __future__ import annotations

import numpy as np
from pygpgpu_core.gnp import DeviceArray

from ._codegen import kernel_from_source, launch
from ._linalg_common import BARRIER, group_grid, scalar_type
from ._linalg_parts import parts, real_type
from ._linalg_vendor import vendor_cholesky_lower

__all__ = ["cholesky_lower"]

_SOURCE = '''def {name}(a, info, n):
    g = gpu.get_group_id(0)
    t = gpu.get_local_id(0)
    ws = gpu.get_local_size(0)
    A = g * n * n
    bad = 0
    for j in range(n):
        d = re(a[A + j * n + j])
        if not d > {R}(0):
            bad = 1
            break
        r = math.sqrt(d)
        {BARRIER}
        if t == 0:
            a[A + j * n + j] = {T}(r)
        for i in range(j + 1 + t, n, ws):
            a[A + i * n + j] = a[A + i * n + j] / r
        {BARRIER}
        m = n - j - 1
        for e in range(t, m * m, ws):
            i = j + 1 + e // m
            c = j + 1 + e % m
            if c <= i:
                a[A + i * n + c] = a[A + i * n + c] - a[A + i * n + j] * conj(a[A + c * n + j])
        {BARRIER}
    if t == 0:
        info[g] = bad
    for e in range(t, n * n, ws):
        if e % n > e // n:
            a[A + e] = {T}(0)
'''


def cholesky_lower(a: DeviceArray) -> DeviceArray:
    """Overwrite each matrix of ``a`` (a fresh C-contiguous (batch, n, n) float or complex array) by its lower
    Cholesky factor (upper triangle zeroed); returns ``info`` per matrix, 1 where it is not
    positive definite (the factor is then incomplete)."""
    vendor = vendor_cholesky_lower(a)      # cuSOLVER on CUDA, where installed
    if vendor is not None:
        return vendor
    batch, n = a.shape[0], a.shape[1]
    info = DeviceArray((batch,), np.dtype(np.int32), a.context)
    if batch:
        name = f"gnp_linalg_cholesky_{a.dtype.name}"
        dt = a.dtype
        source = _SOURCE.format(name=name, T=scalar_type(dt), R=scalar_type(real_type(dt)), BARRIER=BARRIER)
        kern = kernel_from_source(name, source, helpers=parts(dt), contract=False)
        launch(kern, a.device, group_grid(batch, n * n), (a.reshape(-1), info, n))
    return info
