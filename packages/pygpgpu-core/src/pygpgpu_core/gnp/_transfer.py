"""Host<->device copies and the public counter that proves which ones happened.

Every copy between host memory and a device that pygpgpu makes on the user's behalf goes through
:func:`upload`/:func:`download` here or is reported with :func:`record_transfer` (the kernel
launcher's numpy-argument path does the latter), so a test can assert "this loop made zero
copies". Device-to-device copies are not host transfers and are not counted.
"""
from __future__ import annotations

import threading
from typing import Any

import numpy as np

__all__ = ["record_transfer", "transfer_stats", "reset_transfer_stats", "upload", "download"]

_lock = threading.Lock()
# [h2d count, d2h count, h2d bytes, d2h bytes]
_counts = [0, 0, 0, 0]


def record_transfer(direction: str, nbytes: int) -> None:
    """Count one host->device (``"h2d"``) or device->host (``"d2h"``) copy of ``nbytes`` bytes."""
    if direction == "h2d":
        i = 0
    elif direction == "d2h":
        i = 1
    else:
        raise ValueError(f"transfer direction must be 'h2d' or 'd2h', got {direction!r}")
    with _lock:
        _counts[i] += 1
        _counts[i + 2] += int(nbytes)


def transfer_stats() -> dict[str, int]:
    """Host<->device copies since the last reset: ``{h2d, d2h, h2d_bytes, d2h_bytes}``."""
    with _lock:
        h2d, d2h, h2d_bytes, d2h_bytes = _counts
    return {"h2d": h2d, "d2h": d2h, "h2d_bytes": h2d_bytes, "d2h_bytes": d2h_bytes}


def reset_transfer_stats() -> dict[str, int]:
    """Zero the counters; returns what they held."""
    with _lock:
        old = list(_counts)
        _counts[:] = [0, 0, 0, 0]
    return {"h2d": old[0], "d2h": old[1], "h2d_bytes": old[2], "d2h_bytes": old[3]}


def upload(buffer: Any, host: np.ndarray, offset: int = 0) -> None:
    """Copy C-contiguous ``host`` into ``buffer`` at byte ``offset`` (blocking) and count it.

    The backend picks the fastest way: CUDA stages large arrays through pinned memory, OpenCL
    writes straight into zero-copy host buffers.
    """
    if host.nbytes == 0:
        return
    buffer.write(host, offset)
    record_transfer("h2d", host.nbytes)


def download(buffer: Any, host: np.ndarray, offset: int = 0) -> None:
    """Copy from ``buffer`` at byte ``offset`` into C-contiguous writable ``host`` and count it."""
    if host.nbytes == 0:
        return
    buffer.read(host, offset)
    record_transfer("d2h", host.nbytes)
