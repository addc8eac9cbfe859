"""The contract between the translator, the device arrays and the vendor backends.

A backend package exposes one object implementing :class:`Backend` through the entry
point group ``pygpgpu.backends``. Everything else is reached from it. What a backend may
offer beyond these protocols is declared at the end of this module: optional methods as
capability protocols (:func:`supports`), optional attributes with the value core assumes
without them (:func:`option`). Work sizes use
total-work semantics everywhere: ``global_size`` is the total number of work items per
dimension (rounded up by the backend to a multiple of ``local_size``), and CUDA/HIP
derive their grid as ``ceil(global / local)``.
"""
from __future__ import annotations

import operator
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
    "Describable",
    "StreamSynchronizer",
    "StreamWaits",
    "HostMappedMemory",
    "PinnedHostMemory",
    "ForeignPointers",
    "BinaryPrograms",
    "AsyncCopies",
    "BufferViews",
    "DeviceCopies",
    "OPTIONAL_ATTRIBUTES",
    "option",
    "supports",
]

WorkSize = "tuple[int, ...]"


class LocalMemory:
    """A kernel argument that reserves ``nbytes`` of dynamic local/shared memory."""

    __slots__ = ("nbytes",)
    nbytes: int

    def __init__(self, nbytes: int) -> None:
        # An index, not int(): int() would truncate 16.5 to 16 bytes (too little memory for
        # what the kernel indexes) and parse "16".
        if isinstance(nbytes, bool) or not hasattr(type(nbytes), "__index__"):
            raise TypeError(f"LocalMemory takes an int byte count, got {type(nbytes).__name__} {nbytes!r}")
        count = operator.index(nbytes)
        if count <= 0:
            raise ValueError(f"LocalMemory needs a positive byte count, got {nbytes}")
        self.nbytes = count

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
    """One device of a backend (``pygpgpu.get_device("opencl:0")``); ``with dev:`` makes it the
    default device of the block (pygpgpu_core.scoped_device)."""

    backend: Backend
    index: int
    name: str
    vendor: str
    arch: str
    global_mem_size: int
    compute_units: int
    max_work_group_size: int
    extensions: frozenset[str]
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
    """A device's context: allocates buffers, builds programs, owns queues (``dev.context()``)."""

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
    """Device memory of one context (``ctx.buffer(nbytes)``)."""

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


# -- optional capabilities ---------------------------------------------------------------------
# What a backend *may* offer beyond the protocols above. Core asks for each one here, by name,
# and takes its plain path when a backend does not declare it: optional methods are the
# capability protocols below (checked with :func:`supports`), optional attributes are listed in
# OPTIONAL_ATTRIBUTES with the value core assumes when one is absent (read with :func:`option`).
# Nothing in core branches on a backend's name: a backend declares what it can do.

@runtime_checkable
class Describable(Protocol):
    """On a Backend: its section of ``pygpgpu info``."""

    def describe(self) -> dict:
        """Libraries and versions (loads them; never raises: ``libinfo.probe`` each value)."""
        ...


@runtime_checkable
class StreamSynchronizer(Protocol):
    """On a Backend: wait for a foreign stream (a producer's CUDA array interface ``stream``)
    when the context's queue cannot order itself after it (:class:`StreamWaits`)."""

    def synchronize_stream(self, stream: int) -> None: ...


@runtime_checkable
class StreamWaits(Protocol):
    """On a Queue: order later work after everything queued on a foreign stream handle
    (``1`` / ``2``: the legacy / per-thread default stream), without blocking the host."""

    def wait_for_stream(self, stream: int) -> None: ...


@runtime_checkable
class HostMappedMemory(Protocol):
    """On a Context: page-locked host bytes kernels use in place, ``(host uint8 array, buffer)``
    (small launch arguments skip their copies)."""

    def host_mapped(self, nbytes: int) -> "tuple[np.ndarray, Buffer]": ...


@runtime_checkable
class PinnedHostMemory(Protocol):
    """On a Context: numpy arrays in page-locked memory (staging copies run at full speed)."""

    def pinned_empty(self, shape: Any, dtype: Any = np.float32) -> np.ndarray: ...


@runtime_checkable
class ForeignPointers(Protocol):
    """On a Context: a non-owning buffer over device memory allocated elsewhere (DLPack, the
    CUDA array interface); ``owner`` is kept alive as long as the buffer."""

    def buffer_from_pointer(self, ptr: int, nbytes: int, owner: Any = None) -> "Buffer": ...


@runtime_checkable
class BinaryPrograms(Protocol):
    """On a Context: load ``program.binary`` built earlier; with ``source``, a binary the driver
    rejects is rebuilt from it (kernel files keep binaries beside their sources)."""

    def program_from_binary(self, binary: bytes, *, source: str = "", options: Sequence[str] = (),
                            name: str = "") -> "Program": ...


@runtime_checkable
class AsyncCopies(Protocol):
    """On a Buffer: copies queued without waiting (the host array stays alive and unchanged
    until the context synchronizes)."""

    def write_async(self, host: np.ndarray, offset: int = 0) -> None: ...
    def read_async(self, host: np.ndarray, offset: int = 0) -> None: ...


@runtime_checkable
class BufferViews(Protocol):
    """On a Buffer: a non-owning buffer over ``[offset, offset + nbytes)`` (one allocation
    serves the small arguments of a launch)."""

    def view(self, offset: int, nbytes: "int | None" = None) -> "Buffer": ...


@runtime_checkable
class DeviceCopies(Protocol):
    """On a Buffer: copy from a buffer of another device of the same backend without a numpy array
    between (peer to peer where the driver allows it, else staged its own way); returns the way
    taken: ``"device"``, ``"peer"``, ``"staged"`` (through host memory) or ``"host"``."""

    def copy_from_device(self, src: "Buffer", nbytes: "int | None" = None, src_offset: int = 0,
                         dst_offset: int = 0) -> str: ...


OPTIONAL_ATTRIBUTES: "dict[str, tuple[str, Any, str]]" = {
    # name: (declared on, value core assumes when absent, meaning)
    "dlpack_device_type": ("Backend", None,
                           "the DLPack device type of its buffers' ``ptr`` (2 CUDA, 10 ROCm): device arrays export "
                           "``__dlpack__`` as that type, and DLPack tensors of that type are wrapped on its devices; "
                           "None: not DLPack-addressable device memory"),
    "cuda_array_interface": ("Backend", False,
                             "its buffers' ``ptr`` are CUDA device pointers: device arrays offer "
                             "``__cuda_array_interface__`` and objects exposing it are wrapped on its devices"),
    "mem_base_addr_align": ("Device", 1, "the alignment (bytes) sub-buffers and zero-copy host memory need"),
    "exact_math_options": ("Device", (), "build options that keep IEEE math (OpenCL: no fast relaxed math)"),
    "fast_math_options": ("Device", None, "build options of @kernel(fastmath=True) for its compiler (None: the "
                          "dialect's own, e.g. -cl-fast-relaxed-math)"),
    "local_mem_size": ("Device", None, "bytes of local (shared) memory a group may use (None: unknown, not checked)"),
    "guarded_local_size": ("Device", None, "``f(ndim, kernel_work_group_size) -> local size`` for a launch whose work "
                           "size comes from the domain (OpenCL GPUs); None: the runtime picks"),
    "is_gpu": ("Device", False, "a GPU (device order, reduction sizes)"),
    "is_cpu": ("Device", False, "a CPU device (device order, reduction sizes)"),
    "int64": ("Device", True, "its kernels have 64-bit integers; False (WGSL): gnp's reductions count and index in "
              "32 bits (argmin/argmax give int32, arrays past 2**30 elements refused), int64 operands are refused"),
    "lacks": ("Device", frozenset(), "kernel-language features its target refuses at translation, by name "
              "(``fp64``, ``int64``, ``printf``, ``float_atomics``...): a refusal (a KernelTypeError) names the one it "
              "meets as its ``capability``, and the shared test suite skips a test whose kernel needs one its "
              "device lacks, saying so"),
    "handle": ("Queue", None, "the raw stream handle (an int or a ctypes pointer; 0 / None: the default stream)"),
    "zero_copy": ("Buffer", False, "the buffer aliases the host array it was made from"),
    "closed": ("Buffer", False, "the buffer was closed (``close()`` frees it once)"),
    "max_threads": ("Kernel", None, "the largest group (threads a block) the compiled kernel allows"),
    "work_group_size": ("Kernel", None, "the same, as OpenCL's kernel work-group size"),
}


def option(obj: Any, name: str) -> Any:
    """``obj``'s optional attribute ``name`` (one of :data:`OPTIONAL_ATTRIBUTES`), or the value
    core assumes when ``obj`` does not declare it. A name not in the contract is a KeyError."""
    return getattr(obj, name, OPTIONAL_ATTRIBUTES[name][1])


_supported: "dict[tuple[type, type], bool]" = {}


def _methods(capability: type) -> list[str]:
    return [n for n, v in vars(capability).items() if callable(v) and not n.startswith("_")]


def supports(obj: Any, capability: type) -> bool:
    """Whether ``obj`` offers every method of a capability protocol above: defined by its class
    (decided once per class: a fraction of a microsecond afterwards, where ``isinstance`` on a
    protocol costs ~10 us) or set on the instance itself. A ``__getattr__`` that answers any
    name (an OpenCL Program hands out kernels that way) declares nothing."""
    key = (type(obj), capability)
    found = _supported.get(key)
    if found is None:
        names = _methods(capability)
        if all(callable(getattr(type(obj), n, None)) for n in names):
            found = _supported[key] = True
        else:
            own = getattr(obj, "__dict__", {})
            return all(callable(getattr(type(obj), n, None)) or callable(own.get(n)) for n in names)
    return found
