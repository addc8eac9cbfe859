"""``gnp.einsum``: numpy's Einstein summation, composed of device operations.

Each operand first loses its repeated labels (``ii`` -> its diagonal) and the labels no other operand
and not the output uses (summed at once); then the operands are contracted left to right, two at a
time, as one batched ``matmul``: labels both share and something later needs are the batch, labels
both share and nothing later needs are contracted, the others are kept. Nothing is built larger than
the operands and the result of each pair, and the products run where gnp's matmul runs (cuBLAS on
CUDA where installed). Types follow numpy's einsum: the operands' result type, not sum's widening
(an int32 einsum stays int32; a bool one is a logical and/or).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ._array import DeviceArray
from ._dispatch import ops
from ._views import broadcast_to, device_operand, diagonal

__all__ = ["einsum"]

_ELLIPSIS_LABELS = [chr(0x2460 + k) for k in range(32)]     # private labels for the '...' axes


def einsum(*operands: Any, out: Any = None, dtype: Any = None, order: Any = "K", casting: Any = "safe",
           optimize: Any = False) -> DeviceArray:
    """numpy's ``einsum(subscripts, *operands)`` (explicit ``->`` or implicit output, ``...``,
    repeated labels, ``dtype=``, ``casting=``, ``out=``) and its interleaved form
    ``einsum(a, [0, 1], b, [1, 2], [0, 2])``; ``optimize`` is accepted and the pairwise left-to-right
    order always used."""
    if not operands:
        raise ValueError("must specify the einstein sum subscripts string and at least one operand")
    if not isinstance(operands[0], str):
        operands = _from_sublists(operands)
    subscripts, arrays = operands[0], [device_operand(a, "einsum") for a in operands[1:]]
    inputs, output = _parse(subscripts.replace(" ", ""), [a.ndim for a in arrays])
    result_type = np.result_type(*[a.dtype for a in arrays]) if dtype is None else np.dtype(dtype)
    for a in arrays:
        if not np.can_cast(a.dtype, result_type, casting=casting):
            raise TypeError(f"Cannot cast array data from {a.dtype!r} to {result_type!r} according to the rule "
                            f"{casting!r}")
    terms = [(a.astype(result_type, copy=False), labels) for a, labels in zip(arrays, inputs)]
    _check_sizes(terms)
    terms = [_reduce_alone(_take_diagonals(a, labels), [t[1] for j, t in enumerate(terms) if j != k], output)
             for k, (a, labels) in enumerate(terms)]
    a, labels = terms[0]
    for k in range(1, len(terms)):
        later = output + "".join(t[1] for t in terms[k + 1:])
        a, labels = _contract(a, labels, *terms[k], later)
    a, labels = _reduce_alone((a, labels), [], output)
    result = a.transpose([labels.index(c) for c in output]) if labels != output else a
    if out is not None:
        from ._copying import copyto
        copyto(out, result, casting=casting)
        return out
    return result if result.dtype == result_type else result.astype(result_type)


def _from_sublists(args: tuple) -> tuple:
    """numpy's interleaved form ``einsum(a, [0, 1], b, [1, 2], [0, 2])`` as the string form."""
    def letters(sublist: Any) -> str:
        out = []
        for k in sublist:
            if k is Ellipsis:
                out.append("...")
            elif isinstance(k, (int, np.integer)) and 0 <= k < 52:
                out.append("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"[k])
            else:
                raise ValueError("subscript is not within the valid range [0, 52)")
        return "".join(out)

    arrays, subs = list(args[0::2]), [letters(s) for s in args[1::2]]
    output = None
    if len(arrays) > len(subs):          # an odd count: the last item is the output sublist
        output = letters(arrays.pop())
    text = ",".join(subs) + ("" if output is None else "->" + output)
    return (text, *arrays)


def _parse(subscripts: str, ndims: list) -> "tuple[list[str], str]":
    """The label string of each operand and of the output, ``...`` spelled as private labels."""
    head, arrow, tail = subscripts.partition("->")
    parts = head.split(",")
    if len(parts) != len(ndims):
        raise ValueError("more operands provided to einsum function than specified in the subscripts string"
                         if len(ndims) > len(parts) else "fewer operands provided to einsum function than specified "
                         "in the subscripts string")
    for text in parts + [tail]:
        bad = [c for c in text.replace("...", "") if not c.isalpha()]
        if bad:
            raise ValueError(f"invalid subscript {bad[0]!r} in einstein sum subscripts string, subscripts must be "
                             "letters")
    widths = []
    for text, nd in zip(parts, ndims):
        named = len(text.replace("...", ""))
        if "..." not in text and named != nd or named > nd:
            raise ValueError("operand has more dimensions than subscripts given in einstein sum, but no '...' "
                             "ellipsis provided to broadcast the extra dimensions." if nd > named else
                             "einstein sum subscripts string contains too many subscripts for operand")
        widths.append(nd - named if "..." in text else 0)
    most = max(widths, default=0)
    ell = _ELLIPSIS_LABELS[:most]
    inputs = [text.replace("...", "".join(ell[most - w:])) for text, w in zip(parts, widths)]
    if arrow:
        output = tail.replace("...", "".join(ell))
        for c in output:
            if output.count(c) > 1:
                raise ValueError(f"einstein sum subscripts string includes output subscript {c!r} multiple times")
            if not any(c in labels for labels in inputs):
                raise ValueError(f"einstein sum subscripts string included output subscript {c!r} which never "
                                 "appeared in an input")
    else:       # implicit: the broadcast axes, then the labels seen once, alphabetically
        seen = "".join(inputs)
        output = "".join(ell) + "".join(sorted(c for c in set(seen) if seen.count(c) == 1 and c not in ell))
    return inputs, output


def _check_sizes(terms: list) -> None:
    sizes: dict = {}
    for a, labels in terms:
        for c, n in zip(labels, a.shape):
            if n != 1 and sizes.setdefault(c, n) != n:
                raise ValueError(f"operands could not be broadcast together with remapped shapes: label {c!r} "
                                 f"has sizes {sizes[c]} and {n}")


def _take_diagonals(a: DeviceArray, labels: str) -> "tuple[DeviceArray, str]":
    """``ii`` -> the diagonal, as one label at the end (numpy's diagonal puts it there)."""
    while True:
        repeated = next((c for c in labels if labels.count(c) > 1), None)
        if repeated is None:
            return a, labels
        p = labels.index(repeated)
        q = labels.index(repeated, p + 1)
        a = diagonal(a, 0, p, q)
        labels = labels[:p] + labels[p + 1:q] + labels[q + 1:] + repeated


def _sum_axes(a: DeviceArray, axes: tuple) -> DeviceArray:
    if not axes:
        return a
    if a.dtype == np.bool_:
        return a.any(axis=axes)
    return a.sum(axis=axes, dtype=a.dtype)


def _reduce_alone(term: "tuple[DeviceArray, str]", others: list, output: str) -> "tuple[DeviceArray, str]":
    """Sum the labels of ``term`` that neither the output nor another operand uses."""
    a, labels = term
    needed = output + "".join(others)
    axes = tuple(i for i, c in enumerate(labels) if c not in needed)
    return _sum_axes(a, axes), "".join(c for c in labels if c in needed)


def _contract(a: DeviceArray, la: str, b: DeviceArray, lb: str, later: str) -> "tuple[DeviceArray, str]":
    """One pair as a batched matmul: (batch, a's own, summed) @ (batch, summed, b's own)."""
    batch = [c for c in la if c in lb and c in later]
    summed = [c for c in la if c in lb and c not in later]
    own_a = [c for c in la if c not in lb]
    own_b = [c for c in lb if c not in la]
    size = {c: n for c, n in zip(la, a.shape)}
    for c, n in zip(lb, b.shape):
        size[c] = max(size.get(c, 1), n)
    # a size-1 summed axis of one side stands for the other side's length (numpy broadcasts it)
    a = _broadcast_summed(a, la, summed, size)
    b = _broadcast_summed(b, lb, summed, size)
    a = a.transpose([la.index(c) for c in batch + own_a + summed])
    b = b.transpose([lb.index(c) for c in batch + summed + own_b])
    k = math.prod(size[c] for c in summed)
    a2 = a.reshape(a.shape[:len(batch)] + (math.prod(size[c] for c in own_a), k))
    b2 = b.reshape(b.shape[:len(batch)] + (k, math.prod(size[c] for c in own_b)))
    product = ops().matmul(a2, b2)
    shape = tuple(size[c] for c in batch) + tuple(size[c] for c in own_a) + tuple(size[c] for c in own_b)
    return product.reshape(shape), "".join(batch + own_a + own_b)


def _broadcast_summed(a: DeviceArray, labels: str, summed: list, size: dict) -> DeviceArray:
    shape = tuple(size[c] if c in summed else n for c, n in zip(labels, a.shape))
    return a if shape == a.shape else broadcast_to(a, shape)
