"""The contract between the translator, the device arrays and the vendor backends.

A backend package exposes one object implementing :class:`Backend` through the entry
point group ``pygpgpu.backends``. Everything else is reached from it. Work sizes use
total-work semantics everywhere: ``global_size`` is the total number of work items per
dimension (rounded up by the backend to a multiple of ``local_size``), and CUDA/HIP
derive their grid as ``ceil(global / local)``.
"""
from __future__ import annotations

from typing import Any, Callable, Protocol, Sequence, runtime_checkable

import numpy as np

__all__ = [
    "Backend",
    "Device",
    "Context",
    "Queue",
    "Buffer",
    "Program",
    "Kernel",
    "LocalMemory",
    "WorkSize",
]

WorkSize = "tuple[int, ...]"


class LocalMemory:
    """A kernel argument that reserves ``nbytes`` of dynamic local/shared memory."""

    __slots__ = ("nbytes",)

    def __init__(self, nbytes: int):
        if int(nbytes) <= 0:
            raise ValueError(f"LocalMemory needs a positive byte count, got {nbytes}")
        self.nbytes = int(nbytes)

    def __repr__(self) -> str:
        return f"LocalMemory({self.nbytes})"


@runtime_checkable
class Backend(Protocol):
    """One vendor API. Creating it must not load the vendor library: only ``devices()`` may."""

    name: str
    """Registry name: ``"opencl"``, ``"cuda"``, ``"hip"``."""
    dialect: str
    """Source dialect the translator emits for it: ``"opencl"``, ``"cuda"`` or ``"hip"``."""

    def devices(self) -> Sequence["Device"]:
        """Enumerate devices; raise ``BackendUnavailable`` with the reason when the runtime is missing."""
        ...

    def version(self) -> str:
        """Driver + compiler version string; part of every binary cache key."""
        ...


@runtime_checkable
class Device(Protocol):
    backend: Backend
    index: int
    name: str
    vendor: str
    arch: str
    global_mem_size: int
    compute_units: int
    max_work_group_size: int
    extensions: frozenset
    fp64: bool
    fp16: bool
    host_unified_memory: bool

    @property
    def selector(self) -> str:
        """``"<backend>:<index>"``, e.g. ``"opencl:0"``."""
        ...

    def context(self) -> "Context":
        """The device's shared default context (created once, reused)."""
        ...


@runtime_checkable
class Queue(Protocol):
    def synchronize(self) -> None: ...
    def close(self) -> None: ...


@runtime_checkable
class Context(Protocol):
    device: Device
    queue: Queue

    def buffer(self, nbytes: int) -> "Buffer":
        """Allocate uninitialised device memory."""
        ...

    def buffer_from_host(self, host: np.ndarray, *, zero_copy: bool = False) -> "Buffer":
        """A buffer holding ``host``'s bytes. ``zero_copy`` may alias host memory on
        host-unified devices (the caller keeps ``host`` alive for the buffer's life)."""
        ...

    def program(self, source: str, options: Sequence[str] = (), *, name: str = "") -> "Program":
        """Build ``source``; binaries are cached on disk. Raises ``CompileError`` with the log."""
        ...

    def synchronize(self) -> None: ...
    def close(self) -> None: ...


@runtime_checkable
class Buffer(Protocol):
    context: Context
    nbytes: int

    def write(self, host: np.ndarray, offset: int = 0) -> None:
        """Copy ``host`` (C-contiguous) into the buffer at byte ``offset``; blocking."""
        ...

    def read(self, host: np.ndarray, offset: int = 0) -> None:
        """Copy into ``host`` (C-contiguous, writable) from byte ``offset``; blocking."""
        ...

    def copy_from(self, src: "Buffer", nbytes: int | None = None) -> None: ...
    def fill(self, value: np.generic | bytes) -> None: ...
    def close(self) -> None: ...


@runtime_checkable
class Program(Protocol):
    context: Context
    source: str
    build_log: str

    def kernel(self, name: str) -> "Kernel": ...
    def close(self) -> None: ...


@runtime_checkable
class Kernel(Protocol):
    """A compiled entry point. Arguments: Buffer, numpy scalar, ctypes scalar/Structure,
    LocalMemory, and (low-level API convenience) numpy arrays, which are copied in and out."""

    name: str
    program: Program

    def launch(self, global_size: Sequence[int], local_size: Sequence[int] | None, args: Sequence[Any]) -> None:
        """Enqueue one launch (asynchronous w.r.t. the host, in order on the context's queue)."""
        ...

    def launcher(self, arg_types: Sequence[Any]) -> Callable[..., None]:
        """The hot path. ``arg_types`` gives each argument's kind once: ``"buffer"``, a numpy
        dtype (scalar passed by value), a ctypes type, or ``"local"``. Returns
        ``fn(global_size, local_size, args)`` that packs ``args`` into preallocated storage
        and makes one driver launch call; no per-call allocation of ctypes objects."""
        ...

    def __getitem__(self, config: Any) -> Callable[..., None]:
        """``k[(global, local)](*args)`` and ``k[global](*args)``."""
        ...
