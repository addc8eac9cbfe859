"""A HIP context: one device plus one stream, owning the buffers and modules made from it.

HIP has no context objects of its own (each device has one primary context); the current
device is per host thread, so ``make_current`` selects the device (``hipSetDevice``) before
every call that allocates, copies or launches. Everything else is the driver kit's, shared
with the CUDA backend.
"""
from __future__ import annotations

from pygpgpu_core.backend.driver import DriverBuffer, DriverContext, DriverStream

from ._program import Program

__all__ = ["Context", "Stream", "Buffer"]


class Stream(DriverStream):
    """The context's ``hipStream_t`` (blocking, so it stays ordered with the null stream)."""


class Buffer(DriverBuffer):
    """Device memory from ``hipMalloc``; ``ptr`` is its address as an int (None once closed)."""

    __slots__ = ()


class Context(DriverContext):
    """The device and its stream. ``device.context()`` returns the shared one.

    Closing it waits for the stream, then frees every buffer and module made from it."""

    buffer_class = Buffer
    stream_class = Stream
    program_class = Program
