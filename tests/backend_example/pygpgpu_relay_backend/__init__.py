"""The example backend plug-in of docs/writing-a-backend.md: a backend named ``relay``.

It is a complete plug-in as far as pygpgpu can tell: registered in the ``pygpgpu.backends``
entry-point group (see ``../pygpgpu_relay_backend-0.1.0.dist-info/entry_points.txt``), it
lists devices, owns their contexts, builds programs and hands out kernels whose launchers the
translator's launch plans call. What it has no driver of its own for, it relays to the OpenCL
backend (so it runs anywhere PoCL does): every call crosses one of the classes below, and
each class counts what passed through it so tests/test_backend_plugin.py can prove it.

A real backend replaces the relayed calls with its vendor API (ctypes over the driver, as
pygpgpu_opencl does; CUDA-like drivers can build on ``pygpgpu_core.backend``).
"""
from __future__ import annotations

import threading
from typing import Any, Callable, Sequence

import numpy as np

from pygpgpu_core.errors import BackendUnavailable

__all__ = ["RelayBackend", "RelayDevice", "RelayContext", "RelayBuffer", "RelayProgram", "RelayKernel", "backend"]


class RelayBackend:
    """The object the entry point names. Creating it loads nothing: only ``devices()`` may."""

    name = "relay"        # the registry name: k["relay"], "relay:0"
    dialect = "opencl"    # the source the translator writes for it: "opencl", "cuda" or "hip"

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._devices: list[RelayDevice] | None = None
        self.launches = 0   # kernel launches that went through this plug-in

    def devices(self) -> list[RelayDevice]:
        with self._lock:
            if self._devices is None:
                try:
                    from pygpgpu_core import registry
                    inner = registry.backend_devices("opencl")    # the vendor runtime, loaded now
                except Exception as exc:
                    # a missing runtime is BackendUnavailable with the reason: recorded, shown by
                    # pygpgpu.diagnostics(), raised only when someone asks for "relay" by name
                    raise BackendUnavailable(self.name, f"the relay needs an OpenCL device: {exc}") from exc
                self._devices = [RelayDevice(self, i, d) for i, d in enumerate(inner)]
        return list(self._devices)

    def version(self) -> str:
        """Driver and compiler versions: part of every binary cache key."""
        return f"relay 0.1 over {self._inner_version()}"

    def _inner_version(self) -> str:
        from pygpgpu_core import registry
        return registry.get_backend("opencl").version()


class RelayDevice:
    """The Device protocol: plain attributes read once at enumeration, and ``context()``."""

    def __init__(self, backend: RelayBackend, index: int, inner: Any) -> None:
        self.backend = backend
        self.index = index
        self._inner = inner
        self.name = f"Relay({inner.name})"
        self.vendor = inner.vendor
        self.arch = inner.arch
        self.global_mem_size = inner.global_mem_size
        self.compute_units = inner.compute_units
        self.max_work_group_size = inner.max_work_group_size
        self.extensions = inner.extensions
        self.fp64 = inner.fp64
        self.fp16 = inner.fp16
        self.host_unified_memory = inner.host_unified_memory
        self._context: RelayContext | None = None
        self._lock = threading.Lock()

    @property
    def selector(self) -> str:
        return f"{self.backend.name}:{self.index}"

    def context(self) -> RelayContext:
        """One shared default context per device, created on first use, and made again when the
        OpenCL context it relays to was closed (someone may close that device's shared context;
        the OpenCL device then hands out a fresh one, which the relay must follow)."""
        with self._lock:
            if self._context is None or self._context.closed:
                self._context = RelayContext(self, self._inner.context())
        return self._context

    def __repr__(self) -> str:
        return f"<RelayDevice {self.selector} {self.name}>"


class RelayContext:
    """The Context protocol: memory, programs and the in-order queue of one device."""

    def __init__(self, device: RelayDevice, inner: Any) -> None:
        self.device = device
        self._inner = inner
        self.queue = inner.queue
        self.programs = 0    # programs built through this context

    def buffer(self, nbytes: int) -> RelayBuffer:
        return RelayBuffer(self, self._inner.buffer(nbytes))

    def buffer_from_host(self, host: np.ndarray, *, zero_copy: bool = False) -> RelayBuffer:
        return RelayBuffer(self, self._inner.buffer_from_host(host, zero_copy=zero_copy))

    def program(self, source: str, options: Sequence[str] = (), *, name: str = "") -> RelayProgram:
        self.programs += 1
        return RelayProgram(self, self._inner.program(source, options, name=name))

    def synchronize(self) -> None:
        self._inner.synchronize()

    def close(self) -> None:
        """The inner context is the OpenCL backend's shared one: it stays open."""

    @property
    def closed(self) -> bool:
        """Whether the relayed OpenCL context was closed: kernels then drop their plans built
        here and rebuild on the device's next ``context()``."""
        return bool(self._inner.closed)


class RelayBuffer:
    """The Buffer protocol: device memory of one context, copied to and from the host in order
    with that context's launches. The optional capabilities (mapped host memory, asynchronous
    copies, sub-buffer views) are left out: pygpgpu then takes its plain path."""

    def __init__(self, context: RelayContext, inner: Any) -> None:
        self.context = context
        self.nbytes = inner.nbytes
        self._inner = inner

    def write(self, host: np.ndarray, offset: int = 0) -> None:
        self._inner.write(host, offset)

    def read(self, host: np.ndarray, offset: int = 0) -> None:
        self._inner.read(host, offset)

    def copy_from(self, src: RelayBuffer, nbytes: int | None = None) -> None:
        self._inner.copy_from(src._inner, nbytes)

    def fill(self, value: np.generic | bytes) -> None:
        self._inner.fill(value)

    def close(self) -> None:
        self._inner.close()

    @property
    def closed(self) -> bool:
        return bool(getattr(self._inner, "closed", False))


def _unwrap(args: Sequence[Any]) -> list[Any]:
    """The arguments as the relayed driver takes them: its own buffers."""
    return [a._inner if type(a) is RelayBuffer else a for a in args]


class RelayProgram:
    """The Program protocol: a built source and its kernels."""

    def __init__(self, context: RelayContext, inner: Any) -> None:
        self.context = context
        self._inner = inner
        self.source = inner.source
        self.build_log = inner.build_log

    def kernel(self, name: str) -> RelayKernel:
        return RelayKernel(self, self._inner.kernel(name))

    def close(self) -> None:
        self._inner.close()


class RelayKernel:
    """The Kernel protocol. ``launcher`` is the hot path: the translator's launch plan asks for
    it once with the argument kinds, then calls it on every warm call. (A real backend packs the
    arguments into storage it allocated in ``launcher``; the relay only swaps its buffers for
    the relayed driver's.)"""

    def __init__(self, program: RelayProgram, inner: Any) -> None:
        self.program = program
        self._inner = inner
        self.name = inner.name
        self.work_group_size = getattr(inner, "work_group_size", None)

    def launch(self, global_size: Sequence[int], local_size: Sequence[int] | None, args: Sequence[Any]) -> None:
        self.program.context.device.backend.launches += 1
        self._inner.launch(global_size, local_size, _unwrap(args))

    def launcher(self, arg_types: Sequence[Any]) -> Callable[..., None]:
        inner = self._inner.launcher(arg_types)
        backend = self.program.context.device.backend

        def launch(global_size: Sequence[int], local_size: Sequence[int] | None, args: Sequence[Any]) -> None:
            backend.launches += 1
            inner(global_size, local_size, _unwrap(args))
        return launch

    def __getitem__(self, config: Any) -> Callable[..., None]:
        run = self._inner[config]

        def launch(*args: Any) -> None:
            self.program.context.device.backend.launches += 1
            run(*_unwrap(args))
        return launch


backend = RelayBackend()
