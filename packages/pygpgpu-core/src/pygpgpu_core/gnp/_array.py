"""``DeviceArray``: an n-dimensional array whose data lives in one device buffer.

Data stays on the device until the host asks for it (``get()``, ``np.asarray``, printing);
kernels receive ``arr.buffer`` directly, so consecutive kernel calls copy nothing. Memory comes
from the context's :class:`~pygpgpu_core.mempool.MemoryPool` and goes back to it when the last
array (or view) using it dies.

A ``DeviceArray`` is C-contiguous and starts at byte 0 of its buffer. Basic indexing and
``.T`` give a :class:`DeviceArrayView` instead: the same buffer seen through a byte ``offset``
and numpy-style byte ``strides`` (no copy). Arithmetic, ufuncs, reductions and the other
operations come from ``pygpgpu_translate.array_ops`` through :mod:`._dispatch`.
"""
from __future__ import annotations

import sys
from operator import attrgetter
from operator import index as operator_index
from typing import TYPE_CHECKING, Any, Iterator, Literal

import numpy as np

from .. import mempool
from ..protocols import option
from . import _dlpack
from ._device import resolve_target
from ._dispatch import ops
from ._indexing import MAXDIMS, basic_view_layout, c_strides, is_basic_key, is_c_contiguous, span
from . import _read_warnings
from ._operators import ArrayOperators
from ._summary import needs_summary, summary_repr, summary_str
from ._transfer import download, record_transfer, upload

READ_ONLY = "assignment destination is read-only"       # numpy's words for a write into a read-only array
READ_ONLY_OUT = "output array is read-only"               # ... and for a read-only out= of a ufunc or function

_NOT_GIVEN: Any = object()  # tells "argument omitted" from an explicit None in __dlpack__


__all__ = ["DeviceArray", "DeviceArrayView", "check_out_writeable"]


def order_name(order: Any) -> Any:
    """numpy's memory-order names are case-insensitive ('c' is 'C'); anything else is passed on to be refused."""
    return order.upper() if isinstance(order, str) and len(order) == 1 else order


def stride_order(strides: tuple) -> list:
    """The order ``ravel(order="K")`` reads axes in, as numpy's iterator does: the axes with a
    nonzero stride from the largest to the smallest (ties keep their order); broadcast axes
    (stride 0) stay where they are."""
    moving = [k for k, st in enumerate(strides) if st != 0]
    ordered = iter(sorted(moving, key=lambda k: -abs(strides[k])))
    return [next(ordered) if st != 0 else k for k, st in enumerate(strides)]


def warn_complex_to_real(src: np.dtype, dst: np.dtype) -> None:
    """numpy's ComplexWarning where complex data converts to a real type (the imaginary parts are dropped)."""
    if src.kind == "c" and dst.kind not in "cb":
        import warnings
        warnings.warn("Casting complex values to real discards the imaginary part", np.exceptions.ComplexWarning,
                      stacklevel=3)


def check_out_writeable(out: Any) -> None:
    """numpy's ValueError for a read-only device array given as ``out=``."""
    if getattr(out, "_readonly", False):
        raise ValueError(READ_ONLY_OUT)


class _PoolAllocation:
    """Returns a pooled block when the last array (or view) holding it is collected."""

    __slots__ = ("pool", "block", "nbytes")

    def __init__(self, pool: mempool.MemoryPool, block: mempool.Block, nbytes: int) -> None:
        self.pool = pool
        self.block = block
        self.nbytes = nbytes        # the bytes asked for: no array of this allocation reaches past them

    def __del__(self, _is_finalizing=sys.is_finalizing):  # bound early: globals may be gone at exit
        if not _is_finalizing():
            self.pool.release(self.block)


def _normalize_shape(shape: Any) -> tuple[int, ...]:
    if shape is None:                   # numpy's message: a 0-d shape is spelled ()
        raise TypeError("Use () not None as shape arguments")
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    try:
        out = tuple(int(operator_index(n)) for n in shape)
    except TypeError:
        raise TypeError(f"shape must be an int or a sequence of ints, got {shape!r}") from None
    if any(n < 0 for n in out):
        raise ValueError(f"negative dimensions are not allowed (shape {out})")
    if len(out) > MAXDIMS:
        raise ValueError(f"maximum supported dimension for an ndarray is currently {MAXDIMS}, found {len(out)}")
    return out


_c_strides = c_strides
# astype's casting rules: numpy's (np.can_cast checks the value at run time)
_Casting = Literal["no", "equiv", "safe", "same_kind", "unsafe"]


def setitem_value(value: Any, dtype: np.dtype) -> np.ndarray:
    """``value`` converted to ``dtype`` as numpy's ``a[...] = value`` (and ``a.fill``) converts
    it: numpy arrays are cast unsafely (float to int truncates; NaN gives an unspecified
    integer), while scalars and lists convert element by element, so NaN, infinities and
    numbers the type cannot hold (``-1.5`` or ``np.float64(3e9)`` into an unsigned or 32-bit
    integer) raise numpy's ValueError or OverflowError instead of filling garbage; ``None``
    into floats is NaN."""
    if isinstance(value, np.ndarray):
        host = value
    elif np.ndim(value) == 0:
        scalar = np.empty((), dtype)
        scalar[()] = value             # numpy's scalar setitem: its errors, word for word
        return scalar
    else:
        host = np.asarray(value)
    if host.dtype == dtype:
        return host
    if host.dtype.kind not in "biuf" and not (host.dtype.kind == "c" and dtype.kind == "c"):
        _check_dtype(host.dtype)       # TypeError naming the unsupported dtype
    return host.astype(dtype) if isinstance(value, np.ndarray) else np.asarray(value, dtype=dtype)


def _check_dtype(dtype: Any) -> np.dtype:
    dt = np.dtype(dtype)
    if dt.hasobject or dt.kind not in "biufc":
        hint = ""
        if dt.names and len({dt.fields[n][0] for n in dt.names}) == 1:   # float4.dtype and the like
            base = dt.fields[dt.names[0]][0]
            hint = (f"; for vectors use a plain array with one more dimension, e.g. "
                    f"host.view({base.name}).reshape(-1, {dt.itemsize // base.itemsize}): kernels read its rows "
                    "as vectors")
        raise TypeError(f"device arrays hold bool, integer, float and complex data; dtype {dt} is not supported{hint}")
    if dt.byteorder == ">":
        raise TypeError(f"dtype {dt} is big-endian; convert with .astype('{dt.newbyteorder('=').str}') first")
    return dt


class DeviceArray(ArrayOperators):
    """An array in device memory (like ``cupy.ndarray``): C-contiguous from byte 0 of ``buffer``;
    views of it (slices, ``.T``) are :class:`DeviceArrayView`."""

    # _readonly: numpy's WRITEABLE flag, inverted (views inherit it, g.flags.writeable sets it);
    # _base: the array a view was made from (the first of a chain), None for one owning its memory
    __slots__ = ("_shape", "_dtype", "device", "buffer", "_owner", "_host", "_readonly", "_base", "__weakref__")
    offset: int = 0              # byte offset of the first element in ``buffer`` (views override)
    device: Any                  # the Device the memory is on (pygpgpu.Device)
    buffer: Any                  # the backend's Buffer (pygpgpu.Buffer)
    _host: Any                   # host-visible memory of the allocation (numpy bytes), or None
    _base: "DeviceArray | None"
    __hash__ = object.__hash__   # identity, as before comparisons returned arrays

    def __init__(self, shape: Any, dtype: Any = np.float64, device: Any = None) -> None:
        """Allocate an uninitialised array (same as :func:`gnp.empty`)."""
        self._shape = _normalize_shape(shape)
        self._dtype = _check_dtype(dtype)
        dev, ctx = resolve_target(device)
        pool = mempool.get_pool(ctx)
        block = pool.allocate(self.nbytes)
        self.device = dev
        self.buffer = block.buffer
        self._owner = _PoolAllocation(pool, block, self.nbytes)
        self._readonly = False
        self._base = None
        # Host-visible memory (PoCL): the host copies in and out directly, with no queued command.
        self._host = block.host if pool.host_access else None

    @classmethod
    def _empty(cls, shape: tuple, dtype: np.dtype, device: Any, context: Any, nbytes: int) -> "DeviceArray":
        """What ``DeviceArray(shape, dtype, context)`` makes, for library code that already holds
        a checked shape tuple, an ``np.dtype``, the context's Device and ``nbytes`` (the size
        times the item size): the pool's block without re-checking them (the fixed cost of a
        small gnp call)."""
        pool = mempool.get_pool(context)
        block = pool.allocate(nbytes)
        a = cls.__new__(cls)
        a._shape = shape
        a._dtype = dtype
        a.device = device
        a.buffer = block.buffer
        a._owner = _PoolAllocation(pool, block, nbytes)
        a._readonly = False
        a._base = None
        a._host = block.host if pool.host_access else None
        return a

    @classmethod
    def _wrap(cls, shape, dtype, device, buffer, owner, host=None, base=None) -> "DeviceArray":
        """An array over an existing ``buffer``; ``owner`` keeps its memory alive (views,
        foreign memory). ``host``: the host-visible bytes of the buffer, if any. ``base``: the
        array this one is a view of (it inherits its read-only flag)."""
        a = cls.__new__(cls)
        if base is None:
            a._readonly = False
            a._base = None
        else:
            a._readonly = base._readonly
            a._base = base if base._base is None else base._base
        a._shape = shape
        a._dtype = dtype
        a.device = device
        a.buffer = buffer
        a._owner = owner
        a._host = host
        return a

    # -- attributes ---------------------------------------------------------------------------
    def _relaid_in_place(self, new: "DeviceArray", what: str) -> None:
        """Take the layout of ``new`` (a reshape or a dtype view of this array) as this array's
        own, as numpy's ``a.shape = ...`` and ``a.dtype = ...`` do. Where ``new`` had to be a copy
        the elements are not laid out for it, and this raises as numpy does, rather than leaving
        a shape that reads past the array's memory."""
        if type(new) is not type(self) or new.buffer is not self.buffer or new.offset != self.offset:
            how = "g.reshape(...)" if what == "shape" else "g.view(...)"
            raise AttributeError(f"cannot change this array's {what} in place without copying its elements: "
                                 f"use {how}, which returns a new array")
        self._shape, self._dtype = new._shape, new._dtype
        if isinstance(self, DeviceArrayView) and isinstance(new, DeviceArrayView):
            self._strides = new._strides

    def _set_shape(self, shape) -> None:
        self._relaid_in_place(self.reshape(shape), "shape")

    def _set_dtype(self, dtype) -> None:
        self._relaid_in_place(self.view(dtype), "dtype")

    # Properties over slots: reading costs an attrgetter call; setting checks as numpy does.
    if TYPE_CHECKING:       # what the two properties below are, for type checkers
        @property
        def shape(self) -> tuple[int, ...]: ...
        @shape.setter
        def shape(self, shape: Any) -> None: ...
        @property
        def dtype(self) -> np.dtype[Any]: ...
        @dtype.setter
        def dtype(self, dtype: Any) -> None: ...
    else:
        shape = property(attrgetter("_shape"), _set_shape,
                         doc="The length of each axis. Setting it reshapes in place, where no copy is needed.")
        dtype = property(attrgetter("_dtype"), _set_dtype,
                         doc="The element type. Setting it reinterprets the bytes in place, as ``view(dtype)``.")

    @property
    def size(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @property
    def strides(self) -> tuple[int, ...]:
        """Bytes between consecutive elements along each axis (numpy's meaning). numpy gives a new
        array without elements strides of 0 (views and reshapes keep the strides they were made with)."""
        if self._base is None and not self.size:
            return (0,) * len(self._shape)
        return _c_strides(self.shape, self.dtype.itemsize)

    @property
    def is_contiguous(self) -> bool:
        """C-contiguous elements (a view may still start at a nonzero ``offset``)."""
        return True

    @property
    def flags(self) -> "_Flags":
        return _Flags(self)

    @property
    def T(self) -> "DeviceArray":
        """The transposed view (no copy)."""
        return self.transpose()

    @property
    def mT(self) -> "DeviceArray":
        """The last two axes swapped (a view)."""
        if self.ndim < 2:
            raise ValueError("matrix transpose with ndim < 2 is undefined")
        return self.swapaxes(-1, -2)

    def transpose(self, *axes: Any) -> "DeviceArray":
        """A view with the axes permuted (reversed when none are given), like numpy."""
        if len(axes) == 1 and (axes[0] is None or not isinstance(axes[0], (int, np.integer))):
            axes = () if axes[0] is None else tuple(axes[0])
        nd = self.ndim
        if not axes:
            axes = tuple(range(nd - 1, -1, -1))
        axes = tuple(_normalize_axis(a, nd) for a in axes)
        if sorted(axes) != list(range(nd)):
            raise ValueError("axes don't match array")
        st = self.strides
        return _view(self, tuple(self.shape[a] for a in axes), tuple(st[a] for a in axes), self.offset)

    def swapaxes(self, axis1: int, axis2: int) -> "DeviceArray":
        nd = self.ndim
        a, b = _normalize_axis(axis1, nd), _normalize_axis(axis2, nd)
        order = list(range(nd))
        order[a], order[b] = order[b], order[a]
        return self.transpose(order)

    @property
    def context(self) -> Any:
        return self.buffer.context

    @property
    def owns_memory(self) -> bool:
        """False for arrays wrapping someone else's memory (torch, CuPy, JAX, DLPack)."""
        return isinstance(self._owner, _PoolAllocation)

    @property
    def base(self) -> "DeviceArray | None":
        """numpy's ``base``: the array whose memory this view sees (the first of a chain of views, as
        numpy's), None for an array that owns its memory."""
        return self._base

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object (a 0-d device array)")
        return self.shape[0]

    # -- host synchronisation -----------------------------------------------------------------
    def _read_bytes(self, out: np.ndarray, offset: int = 0) -> None:
        """Copy ``out.nbytes`` bytes from byte ``offset`` into C-contiguous ``out`` (counted)."""
        if self._host is None:
            download(self.buffer, out, offset)
            return
        if out.nbytes:
            self.context.synchronize()  # kernels queued on this memory finish first
            out.reshape(-1).view(np.uint8)[...] = self._host[offset:offset + out.nbytes]
            record_transfer("d2h", out.nbytes)

    def _write_bytes(self, host: np.ndarray, offset: int = 0) -> None:
        """Copy C-contiguous ``host`` to byte ``offset`` (counted)."""
        if self._host is None:
            upload(self.buffer, host, offset)
            return
        if host.nbytes:
            self.context.synchronize()  # never overwrite memory a queued kernel still uses
            self._host[offset:offset + host.nbytes] = host.reshape(-1).view(np.uint8)
            record_transfer("h2d", host.nbytes)

    def get(self, stream: Any = None, order: str = "C", out: "np.ndarray | None" = None) -> np.ndarray:
        """Copy to a new numpy array (or into ``out``), waiting for pending kernels first."""
        order = order_name(order)
        if order not in ("C", "F", "A", "K"):
            raise ValueError(f"order must be one of 'C', 'F', 'A', or 'K' (got {order!r})")
        if out is None and self.ndim >= 2 and (order == "F" or order in "AK" and self.flags.f_contiguous
                                               and not self.is_contiguous):
            return self.T.get().T       # Fortran order: the transpose read in C order, seen transposed
        if out is None:
            out = np.empty(self.shape, self.dtype)
        else:
            if not isinstance(out, np.ndarray):
                raise TypeError(f"out must be a numpy array, got {type(out).__name__}")
            if out.shape != self.shape or out.dtype != self.dtype:
                raise ValueError(f"out has shape {out.shape} dtype {out.dtype}; needs {self.shape} {self.dtype}")
            if not out.flags.c_contiguous or not out.flags.writeable:
                raise ValueError("out must be a writable C-contiguous numpy array")
        self._read_into(out)
        if _read_warnings.pending():
            _read_warnings.on_read(self, out)      # (the nan-reductions' warnings: see _read_warnings)
        return out

    def _read_into(self, out: np.ndarray) -> None:
        """Fill C-contiguous ``out`` (this array's shape and dtype) with this array's elements."""
        self._read_bytes(out)

    def numpy(self) -> np.ndarray:
        """Same as :meth:`get`."""
        return self.get()

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        if copy is False:
            raise ValueError("a device array cannot be viewed as a numpy array without a copy; "
                             "use g.get() (or np.asarray(g), which copies)")
        host = self.get()
        return host if dtype is None else host.astype(dtype, copy=False)

    def tolist(self) -> Any:
        return self.get().tolist()

    def item(self, *args: Any) -> Any:
        return self.get().item(*args)

    def __float__(self) -> float:
        return float(self._scalar_host("float"))

    def __int__(self) -> int:
        return int(self._scalar_host("int"))

    def __complex__(self) -> complex:
        return complex(self._scalar_host("complex"))

    def __index__(self) -> int:
        if self.dtype.kind not in "iub":
            raise TypeError(f"only integer device arrays can be used as an index, not {self.dtype}")
        return int(self._scalar_host("index"))

    def __bool__(self) -> bool:
        if self.size != 1:              # numpy's ValueError and words, so `if g:` fails as it does there
            if self.size == 0:
                raise ValueError("The truth value of an empty array is ambiguous. Use `array.size > 0` to check "
                                 "that an array is not empty.")
            raise ValueError("The truth value of an array with more than one element is ambiguous. Use a.any() "
                             "or a.all()")
        return bool(self._scalar_host("bool"))

    def _scalar_host(self, what: str):
        if self.size != 1:
            raise TypeError(f"only size-1 device arrays can be converted to Python {what} (size is {self.size})")
        return self.get().reshape(())[()]

    def __contains__(self, value: Any) -> bool:
        """``value in g`` as numpy's: ``(g == value).any()``, computed on the device (iterating
        would compare host rows with the value, which is ambiguous beyond 1-D)."""
        return bool((self == value).any())

    def __iter__(self) -> Iterator[Any]:
        if not self.shape:
            raise TypeError("iteration over a 0-d device array")
        return iter(self.get())

    def __repr__(self) -> str:
        if needs_summary(self.size):     # numpy's summary, reading only the elements it shows
            return summary_repr(self, self.device.selector)
        body = repr(self.get())
        return f"{body[:-1]}, device='{self.device.selector}')"

    def __str__(self) -> str:
        if needs_summary(self.size):
            return summary_str(self)
        return str(self.get())

    def __format__(self, spec: str) -> str:
        if self.size == 1 and spec:
            return format(self._scalar_host("format"), spec)
        return format(str(self), spec)

    # -- indexing -----------------------------------------------------------------------------
    def __getitem__(self, key: Any) -> DeviceArray:
        """numpy indexing on the device: basic keys (ints, slices, ``...``, ``None``) give views
        sharing this array's memory (``g[3]`` of a 1-D array is a 0-d array); integer arrays and
        boolean masks gather into a new array. Nothing is read back to the host."""
        if is_basic_key(key):
            shape, strides, offset = basic_view_layout(self.shape, self.strides, self.offset, key)
            return _view(self, shape, strides, offset)
        return ops().getitem(self, key)

    def __setitem__(self, key: Any, value: Any) -> None:
        """Assign numpy data, scalars (broadcast, cast as numpy's setitem does) or another device
        array to the selected elements; device values are copied on the device."""
        if self._readonly:
            raise ValueError(READ_ONLY)
        if not is_basic_key(key):
            ops().setitem(self, key, value)
            return
        self[key]._assign(value)

    def _assign(self, value) -> None:
        """``self[...] = value``."""
        if self._readonly:
            raise ValueError(READ_ONLY)
        if isinstance(value, DeviceArray) and value.ndim > self.ndim:
            # numpy's setitem drops a value's extra leading axes of length 1 ((1, 4) into a (4,) slice)
            extra = value.ndim - self.ndim
            if all(n == 1 for n in value.shape[:extra]):
                value = value.reshape(value.shape[extra:])
        if isinstance(value, DeviceArray):
            if (type(self) is DeviceArray and type(value) is DeviceArray and value.shape == self.shape
                    and value.dtype == self.dtype and value.context is self.context):
                if self.size and value.buffer is not self.buffer:
                    self.buffer.copy_from(value.buffer, self.nbytes)
                return
            ops().assign(self, value)
            return
        host = setitem_value(value, self.dtype)
        if host.ndim == 0:
            self.fill(host)
            return
        if (isinstance(value, np.ndarray) and host.ndim > self.ndim      # (numpy's setitem, as above; a
                and all(n == 1 for n in host.shape[:host.ndim - self.ndim])):  # nested list is refused)
            host = host.reshape(host.shape[host.ndim - self.ndim:])
        if host.shape != self.shape:
            try:
                host = np.broadcast_to(host, self.shape)
            except ValueError:
                raise ValueError(f"could not broadcast input array from shape {host.shape} into shape "
                                 f"{self.shape}") from None
        if not self.size:
            return
        if self.is_contiguous:
            self._write_bytes(np.ascontiguousarray(host), self.offset)
            return
        from ._creation import asarray

        ops().assign(self, asarray(np.ascontiguousarray(host), device=self.context))

    # -- device-side operations ---------------------------------------------------------------
    def fill(self, value: Any) -> None:
        """Set every element to ``value`` on the device (no host transfer)."""
        if self._readonly:
            raise ValueError(READ_ONLY)
        pattern = setitem_value(value, self.dtype)
        if pattern.ndim:
            raise ValueError(f"fill() takes a scalar, got an array of shape {pattern.shape}")
        if not self.size:
            return
        if type(self) is not DeviceArray or not self._covers_allocation():
            ops().fill(self, pattern[()])      # a view, or a prefix of the buffer (g[0] of a matrix)
            return
        try:
            self.buffer.fill(pattern.tobytes())
        except NotImplementedError:
            self._write_bytes(np.full(self.shape, pattern, self.dtype))

    def _covers_allocation(self) -> bool:
        """Whether this array spans every byte other arrays of its buffer can use, so that a
        whole-buffer command (``buffer.fill``) touches nothing but its elements. A C-contiguous
        prefix such as ``g[0]`` or ``g[:3]`` shares the buffer as a plain DeviceArray, but covers
        only part of it."""
        owner = self._owner
        used = owner.nbytes if isinstance(owner, _PoolAllocation) else getattr(self.buffer, "nbytes", None)
        return used is not None and self.nbytes >= used

    def copy(self, order: str = "C") -> "DeviceArray":
        """A new array with the same data on the same device (device-side copy): C-contiguous, or
        with ``order="F"`` (and "A"/"K" of a Fortran-ordered array) Fortran-contiguous."""
        order = order_name(order)
        if order not in ("C", "F", "A", "K"):
            raise ValueError(f"order must be one of 'C', 'F', 'A', or 'K' (got {order!r})")
        if self.ndim >= 2 and (order == "F" or order in "AK" and self.flags.f_contiguous and not self.is_contiguous):
            return self.T.copy().T
        if type(self) is not DeviceArray:
            return ops().copy(self)
        out = DeviceArray(self.shape, self.dtype, self.context)
        if self.size:
            out.buffer.copy_from(self.buffer, self.nbytes)
        return out

    def astype(self, dtype: Any, copy: bool = True, casting: _Casting = "unsafe") -> "DeviceArray":
        """Convert the element type on the device (same dtype: a copy, or ``self`` with
        copy=False). Conversions follow C, as numpy's do: float to int truncates toward zero
        (NaN and out-of-range values give unspecified integers), int to bool is ``!= 0``."""
        dt = _check_dtype(dtype)
        if dt == self.dtype:
            return self.copy() if copy else self
        if not np.can_cast(self.dtype, dt, casting):
            raise TypeError(f"Cannot cast array data from {self.dtype!r} to {dt!r} according to the rule {casting!r}")
        warn_complex_to_real(self.dtype, dt)
        return ops().astype(self, dt)

    def reshape(self, *shape: Any, order: str = "C", copy: "bool | None" = None) -> "DeviceArray":
        """A view with a new shape sharing this array's memory (one -1 is inferred); a strided
        view that cannot be reshaped in place is copied first, as numpy does. ``copy=True``:
        always a new array; ``copy=False``: ValueError where a copy would be needed (numpy 2's)."""
        out = self._reshape(*shape, order=order)
        copied = out.buffer is not self.buffer
        if copy is False and copied:
            raise ValueError("Unable to avoid creating a copy while reshaping (this strided view cannot be "
                             "reshaped in place; pass copy=None or copy=True)")
        if copy and not copied:
            out = out.copy()
        return out

    def _reshape(self, *shape: Any, order: str = "C") -> "DeviceArray":
        order = order_name(order)
        if order == "K":
            raise ValueError("order 'K' is not permitted for reshaping")
        if order not in ("C", "A", "F"):
            raise ValueError(f"order must be one of 'C', 'F', 'A' (got {order!r})")
        if order == "A":      # numpy: Fortran order for a Fortran-ordered array, else C
            order = "F" if self._fortran_only() else "C"
        if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)):
            shape = tuple(shape[0])
        dims = [int(operator_index(n)) for n in shape]
        if dims.count(-1) > 1:
            raise ValueError("can only specify one unknown dimension (-1)")
        if -1 in dims:
            known = 1
            for n in dims:
                if n != -1:
                    known *= n
            if known == 0 or self.size % known:
                raise ValueError(f"cannot reshape array of size {self.size} into shape {tuple(dims)}")
            dims[dims.index(-1)] = self.size // known
        new = _normalize_shape(dims)
        count = 1
        for n in new:
            count *= n
        if count != self.size:
            raise ValueError(f"cannot reshape array of size {self.size} into shape {new}")
        if order == "F":      # column-major: numpy's a.reshape(s, order="F") is a.T.reshape(s[::-1]).T
            return self.T.reshape(new[::-1]).T
        if not self.is_contiguous:
            return self.copy().reshape(new)
        strides = self.strides if new == self.shape else _c_strides(new, self.dtype.itemsize)
        return _view(self, new, strides, self.offset)

    def _fortran_only(self) -> bool:
        flags = self.flags
        return bool(flags.f_contiguous and not flags.c_contiguous)

    def ravel(self, order: str = "C") -> "DeviceArray":
        """A 1-D view where the layout allows (a copy otherwise): ``order`` "C"/"F" read row- or
        column-major, "A" as the array is laid out (F for a Fortran-ordered one), "K" in memory
        order (axes from the largest stride; along a negative stride in index order), as numpy's."""
        order = order_name(order)
        if order == "A":
            order = "F" if self._fortran_only() else "C"
        elif order == "K":
            if self._fortran_only():
                order = "F"
            elif self.ndim > 1 and not self.flags.c_contiguous:
                return self.transpose(stride_order(self.strides)).reshape(-1)
            else:
                order = "C"
        return self.reshape(-1, order="F" if order == "F" else "C")

    def flatten(self, order: str = "C") -> "DeviceArray":
        """A new 1-D copy (``order="F"``: column by column)."""
        order = order_name(order)
        if not self.size:
            return DeviceArray((0,), self.dtype, self.context)     # numpy's new empty array: stride 0
        if order == "F":
            return self.T.copy().reshape(-1)
        return self.copy().reshape(-1) if type(self) is DeviceArray else self.ravel(order).copy()

    def squeeze(self, axis: Any = None) -> "DeviceArray":
        """A view without axes of length 1 (only ``axis`` when given)."""
        nd = self.ndim
        if nd == 0 and axis is not None:      # numpy takes axis 0 or -1 (and refuses others) on a 0-d array
            given = axis if isinstance(axis, tuple) else (axis,)
            for ax in given:
                _normalize_axis(ax, 1)
            if len(given) > 1:
                raise np.exceptions.AxisError(given[1], 0)
            return _view(self, (), (), self.offset)
        if axis is None:
            drop = {i for i, n in enumerate(self.shape) if n == 1}
        else:
            axes = [_normalize_axis(a, nd) for a in (axis if isinstance(axis, tuple) else (axis,))]
            drop = set(axes)
            if len(drop) != len(axes):
                raise ValueError("duplicate value in 'axis'")
            if any(self.shape[a] != 1 for a in drop):
                raise ValueError("cannot select an axis to squeeze out which has size not equal to one")
        keep = [i for i in range(nd) if i not in drop]
        st = self.strides
        return _view(self, tuple(self.shape[i] for i in keep), tuple(st[i] for i in keep), self.offset)

    def view(self, dtype: Any) -> "DeviceArray":
        """Reinterpret the bytes as another dtype (the last axis is rescaled, like numpy)."""
        dt = _check_dtype(dtype)
        if dt.itemsize == self.dtype.itemsize:
            shape = self.shape
        else:
            if not self.is_contiguous:
                raise ValueError("to change to a dtype of a different size, the array must be C-contiguous; "
                                 "use g.copy().view(dtype)")
            if not self.shape or (self.shape[-1] * self.dtype.itemsize) % dt.itemsize:
                raise ValueError(f"cannot view {self.dtype} data of shape {self.shape} as {dt}")
            shape = self.shape[:-1] + (self.shape[-1] * self.dtype.itemsize // dt.itemsize,)
        if type(self) is DeviceArray:
            return DeviceArray._wrap(shape, dt, self.device, self.buffer, self._owner, self._host, self)
        strides = (self.strides if dt.itemsize == self.dtype.itemsize else _c_strides(shape, dt.itemsize))
        return DeviceArrayView._make(self, shape, dt, strides, self.offset)

    def to(self, device: Any, *, copy: bool = False) -> "DeviceArray":
        """This array on ``device`` (a selector such as ``"cuda:0"``, a Device, a Context, or an
        array whose device to use). Already there: ``self`` (or a device-side copy with
        ``copy=True``); another device: a new C-contiguous array, copied device to device where
        the backend can (CUDA/HIP peer to peer, else staged through page-locked memory; OpenCL
        staged through a mapping of the source), through numpy between backends (_device_copy)."""
        dev, ctx = resolve_target(device)
        if ctx is self.context:
            return self.copy() if copy else self
        from ._device_copy import copy_to_device

        return copy_to_device(self, dev, ctx)

    def synchronize(self) -> None:
        """Wait until every queued operation of this array's context has finished."""
        self.context.synchronize()

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickles as data + the device's selector (``pygpgpu_core.pickling``): never buffers or pools."""
        from ..pickling import reduce_array

        return reduce_array(self)

    # -- interop ------------------------------------------------------------------------------
    def _dl_device(self) -> tuple[int, int]:
        declared = option(self.device.backend, "dlpack_device_type")   # e.g. kDLCUDA, kDLROCM
        if declared is not None:
            return int(declared), self.device.index
        if self._host is not None:
            return _dlpack.kDLCPU, 0
        return _dlpack.kDLOpenCL, self.device.index

    def __dlpack_device__(self) -> tuple[int, int]:
        return self._dl_device()

    def __dlpack__(self, *, stream: Any = _NOT_GIVEN, max_version: Any = None, dl_device: Any = _NOT_GIVEN, copy: Any = None) -> Any:
        """Export as a DLPack capsule (zero-copy). CUDA/HIP arrays export device pointers; arrays
        in host memory (OpenCL on the CPU, e.g. PoCL) export ``kDLCPU``. OpenCL device memory has
        no pointer other libraries understand: ask for a host copy (``dl_device=(1, 0)``) or use
        ``g.get()``.

        A consumer that passes ``dl_device`` but no ``stream`` (numpy's ``np.from_dlpack``) knows
        nothing of device streams, so it can only read host memory: CUDA/HIP arrays then raise
        BufferError instead of handing it a device capsule it would reject. GPU consumers
        (PyTorch, CuPy, JAX) pass the stream they will use."""
        stream_given = stream is not _NOT_GIVEN
        if not stream_given:
            stream = None
        host_only_consumer = dl_device is None and not stream_given
        if dl_device is _NOT_GIVEN:
            dl_device = None
        own = self._dl_device()
        if dl_device is not None and tuple(dl_device) != own:
            if tuple(dl_device)[0] == _dlpack.kDLCPU and copy is not False:
                host = self.get()
                return host.__dlpack__(max_version=max_version) if max_version else host.__dlpack__()
            raise BufferError(f"this array lives on {self.device.selector} (DLPack device {own}); it cannot be "
                              f"exported to DLPack device {tuple(dl_device)} without a copy. Use g.get() for host data.")
        if own[0] in (_dlpack.kDLCUDA, _dlpack.kDLROCM) and host_only_consumer:
            raise BufferError(
                f"this array is in GPU memory on {self.device.selector} and the DLPack consumer (such as "
                "np.from_dlpack) reads host memory only; call g.get() for a numpy copy "
                "(or np.from_dlpack(g, device='cpu', copy=True))"
            )
        if copy or (not self.is_contiguous and copy is None):
            # a strided view is exported as a contiguous copy (DLPack consumers here expect C order)
            return self.copy().__dlpack__(stream=stream, max_version=max_version)
        if not self.is_contiguous:
            raise BufferError("this strided device array view cannot be exported without a copy; "
                              "call g.copy() first (or pass copy=None)")
        if own[0] == _dlpack.kDLOpenCL:
            raise BufferError(
                f"this array is in OpenCL device memory on {self.device.selector}, which DLPack consumers "
                "cannot address; call g.get() for a numpy copy (or np.from_dlpack(g, device='cpu', copy=True))"
            )
        if stream != -1:
            # Consumers may use the data right away on their own stream: finish our queued work.
            self.context.synchronize()
        if own[0] == _dlpack.kDLCPU:
            ptr = self._host.ctypes.data + self.offset
        else:
            ptr = int(self.buffer.ptr) + self.offset
        return _dlpack.export_capsule(ptr, own, self.shape, self.dtype, self,
                                      versioned=_dlpack.wants_versioned(max_version), read_only=self._readonly)

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        """CUDA Array Interface v3 (arrays of a backend declaring ``cuda_array_interface``: CUDA;
        data is synchronized before it is handed out)."""
        if not option(self.device.backend, "cuda_array_interface"):
            raise AttributeError(
                f"__cuda_array_interface__ exists only on CUDA arrays; this one is on {self.device.selector}"
            )
        from ._interop import export_stream

        return {
            "version": 3,
            "shape": self.shape,
            "typestr": self.dtype.str,
            "data": (int(self.buffer.ptr) + self.offset, self._readonly),
            "strides": None if self.is_contiguous else self.strides,
            "descr": [("", self.dtype.str)],
            "stream": export_stream(self.context),
        }


class DeviceArrayView(DeviceArray):
    """A view of another device array's memory: ``buffer`` is the viewed allocation, elements
    start ``offset`` bytes into it, ``strides`` are in bytes (negative and zero strides too).

    Operations read views in place. A ``@kernel`` receives a view as a contiguous device copy
    (and, when the kernel writes that parameter, the copy is written back into the view)."""

    __slots__ = ("offset", "_strides")
    _strides: tuple[int, ...]    # set by _make (views are not built through __init__)

    @classmethod
    def _make(cls, base: DeviceArray, shape: tuple, dtype: np.dtype, strides: tuple, offset: int) -> "DeviceArrayView":
        v = cls.__new__(cls)
        v._shape = shape
        v._dtype = dtype
        v.device = base.device
        v.buffer = base.buffer
        v._owner = base._owner
        v._host = base._host
        v._readonly = base._readonly
        v._base = base if base._base is None else base._base
        v.offset = offset
        v._strides = strides
        return v

    @property
    def strides(self) -> tuple[int, ...]:
        return self._strides

    @property
    def is_contiguous(self) -> bool:
        return is_c_contiguous(self.shape, self._strides, self.dtype.itemsize)

    def span(self) -> tuple[int, int]:
        """(first byte, end byte) of ``buffer`` this view's elements lie in."""
        return span(self.shape, self._strides, self.offset, self.dtype.itemsize)

    def _read_into(self, out: np.ndarray) -> None:
        if not out.nbytes:
            return
        if self.is_contiguous:
            self._read_bytes(out, self.offset)
            return
        lo, hi = self.span()
        if hi - lo > 2 * out.nbytes + 4096:       # sparse: gather on the device, read only the elements
            ops().copy(self)._read_bytes(out)
            return
        raw = np.empty(hi - lo, np.uint8)         # dense enough: read the covering bytes once
        self._read_bytes(raw, lo)
        out[...] = np.ndarray(self.shape, self.dtype, buffer=raw, offset=self.offset - lo, strides=self._strides)


def _view(base: DeviceArray, shape: tuple, strides: tuple, offset: int) -> DeviceArray:
    """``base``'s memory seen with a new layout: a plain DeviceArray when that is C-contiguous
    from byte 0, a DeviceArrayView otherwise (also for an array without elements whose strides
    are not C's: numpy's views keep the strides they were made with, which a plain array's
    ``strides`` would not report)."""
    if len(shape) > MAXDIMS:       # (expand_dims, transposes of reshapes: numpy's ValueError)
        raise ValueError(f"maximum supported dimension for an ndarray is currently {MAXDIMS}, found {len(shape)}")
    if (offset == 0 and is_c_contiguous(shape, strides, base.dtype.itemsize)
            and (all(shape) or strides == _c_strides(shape, base.dtype.itemsize))):
        return DeviceArray._wrap(shape, base.dtype, base.device, base.buffer, base._owner, base._host, base)
    return DeviceArrayView._make(base, shape, base.dtype, strides, offset)


def _normalize_axis(axis: Any, ndim: int) -> int:
    try:
        a = int(operator_index(axis))
    except TypeError:
        raise TypeError(f"an axis must be an integer, got {type(axis).__name__}") from None
    if not -ndim <= a < ndim:
        raise np.exceptions.AxisError(a, ndim)
    return a % ndim


class _Flags:
    """``g.flags``: the layout facts numpy code asks for, and numpy's WRITEABLE flag, which may
    be set: False makes the array (and views made of it from then on) refuse every write; True
    is refused, as numpy refuses it, on a view of an array that is itself read-only."""

    __slots__ = ("_array", "c_contiguous", "f_contiguous", "owndata", "aligned")
    c_contiguous: bool
    f_contiguous: bool
    owndata: bool
    aligned: bool

    def __init__(self, a: DeviceArray) -> None:
        self._array = a
        self.c_contiguous = a.is_contiguous
        self.f_contiguous = is_c_contiguous(a.shape[::-1], a.strides[::-1], a.dtype.itemsize)
        self.owndata = type(a) is DeviceArray and a.owns_memory and a._base is None
        self.aligned = True

    @property
    def writeable(self) -> bool:
        return not self._array._readonly

    @writeable.setter
    def writeable(self, value: bool) -> None:
        a = self._array
        if value and a._readonly and a._base is not None and a._base._readonly:
            raise ValueError("cannot set WRITEABLE flag to True of this array")
        a._readonly = not value

    _KEYS = {"C_CONTIGUOUS": "c_contiguous", "C": "c_contiguous", "F_CONTIGUOUS": "f_contiguous",
             "F": "f_contiguous", "OWNDATA": "owndata", "O": "owndata", "WRITEABLE": "writeable",
             "W": "writeable", "ALIGNED": "aligned", "A": "aligned"}

    def __getitem__(self, name: str) -> bool:
        key = self._KEYS.get(name.upper())
        if key is None:
            raise KeyError(f"Unknown flag {name!r}")
        return getattr(self, key)

    def __setitem__(self, name: str, value: bool) -> None:
        if self._KEYS.get(name.upper()) != "writeable":
            raise KeyError(f"Unknown flag {name!r}" if name.upper() not in self._KEYS
                           else f"the {name} flag of a device array cannot be set")
        self.writeable = value

    def __repr__(self) -> str:
        return "\n".join(f"  {n.upper()} : {getattr(self, n)}"
                         for n in ("c_contiguous", "f_contiguous", "owndata", "writeable", "aligned"))
