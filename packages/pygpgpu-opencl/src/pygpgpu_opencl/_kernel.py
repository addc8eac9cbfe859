"""Kernels: argument checking, launches with total-work semantics, and the hot-path launcher.

Work sizes: ``global_size`` is the total number of work items per dimension; it is rounded
up to a multiple of ``local_size`` (so kernels must bound-check against their real size).
``local_size=None`` lets the runtime choose the work-group shape.

A kernel remembers the last value set for each argument and skips ``clSetKernelArg`` when
the same (immutable) object is passed again; that reference is held until the next launch
with another value.
"""
from __future__ import annotations

import ctypes
import threading
from ctypes import c_int32, c_size_t, c_void_p
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np

from pygpgpu_core.errors import DriverError
from pygpgpu_core.backend import native as _native
from pygpgpu_core.backend.args import ArgKind, normalize_kind
from pygpgpu_core.backend.fastpath import LaunchRecipe, generate
from pygpgpu_core.backend.handles import OwnedHandle
from pygpgpu_core.backend.lowlevel import split_work_bracket
from pygpgpu_core.protocols import LocalMemory

from . import _constants as C
from ._args import ADDRESS_NAMES, ArgSpec, describe, scalar_bytes
from ._buffer import Buffer
from ._library import info_sizes, info_str, info_uint, info_ulong, lib
from ._staging import ArrayStaging
from ._wait import enqueue_launch
from ._status import check

if TYPE_CHECKING:
    from ._program import Program

__all__ = ["Kernel", "normalize_work_size"]

_UNSET = object()
_PTR_SIZE = ctypes.sizeof(c_void_p)
_NULL_MEM = c_void_p(0)

_CTYPE_OF: "dict[np.dtype, type[ctypes._SimpleCData[Any]]]" = {
    np.dtype(np.int8): ctypes.c_int8,
    np.dtype(np.uint8): ctypes.c_uint8,
    np.dtype(np.int16): ctypes.c_int16,
    np.dtype(np.uint16): ctypes.c_uint16,
    np.dtype(np.int32): ctypes.c_int32,
    np.dtype(np.uint32): ctypes.c_uint32,
    np.dtype(np.int64): ctypes.c_int64,
    np.dtype(np.uint64): ctypes.c_uint64,
    np.dtype(np.float32): ctypes.c_float,
    np.dtype(np.float64): ctypes.c_double,
}


def _dims(value: Any, what: str) -> tuple[int, ...]:
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return (int(value),)
    if isinstance(value, (tuple, list)) and 1 <= len(value) <= 3:
        if all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in value):
            return tuple(int(v) for v in value)
    raise TypeError(f"{what} must be an int or a tuple of 1 to 3 ints, got {value!r}")


# Work groups per dimension: PoCL dies with SIGILL from 2**32 groups in a dimension (measured with
# PoCL 6 on x86-64), and other drivers keep group ids in 32 bits too, so no launch goes past this.
MAX_GROUPS = 2**32 - 1


def normalize_work_size(
    global_size: Any, local_size: Any, max_group: int, max_items: Sequence[int], kernel: str = "",
    address_bits: int = 64,
) -> tuple[int, tuple[int, ...], "tuple[int, ...] | None"]:
    """``(dims, global, local)`` with global rounded up to a multiple of local; raises ValueError
    for sizes the device cannot launch (a size_t of ``address_bits`` on the device, at most
    :data:`MAX_GROUPS` groups a dimension) instead of letting them wrap or crash the driver."""
    g = _dims(global_size, "global size")
    if any(v < 0 for v in g):
        raise ValueError(f"global size must not be negative, got {global_size!r}")
    who = f"kernel {kernel!r}" if kernel else "this kernel"
    size_max = 2**address_bits - 1
    for d, v in enumerate(g):
        if v > size_max:
            raise ValueError(f"global size {v} in dimension {d} of {who} does not fit the device's size_t "
                             f"({address_bits} bits, at most {size_max}); split the work into several launches "
                             "or loop inside the kernel")
    if local_size is None:
        for d, v in enumerate(g):
            if v > MAX_GROUPS:
                # the runtime picks the group size, possibly one that needs more than MAX_GROUPS groups
                raise ValueError(f"global size {v} in dimension {d} of {who} is past 2**32 - 1 work items: give an "
                                 f"explicit local size (k[({v}, 256)] or launch(global, local, ...)) so the launch "
                                 f"needs at most {MAX_GROUPS} work groups a dimension")
        return len(g), g, None
    l = _dims(local_size, "local size")
    if len(l) != len(g):
        raise ValueError(f"local size {local_size!r} must have as many dimensions as global size {global_size!r}")
    if any(v < 1 for v in l):
        raise ValueError(f"local size entries must be positive, got {local_size!r}")
    group = 1
    for v in l:
        group *= v
    if group > max_group:
        raise ValueError(
            f"local size {local_size!r} has {group} work items per group but {who} allows at most "
            f"{max_group} on this device; use a smaller local size or None"
        )
    for d, (v, cap) in enumerate(zip(l, max_items)):
        if v > cap:
            raise ValueError(f"local size {v} in dimension {d} exceeds the device limit {cap} (CL_DEVICE_MAX_WORK_ITEM_SIZES)")
    for d, (gv, lv) in enumerate(zip(g, l)):
        groups = -(-gv // lv)
        if groups > MAX_GROUPS or groups * lv > size_max:
            raise ValueError(f"global size {gv} in dimension {d} of {who} needs {groups} work groups of {lv}; at most "
                             f"{MAX_GROUPS} can be launched: use a larger local size, several launches or a loop "
                             "inside the kernel")
    g = tuple(((gv + lv - 1) // lv) * lv for gv, lv in zip(g, l))
    return len(g), g, l


class _WorkSizeCache:
    """The ctypes arrays for the last (global, local) pair, rebuilt only when it changes."""

    __slots__ = ("key_g", "key_l", "dims", "gws", "lws", "total", "kernel")

    def __init__(self, kernel: "Kernel"):
        self.kernel = kernel
        self.key_g: Any = _UNSET
        self.key_l: Any = _UNSET
        self.gws = (c_size_t * 3)()
        self.lws: Any = None
        self.dims = 0
        self.total = 0

    def changed(self, global_size: Any, local_size: Any) -> bool:
        try:
            return bool(global_size != self.key_g or local_size != self.key_l)
        except (TypeError, ValueError):  # e.g. a numpy array: update() explains what is accepted
            return True

    def update(self, global_size: Any, local_size: Any) -> None:
        k = self.kernel
        dims, g, l = normalize_work_size(global_size, k._local_for(global_size, local_size), k.work_group_size,
                                         k.device.max_work_item_sizes, k.name, k.device.address_bits)
        gws = (c_size_t * 3)(*g)
        lws = (c_size_t * 3)(*l) if l is not None else None
        total = 1
        for v in g:
            total *= v
        self.dims, self.gws, self.lws, self.total = dims, gws, lws, total
        # Keep copies of list inputs so later mutation of the caller's list is noticed.
        self.key_g = tuple(global_size) if isinstance(global_size, list) else global_size
        self.key_l = tuple(local_size) if isinstance(local_size, list) else local_size


class Kernel(OwnedHandle):
    """One ``__kernel`` function of a built :class:`Program`.

    ``k.launch(global, local, args)``, ``k[(global, local)](*args)``, ``k[global](*args)``
    and the hot path ``k.launcher(arg_types)(global, local, args)``.

    Argument values are state of the OpenCL kernel object, so one Kernel must not be
    launched from several threads at once; give each thread its own ``Kernel(program, name)``.
    """

    _kind = "Kernel"

    def __init__(self, program: "Program", name: str):
        cl = lib()
        err = c_int32(0)
        handle = cl.clCreateKernel(program._require(), name.encode("utf-8"), ctypes.byref(err))
        check(err.value, "clCreateKernel")
        self._handle = int(handle)
        self.program = program
        self.context = program.context
        self.device = program.context.device
        self.name = name
        self.num_args = info_uint(cl.clGetKernelInfo, "clGetKernelInfo", self._handle, C.CL_KERNEL_NUM_ARGS)
        self.args: tuple[ArgSpec, ...] = tuple(self._arg_spec(i) for i in range(self.num_args))
        wg = info_sizes(
            cl.clGetKernelWorkGroupInfo, "clGetKernelWorkGroupInfo", self._handle, self.device.handle,
            C.CL_KERNEL_WORK_GROUP_SIZE,
        )
        self.work_group_size = min(wg[0], self.device.max_work_group_size) if wg else self.device.max_work_group_size
        try:  # __attribute__((reqd_work_group_size(x, y, z))): (0, 0, 0) when the kernel declares none
            required = info_sizes(
                cl.clGetKernelWorkGroupInfo, "clGetKernelWorkGroupInfo", self._handle, self.device.handle,
                C.CL_KERNEL_COMPILE_WORK_GROUP_SIZE,
            )
        except DriverError:
            required = ()
        self.required_local_size: "tuple[int, ...] | None" = tuple(required[:3]) if any(required) else None
        """The local size the kernel's ``reqd_work_group_size`` attribute demands, or None."""
        try:  # local memory the kernel declares itself, before any __local argument is set
            self.static_local_mem = info_ulong(
                cl.clGetKernelWorkGroupInfo, "clGetKernelWorkGroupInfo", self._handle, self.device.handle,
                C.CL_KERNEL_LOCAL_MEM_SIZE,
            )
        except DriverError:
            self.static_local_mem = 0
        self._local_sizes = [0] * self.num_args
        # One preallocated cl_mem slot per argument for launch(): no ctypes object per call.
        self._mem_slots = [c_void_p(0) for _ in range(self.num_args)]
        self._mem_refs = [ctypes.byref(slot) for slot in self._mem_slots]
        self._last: list[Any] = [_UNSET] * self.num_args
        # clSetKernelArg on one cl_kernel from two threads at once is undefined (PoCL aborts):
        # setting the arguments and enqueueing is one critical section (enqueue captures them)
        self._launch_lock = threading.Lock()
        self._work = _WorkSizeCache(self)
        self._brackets: dict[Any, Callable[..., None]] = {}

    def _local_for(self, global_size: Any, local_size: Any) -> Any:
        """The local size to launch with. A kernel declaring ``reqd_work_group_size`` runs only in
        groups of that size: it is the size when none is given (the driver refuses None), and a
        different one is refused here, naming the attribute."""
        required = self.required_local_size
        if required is None:
            return local_size
        dims = len(_dims(global_size, "global size"))
        want = required[:dims]
        if (local_size is None and all(v == 1 for v in required[dims:])) or (
                local_size is not None and _dims(local_size, "local size") == want):
            return want
        attribute = f"reqd_work_group_size({', '.join(map(str, required))})"
        raise ValueError(f"kernel {self.name!r} declares {attribute}: launched over {dims} dimension"
                         f"{'s' if dims > 1 else ''}, its local size must be {want} (k[(global, "
                         f"{want if dims > 1 else want[0]})]) or left out; got {local_size!r}")

    def _arg_spec(self, index: int) -> ArgSpec:
        get = lib().clGetKernelArgInfo
        if get is None:
            return ArgSpec(index)
        call = "clGetKernelArgInfo"
        try:
            address = ADDRESS_NAMES.get(info_uint(get, call, self._handle, index, C.CL_KERNEL_ARG_ADDRESS_QUALIFIER))
            type_name = info_str(get, call, self._handle, index, C.CL_KERNEL_ARG_TYPE_NAME)
            qualifiers = info_ulong(get, call, self._handle, index, C.CL_KERNEL_ARG_TYPE_QUALIFIER)
            try:
                name = info_str(get, call, self._handle, index, C.CL_KERNEL_ARG_NAME)
            except Exception:
                name = ""
        except Exception:
            return ArgSpec(index)  # CL_KERNEL_ARG_INFO_NOT_AVAILABLE: types are unknown
        return ArgSpec(index, name, address, type_name, bool(qualifiers & C.CL_KERNEL_ARG_TYPE_CONST))

    # --- descriptions -------------------------------------------------------------------
    @property
    def signature(self) -> str:
        return f"__kernel void {self.name}({', '.join(a.declaration() for a in self.args)})"

    def _where(self, spec: ArgSpec) -> str:
        return f"{spec.label()} of kernel {self.name!r} ({spec.declaration()})"

    def _count_error(self, got: int) -> TypeError:
        names = ", ".join(a.name or f"arg{a.index}" for a in self.args)
        return TypeError(f"kernel {self.name!r} takes {self.num_args} arguments ({names}), got {got}")

    # --- argument setting ---------------------------------------------------------------
    def _check_local(self, index: int, nbytes: int) -> None:
        """Refuse __local sizes beyond the device's local memory (PoCL aborts the process)."""
        total = self.static_local_mem + nbytes + sum(self._local_sizes) - self._local_sizes[index]
        limit = self.device.local_mem_size
        if total > limit:
            raise ValueError(
                f"{self._where(self.args[index])}: {nbytes} bytes of local memory bring kernel {self.name!r} "
                f"to {total} bytes, more than the device's {limit} (CL_DEVICE_LOCAL_MEM_SIZE)"
            )
        self._local_sizes[index] = nbytes

    def _set_failed(self, status: int, index: int) -> None:
        self._last[index] = _UNSET
        check(status, f"clSetKernelArg({self._where(self.args[index])})")

    def _prepare(self, spec: ArgSpec, value: Any) -> tuple[str, Any]:
        """Validate one argument of launch(): returns (kind, payload). No driver calls."""
        cls = value.__class__
        if cls is Buffer and spec.address in ("global", "constant"):  # the common case first
            if value._handle is None:
                value._require()
            if value.context is not self.context:
                raise ValueError(f"{self._where(spec)}: the Buffer belongs to another Context than the kernel")
            return "buffer", value
        if spec.dtype is not None and cls is spec.dtype.type and spec.is_scalar:
            return "bytes", value.tobytes()
        if isinstance(value, Buffer):
            if spec.address == "private":
                raise TypeError(f"{self._where(spec)} is passed by value; got a Buffer")
            if spec.address == "local":
                raise TypeError(f"{self._where(spec)} is __local memory: pass LocalMemory(nbytes), not a Buffer")
            value._require()
            if value.context is not self.context:
                raise ValueError(f"{self._where(spec)}: the Buffer belongs to another Context than the kernel")
            return "buffer", value
        if isinstance(value, LocalMemory):
            if spec.known and spec.address != "local":
                raise TypeError(f"{self._where(spec)} is not a __local pointer; got {value!r}")
            self._check_local(spec.index, value.nbytes)
            return "local", value.nbytes
        if value is None:
            if spec.known and spec.address not in ("global", "constant"):
                raise TypeError(f"{self._where(spec)}: None (a NULL pointer) only fits a __global pointer")
            return "null", None
        if isinstance(value, np.ndarray) and (spec.pointer or (not spec.known and value.ndim > 0)):
            if spec.address == "local":
                raise TypeError(f"{self._where(spec)} is __local memory: pass LocalMemory(nbytes), not an array")
            if spec.dtype is not None and value.dtype != spec.dtype:
                raise TypeError(f"{self._where(spec)} points to {spec.dtype.name}, got {describe(value)}")
            readback = value.flags.writeable and not spec.const and spec.address != "constant"
            return "array", (value, readback)
        if spec.known and spec.pointer:
            hint = "LocalMemory(nbytes)" if spec.address == "local" else "a Buffer or a numpy array"
            raise TypeError(f"{self._where(spec)} is a pointer: pass {hint}, got {describe(value)}")
        return "bytes", scalar_bytes(spec, value, self.name)

    @staticmethod
    def _natural_align(spec: ArgSpec) -> "int | None":
        """The alignment a compiler may assume for this pointer parameter (None: unknown)."""
        if spec.dtype is None:
            return None
        return spec.dtype.itemsize * (4 if spec.width == 3 else spec.width)

    def launch(self, global_size: Any, local_size: Any = None, args: Sequence[Any] = ()) -> None:
        """Set the arguments and enqueue one launch (asynchronous unless numpy arrays are passed).

        Arguments: Buffer, None (NULL pointer), LocalMemory, numpy scalars, Python int/float
        (when the driver reports the parameter type), ctypes values and Structures (by value),
        bytes, and numpy arrays, which are copied to a temporary buffer and, unless read-only
        or declared const, copied back after the launch (which then waits for the kernel).
        """
        kh = self._require()
        queue = self.context.queue_handle()
        args = tuple(args)
        if len(args) != self.num_args:
            raise self._count_error(len(args))
        staging = None
        try:
            with self._launch_lock:
                staging = self._set_and_enqueue(kh, queue, global_size, local_size, args)
            if staging is not None:
                staging.finish(queue)          # outside the lock: other threads may launch meanwhile
        finally:
            if staging is not None:
                staging.release()

    def _set_and_enqueue(self, kh: int, queue: int, global_size: Any, local_size: Any,
                         args: "tuple[Any, ...]") -> "ArrayStaging | None":
        """The body of :meth:`launch` under the launch lock; returns the numpy staging, if any."""
        work = self._work
        if work.changed(global_size, local_size):
            work.update(global_size, local_size)
        last = self._last
        specs = self.args
        plan = []  # (index, kind, payload) for the arguments that must be set
        for i, value in enumerate(args):
            if value is last[i]:  # an immutable value or a Buffer already set in this slot
                if value._handle is None if isinstance(value, Buffer) else False:
                    value._require()  # closed since it was set
                continue
            plan.append((i, *self._prepare(specs[i], value)))
        if work.total == 0:
            return None
        cl = lib()
        set_arg = cl.clSetKernelArg
        staging = None
        try:
            for i, kind, payload in plan:
                if kind == "buffer":
                    self._mem_slots[i].value = payload._handle
                    status = set_arg(kh, i, _PTR_SIZE, self._mem_refs[i])
                elif kind == "bytes":
                    status = set_arg(kh, i, len(payload), payload)
                elif kind == "array":
                    if staging is None:
                        staging = ArrayStaging(self.context)
                    arr, readback = payload
                    try:
                        mem = staging.add(arr, readback, self._natural_align(specs[i]), specs[i].label())
                    except ValueError as exc:     # shares memory with another argument's array
                        raise ValueError(f"{self._where(specs[i])}: {exc}") from None
                    self._mem_slots[i].value = mem
                    status = set_arg(kh, i, _PTR_SIZE, self._mem_refs[i])
                elif kind == "null":
                    status = set_arg(kh, i, _PTR_SIZE, ctypes.byref(_NULL_MEM))
                else:  # local
                    status = set_arg(kh, i, payload, None)
                if status:
                    self._set_failed(status, i)
                # Remember the caller's value only when it cannot change under the same identity.
                value = args[i]
                last[i] = value if value.__class__ in _IMMUTABLE_EXACT or not _mutable(value) else _UNSET
            status = enqueue_launch(self.context, cl.clEnqueueNDRangeKernel, queue, kh, work.dims, None, work.gws,
                                    work.lws, 0, None)
            if status:
                check(status, f"clEnqueueNDRangeKernel({self.name!r}, global={work.key_g}, local={work.key_l})")
            self.context._last_launch = (self.name, args)   # named if Ctrl-C interrupts a wait for it
        except BaseException:
            if staging is not None:
                staging.release()
            raise
        return staging

    def __call__(self, *args: Any, global_size: Any, local_size: Any = None) -> None:
        """``k(*args, global_size=n, local_size=None)``: keyword form of :meth:`launch`."""
        self.launch(global_size, local_size, args)

    def __getitem__(self, config: Any) -> Callable[..., None]:
        """``k[(global, local)](*args)`` or ``k[global](*args)``."""
        try:
            return self._brackets[config]
        except (KeyError, TypeError):  # TypeError: an unhashable config such as a list
            pass
        global_size, local_size = split_work_bracket(config, self.name, self.device.selector)
        # Validate now so a bad bracket fails where it is written.
        normalize_work_size(global_size, self._local_for(global_size, local_size), self.work_group_size,
                            self.device.max_work_item_sizes, self.name, self.device.address_bits)
        launch_sized = self.launch

        def launch(*args: Any) -> None:
            launch_sized(global_size, local_size, args)

        try:
            if len(self._brackets) < 64:
                self._brackets[config] = launch
        except TypeError:
            pass
        return launch

    # --- the hot path -------------------------------------------------------------------
    def launcher(self, arg_types: Sequence[Any], native: bool = True) -> Callable[[Any, Any, Sequence[Any]], None]:
        """A fast ``fn(global_size, local_size, args)`` for arguments of fixed kinds.

        ``arg_types`` gives one entry per parameter: ``"buffer"`` (a Buffer, or None for
        NULL), ``"local"`` (LocalMemory or an int byte count), a numpy dtype (a scalar by
        value; Python and numpy numbers are converted to it) or a ctypes type (a value of
        that type, e.g. a Structure, by value). Scalars go into preallocated storage and
        ``clSetKernelArg`` runs only for arguments that changed; then one
        ``clEnqueueNDRangeKernel``. Where ``pygpgpu build-native`` built the native launcher
        (and ``native`` allows it), a launch whose arguments are all the objects set last and
        whose work size equals the last one is repeated in C (``pygpgpu_core.backend.native.wrap_repeat``).
        """
        self._require()
        arg_types = list(arg_types)
        if len(arg_types) != self.num_args:
            raise TypeError(
                f"launcher(): kernel {self.name!r} takes {self.num_args} arguments, "
                f"arg_types has {len(arg_types)}"
            )
        kinds = []
        for spec, t in zip(self.args, arg_types):
            try:
                kinds.append(normalize_kind(t))
            except TypeError:
                raise TypeError(f"launcher(): arg_types entry {t!r} for {self._where(spec)} is not 'buffer', "
                                "'local', a numpy dtype or a ctypes type") from None
        setters = [self._setter(spec, kind) for spec, kind in zip(self.args, kinds)]
        buffers = [kind.tag == "buffer" for kind in kinds]
        launch = _generated_launcher(self, setters, kinds)
        if not native:
            return launch
        cl = lib()
        return _native.wrap_repeat(launch, self, buffers, cl.cdll["clEnqueueNDRangeKernel"], cl.clReleaseEvent)

    def _setter(self, spec: ArgSpec, kind: ArgKind) -> Callable[[int, Any], None]:
        """What sets argument ``spec`` of kind ``kind`` (read by backend/args.normalize_kind,
        the one parser of argument kinds) with ``clSetKernelArg``."""
        i = spec.index
        where = self._where(spec)
        last = self._last
        set_arg = lib().clSetKernelArg
        context = self.context
        fail = self._set_failed

        if kind.tag == "buffer":
            if spec.known and spec.address not in ("global", "constant"):
                raise TypeError(f"launcher(): {where} is not a __global pointer, arg_types says 'buffer'")
            slot = c_void_p(0)
            ref = ctypes.byref(slot)

            def set_buffer(kh: int, value: Any) -> None:
                if value is last[i]:
                    if value is not None and value._handle is None:
                        value._require()  # closed since the last launch
                    return
                if value is None:
                    slot.value = None
                elif isinstance(value, Buffer):
                    h = value._handle
                    if h is None:
                        value._require()
                    if value.context is not context:
                        raise ValueError(f"{where}: the Buffer belongs to another Context than the kernel")
                    slot.value = h
                else:
                    raise TypeError(f"{where} expects a Buffer, got {describe(value)}")
                status = set_arg(kh, i, _PTR_SIZE, ref)
                if status:
                    fail(status, i)
                last[i] = value

            return set_buffer

        if kind.tag == "local":
            check_local = self._check_local
            if spec.known and spec.address != "local":
                raise TypeError(f"launcher(): {where} is not a __local pointer, arg_types says 'local'")

            def set_local(kh: int, value: Any) -> None:
                if value is last[i]:
                    return
                nbytes = value.nbytes if isinstance(value, LocalMemory) else value
                if isinstance(nbytes, bool) or not isinstance(nbytes, (int, np.integer)) or nbytes <= 0:
                    raise TypeError(f"{where} expects LocalMemory(nbytes) or a positive int, got {describe(value)}")
                check_local(i, int(nbytes))
                status = set_arg(kh, i, int(nbytes), None)
                if status:
                    fail(status, i)
                last[i] = value

            return set_local

        aggregate = kind.ctype if kind.dtype is None else None      # a ctypes Structure, Union or Array
        if aggregate is not None:
            if spec.known and spec.pointer:
                raise TypeError(f"launcher(): {where} is a pointer, arg_types says {aggregate.__name__} by value")
            size = ctypes.sizeof(aggregate)
            if spec.size is not None and spec.size != size:
                raise TypeError(f"launcher(): {where} takes {spec.size} bytes, {aggregate.__name__} has {size}")

            def set_struct(kh: int, value: Any) -> None:
                if not isinstance(value, aggregate):
                    raise TypeError(f"{where} expects {aggregate.__name__}, got {describe(value)}")
                status = set_arg(kh, i, size, ctypes.byref(value))  # mutable: always set
                if status:
                    fail(status, i)
                last[i] = _UNSET

            return set_struct

        dtype = kind.dtype
        if dtype is None:
            raise TypeError(f"launcher(): arg_types entry {kind!r} for {where} is not 'buffer', 'local', "
                            "a numpy dtype or a ctypes type")
        if spec.known and spec.pointer:
            raise TypeError(f"launcher(): {where} is a pointer, arg_types says {dtype} by value")
        if spec.is_scalar and spec.dtype is not None and dtype != spec.dtype:   # is_scalar: dtype known
            raise TypeError(f"launcher(): {where} is {spec.dtype.name}, arg_types says {dtype.name}")
        if spec.size is not None and spec.size != dtype.itemsize:
            raise TypeError(f"launcher(): {where} takes {spec.size} bytes, {dtype} has {dtype.itemsize}")
        size = dtype.itemsize
        ctype = _CTYPE_OF.get(dtype)
        if ctype is not None:
            storage = ctype()
            ref = ctypes.byref(storage)
            if dtype.kind in "iu":
                info = np.iinfo(dtype)
                lo, hi = int(info.min), int(info.max)

                def set_int(kh: int, value: Any) -> None:
                    if value is last[i]:
                        return
                    try:
                        ok = lo <= value <= hi
                        storage.value = value
                    except TypeError:
                        raise TypeError(f"{where} expects {dtype.name}, got {describe(value)}") from None
                    if not ok:
                        raise ValueError(f"{where} is {dtype.name}; {value} does not fit (range {lo}..{hi})")
                    status = set_arg(kh, i, size, ref)
                    if status:
                        fail(status, i)
                    last[i] = value

                return set_int

            def set_float(kh: int, value: Any) -> None:
                if value is last[i]:
                    return
                try:
                    storage.value = value
                except TypeError:
                    raise TypeError(f"{where} expects {dtype.name}, got {describe(value)}") from None
                except OverflowError:   # an int past every float; ctypes' message names no argument
                    raise OverflowError(f"{where}: {value} does not fit in {dtype.name}") from None
                status = set_arg(kh, i, size, ref)
                if status:
                    fail(status, i)
                last[i] = value

            return set_float

        store = np.zeros(1, dtype=dtype)  # float16, structured and vector dtypes
        address = store.ctypes.data

        def set_numpy(kh: int, value: Any) -> None:
            if value is last[i]:
                return
            try:
                store[0] = value
            except (TypeError, ValueError):
                raise TypeError(f"{where} expects {dtype}, got {describe(value)}") from None
            status = set_arg(kh, i, size, address)
            if status:
                fail(status, i)
            last[i] = value if not _mutable(value) else _UNSET

        set_numpy.store = store  # type: ignore[attr-defined]  # keeps the storage alive
        return set_numpy

    def _release(self, handle: int) -> None:
        self._last[:] = [_UNSET] * self.num_args
        check(lib().clReleaseKernel(handle), "clReleaseKernel")

    def __repr__(self) -> str:
        state = " (closed)" if self.closed else ""
        return f"<OpenCL Kernel {self.signature} on {self.device.selector}{state}>"


_IMMUTABLE = (int, float, bytes, np.generic, Buffer)
_IMMUTABLE_EXACT = frozenset(
    [int, float, bytes, Buffer] + [np.dtype(c).type for c in "bBhHiIlLqQefd"]
)


def _mutable(value: Any) -> bool:
    """Values that may change between launches under the same identity (never skipped)."""
    return not isinstance(value, _IMMUTABLE) or isinstance(value, np.void)


def _generated_launcher(kernel: Kernel, setters: list, kinds: "list[ArgKind]") -> Callable[[Any, Any, Sequence[Any]], None]:
    """``launch(global_size, local_size, args)`` for one list of argument kinds, generated by
    the backends' one generator (``pygpgpu_core.backend.fastpath``) from OpenCL's recipe: each
    argument packed by calling its setter only when it is not the object set last in its slot
    (or a Buffer closed since), the work-size arrays rebuilt only when the sizes are not the
    objects of the last launch (then only if they differ), and the enqueue through a function
    object without argtypes, its handles ready-made ``c_void_p`` objects (ctypes then converts
    no argument: half of the enqueue's Python cost). The launch becomes the queue's last command
    (``_wait.track``, inlined; without launch events it marks the queue untracked instead, see
    ``_wait.launch_events``) and ``context._last_launch``."""
    context = kernel.context
    raw = lib().cdll["clEnqueueNDRangeKernel"]     # lib()[name]: a function object of its own
    raw.restype = c_int32
    event = c_void_p()
    work = kernel._work

    def failed(status: int) -> None:
        """Raise the error of a refused enqueue (also the native launcher's, wrap_repeat)."""
        check(status, f"clEnqueueNDRangeKernel({kernel.name!r}, global={work.key_g}, local={work.key_l})")

    env: "dict[str, Any]" = {
        "K": kernel, "context": context, "last": kernel._last, "work": work, "lock": kernel._launch_lock,
        "queue_lock": context._enqueue_lock, "enqueue": raw, "release": lib().clReleaseEvent,
        "event": event, "event_ref": ctypes.byref(event), "KH": [None, c_void_p()], "Q": [None, c_void_p()],
        "NAME": kernel.name, "failed": failed,
    }

    def pack_arg(i: int, kind: Any) -> str:
        """Every kind: its setter, called when the slot does not hold this object already."""
        env[f"set{i}"] = setters[i]
        closed = f" or (a{i} is not None and a{i}._handle is None)" if kind.tag == "buffer" else ""   # set_buffer raises then
        return f"if a{i} is not last[{i}]{closed}: set{i}(kh, a{i})"

    if context.launch_events:     # _wait.track inlined: the launch's event becomes the queue's last command
        enqueue = ["status = enqueue(Q[1], KH[1], work.dims, None, work.gws, work.lws, 0, None, event_ref)",
                   "if not status:",
                   "    previous = context._last_event",
                   "    context._last_event = event.value",
                   "    if previous:",
                   "        release(previous)"]
    else:                         # no event: a wait for the queue enqueues a marker
        enqueue = ["status = enqueue(Q[1], KH[1], work.dims, None, work.gws, work.lws, 0, None, None)",
                   "if not status:",
                   "    context._untracked = True"]
    recipe = LaunchRecipe(
        label=f"<pygpgpu-opencl launcher {kernel.name}>",
        env=env,
        kinds=kinds,
        pack_arg=pack_arg,
        pack=list,
        enter=["kh = K._handle", "if kh is None:", "    K._require()",
               "queue = context._queue_handle", "if queue is None:", "    queue = context.queue_handle()"],
        unpack_failed="raise K._count_error(len(args)) from None",
        launch=["if global_size is not work.key_g or local_size is not work.key_l:",
                "    if work.changed(global_size, local_size):",
                "        work.update(global_size, local_size)",
                "if work.total:",
                "    if kh is not KH[0]:",
                "        KH[1].value = KH[0] = kh",
                "    with queue_lock:",
                "        if queue is not Q[0]:",
                "            Q[1].value = Q[0] = queue"]
               + ["        " + line for line in enqueue]
               + ["    if status:",
                  "        failed(status)",
                  "    context._last_launch = (NAME, args)   # named if Ctrl-C interrupts a wait for it"],
    )
    launch = generate(recipe)
    launch.failed = failed  # type: ignore[attr-defined]
    return launch
