"""Kernel argument kinds and the generated warm-path launcher (DESIGN §5).

A launcher is built once per (kernel, argument kinds): one preallocated byte buffer holds
every argument value, a preallocated ``void*[]`` points into it, and the generated function
does ``struct.pack_into`` (one call for all arguments) followed by one ``cuLaunchKernel``.
"""
from __future__ import annotations

import ctypes
import struct
import threading
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np

from pygpgpu_core.errors import ClosedError
from pygpgpu_core.forking import closed_error
from pygpgpu_core.protocols import LocalMemory

from ._driver import check

if TYPE_CHECKING:
    from ._program import CudaKernel

__all__ = ["ArgKind", "normalize_kind", "kind_of_value", "build_launcher"]

_INT_FMT = {1: "b", 2: "h", 4: "i", 8: "q"}
_NUMPY_FMT = {
    "i": _INT_FMT,
    "u": {k: v.upper() for k, v in _INT_FMT.items()},
    "f": {2: "e", 4: "f", 8: "d"},
    "b": {1: "?"},
}
_SHARED_DEFAULT_LIMIT = 48 * 1024  # dynamic shared memory above this needs an opt-in attribute


class ArgKind:
    """How one kernel argument is packed: ``buffer`` (8-byte device pointer), ``local``
    (dynamic shared memory, not a parameter), ``scalar`` (struct format) or ``bytes``."""

    __slots__ = ("tag", "size", "fmt", "convert", "label")

    def __init__(self, tag: str, size: int = 0, fmt: str = "", convert: "Callable[[Any], Any] | None" = None,
                 label: str = ""):
        self.tag, self.size, self.fmt, self.convert, self.label = tag, size, fmt, convert, label or tag

    def __repr__(self) -> str:
        return self.label


BUFFER = ArgKind("buffer", 8, "Q", label="buffer")
LOCAL = ArgKind("local", label="local")


def _ctypes_value(v: Any) -> Any:
    return getattr(v, "value", v)


def _as_bytes_factory(size: int, dtype: "np.dtype | None", label: str) -> Callable[[Any], bytes]:
    def convert(v: Any) -> bytes:
        if isinstance(v, (bytes, bytearray, ctypes.Structure, ctypes.Union, ctypes.Array)):
            data = bytes(v)
        elif dtype is not None and dtype.names is not None:
            record = np.zeros((), dtype)
            if isinstance(v, (tuple, np.void)):
                record[()] = v
            else:  # a vector object, list or array: its components in field order
                flat = np.asarray(v).ravel()
                if flat.dtype.names is not None and flat.size == 1:
                    record[()] = flat[0]
                elif flat.dtype.names is None and flat.size == len(dtype.names):
                    record[()] = tuple(flat.tolist())
                else:
                    raise TypeError(f"{type(v).__name__} with {flat.size} values does not fill a {label}")
            data = record.tobytes()
        else:
            data = np.asarray(v, dtype=dtype).tobytes()
        if len(data) != size:
            raise TypeError(f"expected {size} bytes for a {label} argument, got {len(data)}")
        return data

    return convert


def _cuda_layout(dtype: np.dtype) -> np.dtype:
    """CUDA's layout of a PyGPGPU vector dtype: float3 is 12 bytes in CUDA (16 in OpenCL)."""
    if dtype.names is None:
        return dtype
    try:
        from pygpgpu_core.vec_types import vector_type_of_dtype
    except ImportError:
        return dtype
    found = vector_type_of_dtype(dtype)
    return found[0].dtype_packed if found else dtype


def normalize_kind(t: Any) -> ArgKind:
    """``"buffer"``, ``"local"``, a numpy dtype, a ctypes type or an ArgKind -> ArgKind."""
    if isinstance(t, ArgKind):
        return t
    if isinstance(t, str) and t in ("buffer", "local"):
        return BUFFER if t == "buffer" else LOCAL
    if t is LocalMemory:
        return LOCAL
    if isinstance(t, type) and issubclass(t, ctypes._SimpleCData):
        code, size = t._type_, ctypes.sizeof(t)
        if code in "fd":
            fmt = code
        elif code == "?":
            fmt = "?"
        elif code in "bhilqBHILQ":
            fmt = _INT_FMT[size] if code.islower() else _INT_FMT[size].upper()
        else:
            raise TypeError(f"ctypes type {t.__name__} cannot be a kernel argument")
        return ArgKind("scalar", size, fmt, _ctypes_value, t.__name__)
    if isinstance(t, type) and issubclass(t, (ctypes.Structure, ctypes.Union, ctypes.Array)):
        size = ctypes.sizeof(t)
        return ArgKind("bytes", size, f"{size}s", _as_bytes_factory(size, None, t.__name__), t.__name__)
    packed = getattr(t, "dtype_packed", None)
    dtype_attr = getattr(t, "dtype", None)
    if isinstance(t, type) and isinstance(packed, np.dtype):
        t = packed  # a pygpgpu vector class: CUDA uses the packed layout (float3 = 12 bytes)
    elif not isinstance(t, (np.dtype, str)) and isinstance(dtype_attr, np.dtype) and not (
        isinstance(t, type) and issubclass(t, np.generic)
    ):
        t = dtype_attr
    try:
        dtype = np.dtype(t)
    except TypeError:
        raise TypeError(
            f"{t!r} is not a kernel argument kind: use 'buffer', 'local', a numpy dtype or a ctypes type"
        ) from None
    if dtype.fields is None and dtype.subdtype is None and dtype.kind in _NUMPY_FMT:
        return ArgKind("scalar", dtype.itemsize, _NUMPY_FMT[dtype.kind][dtype.itemsize], None, dtype.name)
    dtype = _cuda_layout(dtype)
    size = dtype.itemsize
    return ArgKind("bytes", size, f"{size}s", _as_bytes_factory(size, dtype, str(dtype)), str(dtype))


def kind_of_value(value: Any, param_size: "int | None") -> Any:
    """The argument kind for a value passed to ``Kernel.launch`` (the slow, convenient path)."""
    if isinstance(value, LocalMemory):
        return "local"
    if isinstance(value, np.generic):
        return value.dtype
    if isinstance(value, (ctypes._SimpleCData, ctypes.Structure, ctypes.Union, ctypes.Array)):
        return type(value)
    if isinstance(getattr(type(value), "dtype_packed", None), np.dtype):
        return type(value)  # a pygpgpu vector (float4, int3, ...) passed by value
    if isinstance(value, (bool, int, float)) and param_size is not None:
        # A plain Python number adopts the kernel parameter's width.
        if isinstance(value, bool):
            return np.dtype(np.bool_)
        if isinstance(value, int):
            return np.dtype({4: np.int32, 8: np.int64, 2: np.int16, 1: np.int8}.get(param_size, np.int64))
        return np.dtype({4: np.float32, 8: np.float64}.get(param_size, np.float64))
    if isinstance(value, (bool, int, float)):
        raise TypeError(
            f"a plain Python {type(value).__name__} ({value!r}) has no fixed C type: pass a numpy scalar "
            "such as np.int32(...) or np.float32(...)"
        )
    if hasattr(value, "ptr"):
        return "buffer"
    raise TypeError(
        f"{type(value).__name__} cannot be a kernel argument: pass a Buffer, a numpy array, a numpy or "
        "ctypes scalar, a ctypes Structure or LocalMemory"
    )




def _explain(kernel: "CudaKernel", kinds: Sequence[ArgKind], args: Any, exc: BaseException) -> BaseException:
    """Turn a packing failure into an error naming the bad argument."""
    try:
        n = len(args)
    except TypeError:
        return TypeError(f"kernel {kernel.name!r}: args must be a sequence, got {type(args).__name__}")
    if n != len(kinds):
        return TypeError(f"kernel {kernel.name!r} takes {len(kinds)} arguments ({kinds}), got {n}")
    for i, (kind, value) in enumerate(zip(kinds, args)):
        where = f"argument {i} of kernel {kernel.name!r}"
        if kind.tag == "buffer":
            ptr = getattr(value, "ptr", None)
            if ptr is None and hasattr(value, "ptr"):
                return ClosedError(f"the buffer passed as {where}")
            if not isinstance(ptr, int):
                return TypeError(f"{where} must be a device Buffer, got {type(value).__name__}")
        elif kind.tag == "local":
            if not isinstance(value, LocalMemory):
                return TypeError(f"{where} must be LocalMemory(nbytes), got {type(value).__name__}")
        else:
            try:
                struct.pack("<" + kind.fmt, kind.convert(value) if kind.convert else value)
            except Exception as inner:
                return TypeError(f"{where} must be {kind.label}, got {type(value).__name__} {value!r}: {inner}")
    return exc


def _fail(kernel: "CudaKernel", status: int) -> None:
    if not kernel.handle:  # its program was closed (or inherited across fork): the handle was set to NULL
        raise closed_error(kernel.context, f"the CUDA program of kernel {kernel.name!r}", "cuda")
    check(status, "cuLaunchKernel", kernel.launch_hint(status))


def build_launcher(kernel: "CudaKernel", arg_types: Sequence[Any]) -> Callable[..., None]:
    """Generate ``fn(global_size, local_size, args)`` for ``kernel`` and these argument kinds."""
    kinds = [normalize_kind(t) for t in arg_types]
    params = [(i, k) for i, k in enumerate(kinds) if k.tag != "local"]
    kernel.check_param_kinds([k for _, k in params])

    fmt, offsets, exprs, namespace = "<", [], [], {}
    offset = 0
    for i, kind in params:
        align = 8 if kind.size >= 8 else max(1, kind.size)
        pad = -offset % align
        fmt += "x" * pad
        offset += pad
        offsets.append(offset)
        fmt += kind.fmt
        offset += kind.size
        if kind.tag == "buffer":
            exprs.append(f"a{i}.ptr")
        elif kind.convert is not None:
            namespace[f"conv{i}"] = kind.convert
            exprs.append(f"conv{i}(a{i})")
        else:
            exprs.append(f"a{i}")
    # Slack after the last slot: without the kernel's parameter sizes (older drivers) the driver
    # may read a little past what we packed; it must read our zeros, never unmapped memory.
    slack = 0 if kernel.param_sizes is not None else 4096
    storage = (ctypes.c_char * max(offset + slack, 8))()
    base = ctypes.addressof(storage)
    n_params = len(params) if kernel.param_sizes is not None else len(params) + 64
    pointers = (ctypes.c_void_p * max(n_params, 1))(
        *([base + o for o in offsets] + [base + offset] * (n_params - len(params)))
    )

    locals_ = [i for i, k in enumerate(kinds) if k.tag == "local"]
    ctx = kernel.program.context
    namespace.update(
        pack_into=struct.Struct(fmt).pack_into,
        storage=storage,
        params=pointers if params else None,
        func=kernel.handle,
        stream=ctx.queue.handle,
        ctx_handle=ctx._handle,
        set_current=ctx.drv.cuCtxSetCurrent_unchecked,
        cu_launch=ctx.drv.cuLaunchKernel_unchecked,
        geometry_cache=kernel._geometry_cache,
        geometry=kernel.geometry,
        ensure_shared=kernel.ensure_shared,
        explain=lambda args, exc: _explain(kernel, kinds, args, exc),
        fail=lambda rc: _fail(kernel, rc),
        lock=threading.Lock(),
        static_shared=0,
        LIMIT=_SHARED_DEFAULT_LIMIT,
    )
    names = ", ".join(f"a{i}" for i in range(len(kinds)))
    unpack = f"        ({names},) = args\n" if kinds else "        if len(args): raise ValueError\n"
    shared = " + ".join(f"a{i}.nbytes" for i in locals_) or "0"
    src = (
        "def launch(global_size, local_size, args):\n"
        "    try:\n"
        + unpack
        + "        shared = " + shared + "\n"
        + "    except Exception as exc:\n"
        "        raise explain(args, exc) from None\n"
        "    try:\n"
        "        geom = geometry_cache[global_size, local_size]\n"
        "    except (KeyError, TypeError):\n"
        "        geom = geometry(global_size, local_size)\n"
        "    if geom is None:\n"
        "        return\n"
        + ("    if shared > LIMIT:\n        ensure_shared(shared)\n" if locals_ else "")
        + "    with lock:\n"
        "        try:\n"
        + (f"            pack_into(storage, 0, {', '.join(exprs)})\n" if exprs else "            pass\n")
        + "        except Exception as exc:\n"
        "            raise explain(args, exc) from None\n"
        "        if not func:\n"
        "            fail(0)\n"
        "        set_current(ctx_handle)\n"
        "        rc = cu_launch(func, *geom, shared, stream, params, None)\n"
        "    if rc:\n"
        "        fail(rc)\n"
    )
    exec(compile(src, f"<pygpgpu-cuda launcher {kernel.name}>", "exec"), namespace)
    launch = namespace["launch"]
    launch.arg_kinds = tuple(kinds)  # type: ignore[attr-defined]
    launch.source = src  # type: ignore[attr-defined]
    return launch
