"""``g.to(other_device)``: a device array copied onto another device's memory.

Where both devices belong to one backend and its buffers offer ``copy_from_device``
(:class:`~pygpgpu_core.protocols.DeviceCopies`), the backend copies the bytes the fastest way it
has: peer to peer between CUDA/HIP GPUs that can reach each other's memory, staged through
page-locked host memory between ones that cannot, staged through a mapping between OpenCL
devices (each has a context of its own). Otherwise (two backends) the array is read into numpy
and written to the other device. Copies that pass through host memory count as one download
and one upload in ``gnp.transfer_stats()``; peer and in-context copies count nothing.
"""
from __future__ import annotations

from typing import Any

from ..protocols import DeviceCopies, supports
from ._transfer import record_transfer

__all__ = ["copy_to_device"]


def copy_to_device(src: Any, device: Any, context: Any) -> Any:
    """A new C-contiguous array on ``context`` with ``src``'s shape, dtype and values; ``src`` (any
    layout: a strided view is gathered on its own device first) is left as it was."""
    from ._array import DeviceArray

    out = DeviceArray(src.shape, src.dtype, context)
    if not src.size:
        return out
    if not src.is_contiguous:
        src = src.copy()                      # on the source device: one contiguous run to send
    if src.device.backend is device.backend and supports(out.buffer, DeviceCopies):
        way = out.buffer.copy_from_device(src.buffer, src.nbytes, src.offset, out.offset)
        if way in ("staged", "host"):         # through host memory: counted like get() + upload
            record_transfer("d2h", src.nbytes)
            record_transfer("h2d", src.nbytes)
        return out
    out._write_bytes(src.get())               # another backend: through numpy (both counted)
    return out
