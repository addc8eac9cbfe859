"""A device's context: its ``GPUDevice`` and queue, the buffers and programs made on it."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from pygpgpu_core.errors import ClosedError

from ._errors import driver_error

__all__ = ["WebGPUContext", "WebGPUQueue"]


class WebGPUQueue:
    """The context's one queue: submissions run in order; ``synchronize`` waits for all of them."""

    handle = None

    def __init__(self, gpu_queue: Any) -> None:
        self._queue = gpu_queue

    def synchronize(self) -> None:
        try:
            self._queue.on_submitted_work_done_sync()
        except Exception as exc:
            raise driver_error("GPUQueue.onSubmittedWorkDone", exc) from exc

    def close(self) -> None:
        """The queue belongs to its device: closing the context ends it."""


class WebGPUContext:
    def __init__(self, device: Any, gpu_device: Any) -> None:
        self.device = device
        self.gpu = gpu_device
        self.queue = WebGPUQueue(gpu_device.queue)
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
