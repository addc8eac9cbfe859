"""``gnp.linalg.qr``'s kernels: Householder QR with LAPACK's reflectors (geqr2/larfg: ``beta =
-sign(alpha) * norm``, ``v[0] = 1``, no reflection where the column below the diagonal is zero),
so Q and R carry numpy's signs (complex: zlarfg's real beta and complex tau, H^H applied while
factoring); Q is accumulated backwards as LAPACK's org2r/ung2r does. One work
group per matrix of a stack; its work items split the columns a reflector updates."""
from __future__ import annotations

from pygpgpu_core.gnp import DeviceArray

from ._codegen import kernel_from_source, launch
from ._linalg_common import BARRIER, group_grid, scalar_type
from ._linalg_parts import parts, real_type

__all__ = ["householder_qr", "form_qr"]

_FACTOR = '''def {name}(a, tau, m, n, k):
    g = gpu.get_group_id(0)
    t = gpu.get_local_id(0)
    ws = gpu.get_local_size(0)
    A = g * m * n
    for j in range(k):
        alpha = a[A + j * n + j]
        xs = {R}(0)
        for i in range(j + 1, m):
            xs = xs + abs2(a[A + i * n + j])
        tj = {T}(0)
        if xs != {R}(0) or im(alpha) != {R}(0):
            beta = -math.copysign(math.sqrt(abs2(alpha) + xs), re(alpha))
            tj = ({T}(beta) - alpha) / {T}(beta)
            scale = {T}(1) / (alpha - {T}(beta))
            {BARRIER}
            for i in range(j + 1 + t, m, ws):
                a[A + i * n + j] = a[A + i * n + j] * scale
            if t == 0:
                a[A + j * n + j] = {T}(beta)
            {BARRIER}
            for c in range(j + 1 + t, n, ws):
                w = a[A + j * n + c]
                for i in range(j + 1, m):
                    w = w + conj(a[A + i * n + j]) * a[A + i * n + c]
                w = w * conj(tj)
                a[A + j * n + c] = a[A + j * n + c] - w
                for i in range(j + 1, m):
                    a[A + i * n + c] = a[A + i * n + c] - a[A + i * n + j] * w
        if t == 0:
            tau[g * k + j] = tj
        {BARRIER}
'''

_FORM = '''def {name}(a, tau, q, r, m, n, k, mq, mr):
    g = gpu.get_group_id(0)
    t = gpu.get_local_id(0)
    ws = gpu.get_local_size(0)
    A = g * m * n
    Q = g * m * mq
    R = g * mr * n
    for e in range(t, mr * n, ws):
        i = e // n
        c = e % n
        r[R + e] = a[A + i * n + c] if c >= i else {T}(0)
    if mq > 0:
        for e in range(t, m * mq, ws):
            q[Q + e] = {T}(1) if e // mq == e % mq else {T}(0)
        {BARRIER}
        for jj in range(k):
            j = k - 1 - jj
            tj = tau[g * k + j]
            if tj != {T}(0):
                for c in range(j + t, mq, ws):
                    w = q[Q + j * mq + c]
                    for i in range(j + 1, m):
                        w = w + conj(a[A + i * n + j]) * q[Q + i * mq + c]
                    w = w * tj
                    q[Q + j * mq + c] = q[Q + j * mq + c] - w
                    for i in range(j + 1, m):
                        q[Q + i * mq + c] = q[Q + i * mq + c] - a[A + i * n + j] * w
            {BARRIER}
'''


def householder_qr(a: DeviceArray) -> DeviceArray:
    """Overwrite each matrix of ``a`` (a fresh C-contiguous (batch, m, n) float array) by LAPACK
    geqrf's output (R on and above the diagonal, the reflectors below); returns tau (batch, min(m, n))."""
    batch, m, n = a.shape
    k = min(m, n)
    tau = DeviceArray((batch, k), a.dtype, a.context)
    if batch and k:
        name = f"gnp_linalg_geqrf_{a.dtype.name}"
        source = _FACTOR.format(name=name, T=scalar_type(a.dtype), R=scalar_type(real_type(a.dtype)), BARRIER=BARRIER)
        kern = kernel_from_source(name, source, helpers=parts(a.dtype), contract=False)
        launch(kern, a.device, group_grid(batch, max(m, n)), (a.reshape(-1), tau.reshape(-1), m, n, k))
    return tau


def form_qr(a: DeviceArray, tau: DeviceArray, q_columns: int, r_rows: int) -> "tuple[DeviceArray | None, DeviceArray]":
    """Q (batch, m, q_columns; None when q_columns is 0) and R (batch, r_rows, n) from
    :func:`householder_qr`'s output."""
    batch, m, n = a.shape
    k = tau.shape[1]
    q = DeviceArray((batch, m, q_columns), a.dtype, a.context)
    r = DeviceArray((batch, r_rows, n), a.dtype, a.context)
    if batch and (q.size or r.size):
        name = f"gnp_linalg_orgqr_{a.dtype.name}"
        kern = kernel_from_source(name, _FORM.format(name=name, T=scalar_type(a.dtype), BARRIER=BARRIER),
                                  helpers=parts(a.dtype), contract=False)
        qa = q if q.size else DeviceArray((1,), a.dtype, a.context)
        ra = r if r.size else DeviceArray((1,), a.dtype, a.context)
        ta = tau if tau.size else DeviceArray((1,), a.dtype, a.context)
        launch(kern, a.device, group_grid(batch, max(m, n)),
               (a.reshape(-1), ta.reshape(-1), qa.reshape(-1), ra.reshape(-1), m, n, k, q_columns, r_rows))
    return (q if q_columns else None), r
