"""``gnp.linalg.eigh`` and ``svd``'s kernels: Jacobi rotations in round-robin order, so that each
step rotates n/2 disjoint pairs of indices at once (one work group per matrix of a stack).

- eigh: two-sided Jacobi on the symmetric/Hermitian matrix (its lower or upper triangle mirrored
  first; complex rotations carry the phase of the element they zero),
  sweeps until the off-diagonal part is below ``eps * ||A||_F``; eigenvalues ascending with
  their eigenvectors as columns (numpy's order; each vector's sign is the algorithm's own).
- svd: one-sided Jacobi (Hestenes) on the columns of an m x n matrix with m >= n, until every
  pair of columns is orthogonal to ``tol``; singular values descending, U's columns the
  normalised columns (zero where a singular value is 0: gnp.linalg completes them), V from the
  accumulated rotations.
"""
from __future__ import annotations

import numpy as np
from pygpgpu_core.gnp import DeviceArray

from ._codegen import kernel_from_source, launch
from ._linalg_common import BARRIER, group_grid, scalar_type
from ._linalg_parts import parts, real_type
from ._linalg_vendor import vendor_eigh

__all__ = ["jacobi_eigh", "jacobi_svd"]

MAX_SWEEPS = 60

# Sorting is by rank (how many values go before each), with NaN after every number and ties in
# index order, so that the ranks are a permutation even for non-finite input (no slot unwritten).

# the pair (p, q), p < q, that pair slot pk of round r joins (the circle method over mm players;
# q >= n is the bye of an odd n)
_PAIR = (
    "p = 0 if pk == 0 else (pk - 1 + r) % (mm - 1) + 1",
    "q = (mm - 2 - pk + r) % (mm - 1) + 1",
    "if p > q:",
    "    sw = p",
    "    p = q",
    "    q = sw",
)

_EIGH = '''def {name}(a, v, cs, w, vout, n, upper, tol2):
    g = gpu.get_group_id(0)
    t = gpu.get_local_id(0)
    ws = gpu.get_local_size(0)
    done = gpu.local_array(1, np.int32)
    A = g * n * n
    mm = n + n % 2
    half = mm // 2
    C = g * half
    for e in range(t, n * n, ws):
        i = e // n
        c = e % n
        v[A + e] = {T}(1) if i == c else {T}(0)
        if c > i and upper == 0:
            a[A + e] = conj(a[A + c * n + i])
        if c < i and upper != 0:
            a[A + e] = conj(a[A + c * n + i])
        if c == i:
            a[A + e] = {T}(re(a[A + e]))
    {BARRIER}
    for sweep in range({SWEEPS}):
        if t == 0:
            off = {R}(0)
            fro = {R}(0)
            for e in range(n * n):
                x2 = abs2(a[A + e])
                fro = fro + x2
                if e // n != e % n:
                    off = off + x2
            done[0] = 1 if off <= tol2 * fro else 0
        {BARRIER}
        if done[0] != 0:
            break
        for r in range(mm - 1):
            for pk in range(t, half, ws):
{PAIR}
                co = {R}(1)
                si = {R}(0)
                ph = {T}(1)
                if q < n:
                    apq = a[A + p * n + q]
                    gg = math.sqrt(abs2(apq))
                    if gg != {R}(0):
                        ph = apq / {T}(gg)
                        theta = (re(a[A + q * n + q]) - re(a[A + p * n + p])) / ({R}(2) * gg)
                        tt = math.copysign({R}(1), theta) / (abs(theta) + math.hypot(theta, {R}(1)))
                        co = {R}(1) / math.sqrt(tt * tt + {R}(1))
                        si = tt * co
                cs[3 * (C + pk)] = {T}(co)
                cs[3 * (C + pk) + 1] = {T}(si)
                cs[3 * (C + pk) + 2] = ph
            {BARRIER}
            for e in range(t, n * half, ws):
                i = e // half
                pk = e % half
{PAIR}
                if q < n and cs[3 * (C + pk) + 1] != {T}(0):       # (identity rotations skipped: NaN stays put)
                    co = cs[3 * (C + pk)]
                    sp = cs[3 * (C + pk) + 1] * cs[3 * (C + pk) + 2]
                    x = a[A + i * n + p]
                    y = a[A + i * n + q]
                    a[A + i * n + p] = co * x - conj(sp) * y
                    a[A + i * n + q] = sp * x + co * y
                    x = v[A + i * n + p]
                    y = v[A + i * n + q]
                    v[A + i * n + p] = co * x - conj(sp) * y
                    v[A + i * n + q] = sp * x + co * y
            {BARRIER}
            for e in range(t, n * half, ws):
                i = e % n
                pk = e // n
{PAIR}
                if q < n and cs[3 * (C + pk) + 1] != {T}(0):       # (identity rotations skipped: NaN stays put)
                    co = cs[3 * (C + pk)]
                    sp = cs[3 * (C + pk) + 1] * cs[3 * (C + pk) + 2]
                    x = a[A + p * n + i]
                    y = a[A + q * n + i]
                    a[A + p * n + i] = co * x - sp * y if i != q else {T}(0)
                    a[A + q * n + i] = conj(sp) * x + co * y if i != p else {T}(0)
            {BARRIER}
    for i in range(t, n, ws):
        d = re(a[A + i * n + i])
        rank = 0
        for j in range(n):
            dj = re(a[A + j * n + j])
            if dj < d or (d != d and dj == dj) or ((dj == d or (d != d and dj != dj)) and j < i):
                rank += 1
        w[g * n + rank] = d
        for row in range(n):
            vout[A + row * n + rank] = v[A + row * n + i]
'''

_SVD = '''def {name}(a, v, s, u, vt, m, n, tol):
    g = gpu.get_group_id(0)
    t = gpu.get_local_id(0)
    ws = gpu.get_local_size(0)
    rotated = gpu.local_array(1, np.int32)
    A = g * m * n
    V = g * n * n
    mm = n + n % 2
    half = mm // 2
    for e in range(t, n * n, ws):
        v[V + e] = {T}(1) if e // n == e % n else {T}(0)
    for sweep in range({SWEEPS}):
        if t == 0:
            rotated[0] = 0
        {BARRIER}
        for r in range(mm - 1):
            for pk in range(t, half, ws):
{PAIR}
                if q < n:
                    al = {R}(0)
                    be = {R}(0)
                    ga = {T}(0)
                    for i in range(m):
                        x = a[A + i * n + p]
                        y = a[A + i * n + q]
                        al = al + abs2(x)
                        be = be + abs2(y)
                        ga = ga + conj(x) * y
                    gg = math.sqrt(abs2(ga))
                    if gg > tol * math.sqrt(al) * math.sqrt(be):
                        rotated[0] = 1
                        zeta = (be - al) / ({R}(2) * gg)
                        tt = math.copysign({R}(1), zeta) / (abs(zeta) + math.hypot(zeta, {R}(1)))
                        co = {T}({R}(1) / math.sqrt(tt * tt + {R}(1)))
                        sp = co * {T}(tt) * (ga / {T}(gg))
                        for i in range(m):
                            x = a[A + i * n + p]
                            y = a[A + i * n + q]
                            a[A + i * n + p] = co * x - conj(sp) * y
                            a[A + i * n + q] = sp * x + co * y
                        for i in range(n):
                            x = v[V + i * n + p]
                            y = v[V + i * n + q]
                            v[V + i * n + p] = co * x - conj(sp) * y
                            v[V + i * n + q] = sp * x + co * y
            {BARRIER}
        if rotated[0] == 0:
            break
        {BARRIER}
    for j in range(t, n, ws):
        nj = {R}(0)
        for i in range(m):
            nj = nj + abs2(a[A + i * n + j])
        s[g * n + j] = math.sqrt(nj)
    {BARRIER}
    for j in range(t, n, ws):
        sj = s[g * n + j]
        rank = 0
        for l in range(n):
            sl = s[g * n + l]
            if sl > sj or (sj != sj and sl == sl) or ((sl == sj or (sj != sj and sl != sl)) and l < j):
                rank += 1
        for i in range(m):
            u[A + i * n + rank] = a[A + i * n + j] / {T}(sj) if sj > {R}(0) else {T}(0)
        for i in range(n):
            vt[V + rank * n + i] = conj(v[V + i * n + j])
    {BARRIER}
    for j in range(t, n, ws):
        sj = s[g * n + j]
        rank = 0
        for l in range(n):
            sl = s[g * n + l]
            if sl > sj or (sj != sj and sl == sl) or ((sl == sj or (sj != sj and sl != sl)) and l < j):
                rank += 1
        a[A + rank] = {T}(sj)
    {BARRIER}
    for j in range(t, n, ws):
        s[g * n + j] = re(a[A + j])
'''


def _pair(indent: str) -> str:
    return "".join(f"{indent}{line}\n" for line in _PAIR)


# the tolerances are passed in the matrix's real type: a float32 kernel stays free of float64 (devices without fp64)


def _source(template: str, name: str, dt: np.dtype) -> str:
    body = template.replace("{PAIR}\n", _pair(" " * 16))
    return body.format(name=name, T=scalar_type(dt), R=scalar_type(real_type(dt)), BARRIER=BARRIER, SWEEPS=MAX_SWEEPS)


def jacobi_eigh(a: DeviceArray, upper: bool) -> "tuple[DeviceArray, DeviceArray]":
    """Eigenvalues (batch, n) ascending (real) and eigenvectors (batch, n, n) as columns of each
    symmetric or Hermitian matrix of ``a`` (a fresh C-contiguous (batch, n, n) array, overwritten),
    reading its lower (or, ``upper``, its upper) triangle and the real part of its diagonal."""
    vendor = vendor_eigh(a, upper)         # cuSOLVER on CUDA, where installed
    if vendor is not None:
        return vendor
    batch, n = a.shape[0], a.shape[1]
    dt, ctx = a.dtype, a.context
    w = DeviceArray((batch, n), real_type(dt), ctx)
    vout = DeviceArray((batch, n, n), dt, ctx)
    if batch and n:
        v = DeviceArray((batch, n, n), dt, ctx)
        cs = DeviceArray((batch * 3 * ((n + 1) // 2) + 3,), dt, ctx)
        name = f"gnp_linalg_jacobi_eigh_{dt.name}"
        kern = kernel_from_source(name, _source(_EIGH, name, dt), helpers=parts(dt), contract=False)
        eps = float(np.finfo(dt).eps)
        launch(kern, a.device, group_grid(batch, n * ((n + 1) // 2)),
               (a.reshape(-1), v.reshape(-1), cs, w.reshape(-1), vout.reshape(-1), n, int(upper), real_type(dt).type(eps * eps)))
    return w, vout


def jacobi_svd(a: DeviceArray) -> "tuple[DeviceArray, DeviceArray, DeviceArray]":
    """``(u, s, vh)`` of each matrix of ``a`` (a fresh C-contiguous (batch, m, n) array with
    m >= n, overwritten): u (batch, m, n) with zero columns where s is 0, s (batch, n) real and
    descending, vh (batch, n, n) (V's conjugate transpose)."""
    batch, m, n = a.shape
    dt, ctx = a.dtype, a.context
    s = DeviceArray((batch, n), real_type(dt), ctx)
    u = DeviceArray((batch, m, n), dt, ctx)
    vt = DeviceArray((batch, n, n), dt, ctx)
    if batch and n:
        v = DeviceArray((batch, n, n), dt, ctx)
        name = f"gnp_linalg_jacobi_svd_{dt.name}"
        kern = kernel_from_source(name, _source(_SVD, name, dt), helpers=parts(dt), contract=False)
        tol = float(np.finfo(dt).eps) * max(m, 1) ** 0.5
        launch(kern, a.device, group_grid(batch, (n + 1) // 2),
               (a.reshape(-1), v.reshape(-1), s.reshape(-1), u.reshape(-1), vt.reshape(-1), m, n, real_type(dt).type(tol)))
    return u, s, vt
