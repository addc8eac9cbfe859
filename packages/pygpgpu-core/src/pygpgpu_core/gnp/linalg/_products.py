"""``matrix_power`` (repeated squaring; negative powers through :func:`inv`) and ``multi_dot``
(numpy's cheapest parenthesisation of the chain), over gnp's matmul/dot kernels."""
from __future__ import annotations

import operator
from typing import Any


from .._array import DeviceArray
from .._functions import dot, matmul
from .._patterns import eye
from .._views import broadcast_to, device_operand
from ._operands import LinAlgError, square_operand
from ._solve import inv

__all__ = ["matrix_power", "multi_dot"]


def matrix_power(a: Any, n: Any) -> DeviceArray:
    """``a`` multiplied by itself ``n`` times (stacks too): n == 0 gives the identity in a's dtype,
    n < 0 powers the inverse (float64 for integer matrices, as numpy)."""
    a = square_operand(a, "matrix_power")
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError("exponent must be an integer") from None
    if n == 0:
        return broadcast_to(eye(a.shape[-1], dtype=a.dtype, device=a.device), a.shape).copy()
    if n < 0:
        a = inv(a)
        n = -n
    if n == 1:
        return a.copy()
    result = None
    z = a
    while True:          # binary decomposition, as numpy: fewest products
        if n & 1:
            result = z if result is None else matmul(result, z)
        n >>= 1
        if not n:
            break
        z = matmul(z, z)
    assert result is not None
    return result


def _chain_order(shapes: "list[tuple[int, int]]") -> "list[list[int]]":
    """The split points of the cheapest parenthesisation (the textbook dynamic programme numpy uses)."""
    n = len(shapes)
    p = [shapes[0][0]] + [s[1] for s in shapes]
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = -1
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + p[i] * p[k + 1] * p[j + 1]
                if cost[i][j] < 0 or c < cost[i][j]:
                    cost[i][j] = c
                    split[i][j] = k
    return split


def _multiply_chain(arrays: list, split: "list[list[int]]", i: int, j: int) -> DeviceArray:
    if i == j:
        return arrays[i]
    k = split[i][j]
    return dot(_multiply_chain(arrays, split, i, k), _multiply_chain(arrays, split, k + 1, j))


def multi_dot(arrays: Any, *, out: Any = None) -> DeviceArray:
    """The product of a chain of matrices in the cheapest order; the first may be 1-D (a row)
    and the last 1-D (a column), as numpy's ``multi_dot``."""
    arrays = [device_operand(a, "linalg.multi_dot") for a in arrays]
    if len(arrays) < 2:
        raise ValueError("Expecting at least two arrays.")
    if len(arrays) == 2:
        result = dot(arrays[0], arrays[1])
    else:
        first_1d, last_1d = arrays[0].ndim == 1, arrays[-1].ndim == 1
        if first_1d:
            arrays[0] = arrays[0].reshape(1, -1)
        if last_1d:
            arrays[-1] = arrays[-1].reshape(-1, 1)
        for a in arrays:
            if a.ndim != 2:
                raise LinAlgError(f"{a.ndim}-dimensional array given. Array must be two-dimensional")
        result = _multiply_chain(arrays, _chain_order([a.shape for a in arrays]), 0, len(arrays) - 1)
        if first_1d and last_1d:
            result = result.reshape(())
        elif first_1d:
            result = result.reshape(-1)
        elif last_1d:
            result = result.reshape(-1)
    if out is not None:
        out[...] = result
        return out
    return result


