"""The ``gpu`` namespace: device builtins with no Python counterpart, and their host behaviour.

Inside ``@kernel`` the translator lowers each call through its builtin registry and each
dialect spells the result (docs/architecture.md#dialects-and-builtins); this module is the
host side. On the host:

* work-item queries (``get_global_id`` ...) raise :class:`KernelOnlyError` — they only mean
  something inside a kernel;
* ``barrier`` / ``mem_fence`` do nothing (one host thread is trivially synchronised);
* atomics perform the operation on a numpy array and return the old value, so code without
  work-item queries runs as plain Python;
* ``local_array(shape, dtype)`` is ``np.zeros``; ``work_size(*arrays)`` does nothing;
* ``rsqrt`` and the ``native_*`` fast-math functions compute the precise result;
* ``uniform``, ``normal`` and ``randint`` (``gpu_random``) draw the same counter-based random
  numbers as kernels do, also for numpy arrays of counters.

Fast math follows OpenCL's naming: ``native_<fn>`` (``native_exp``, ``native_sin``,
``native_divide``...) is the hardware approximation on each backend (OpenCL ``native_exp``,
CUDA/HIP ``__expf``), float32 only; with float64 arguments the precise function is used.
On CUDA, float32 ``rsqrt`` and ``native_rsqrt`` are ``rsqrt.approx.ftz.f32``: a subnormal
argument counts as zero (result +inf).

Atomics (``atomic_add(array, index, value)``...) work on int32, uint32, int64, uint64 and
float32 elements (float32: add, sub, min, max, xchg, cmpxchg, inc, dec), always return the
old value, and mean the same on every backend: ``atomic_inc``/``atomic_dec`` add/subtract 1
with wrap-around (not CUDA's ``atomicInc`` limit), ``atomic_cmpxchg(a, i, cmp, value)`` stores
``value`` when the element equals ``cmp`` (floats compare bit patterns).
"""
from __future__ import annotations

import enum
from typing import Any, Callable, cast

import numpy as np

from .errors import GPGPUError
from .gpu_random import normal, randint, uniform

__all__ = [
    "LOCAL",
    "GLOBAL",
    "FenceFlags",
    "KernelOnlyError",
    "get_global_id",
    "get_local_id",
    "get_group_id",
    "get_global_size",
    "get_local_size",
    "get_num_groups",
    "global_ids",
    "local_ids",
    "group_ids",
    "subgroup_size",
    "subgroup_local_id",
    "shuffle",
    "shuffle_xor",
    "shuffle_down",
    "shuffle_up",
    "subgroup_add",
    "subgroup_min",
    "subgroup_max",
    "subgroup_any",
    "subgroup_all",
    "ballot",
    "barrier",
    "mem_fence",
    "atomic_add",
    "atomic_sub",
    "atomic_min",
    "atomic_max",
    "atomic_and",
    "atomic_or",
    "atomic_xor",
    "atomic_xchg",
    "atomic_cmpxchg",
    "atomic_inc",
    "atomic_dec",
    "local_array",
    "work_size",
    "rsqrt",
    "NATIVE_FUNCS",
    "ATOMIC_DTYPES",
    "uniform",
    "normal",
    "randint",
]


class FenceFlags(enum.IntFlag):
    """Which memory a barrier / fence orders: ``LOCAL`` (work-group shared) and/or ``GLOBAL``."""

    LOCAL = 1
    GLOBAL = 2


LOCAL = FenceFlags.LOCAL
GLOBAL = FenceFlags.GLOBAL


class KernelOnlyError(GPGPUError, RuntimeError):
    """A work-item function was called from ordinary host code."""


# -- work-item functions ----------------------------------------------------------------------------
def _kernel_only(name: str) -> Callable[..., int]:
    def fn(dim: int = 0) -> int:
        raise KernelOnlyError(
            f"gpu.{name}({dim}) only means something inside a @kernel function running on a device; "
            f"call the kernel instead of the Python function, or iterate with a magic loop "
            f"(for i in range(n)) when you want the code to run on the host too"
        )

    fn.__name__ = fn.__qualname__ = name
    return fn


def _kernel_only_tuple(name: str, one: str) -> Callable[..., tuple]:
    def fn(ndim: int) -> tuple:
        raise KernelOnlyError(
            f"gpu.{name}({ndim}) only means something inside a @kernel function running on a device; "
            f"call the kernel instead of the Python function"
        )

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"This work item's indices over an ``ndim``-D (1, 2 or 3) launch in array order, as "
                  f"``np.ndindex`` gives them: ``i, j = gpu.{name}(2)`` is ``gpu.{one}(1), gpu.{one}(0)``, "
                  f"so with ``gpu.work_size(a)`` ``a[i, j]`` covers ``a`` and ``j`` (dimension 0) is the fastest. "
                  f"Numba's ``x, y = cuda.grid(2)`` and Warp's ``i, j = wp.tid()`` port to it unchanged.")
    return fn


get_global_id: Callable[..., int] = _kernel_only("get_global_id")
get_global_id.__doc__ = "Global index of this work item along ``dim`` (0, 1, 2)."
global_ids = _kernel_only_tuple("global_ids", "get_global_id")
local_ids = _kernel_only_tuple("local_ids", "get_local_id")
group_ids = _kernel_only_tuple("group_ids", "get_group_id")
get_local_id: Callable[..., int] = _kernel_only("get_local_id")
get_local_id.__doc__ = "Index of this work item inside its work group along ``dim``."
get_group_id: Callable[..., int] = _kernel_only("get_group_id")
get_group_id.__doc__ = "Index of this work group (CUDA block) along ``dim``."
get_global_size: Callable[..., int] = _kernel_only("get_global_size")
get_global_size.__doc__ = "Total work items along ``dim`` (rounded up to a multiple of the local size)."
get_local_size: Callable[..., int] = _kernel_only("get_local_size")
get_local_size.__doc__ = "Work items per work group along ``dim``."
get_num_groups: Callable[..., int] = _kernel_only("get_num_groups")
get_num_groups.__doc__ = "Number of work groups (CUDA grid size) along ``dim``."


def _check_flags(flags: Any, name: str) -> FenceFlags:
    try:
        f = FenceFlags(int(flags))
    except (ValueError, TypeError):
        raise ValueError(f"gpu.{name} flags must be gpu.LOCAL, gpu.GLOBAL or gpu.LOCAL | gpu.GLOBAL, got {flags!r}") from None
    if not f:
        raise ValueError(f"gpu.{name} needs gpu.LOCAL and/or gpu.GLOBAL")
    return f


def barrier(flags: FenceFlags = LOCAL) -> None:
    """Wait until every work item of the group reaches this point; memory named by ``flags``
    (default ``gpu.LOCAL``) written before is visible to the group after. Every work item of
    the group must reach the same barrier. No-op on the host."""
    _check_flags(flags, "barrier")


def mem_fence(flags: FenceFlags = LOCAL | GLOBAL) -> None:
    """Order this work item's loads/stores to the memory named by ``flags``. No-op on the host."""
    _check_flags(flags, "mem_fence")


# -- atomics ----------------------------------------------------------------------------------------
# the element types a kernel's atomics take (the prelude has a piece for each): the host takes the same
ATOMIC_DTYPES = tuple(np.dtype(t) for t in (np.int32, np.uint32, np.int64, np.uint64, np.float32, np.float64))
_FLOAT_OPS = ("add", "sub", "min", "max", "xchg", "cmpxchg", "inc", "dec")


def _atomic_target(op: str, array: Any, index: Any) -> np.ndarray:
    if not isinstance(array, np.ndarray):
        raise TypeError(f"gpu.atomic_{op} needs a numpy array on the host, got {type(array).__name__}")
    if array.dtype not in ATOMIC_DTYPES:
        raise TypeError(
            f"gpu.atomic_{op} works on int32, uint32, int64, uint64, float32 and float64 arrays, not {array.dtype}"
        )
    if array.dtype.kind == "f" and op not in _FLOAT_OPS:
        raise TypeError(f"gpu.atomic_{op} is not defined for {array.dtype} (only {', '.join(_FLOAT_OPS)})")
    if not array.flags.writeable:
        raise ValueError(f"gpu.atomic_{op}: the array is read-only")
    return array


def _elem(array: np.ndarray, value: Any) -> np.generic:
    """``value`` converted like a C store: integers wrap to the element type."""
    dt = array.dtype
    if dt.kind == "f":
        return dt.type(value)
    wrapped = np.array(int(value) & ((1 << (8 * dt.itemsize)) - 1), dtype=f"u{dt.itemsize}").view(dt)
    return cast(np.generic, wrapped[()])     # a 0-d array indexed by () is its numpy scalar


def _rmw(op: str, fn: Callable[[np.generic, np.generic], Any]) -> Callable[..., Any]:
    def atomic(array: np.ndarray, index: Any, value: Any) -> Any:
        a = _atomic_target(op, array, index)
        old = a[index]
        with np.errstate(all="ignore"):
            a[index] = _elem(a, fn(old, _elem(a, value)))
        return old

    atomic.__name__ = atomic.__qualname__ = f"atomic_{op}"
    return atomic


def _int_or_float(fn_int, fn_float):
    return lambda old, v: fn_float(old, v) if isinstance(old, np.floating) else fn_int(int(old), int(v))


atomic_add: Callable[..., Any] = _rmw("add", _int_or_float(lambda o, v: o + v, lambda o, v: o + v))
atomic_add.__doc__ = "``array[index] += value`` atomically; returns the old value."
atomic_sub: Callable[..., Any] = _rmw("sub", _int_or_float(lambda o, v: o - v, lambda o, v: o - v))
atomic_sub.__doc__ = "``array[index] -= value`` atomically; returns the old value."
atomic_min: Callable[..., Any] = _rmw("min", _int_or_float(min, np.fmin))
atomic_min.__doc__ = "``array[index] = min(array[index], value)`` atomically; returns the old value."
atomic_max: Callable[..., Any] = _rmw("max", _int_or_float(max, np.fmax))
atomic_max.__doc__ = "``array[index] = max(array[index], value)`` atomically; returns the old value."
atomic_and: Callable[..., Any] = _rmw("and", lambda o, v: int(o) & int(v))
atomic_and.__doc__ = "``array[index] &= value`` atomically (integers); returns the old value."
atomic_or: Callable[..., Any] = _rmw("or", lambda o, v: int(o) | int(v))
atomic_or.__doc__ = "``array[index] |= value`` atomically (integers); returns the old value."
atomic_xor: Callable[..., Any] = _rmw("xor", lambda o, v: int(o) ^ int(v))
atomic_xor.__doc__ = "``array[index] ^= value`` atomically (integers); returns the old value."
atomic_xchg: Callable[..., Any] = _rmw("xchg", lambda o, v: v)
atomic_xchg.__doc__ = "Store ``value`` in ``array[index]`` atomically; returns the old value."


def atomic_cmpxchg(array: np.ndarray, index: Any, cmp: Any, value: Any) -> Any:
    """If ``array[index] == cmp`` store ``value``; atomically. Returns the old value
    (the store happened iff the result equals ``cmp``). Floats compare bit patterns."""
    a = _atomic_target("cmpxchg", array, index)
    old = a[index]
    expected = _elem(a, cmp)
    if np.asarray(old).tobytes() == np.asarray(expected).tobytes():
        a[index] = _elem(a, value)
    return old


_inc = _rmw("inc", _int_or_float(lambda o, v: o + v, lambda o, v: o + v))
_dec = _rmw("dec", _int_or_float(lambda o, v: o - v, lambda o, v: o - v))


def atomic_inc(array: np.ndarray, index: Any) -> Any:
    """``array[index] += 1`` atomically (wraps around); returns the old value."""
    return _inc(array, index, 1)


def atomic_dec(array: np.ndarray, index: Any) -> Any:
    """``array[index] -= 1`` atomically (wraps around); returns the old value."""
    return _dec(array, index, 1)


# -- subgroups (warps, wavefronts) -------------------------------------------------------------------
# On the host a subgroup is the one work item running: every lane is the caller.
def subgroup_size() -> int:
    """Lanes in this work item's subgroup: 32 on CUDA and on OpenCL (emulated), the wavefront on
    HIP (64 on CDNA), the device's sub-group on OpenCL devices with native sub-groups (Intel:
    8, 16 or 32); 1 on the host."""
    return 1


def subgroup_local_id() -> int:
    """This work item's lane in its subgroup (Numba's ``cuda.laneid``); 0 on the host."""
    return 0


def shuffle(value: Any, lane: Any) -> Any:
    """``value`` as lane ``lane % subgroup_size()`` holds it (Numba's ``shfl_sync``)."""
    return value


def shuffle_xor(value: Any, mask: Any) -> Any:
    """``value`` as lane ``subgroup_local_id() ^ mask`` holds it (Numba's ``shfl_xor_sync``); the
    caller's own where that lane is outside the subgroup."""
    return value


def shuffle_down(value: Any, delta: Any) -> Any:
    """``value`` of the lane ``delta`` above; the caller's own past the last lane (``shfl_down_sync``)."""
    return value


def shuffle_up(value: Any, delta: Any) -> Any:
    """``value`` of the lane ``delta`` below; the caller's own before lane 0 (``shfl_up_sync``)."""
    return value


def subgroup_add(value: Any) -> Any:
    """The sum of ``value`` over the subgroup, in every lane."""
    return value


def subgroup_min(value: Any) -> Any:
    """The smallest ``value`` of the subgroup, in every lane (floats ignore NaN, as ``fmin``)."""
    return value


def subgroup_max(value: Any) -> Any:
    """The largest ``value`` of the subgroup, in every lane (floats ignore NaN, as ``fmax``)."""
    return value


def subgroup_any(predicate: Any) -> bool:
    """Whether ``predicate`` holds in any lane of the subgroup (``any_sync``)."""
    return bool(predicate)


def subgroup_all(predicate: Any) -> bool:
    """Whether ``predicate`` holds in every lane of the subgroup (``all_sync``)."""
    return bool(predicate)


def ballot(predicate: Any) -> np.uint64:
    """A uint64 mask with bit ``k`` set when ``predicate`` holds in lane ``k`` (``ballot_sync``);
    all 64 bits on AMD wavefronts of 64, the low 32 on CUDA and emulated OpenCL."""
    return np.uint64(1 if predicate else 0)


SUBGROUP_FUNCTIONS = ("subgroup_size", "subgroup_local_id", "shuffle", "shuffle_xor", "shuffle_down", "shuffle_up",
                      "subgroup_add", "subgroup_min", "subgroup_max", "subgroup_any", "subgroup_all", "ballot")


# -- memory and launch helpers ----------------------------------------------------------------------
def local_array(shape: Any, dtype: Any = np.float32) -> np.ndarray:
    """Work-group shared memory (OpenCL ``__local``, CUDA/HIP ``__shared__``). Its shape is known
    when the kernel is compiled, or, 1-D, sized at each launch by an int parameter of the kernel
    (``local_array(n, dtype)``) or the group's size (``local_array(gpu.get_local_size(0), dtype)``).
    Contents start undefined on the device; on the host: zeros. Declare it at the top level of
    the kernel body."""
    return np.zeros(shape, dtype)


def work_size(*arrays: Any) -> None:
    """Declare the launch domain of a ``get_global_id``-style kernel: all dimensions of the
    arrays given. Read by the translator on the host side and erased from the kernel body."""
    return None


# -- math ---------------------------------------------------------------------------------------------
def _float_of(x: Any) -> Any:
    arr = np.asarray(x)
    return arr.astype(np.float32) if arr.dtype.kind in "iub" else arr


def _unary(np_fn: Callable[..., Any], name: str, doc: str) -> Callable[[Any], Any]:
    def fn(x: Any) -> Any:
        with np.errstate(all="ignore"):
            r = np_fn(_float_of(x))
        return r[()] if np.ndim(r) == 0 else r

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


rsqrt: Callable[..., Any] = _unary(lambda x: (1 / np.sqrt(x)).astype(x.dtype), "rsqrt", "``1 / sqrt(x)``.")

_NATIVE_UNARY: dict[str, Callable[..., Any]] = {     # name: the precise host computation
    "native_sqrt": np.sqrt,
    "native_rsqrt": lambda x: (1 / np.sqrt(x)).astype(x.dtype),
    "native_recip": lambda x: (1 / x).astype(x.dtype),
    "native_exp": np.exp,
    "native_exp2": np.exp2,
    "native_exp10": lambda x: np.power(x.dtype.type(10), x),
    "native_log": np.log,
    "native_log2": np.log2,
    "native_log10": np.log10,
    "native_sin": np.sin,
    "native_cos": np.cos,
    "native_tan": np.tan,
}

NATIVE_FUNCS: dict[str, Callable[..., Any]] = {}
for _name, _host in _NATIVE_UNARY.items():
    NATIVE_FUNCS[_name] = globals()[_name] = _unary(
        _host, _name, f"Fast, approximate ``{_name[7:]}`` (hardware precision; precise on the host)."
    )


def native_divide(x: Any, y: Any) -> Any:
    """Fast, approximate ``x / y`` (hardware precision; precise on the host)."""
    with np.errstate(all="ignore"):
        r = np.divide(_float_of(x), _float_of(y))
    return r[()] if np.ndim(r) == 0 else r


def native_powr(x: Any, y: Any) -> Any:
    """Fast, approximate ``x ** y`` for ``x >= 0`` (hardware precision; precise on the host)."""
    with np.errstate(all="ignore"):
        r = np.power(_float_of(x), _float_of(y))
    return r[()] if np.ndim(r) == 0 else r


NATIVE_FUNCS["native_divide"] = native_divide
NATIVE_FUNCS["native_powr"] = native_powr
__all__ += list(NATIVE_FUNCS)
