"""``np.convolve`` of 1-D device arrays: one work item per output element sums the products of
the overlapping elements (the direct method numpy uses; no FFT), in numpy's result type. A bool
convolution is numpy's: whether any product is true."""
from __future__ import annotations

from typing import Any

import numpy as np
from pygpgpu_core.gnp import DeviceArray

from ._codegen import DEFAULT_CONFIG, kernel_from_source, launch, np_type
from ._operands import check_dtype, check_same_device
from ._half import narrow, stores_half_only

__all__ = ["convolve"]

_SOURCE = '''def {kname}(out, a, v, n, m, shift):
    for k in range(out.shape[0]):
        acc = {acc}(0)
        i0 = k + shift
        for j in range(m):
            i = i0 - j
            if i >= 0 and i < n:
                acc += {acc}(a[i]) * {acc}(v[j])
        out[k] = {result}
'''


def _kernel(dt: np.dtype):
    # bools add as integers, then become "any product was true"
    acc = "np.int64" if dt.kind == "b" else np_type(dt)
    result = "(acc != 0)" if dt.kind == "b" else "acc"
    kname = f"gnp_convolve_{dt.name}"
    return kernel_from_source(kname, _SOURCE.format(kname=kname, acc=acc, result=result))


def convolve(a: Any, v: Any, mode: str = "full") -> DeviceArray:
    """numpy's modes: "full" (n + m - 1 elements), "same" (max(n, m), centred as numpy's) and
    "valid" (max(n, m) - min(n, m) + 1, where the shorter lies wholly inside the longer)."""
    if not isinstance(a, DeviceArray) or not isinstance(v, DeviceArray):
        raise TypeError("gnp.convolve takes device arrays")
    if a.ndim != 1 or v.ndim != 1:
        raise ValueError("object too deep for desired array")
    if a.size == 0:
        raise ValueError("a cannot be empty")
    if v.size == 0:
        raise ValueError("v cannot be empty")
    if v.size > a.size:
        a, v = v, a
    device = check_same_device([a, v], "convolve")
    dt = np.result_type(a.dtype, v.dtype)
    if dt == np.float16 and stores_half_only(device):
        # float32 products and sums rounded to half once (numpy's half loops round each step)
        return narrow(convolve(a.astype(np.float32), v.astype(np.float32), mode))
    check_dtype(dt, "convolve", "result", device)
    n, m = a.size, v.size
    if mode == "full":
        length, shift = n + m - 1, 0
    elif mode == "same":
        length, shift = n, (m - 1) // 2
    elif mode == "valid":
        length, shift = n - m + 1, m - 1
    else:
        raise ValueError(f"mode must be one of 'full', 'same' or 'valid' (got {mode!r})")
    out = DeviceArray((length,), dt, device.context())
    a = a.astype(dt, copy=False)
    v = v.astype(dt, copy=False)
    a = a if type(a) is DeviceArray else a.copy()
    v = v if type(v) is DeviceArray else v.copy()
    launch(_kernel(dt), device, DEFAULT_CONFIG, (out, a, v, np.int64(n), np.int64(m), np.int64(shift)))
    return out
