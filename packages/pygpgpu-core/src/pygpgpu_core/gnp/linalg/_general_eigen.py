"""``eig`` and ``eigvals`` of general (non-symmetric) matrices: complex Schur form by the shifted
QR algorithm (one work item per matrix). The results are always complex, as CuPy returns them;
numpy returns real arrays when every eigenvalue of a real matrix is real (compare
``w.real`` then)."""
from __future__ import annotations

from typing import Any

import numpy as np

from .._array import DeviceArray
from .._creation import zeros
from .._dispatch import ops
from ._operands import compute_dtype, raise_if, square_operand, work_copy
from ._results import EigResult

__all__ = ["eig", "eigvals"]


def _complex_type(a: DeviceArray, op: str) -> np.dtype:
    dt = compute_dtype(a.dtype, op=op)
    return np.dtype(np.complex64) if dt in (np.float32, np.complex64) else np.dtype(np.complex128)


def _schur(a: Any, op: str, vectors: bool) -> "tuple[DeviceArray, DeviceArray | None, tuple]":
    a = square_operand(a, op)
    ct = _complex_type(a, op)
    if a.size == 0:
        return zeros(a.shape[:-1], ct, a.device), zeros(a.shape, ct, a.device), a.shape
    w, v, info = ops().schur_eig(work_copy(a, ct), vectors)
    raise_if(info, "Eigenvalues did not converge")
    return w, v, a.shape


def eig(a: Any) -> EigResult:
    """Eigenvalues and right eigenvectors (columns, unit 2-norm with the largest component real, as
    LAPACK's geev scales them) of each square matrix; complex, in the Schur form's order."""
    w, v, shape = _schur(a, "eig", True)
    assert v is not None
    return EigResult(w.reshape(shape[:-1]), v.reshape(shape))


def eigvals(a: Any) -> DeviceArray:
    """The eigenvalues of each square matrix (complex), in the Schur form's order."""
    w, _, shape = _schur(a, "eigvals", False)
    return w.reshape(shape[:-1])
