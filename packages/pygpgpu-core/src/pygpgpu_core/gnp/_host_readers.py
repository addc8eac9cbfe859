"""numpy's creation functions that read host data (files, bytes, strings, iterables): numpy parses
it on the host, as it must, and the result is uploaded once, as ``gnp.asarray`` does (CuPy does
the same). Byte-swapped (big-endian) results are uploaded in native byte order, with the same
values. ``fromfunction`` calls the function with device index arrays, so it runs on the device."""
from __future__ import annotations

from typing import Any

import numpy as np

from ._array import DeviceArray
from ._creation import asarray

__all__ = ["fromfile", "frombuffer", "fromstring", "fromiter", "loadtxt", "genfromtxt", "fromfunction"]


def _upload(host: np.ndarray, device: Any = None) -> DeviceArray:
    if not host.dtype.isnative:
        host = host.astype(host.dtype.newbyteorder("="))
    return asarray(host, device=device)


def _reader(name: str) -> Any:
    np_fn = getattr(np, name)

    def read(*args: Any, device: Any = None, **kwargs: Any) -> DeviceArray:
        return _upload(np_fn(*args, **kwargs), device)

    read.__name__ = read.__qualname__ = name
    read.__doc__ = (f"``np.{name}`` on the host (numpy's parameters), uploaded once as a device array "
                    "(``device=`` picks the device).")
    return read


fromfile = _reader("fromfile")
frombuffer = _reader("frombuffer")
fromstring = _reader("fromstring")
fromiter = _reader("fromiter")
loadtxt = _reader("loadtxt")
genfromtxt = _reader("genfromtxt")


def fromfunction(function: Any, shape: Any, *, dtype: Any = float, like: Any = None, device: Any = None,
                 **kwargs: Any) -> Any:
    """``function(*indices)`` with one device index array per axis of ``shape`` (of ``dtype``), as
    numpy's: whatever ``function`` returns, computed by gnp's operations."""
    from ._indices import indices
    grids = indices(shape, dtype=dtype, device=device)
    return function(*(grids[k] for k in range(len(tuple(shape)))), **kwargs)
