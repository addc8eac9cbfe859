"""numpy's names that CuPy has and gnp does not (yet): ``gnp.<name>`` exists and raises
NotImplementedError saying what to use instead, where it would otherwise be an AttributeError
that reads like a typo. Calling it, indexing it (``gnp.mgrid[...]``) or reading an attribute
(``gnp.fft.fft``) raises; ``hasattr(gnp, name)`` is True.

How the table was made (2026-12-06): the public names of numpy 2.4's namespace, intersected with
the names cupy/__init__.py of cupy-cuda12x 14.2.0 defines or imports (read with ``ast``, not
imported), minus the names gnp had then and minus those being added alongside (gnp.random;
quantile, percentile, median, nanmedian, partition, argpartition, unique and unique_*, bincount,
histogram, searchsorted, isin, interp). A name gnp gains later simply takes precedence (the
stubs fill only names gnp does not define): remove it from the table then.
"""
from __future__ import annotations

from typing import Any, NoReturn

__all__ = ["NOT_IMPLEMENTED", "NotInGnp", "stubs_for_missing"]

_HOST = "np.{name}(g.get()) on a host copy, then gnp.asarray(result)"
_READ = "np.{name}(...) on the host, then gnp.asarray(result) to upload it once"
_WRITE = "np.{name}(file, g.get()) (a host copy)"
_JOIN = "gnp.concatenate, gnp.stack, gnp.hstack or gnp.column_stack"

# name -> what to use instead ({name} is the name)
NOT_IMPLEMENTED: dict[str, str] = {
    "apply_along_axis": _HOST, "apply_over_axes": _HOST,
    "array2string": "np.array2string(g.get()); repr(g) and str(g) print device arrays",
    "c_": _JOIN, "r_": _JOIN,
    "flatiter": "g.ravel() (a view)",
    "format_float_positional": "np.format_float_positional (it formats host scalars)",
    "format_float_scientific": "np.format_float_scientific (it formats host scalars)",
    "load": _READ,
    "save": _WRITE, "savetxt": _WRITE, "savez": _WRITE, "savez_compressed": _WRITE,
    "mask_indices": _HOST, "shares_memory": "a.buffer is b.buffer",
    "packbits": _HOST, "unpackbits": _HOST,
    "piecewise": "gnp.where",
    "poly": _HOST, "poly1d": "gnp.polyval evaluates; np.poly1d on host coefficients",
    "polyfit": _HOST, "roots": _HOST,
    "polynomial": "numpy.polynomial on host copies; gnp.polyval evaluates",
    "show_config": "np.show_config(); pygpgpu lists its devices", "testing": "numpy.testing on g.get()",
    "ufunc": "gnp's ufuncs are functions (gnp.add(a, b)); np.add(g, h) and np.add.reduce(g) take device arrays",
    "vectorize": "a @kernel function runs Python code elementwise on the device",
}


class NotInGnp:
    """A name of numpy's API that gnp does not have: using it raises NotImplementedError."""

    __slots__ = ("_name", "_instead")

    def __init__(self, name: str, instead: str) -> None:
        self._name = name
        self._instead = instead.format(name=name)

    def _raise(self) -> NoReturn:
        raise NotImplementedError(f"gnp.{self._name} (numpy's {self._name}) is not implemented in pygpgpu.numpy; "
                                  f"use {self._instead}")

    def __call__(self, *args: Any, **kwargs: Any) -> NoReturn:
        self._raise()

    def __getitem__(self, key: Any) -> NoReturn:
        self._raise()

    def __getattr__(self, attribute: str) -> NoReturn:
        if attribute.startswith("__"):           # (copy, pickle and introspection probe for these)
            raise AttributeError(attribute)
        self._raise()

    def __repr__(self) -> str:
        return f"<gnp.{self._name}: not implemented in pygpgpu.numpy>"


def stubs_for_missing(defined: "dict[str, Any]") -> dict[str, NotInGnp]:
    """A stub for each name of the table that ``defined`` (a module's globals) lacks."""
    return {name: NotInGnp(name, instead) for name, instead in NOT_IMPLEMENTED.items() if name not in defined}
