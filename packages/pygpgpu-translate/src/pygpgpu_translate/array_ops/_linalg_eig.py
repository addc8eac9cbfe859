"""``gnp.linalg.eig``/``eigvals``'s kernel for general (non-symmetric) matrices, in complex
arithmetic: Householder reduction to Hessenberg form (LAPACK's reflectors), then the shifted QR
algorithm (Wilkinson shifts from the trailing 2 x 2 block, an exceptional shift every tenth
step, Givens rotations) to the complex Schur form T = Z^H A Z, whose diagonal holds the
eigenvalues; eigenvectors by back substitution in T, mapped through Z and scaled as LAPACK's
geev scales them (unit 2-norm, largest component real). One work item per matrix of a stack:
the iteration is sequential, so this suits stacks of small and medium matrices."""
from __future__ import annotations

import cmath

import numpy as np
from pygpgpu_core.gnp import DeviceArray

from ._codegen import grid, kernel_from_source, launch
from ._linalg_common import scalar_type
from ._linalg_parts import parts, real_type

__all__ = ["schur_eig"]

MAX_STEPS_PER_EIGENVALUE = 30      # LAPACK's limit; info 1 past it ("Eigenvalues did not converge")

_SOURCE = '''def {name}(h, z, x, w, vec, info, n, vectors, eps):
    g = gpu.get_global_id(0)
    H = g * n * n
    X = g * n
    for e in range(n * n):
        z[H + e] = {T}(1) if e // n == e % n else {T}(0)
    for j in range(n - 2):
        xs = {R}(0)
        for i in range(j + 2, n):
            xs = xs + abs2(h[H + i * n + j])
        alpha = h[H + (j + 1) * n + j]
        if xs != {R}(0) or im(alpha) != {R}(0):
            beta = -math.copysign(math.sqrt(abs2(alpha) + xs), re(alpha))
            tau = ({T}(beta) - alpha) / {T}(beta)
            scale = {T}(1) / (alpha - {T}(beta))
            for i in range(j + 2, n):
                h[H + i * n + j] = h[H + i * n + j] * scale
            h[H + (j + 1) * n + j] = {T}(beta)
            for c in range(j + 1, n):
                s = h[H + (j + 1) * n + c]
                for i in range(j + 2, n):
                    s = s + conj(h[H + i * n + j]) * h[H + i * n + c]
                s = s * conj(tau)
                h[H + (j + 1) * n + c] = h[H + (j + 1) * n + c] - s
                for i in range(j + 2, n):
                    h[H + i * n + c] = h[H + i * n + c] - h[H + i * n + j] * s
            for r in range(n):
                s = h[H + r * n + j + 1]
                sz = z[H + r * n + j + 1]
                for i in range(j + 2, n):
                    s = s + h[H + r * n + i] * h[H + i * n + j]
                    sz = sz + z[H + r * n + i] * h[H + i * n + j]
                s = s * tau
                sz = sz * tau
                h[H + r * n + j + 1] = h[H + r * n + j + 1] - s
                z[H + r * n + j + 1] = z[H + r * n + j + 1] - sz
                for i in range(j + 2, n):
                    h[H + r * n + i] = h[H + r * n + i] - s * conj(h[H + i * n + j])
                    z[H + r * n + i] = z[H + r * n + i] - sz * conj(h[H + i * n + j])
            for i in range(j + 2, n):
                h[H + i * n + j] = {T}(0)
    hi = n - 1
    it = 0
    steps = 0
    bad = 0
    while hi > 0:
        l = hi
        while l > 0:
            if abs1(h[H + l * n + l - 1]) <= eps * (abs1(h[H + (l - 1) * n + l - 1]) + abs1(h[H + l * n + l])):
                h[H + l * n + l - 1] = {T}(0)
                break
            l -= 1
        if l == hi:
            hi -= 1
            it = 0
            continue
        if steps >= {MAX_STEPS} * n:
            bad = 1
            break
        it += 1
        steps += 1
        d = h[H + hi * n + hi]
        mu = d
        if it % 10 == 0:
            mu = d + {T}(abs1(h[H + hi * n + hi - 1]))
        else:
            a0 = h[H + (hi - 1) * n + hi - 1]
            half = (a0 - d) * {T}(0.5)
            disc = cmath.sqrt(half * half + h[H + (hi - 1) * n + hi] * h[H + hi * n + hi - 1])
            mu1 = d + half + disc
            mu2 = d + half - disc
            mu = mu1 if abs2(mu1 - d) < abs2(mu2 - d) else mu2
        for k in range(l, hi + 1):
            h[H + k * n + k] = h[H + k * n + k] - mu
        for k in range(l, hi):
            p0 = h[H + k * n + k]
            q0 = h[H + (k + 1) * n + k]
            rr = math.sqrt(abs2(p0) + abs2(q0))
            co = {T}(1)
            sn = {T}(0)
            if rr != {R}(0):
                co = p0 / {T}(rr)
                sn = q0 / {T}(rr)
            x[X + k] = sn
            w[X + k] = co
            for c in range(k, n):
                p = h[H + k * n + c]
                q = h[H + (k + 1) * n + c]
                h[H + k * n + c] = conj(co) * p + conj(sn) * q
                h[H + (k + 1) * n + c] = co * q - sn * p
        for k in range(l, hi):
            co = w[X + k]
            sn = x[X + k]
            for r in range(k + 2):
                p = h[H + r * n + k]
                q = h[H + r * n + k + 1]
                h[H + r * n + k] = p * co + q * sn
                h[H + r * n + k + 1] = q * conj(co) - p * conj(sn)
            for r in range(n):
                p = z[H + r * n + k]
                q = z[H + r * n + k + 1]
                z[H + r * n + k] = p * co + q * sn
                z[H + r * n + k + 1] = q * conj(co) - p * conj(sn)
        for k in range(l, hi + 1):
            h[H + k * n + k] = h[H + k * n + k] + mu
    info[g] = bad
    norm = {R}(0)
    for e in range(n * n):
        norm = norm + abs1(h[H + e])
    small = eps * norm if norm > {R}(0) else eps
    for k in range(n):
        w[X + k] = h[H + k * n + k]
    if vectors != 0:
        for k in range(n):
            lam = h[H + k * n + k]
            x[X + k] = {T}(1)
            for jj in range(k):
                j = k - 1 - jj
                s = {T}(0)
                for i in range(j + 1, k + 1):
                    s = s + h[H + j * n + i] * x[X + i]
                den = h[H + j * n + j] - lam
                if abs1(den) < small:
                    den = {T}(small)
                x[X + j] = -s / den
            nrm = {R}(0)
            big = {R}(-1)
            lead = {T}(1)
            for r in range(n):
                s = {T}(0)
                for i in range(k + 1):
                    s = s + z[H + r * n + i] * x[X + i]
                vec[H + r * n + k] = s
                nrm = nrm + abs2(s)
                if abs2(s) > big:
                    big = abs2(s)
                    lead = s
            phase = conj(lead) / {T}(math.sqrt(big)) if big > {R}(0) else {T}(1)
            scale = phase / {T}(math.sqrt(nrm)) if nrm > {R}(0) else {T}(1)
            for r in range(n):
                vec[H + r * n + k] = vec[H + r * n + k] * scale
'''


def _abs1(z):  # (a kernel helper: LAPACK's cabs1, |re| + |im|)
    return abs(z.real) + abs(z.imag)


def schur_eig(a: DeviceArray, vectors: bool) -> "tuple[DeviceArray, DeviceArray | None, DeviceArray]":
    """Eigenvalues (batch, n) and, when ``vectors``, eigenvectors (batch, n, n) as columns of each
    matrix of ``a`` (a fresh C-contiguous complex (batch, n, n) array, overwritten by its Schur
    form); ``info`` per matrix, 1 where the QR iteration did not converge."""
    batch, n = a.shape[0], a.shape[1]
    dt, ctx = a.dtype, a.context
    w = DeviceArray((batch, n), dt, ctx)
    vec = DeviceArray((batch, n, n), dt, ctx) if vectors else DeviceArray((1,), dt, ctx)
    info = DeviceArray((batch,), np.dtype(np.int32), ctx)
    if batch and n:
        z = DeviceArray((batch, n, n), dt, ctx)
        x = DeviceArray((batch, n), dt, ctx)
        name = f"gnp_linalg_schur_{dt.name}"
        source = _SOURCE.format(name=name, T=scalar_type(dt), R=scalar_type(real_type(dt)), MAX_STEPS=MAX_STEPS_PER_EIGENVALUE)
        helpers = dict(parts(dt), abs1=_abs1, cmath=cmath)
        kern = kernel_from_source(name, source, helpers=helpers, contract=False)
        launch(kern, a.device, grid(batch, 1),
               (a.reshape(-1), z.reshape(-1), x.reshape(-1), w.reshape(-1), vec.reshape(-1), info, n, int(vectors),
                real_type(dt).type(np.finfo(dt).eps)))
    return w, (vec if vectors else None), info
