"""Storage buffers. WebGPU copies move whole 4-byte words at 4-byte offsets, so allocations are
rounded up to a word and an unaligned read or write goes through the words around it."""
from __future__ import annotations

from typing import Any

import numpy as np

from pygpgpu_core.errors import ClosedError

from ._errors import driver_error
from ._wgpu import wgpu

__all__ = ["WebGPUBuffer"]


def _words(n: int) -> int:
    return (n + 3) & ~3


class WebGPUBuffer:
    def __init__(self, context: Any, nbytes: int) -> None:
        if nbytes < 0:
            raise ValueError(f"a buffer size is a byte count >= 0, got {nbytes}")
        context.device.limits.check_buffer(nbytes, f"{context.device.selector} ({context.device.name})")
        self.context = context
        self.nbytes = nbytes
        self._closed = False
        usage = wgpu().BufferUsage
        try:
            self.gpu = context.gpu.create_buffer(size=max(4, _words(nbytes)),
                                                 usage=usage.STORAGE | usage.COPY_SRC | usage.COPY_DST)
        except Exception as exc:
            raise driver_error("GPUDevice.createBuffer", exc, f"{nbytes} bytes on {context.device.selector}") from exc

    @property
    def closed(self) -> bool:
        """Closed here, or its wgpu buffer released behind our back: when a device array dies in a
        garbage cycle, the collector may run wgpu's own finalizer (which releases the native
        buffer) before the array's pooled block comes back, and the pool must not hand that block
        out again (it asks ``closed``; a write to it failed, a bind group with it aborted)."""
        return self._closed or getattr(self.gpu, "_internal", True) is None

    def _check(self, offset: int, nbytes: int, what: str) -> None:
        if self.closed:
            raise ClosedError("a WebGPU buffer")
        if offset < 0 or offset + nbytes > self.nbytes:
            raise ValueError(f"{what} of {nbytes} bytes at offset {offset} falls outside the buffer of "
                             f"{self.nbytes} bytes")

    def _read_bytes(self, start: int, stop: int) -> np.ndarray:
        """Bytes [start, stop) as a uint8 array, read through the 4-byte words covering them."""
        lo, hi = start & ~3, _words(stop)
        data = self.context.gpu.queue.read_buffer(self.gpu, lo, hi - lo)
        return np.frombuffer(data, dtype=np.uint8)[start - lo:stop - lo]

    def write(self, host: np.ndarray, offset: int = 0) -> None:
        host = np.ascontiguousarray(host)
        n = host.nbytes
        self._check(offset, n, "a write")
        if n == 0:
            return
        raw = host.reshape(-1).view(np.uint8)
        lo, hi = offset & ~3, _words(offset + n)
        if (lo, hi) != (offset, offset + n):
            window = self._read_bytes(lo, min(hi, self.nbytes)).copy()
            window = np.concatenate([window, np.zeros(hi - lo - window.size, np.uint8)])
            window[offset - lo:offset - lo + n] = raw
            raw = window
        try:
            self.context.gpu.queue.write_buffer(self.gpu, lo, raw)
        except Exception as exc:
            raise driver_error("GPUQueue.writeBuffer", exc) from exc

    def read(self, host: np.ndarray, offset: int = 0) -> None:
        if not (host.flags.c_contiguous and host.flags.writeable):
            raise ValueError("read() fills a C-contiguous, writable numpy array")
        n = host.nbytes
        self._check(offset, n, "a read")
        if n == 0:
            return
        try:
            data = self._read_bytes(offset, offset + n)
        except Exception as exc:
            raise driver_error("GPUQueue.readBuffer", exc) from exc
        host.reshape(-1).view(np.uint8)[:] = data

    def copy_from(self, src: "WebGPUBuffer", nbytes: "int | None" = None) -> None:
        n = src.nbytes if nbytes is None else int(nbytes)
        src._check(0, n, "a copy")
        self._check(0, n, "a copy")
        whole = n & ~3
        if whole:
            encoder = self.context.gpu.create_command_encoder()
            encoder.copy_buffer_to_buffer(src.gpu, 0, self.gpu, 0, whole)
            self.context.gpu.queue.submit([encoder.finish()])
        if n > whole:          # the last 1-3 bytes: through the host, so the bytes after them stay
            self.write(src._read_bytes(whole, n).copy(), whole)

    def fill(self, value: "np.generic | bytes") -> None:
        pattern = bytes(value) if isinstance(value, (bytes, bytearray)) else np.asarray(value).tobytes()
        self._check(0, 0, "a fill")
        if not self.nbytes:
            return
        if not any(pattern):
            encoder = self.context.gpu.create_command_encoder()
            encoder.clear_buffer(self.gpu, 0, max(4, _words(self.nbytes)))
            self.context.gpu.queue.submit([encoder.finish()])
            return
        if self.nbytes % len(pattern):
            raise ValueError(f"a fill pattern of {len(pattern)} bytes does not divide the buffer's {self.nbytes}")
        self.write(np.frombuffer(pattern * (self.nbytes // len(pattern)), dtype=np.uint8))

    def close(self) -> None:
        if not self.closed:
            self._closed = True
            try:
                self.gpu.destroy()
            except Exception:      # the device went first: nothing left to free
                pass

    def __enter__(self) -> "WebGPUBuffer":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
