"""Conveniences every backend's low-level ``Kernel`` shares: the ``k[(global, local)]``
bracket and numpy arrays passed where buffers are (copied in, read back afterwards)."""
from __future__ import annotations

from typing import Any, Iterable

import numpy as np

__all__ = ["split_work_bracket", "read_back"]


def split_work_bracket(config: Any, kernel_name: str, selector: str) -> "tuple[Any, Any]":
    """``(global_size, local_size)`` from ``k[n]``, ``k[(n,)]`` or ``k[(global, local)]``."""
    if isinstance(config, str):
        raise TypeError(f"kernel {kernel_name!r} is already bound to {selector}; a bracket here takes the work "
                        "size, e.g. k[(n, 256)] or k[n]")
    if isinstance(config, tuple) and len(config) == 2:
        return config
    if isinstance(config, tuple) and len(config) == 1:
        return config[0], None
    return config, None


def read_back(staged: "Iterable[tuple[np.ndarray, Any]]") -> None:
    """Copy each temporary buffer back into its writable host array (any memory layout)."""
    for host, buf in staged:
        if not host.flags.writeable:
            continue  # a read-only array cannot have been meant as an output
        if host.flags.c_contiguous:
            buf.read(host)
        else:
            tmp = np.empty_like(host, order="C")
            buf.read(tmp)
            host[...] = tmp
