"""Device arrays (user-facing as ``pygpgpu.numpy``, usually imported as ``gnp``).

``gnp.asarray(x)`` uploads once; kernels take the array's buffer directly, so data stays on the
device across calls; ``g.get()`` / ``np.asarray(g)`` / printing read it back. Operators, ufuncs,
reductions, scans and sorting (``g + 1``, ``gnp.sqrt(g)``, ``g.sum(axis=0)``, ``gnp.sort(g)``)
run on the device through kernels that pygpgpu-translate provides (:mod:`._dispatch`).
``gnp.transfer_stats()`` counts every host<->device copy so a program (or test) can prove that
a loop copies nothing.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import mempool as _mempool
from . import _comparing, _copying, _differences, _functions, _joining, _nan_reductions, _patterns, _products
from . import _calculus, _complex_parts, _indices, _numeric, _numpy_names, _polynomials, _rearranging, _shorthands
from . import _contractions, _selection, _signal, _statistics, _views
from . import _bessel, _broadcast_object, _cross, _editing, _float_parts, _histogramdd, _host_readers, _unwrap
from . import _einsum, _index_arithmetic, _padding, _placing
from ._array import DeviceArray, DeviceArrayView
from ._creation import (
    arange,
    array,
    asarray,
    ascontiguousarray,
    empty,
    empty_like,
    full,
    full_like,
    ones,
    ones_like,
    zeros,
    zeros_like,
)
from ._device import resolve_target
from ._dispatch import OperationsUnavailable
from ._comparing import *  # noqa: F401,F403  (gnp.isclose, allclose, array_equal)
from ._copying import *  # noqa: F401,F403  (gnp.copyto)
from ._differences import *  # noqa: F401,F403  (gnp.diff)
from ._functions import *  # noqa: F401,F403  (gnp.sqrt, gnp.sum, gnp.sort ...)
from ._joining import *  # noqa: F401,F403  (gnp.vstack, hstack, column_stack, dstack, append)
from ._nan_reductions import *  # noqa: F401,F403  (gnp.nansum, nanmean, nanmax ...)
from ._numpy_names import *  # noqa: F401,F403  (gnp.float32, nan, pi, dtype, finfo ...: numpy's own)
from ._calculus import *  # noqa: F401,F403  (gnp.gradient, cumulative_sum, cumulative_prod)
from ._complex_parts import *  # noqa: F401,F403  (gnp.real, imag, angle)
from ._polynomials import *  # noqa: F401,F403  (gnp.convolve, vander, polyval)
from ._shorthands import *  # noqa: F401,F403  (gnp.concat, permute_dims, argwhere, fix ...)
from ._indices import *  # noqa: F401,F403  (gnp.indices, tril_indices, diag_indices ...)
from ._numeric import *  # noqa: F401,F403  (gnp.nan_to_num, trapezoid, ediff1d)
from ._contractions import *  # noqa: F401,F403  (gnp.tensordot, cov, corrcoef)
from ._selection import *  # noqa: F401,F403  (gnp.select, compress, extract, fill_diagonal)
from ._signal import *  # noqa: F401,F403  (gnp.correlate, hanning, hamming, blackman, bartlett, sinc)
from ._patterns import *  # noqa: F401,F403  (gnp.eye, tri, triu, diag, logspace, meshgrid ...)
from ._products import *  # noqa: F401,F403  (gnp.outer, inner, kron, trace)
from ._rearranging import *  # noqa: F401,F403  (gnp.tile, repeat, roll)
from . import _sorting
from ._sorting import *  # noqa: F401,F403  (gnp.quantile, median, unique, histogram, searchsorted ...)
from . import _set_operations
from ._set_operations import *  # noqa: F401,F403  (gnp.union1d, intersect1d, setdiff1d, lexsort, digitize ...)
from ._statistics import *  # noqa: F401,F403  (gnp.ptp, average, count_nonzero)
from ._views import *  # noqa: F401,F403  (gnp.expand_dims, broadcast_to, flip, split ...: views)
from ._broadcast_object import *  # noqa: F401,F403  (gnp.broadcast)
from ._editing import *  # noqa: F401,F403  (gnp.delete, resize, trim_zeros)
from ._unwrap import *  # noqa: F401,F403  (gnp.unwrap)
from ._histogramdd import *  # noqa: F401,F403  (gnp.histogramdd, histogram2d)
from ._cross import *  # noqa: F401,F403  (gnp.cross)
from ._float_parts import *  # noqa: F401,F403  (gnp.modf, frexp, ldexp, nextafter, spacing)
from ._host_readers import *  # noqa: F401,F403  (gnp.fromfile, loadtxt, fromfunction ...: numpy reads, one upload)
from ._index_arithmetic import *  # noqa: F401,F403  (gnp.take_along_axis, unravel_index, ravel_multi_index, astype)
from ._bessel import *  # noqa: F401,F403  (gnp.i0, kaiser)
from ._einsum import *  # noqa: F401,F403  (gnp.einsum)
from ._padding import *  # noqa: F401,F403  (gnp.pad)
from ._placing import *  # noqa: F401,F403  (gnp.put, putmask, place, put_along_axis, choose)
from ._interop import as_device_array, from_dlpack
from ._staging import ALIAS_WRITTEN_MIN, StagedArgument, natural_alignment, stage_numpy
from ._transfer import record_transfer, reset_transfer_stats, transfer_stats

ndarray = DeviceArray  # CuPy spelling

__all__ = [
    "DeviceArray",
    "DeviceArrayView",
    "OperationsUnavailable",
    "ndarray",
    "asarray",
    "array",
    "ascontiguousarray",
    "empty",
    "zeros",
    "ones",
    "full",
    "empty_like",
    "zeros_like",
    "ones_like",
    "full_like",
    "arange",
    "asnumpy",
    "from_dlpack",
    "as_device_array",
    "stage_numpy",
    "natural_alignment",
    "ALIAS_WRITTEN_MIN",
    "StagedArgument",
    "transfer_stats",
    "reset_transfer_stats",
    "record_transfer",
    "get_memory_pool",
    "synchronize",
    "newaxis",
]
__all__ += _functions.__all__
for _module in (_views, _joining, _patterns, _comparing, _nan_reductions, _statistics, _differences, _products,
                _rearranging, _copying, _numpy_names, _calculus, _complex_parts, _polynomials,
                _shorthands, _indices, _numeric, _contractions, _selection, _signal,
                _broadcast_object, _editing, _unwrap, _histogramdd, _cross, _bessel, _float_parts, _host_readers, _index_arithmetic,
                _einsum, _padding, _placing):
    __all__ += _module.__all__
__all__ += _sorting.__all__
__all__ += _set_operations.__all__

newaxis = None


from . import random  # noqa: E402  (gnp.random: numpy's Generator API over Philox; needs the names above)

__all__ += ["random"]
from . import fft  # noqa: E402  (gnp.fft: numpy's transforms in our own FFT kernels)

__all__ += ["fft"]

from . import linalg  # noqa: E402  (gnp.linalg: numpy.linalg on the device; needs the names above)

__all__ += ["linalg"]


def asnumpy(a: Any, out: Any = None) -> np.ndarray:
    """A numpy copy of ``a`` (device arrays are read back; host data is returned as numpy)."""
    import numpy as np

    if isinstance(a, DeviceArray):
        return a.get(out=out)
    if hasattr(a, "__cuda_array_interface__") or hasattr(a, "__dlpack_device__") and not isinstance(a, np.ndarray):
        try:
            return as_device_array(a).get(out=out)
        except TypeError:
            pass
    arr = np.asarray(a)
    if out is not None:
        out[...] = arr
        return out
    return arr


def get_memory_pool(device: Any = None) -> "_mempool.MemoryPool":
    """The memory pool of ``device``'s context, or of a Context passed directly
    (``used_bytes()``, ``free_bytes()``, ``free_all_blocks()``, ``set_limit()``, ``stats()``)."""
    return _mempool.get_pool(resolve_target(device)[1])


def synchronize(device: Any = None) -> None:
    """Wait for every queued operation on ``device`` (default device when None) or a Context."""
    resolve_target(device)[1].synchronize()


def _add_not_implemented_stubs() -> None:
    """Last, so every name gnp defines takes precedence: numpy's names that CuPy has and gnp lacks
    raise NotImplementedError saying what to use instead (:mod:`._not_implemented`)."""
    from ._not_implemented import stubs_for_missing

    module = globals()
    for name, stub in stubs_for_missing(module).items():
        module[name] = stub
        __all__.append(name)


_add_not_implemented_stubs()


def _follow_operands() -> None:
    """Last: every public function and array method runs on its operands' device (:mod:`._operand_device`)."""
    from ._operand_device import follow_operands_in_class, follow_operands_in_namespace

    follow_operands_in_namespace(globals(), __all__, DeviceArray, __name__)
    for submodule in (fft, linalg):          # gnp.random's generators carry their own device
        follow_operands_in_namespace(vars(submodule), submodule.__all__, DeviceArray, __name__)
    follow_operands_in_class(DeviceArray, DeviceArray, __name__)


_follow_operands()
