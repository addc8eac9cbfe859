"""Building OpenCL C programs, with the compiled binary cached on disk.

The cache key covers everything that changes the binary: source, build options, device
name/vendor/version, driver and platform versions and this package's version (docs/architecture.md#caches).
A cached binary the driver rejects is deleted and the program is rebuilt from source.
``Program.binary`` hands the binary out; ``Context.program_from_binary`` loads one back
(rebuilding from ``source`` when the driver rejects it).
"""
from __future__ import annotations

import ctypes
import shlex
import time
from ctypes import c_char_p, c_int32, c_size_t, c_void_p
from typing import TYPE_CHECKING, Sequence

from pygpgpu_core.cache import DiskCache, atomic_write, cache_key
from pygpgpu_core.errors import CompileError, DriverError, GPGPUError
from pygpgpu_core.backend.handles import OwnedHandle
from pygpgpu_core.logs import get_logger, log_build

from . import _constants as C
from ._kernel import Kernel
from ._library import info_bytes, info_str, lib
from ._binary_check import checked_binary, seal, unseal
from ._status import check, status_name

if TYPE_CHECKING:
    from ._context import Context

__all__ = ["Program", "KernelNotFound", "normalize_options", "DEFAULT_STD"]

DEFAULT_STD = "-cl-std=CL1.2"
_CACHE = DiskCache("opencl")
log = get_logger("opencl")


class KernelNotFound(GPGPUError, LookupError):
    """``program.kernel(name)`` names no ``__kernel`` function of the program."""


def normalize_options(options: "Sequence[str] | str") -> list[str]:
    """Build options as a list, with ``-cl-std=CL1.2`` and ``-cl-kernel-arg-info`` added.

    The language version is only added when the caller chose none; argument info lets
    kernels check argument types before launching and convert Python ints/floats.
    """
    if isinstance(options, str):
        opts = shlex.split(options)
    else:
        opts = []
        for opt in options:
            if not isinstance(opt, str):
                raise TypeError(f"build options must be strings, got {type(opt).__name__}: {opt!r}")
            opts.append(opt)
    if not any(o.startswith("-cl-std=") for o in opts):
        opts.insert(0, DEFAULT_STD)
    if "-cl-kernel-arg-info" not in opts:
        opts.append("-cl-kernel-arg-info")
    return opts


def _program_cache_key(context: "Context", source: str, options: list[str]) -> str:
    from . import __version__

    device = context.device
    return cache_key(
        "opencl-program",
        source,
        "\0".join(options),
        device.name,
        device.vendor,
        device.version,
        device.driver_version,
        device.platform.name,
        device.platform.version,
        __version__,
    )


class Program(OwnedHandle):
    """A built ``cl_program`` for its context's device.

    ``from_cache`` tells whether the binary came from the disk cache, ``from_binary`` whether it
    came from the caller (``context.program_from_binary``), ``build_seconds`` how long creating
    and building took, ``build_log`` what the compiler said. ``binary`` is the device binary.
    """

    _kind = "Program"

    def __init__(self, context: "Context", source: str, options: "Sequence[str] | str" = (), *, name: str = "",
                 binary: "bytes | bytearray | memoryview | None" = None):
        if not isinstance(source, str):
            raise TypeError(f"program source must be a str of OpenCL C, got {type(source).__name__}")
        if binary is not None:
            if not isinstance(binary, (bytes, bytearray, memoryview)):
                raise TypeError(f"a program binary is bytes (Program.binary), got {type(binary).__name__}")
            binary = bytes(binary)
            if not binary:
                raise ValueError("the program binary is empty; pass the bytes of an earlier Program.binary")
        elif not source.strip():
            raise ValueError("program source is empty")
        context._require()
        self.context = context
        self.source = source
        self.name = name or "<source>"
        self.options = normalize_options(options)
        self.options += [o for o in context.own_build_options if o not in self.options]   # PoCL 4-5
        self.build_log = ""
        self.from_cache = False
        self.from_binary = False
        self.cache_key = ""
        self._binary_bytes: "bytes | None" = None
        self._sealed: "bytes | None" = None
        self._kernels: "dict[str, Kernel]" = {}
        start = time.perf_counter()
        if binary is not None:
            self._load_given_binary(binary)
        if self._handle is None:
            self._build_from_source()
        self.build_seconds = time.perf_counter() - start
        context._adopt(self)

    def _load_given_binary(self, binary: bytes) -> None:
        """``context.program_from_binary``: the caller's binary, or a rebuild from ``source`` when the
        driver rejects it (built by another driver or device, or damaged)."""
        try:
            self._handle = self._create_from_binary(binary)
            self.build_log = self._build(from_binary=True)
        except GPGPUError as exc:
            self._discard_failed_handle()
            if self.source.strip():
                return  # the caller gave the source: __init__ rebuilds from it
            code, status = getattr(exc, "code", -42), getattr(exc, "name", "CL_INVALID_BINARY")
            raise DriverError(
                "opencl", "clCreateProgramWithBinary", code, status,
                f"{self.context.device.name!r} rejected the program binary of {self.name} (built by another "
                f"device or driver, or damaged); pass source= to rebuild it from source. Details: {exc}",
            ) from None
        self.from_binary = True
        # program.binary is the binary it was loaded from, as for a disk-cache hit: a driver may
        # hand back other bytes for a program created from a binary (NVIDIA's OpenCL changes the
        # NULs after the PTX), and a caller storing program.binary expects what it gave.
        self._binary_bytes = unseal(binary)

    def _discard_failed_handle(self) -> None:
        self.close()
        self._handle = None
        self._closed_reason = ""

    def _build_from_source(self) -> None:
        context, source = self.context, self.source
        key = _program_cache_key(context, source, self.options)
        try:
            binary = _CACHE.get(key)
        except OSError:  # an unusable cache directory only costs a build
            binary = None
        if binary is not None:
            try:
                # keyed with this driver's version; checked for structure like any other binary
                self._handle = self._create_from_binary(binary)
                self.build_log = self._build(from_binary=True)
                self.from_cache = True
                self._binary_bytes = binary
                log.debug("binary cache hit: %s for %s (key %s)", self.name, context.device.selector, key)
            except (GPGPUError, OSError) as exc:
                # A binary from an older driver or a damaged entry: never trusted, rebuilt.
                log.debug("binary cache entry %s refused (%s): rebuilding %s", key, exc, self.name)
                self._discard_failed_handle()
                try:
                    _CACHE.path(key).unlink(missing_ok=True)
                except OSError:
                    pass
        if self._handle is None:
            log.debug("binary cache miss: building %s for %s (key %s)", self.name, context.device.selector, key)
            started = time.perf_counter()
            self._handle = self._create_from_source()
            self.build_log = self._build(from_binary=False, key=key)
            log_build(log, self.name, context.device.selector, time.perf_counter() - started, key)
            binary = self._binary()
            if binary:
                self._binary_bytes = binary
                try:
                    _CACHE.put(key, binary)
                except OSError:
                    pass
        self.cache_key = key

    @property
    def binary(self) -> bytes:
        """The device's program binary (``CL_PROGRAM_BINARIES``) behind a checksum;
        ``context.program_from_binary(b)`` loads it again without compiling, in this process or
        a later one on the same device and driver, and refuses a damaged copy. A program loaded
        from a binary returns that binary, whatever the driver would hand back."""
        self._require()
        if self._sealed is None:
            if self._binary_bytes is None:
                self._binary_bytes = self._binary()
            self._sealed = seal(self._binary_bytes)
        return self._sealed

    # --- building -----------------------------------------------------------------------
    def _create_from_source(self) -> int:
        data = self.source.encode("utf-8")
        strings = (c_char_p * 1)(data)
        lengths = (c_size_t * 1)(len(data))
        err = c_int32(0)
        handle = lib().clCreateProgramWithSource(self.context._require(), 1, strings, lengths, ctypes.byref(err))
        check(err.value, "clCreateProgramWithSource")
        return int(handle)

    def _create_from_binary(self, binary: bytes) -> int:
        binary, problem = checked_binary(binary)
        if problem is not None:  # the driver would read past the end and may crash the process
            raise DriverError("opencl", "clCreateProgramWithBinary", -42, "CL_INVALID_BINARY",
                              f"the program binary was not passed to the driver: {problem}")
        device = c_void_p(self.context.device.handle)
        lengths = (c_size_t * 1)(len(binary))
        binaries = (c_char_p * 1)(binary)
        binary_status = c_int32(0)
        err = c_int32(0)
        handle = lib().clCreateProgramWithBinary(
            self.context._require(), 1, ctypes.byref(device), lengths, binaries,
            ctypes.byref(binary_status), ctypes.byref(err),
        )
        check(err.value, "clCreateProgramWithBinary")
        self._handle = int(handle)  # owned from here on, so a failing check below releases it
        check(binary_status.value, "clCreateProgramWithBinary (binary status)")
        return int(handle)

    def _log(self) -> str:
        cl = lib()
        try:
            return info_str(
                cl.clGetProgramBuildInfo, "clGetProgramBuildInfo", self._handle, self.context.device.handle,
                C.CL_PROGRAM_BUILD_LOG,
            )
        except DriverError:
            return ""

    def _build(self, *, from_binary: bool, key: str = "") -> str:
        device = c_void_p(self.context.device.handle)
        opts = " ".join(shlex.quote(o) for o in self.options).encode()
        status = lib().clBuildProgram(self._handle, 1, ctypes.byref(device), opts, None, None)
        log = self._log()
        if status == 0:
            return log
        if from_binary:
            check(status, "clBuildProgram (cached binary)")
        where = self._keep_failed_source(key)
        device_name = self.context.device.name
        self.close()
        if status in (-11, -43, -15, -66):  # build/compile failure, invalid options
            what = "rejected the build options" if status in (-43, -66) else "failed"
            raise CompileError(
                f"OpenCL build of {self.name} {what} on {device_name!r} with {status_name(status)} "
                f"(options: {' '.join(self.options)})",
                log=log,
                source=self.source,
                source_path=where,
            )
        check(status, "clBuildProgram")
        return log  # pragma: no cover - check() raised

    def _keep_failed_source(self, key: str) -> "str | None":
        """Write the failing source where the user can open it (the error names the path)."""
        try:
            path = _CACHE.folder / "failed" / f"{key[:24]}.cl"
            atomic_write(path, self.source.encode("utf-8"))
            return str(path)
        except OSError:
            return None

    def _binary(self) -> bytes:
        cl = lib()
        sizes_raw = info_bytes(cl.clGetProgramInfo, "clGetProgramInfo", self._handle, C.CL_PROGRAM_BINARY_SIZES)
        if len(sizes_raw) < ctypes.sizeof(c_size_t):
            return b""
        size = c_size_t.from_buffer_copy(sizes_raw[: ctypes.sizeof(c_size_t)]).value
        if size == 0:
            return b""
        blob = ctypes.create_string_buffer(size)
        pointers = (c_void_p * 1)(ctypes.addressof(blob))
        check(
            cl.clGetProgramInfo(self._handle, C.CL_PROGRAM_BINARIES, ctypes.sizeof(pointers), pointers, None),
            "clGetProgramInfo(CL_PROGRAM_BINARIES)",
        )
        return blob.raw

    # --- kernels ------------------------------------------------------------------------
    @property
    def kernel_names(self) -> list[str]:
        """The ``__kernel`` functions in this program (CL_PROGRAM_KERNEL_NAMES)."""
        text = info_str(lib().clGetProgramInfo, "clGetProgramInfo", self._require(), C.CL_PROGRAM_KERNEL_NAMES)
        return [n for n in text.split(";") if n]

    def kernel(self, name: str) -> "Kernel":
        """The kernel ``name`` (one object per name; it remembers its last arguments)."""
        self._require()
        if not isinstance(name, str):
            raise TypeError(f"a kernel name is a str, got {type(name).__name__}")
        k = self._kernels.get(name)
        if k is None or k.closed:
            try:
                k = Kernel(self, name)
            except DriverError as exc:
                if exc.code != -46:  # CL_INVALID_KERNEL_NAME
                    raise
                names = ", ".join(self.kernel_names) or "none"
                raise KernelNotFound(
                    f"{self.name} has no kernel named {name!r}; its kernels are: {names}"
                ) from None
            self._kernels[name] = k
        return k

    def __getattr__(self, name: str) -> "Kernel":
        # ``prog.vecadd`` as a shorthand for ``prog.kernel("vecadd")``.
        if name.startswith("_") or self._handle is None:
            raise AttributeError(f"{name!r} (this Program is closed)" if not name.startswith("_") else name)
        try:
            return self.kernel(name)
        except KernelNotFound as exc:
            raise AttributeError(str(exc)) from None

    def _release(self, handle: int) -> None:
        context = self.__dict__.get("context")
        if context is not None:
            context._disown(self)
        for k in list(self.__dict__.get("_kernels", {}).values()):
            k._close_because(" (its Program was closed)")
        check(lib().clReleaseProgram(handle), "clReleaseProgram")

    def __repr__(self) -> str:
        state = "closed" if self.closed else ("cached" if self.from_cache else "built")
        return f"<OpenCL Program {self.name} on {self.context.device.selector} ({state})>"
