"""A device's context: its ``GPUDevice`` and queue, the buffers and programs made on it."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from pygpgpu_core.errors import ClosedError

from ._errors import driver_error

__all__ = ["WebGPUContext", "WebGPUQueue"]


class WebGPUQueue:
    """The context's one queue: submissions run in order; ``synchronize`` waits for all of them.

    It waits by reading 4 bytes of a buffer of its own: a read maps a copy made after every earlier
    submission, so it returns when they are done. (wgpu-py 0.32's ``on_submitted_work_done_sync``
    raises a cffi TypeError with the wgpu-native its wheel carries.)"""

    handle = None

    def __init__(self, gpu_device: Any) -> None:
        self._device = gpu_device
        self._queue = gpu_device.queue
        self._marker: Any = None

    def synchronize(self) -> None:
        try:
            if self._marker is None:
                from ._wgpu import wgpu
                usage = wgpu().BufferUsage
                self._marker = self._device.create_buffer(size=4, usage=usage.COPY_SRC | usage.COPY_DST)
            self._queue.read_buffer(self._marker, 0, 4)
        except Exception as exc:
            raise driver_error("GPUQueue.readBuffer (synchronize)", exc) from exc

    def close(self) -> None:
        """The queue belongs to its device: closing the context ends it."""


class WebGPUContext:
    def __init__(self, device: Any, gpu_device: Any) -> None:
        self.device = device
        self.gpu = gpu_device
        self.queue = WebGPUQueue(gpu_device)
        self.closed = False

    def _check_open(self) -> None:
        if self.closed:
            raise ClosedError(f"the WebGPU context of {self.device.selector}")

    def buffer(self, nbytes: int) -> Any:
        from ._buffer import WebGPUBuffer
        self._check_open()
        return WebGPUBuffer(self, int(nbytes))

    def buffer_from_host(self, host: np.ndarray, *, zero_copy: bool = False) -> Any:
        """A buffer holding a copy of ``host`` (WebGPU memory never aliases host memory, so
        ``zero_copy`` is a copy too)."""
        host = np.ascontiguousarray(host)
        buf = self.buffer(host.nbytes)
        if host.nbytes:
            buf.write(host)
        return buf

    def program(self, source: str, options: Sequence[str] = (), *, name: str = "") -> Any:
        from ._program import WebGPUProgram
        self._check_open()
        if options:
            raise ValueError(f"WGSL has no build options or preprocessor; got {list(options)!r}. Put constants in "
                             "the source (const N = 16u;) or pass them as uniform values")
        return WebGPUProgram(self, source, name=name)

    def synchronize(self) -> None:
        self._check_open()
        self.queue.synchronize()

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            try:
                self.gpu.destroy()
            except Exception:     # a device already lost has nothing left to free
                pass
