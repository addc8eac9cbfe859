"""``gnp.linalg``'s LU kernel: Gaussian elimination with partial pivoting (LAPACK getrf's choice
of pivot: the first row of largest magnitude), one work group per matrix of a stack, the
right-hand sides eliminated alongside and then back-substituted (LAPACK gesv). The same kernel
gives the determinant's sign and log of magnitude (numpy's det is ``sign * exp(logdet)``)."""
from __future__ import annotations

import numpy as np
from pygpgpu_core.gnp import DeviceArray

from ._codegen import kernel_from_source, launch
from ._linalg_common import BARRIER, group_grid, scalar_type
from ._linalg_vendor import vendor_lu_solve

__all__ = ["lu_solve"]

# the pivot's magnitude (LAPACK's: |re| + |im| for complex, izamax's cabs1) and the sign's update by a pivot d
_MAG = {"f": "abs", "c": "cabs1"}
_SIGN = {"f": "if d < {T}(0):\n                sg = -sg", "c": "sg = sg * (d / abs(d))"}


def cabs1(z):          # a helper of the complex kernels (called inside them)
    return abs(z.real) + abs(z.imag)


_SOURCE = '''def {name}(a, b, sign, logdet, info, n, k):
    g = gpu.get_group_id(0)
    t = gpu.get_local_id(0)
    ws = gpu.get_local_size(0)
    piv = gpu.local_array(1, np.int64)
    A = g * n * n
    B = g * n * k
    sg = {T}(1)
    la = {R}(0)
    bad = 0
    for j in range(n):
        if t == 0:
            p = j
            best = {MAG}(a[A + j * n + j])
            for i in range(j + 1, n):
                v = {MAG}(a[A + i * n + j])
                if v > best:
                    best = v
                    p = i
            piv[0] = p
        {BARRIER}
        p = piv[0]
        if p != j:
            for c in range(t, n, ws):
                x = a[A + j * n + c]
                a[A + j * n + c] = a[A + p * n + c]
                a[A + p * n + c] = x
            for c in range(t, k, ws):
                y = b[B + j * k + c]
                b[B + j * k + c] = b[B + p * k + c]
                b[B + p * k + c] = y
        {BARRIER}
        d = a[A + j * n + j]
        if d == {T}(0):
            bad = 1         # every work item: the back substitution's barriers depend on it
        elif t == 0:
            {SIGN}
            la = la + math.log(abs(d))
        if t == 0 and p != j:
            sg = -sg
        if d != {T}(0):
            for i in range(j + 1 + t, n, ws):
                a[A + i * n + j] = a[A + i * n + j] / d
            {BARRIER}
            w = n - j - 1 + k
            for e in range(t, (n - j - 1) * w, ws):
                i = j + 1 + e // w
                c = e % w
                f = a[A + i * n + j]
                if c < n - j - 1:
                    a[A + i * n + j + 1 + c] = a[A + i * n + j + 1 + c] - f * a[A + j * n + j + 1 + c]
                else:
                    c2 = c - (n - j - 1)
                    b[B + i * k + c2] = b[B + i * k + c2] - f * b[B + j * k + c2]
        {BARRIER}
    if t == 0:
        info[g] = bad
        sign[g] = sg if bad == 0 else {T}(0)
        logdet[g] = la if bad == 0 else -math.inf
    if bad == 0:
        for jj in range(n):
            j = n - 1 - jj
            d = a[A + j * n + j]
            for c in range(t, k, ws):
                b[B + j * k + c] = b[B + j * k + c] / d
            {BARRIER}
            for e in range(t, j * k, ws):
                i = e // k
                c = e % k
                b[B + i * k + c] = b[B + i * k + c] - a[A + i * n + j] * b[B + j * k + c]
            {BARRIER}
'''


def lu_solve(a: DeviceArray, b: "DeviceArray | None") -> "tuple[DeviceArray, DeviceArray, DeviceArray]":
    """Factor each matrix of ``a`` (a fresh C-contiguous (batch, n, n) float array, overwritten by
    its LU factors) and solve for ``b`` ((batch, n, k) of the same dtype, overwritten by the
    solution; None: determinants only). Returns ``(sign, logdet, info)`` per matrix, ``info``
    1 where a pivot is exactly zero (numpy's "Singular matrix"; ``b`` is then not solved)."""
    vendor = vendor_lu_solve(a, b)         # cuSOLVER on CUDA, where installed
    if vendor is not None:
        return vendor
    batch, n = a.shape[0], a.shape[1]
    dt = a.dtype
    real = np.dtype(dt.char.lower()) if dt.kind == "c" else dt
    ctx = a.context
    sign = DeviceArray((batch,), dt, ctx)
    logdet = DeviceArray((batch,), real, ctx)
    info = DeviceArray((batch,), np.dtype(np.int32), ctx)
    k = 0 if b is None else b.shape[2]
    rhs = DeviceArray((1,), dt, ctx) if b is None or b.size == 0 else b
    if batch:
        name = f"gnp_linalg_lu_{dt.name}"
        source = _SOURCE.format(name=name, T=scalar_type(dt), R=scalar_type(real), BARRIER=BARRIER, MAG=_MAG[dt.kind],
                                SIGN=_SIGN[dt.kind].format(T=scalar_type(dt)))
        kern = kernel_from_source(name, source, helpers={"cabs1": cabs1}, contract=False)
        launch(kern, a.device, group_grid(batch, n * max(k, 1)),
               (a.reshape(-1), rhs.reshape(-1), sign, logdet, info, n, k))
    return sign, logdet, info
