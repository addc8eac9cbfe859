"""``gnp.linalg`` (``pygpgpu.numpy.linalg``): numpy.linalg's functions on device arrays, over stacks
(..., M, N) of matrices as numpy takes them, with numpy's dtypes, shapes and errors
(``LinAlgError`` is numpy's own class).

Every function runs on the device through gnp's own kernels (one work group per matrix): LU
with partial pivoting (det, slogdet, solve, inv), Cholesky, Householder QR with LAPACK's
reflectors, Jacobi for eigh and svd, the shifted QR algorithm for eig; norms and products are device reductions and matmuls.
Functions that must raise ``LinAlgError`` (solve, inv, cholesky) read one flag per matrix back
to know; ``lstsq`` reads its rank back, as numpy returns it as an int. complex64/complex128
matrices work everywhere (real eigenvalues, singular values and norms, as numpy).
docs/device-arrays.md lists what runs where.
"""
from __future__ import annotations

from ._array_api import cross, diagonal, matmul, matrix_transpose, outer, tensordot, trace, vecdot
from ._decompositions import eigh, eigvalsh, qr, svd, svdvals
from ._general_eigen import eig, eigvals
from ._least_squares import lstsq, matrix_rank, pinv
from ._norms import cond, matrix_norm, norm, vector_norm
from ._operands import LinAlgError
from ._products import matrix_power, multi_dot
from ._results import EigResult, EighResult, QRResult, SlogdetResult, SVDResult
from ._solve import cholesky, det, inv, slogdet, solve
from ._tensor import tensorinv, tensorsolve

__all__ = ["LinAlgError", "norm", "vector_norm", "matrix_norm", "cond", "det", "slogdet", "solve", "inv", "cholesky",
           "qr", "eigh", "eigvalsh", "svd", "svdvals", "lstsq", "pinv", "matrix_rank", "matrix_power", "multi_dot",
           "EigResult", "EighResult", "QRResult", "SlogdetResult", "SVDResult", "eig", "eigvals", "tensorsolve", "tensorinv",
           "matmul", "tensordot", "outer", "trace", "diagonal", "matrix_transpose", "vecdot", "cross"]

