"""The numpy surface of device arrays: operators, ``__array_ufunc__`` and the reduction, scan
and sort methods. Each forwards to the operations provider (:mod:`._dispatch`), which compiles
and launches the kernels; nothing here computes on the host."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from ._dispatch import ops
from ._operand_device import scopes_itself

if TYPE_CHECKING:
    from typing_extensions import Self

    from ._array import DeviceArray

__all__ = ["ArrayOperators", "BINARY_OPERATORS", "UNARY_OPERATORS"]

# dunder stem -> numpy ufunc name
BINARY_OPERATORS = {
    "add": "add", "sub": "subtract", "mul": "multiply", "truediv": "true_divide", "floordiv": "floor_divide",
    "mod": "remainder", "pow": "power", "and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor",
    "lshift": "left_shift", "rshift": "right_shift",
}
COMPARISONS = {"eq": "equal", "ne": "not_equal", "lt": "less", "le": "less_equal", "gt": "greater",
               "ge": "greater_equal"}
UNARY_OPERATORS = {"neg": "negative", "pos": "positive", "abs": "absolute", "invert": "invert"}


def _binary(ufunc: str):
    def forward(self, other):
        return ops().binary(ufunc, self, other)

    def reflected(self, other):
        return ops().binary(ufunc, other, self)

    def inplace(self, other):
        if ops().binary(ufunc, self, other, out=self) is NotImplemented:
            return NotImplemented
        return self

    return forward, reflected, inplace


def _comparison(ufunc: str):
    def compare(self, other):
        return ops().binary(ufunc, self, other)

    def equality(self, other):
        r = ops().binary(ufunc, self, other)
        if r is NotImplemented:
            return _unequal_object(self, other, ufunc == "not_equal")
        return r

    return equality if ufunc in ("equal", "not_equal") else compare


def _unequal_object(a, other, negated: bool):
    """``a == other`` for an ``other`` that is no operand (None, a string, a dict...): numpy compares
    each element with it as Python objects, so the answer is an array of False (of True for ``!=``),
    not Python's single bool. An object that answers the reflected comparison itself keeps its say."""
    if negated and type(other).__ne__ is object.__ne__ and type(other).__eq__ is not object.__eq__:
        # Python's default __ne__ negates __eq__ with bool(), which an array refuses: numpy compares
        # element by element, so negate the array __eq__ gives
        equal = other.__eq__(a)
        if equal is not NotImplemented:
            return ops().unary("logical_not", equal)
    reflected = other.__ne__(a) if negated else other.__eq__(a)
    if reflected is not NotImplemented:
        return reflected
    from ._creation import full

    return full(a.shape, negated, bool, device=a.context)


def _unary(ufunc: str):
    def apply(self):
        return ops().unary(ufunc, self)
    return apply


class ArrayOperators:
    """Mixin of :class:`~pygpgpu_core.gnp.DeviceArray`: everything numpy code calls on an array
    that computes."""

    __slots__ = ()

    if TYPE_CHECKING:  # what the loops below install, spelled out for type checkers
        def __add__(self, other: Any) -> DeviceArray: ...
        def __radd__(self, other: Any) -> DeviceArray: ...
        def __iadd__(self, other: Any) -> Self: ...
        def __sub__(self, other: Any) -> DeviceArray: ...
        def __rsub__(self, other: Any) -> DeviceArray: ...
        def __isub__(self, other: Any) -> Self: ...
        def __mul__(self, other: Any) -> DeviceArray: ...
        def __rmul__(self, other: Any) -> DeviceArray: ...
        def __imul__(self, other: Any) -> Self: ...
        def __truediv__(self, other: Any) -> DeviceArray: ...
        def __rtruediv__(self, other: Any) -> DeviceArray: ...
        def __itruediv__(self, other: Any) -> Self: ...
        def __floordiv__(self, other: Any) -> DeviceArray: ...
        def __rfloordiv__(self, other: Any) -> DeviceArray: ...
        def __ifloordiv__(self, other: Any) -> Self: ...
        def __mod__(self, other: Any) -> DeviceArray: ...
        def __rmod__(self, other: Any) -> DeviceArray: ...
        def __imod__(self, other: Any) -> Self: ...
        def __pow__(self, other: Any) -> DeviceArray: ...
        def __rpow__(self, other: Any) -> DeviceArray: ...
        def __ipow__(self, other: Any) -> Self: ...
        def __and__(self, other: Any) -> DeviceArray: ...
        def __rand__(self, other: Any) -> DeviceArray: ...
        def __iand__(self, other: Any) -> Self: ...
        def __or__(self, other: Any) -> DeviceArray: ...
        def __ror__(self, other: Any) -> DeviceArray: ...
        def __ior__(self, other: Any) -> Self: ...
        def __xor__(self, other: Any) -> DeviceArray: ...
        def __rxor__(self, other: Any) -> DeviceArray: ...
        def __ixor__(self, other: Any) -> Self: ...
        def __lshift__(self, other: Any) -> DeviceArray: ...
        def __rlshift__(self, other: Any) -> DeviceArray: ...
        def __ilshift__(self, other: Any) -> Self: ...
        def __rshift__(self, other: Any) -> DeviceArray: ...
        def __rrshift__(self, other: Any) -> DeviceArray: ...
        def __irshift__(self, other: Any) -> Self: ...
        def __eq__(self, other: Any) -> DeviceArray: ...  # type: ignore[override]  # elementwise
        def __ne__(self, other: Any) -> DeviceArray: ...  # type: ignore[override]  # elementwise
        def __lt__(self, other: Any) -> DeviceArray: ...
        def __le__(self, other: Any) -> DeviceArray: ...
        def __gt__(self, other: Any) -> DeviceArray: ...
        def __ge__(self, other: Any) -> DeviceArray: ...
        def __neg__(self) -> DeviceArray: ...
        def __pos__(self) -> DeviceArray: ...
        def __abs__(self) -> DeviceArray: ...
        def __invert__(self) -> DeviceArray: ...
        def __divmod__(self, other: Any) -> tuple[DeviceArray, DeviceArray]: ...
        def __rdivmod__(self, other: Any) -> tuple[DeviceArray, DeviceArray]: ...

    # -- ufunc protocol: np.sqrt(g), np.add(g, h, out=g), np.maximum.reduce(g) ---------------------
    def __array_ufunc__(self, ufunc: Any, method: Any, *inputs: Any, **kwargs: Any) -> Any:
        return ops().array_ufunc(ufunc, method, inputs, kwargs)

    # -- numpy functions: np.sum(g), np.concatenate([g, h]); others raise TypeError, never compute on
    # host copies behind the caller's back (np.asarray(g) / g.get() are the explicit way there)
    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        return ops().array_function(func, types, args, kwargs)

    # -- reductions -----------------------------------------------------------------------------
    @scopes_itself          # reduce scopes its own full path
    def sum(self, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False, initial: Any = None, where: Any = None) -> DeviceArray:
        return ops().reduce("sum", self, axis=axis, dtype=dtype, out=out, keepdims=keepdims, initial=initial,
                            where=where)

    @scopes_itself
    def prod(self, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False, initial: Any = None, where: Any = None) -> DeviceArray:
        return ops().reduce("prod", self, axis=axis, dtype=dtype, out=out, keepdims=keepdims, initial=initial,
                            where=where)

    @scopes_itself
    def min(self, axis: Any = None, out: Any = None, keepdims: bool = False, initial: Any = None, where: Any = None) -> DeviceArray:
        return ops().reduce("min", self, axis=axis, out=out, keepdims=keepdims, initial=initial, where=where)

    @scopes_itself
    def max(self, axis: Any = None, out: Any = None, keepdims: bool = False, initial: Any = None, where: Any = None) -> DeviceArray:
        return ops().reduce("max", self, axis=axis, out=out, keepdims=keepdims, initial=initial, where=where)

    @scopes_itself
    def mean(self, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False, where: Any = None) -> DeviceArray:
        return ops().reduce("mean", self, axis=axis, dtype=dtype, out=out, keepdims=keepdims, where=where)

    def var(self, axis: Any = None, dtype: Any = None, out: Any = None, ddof: Any = 0, keepdims: bool = False, where: Any = None) -> DeviceArray:
        return ops().moment("var", self, axis=axis, dtype=dtype, out=out, ddof=ddof, keepdims=keepdims, where=where)

    def std(self, axis: Any = None, dtype: Any = None, out: Any = None, ddof: Any = 0, keepdims: bool = False, where: Any = None) -> DeviceArray:
        return ops().moment("std", self, axis=axis, dtype=dtype, out=out, ddof=ddof, keepdims=keepdims, where=where)

    @scopes_itself
    def argmin(self, axis: Any = None, out: Any = None, keepdims: bool = False) -> DeviceArray:
        return ops().reduce("argmin", self, axis=axis, out=out, keepdims=keepdims)

    @scopes_itself
    def argmax(self, axis: Any = None, out: Any = None, keepdims: bool = False) -> DeviceArray:
        return ops().reduce("argmax", self, axis=axis, out=out, keepdims=keepdims)

    @scopes_itself
    def any(self, axis: Any = None, out: Any = None, keepdims: bool = False, where: Any = None) -> DeviceArray:
        return ops().reduce("any", self, axis=axis, out=out, keepdims=keepdims, where=where)

    @scopes_itself
    def all(self, axis: Any = None, out: Any = None, keepdims: bool = False, where: Any = None) -> DeviceArray:
        return ops().reduce("all", self, axis=axis, out=out, keepdims=keepdims, where=where)

    # -- scans, sorting, products ---------------------------------------------------------------
    def cumsum(self, axis: Any = None, dtype: Any = None, out: Any = None) -> DeviceArray:
        return ops().scan("cumsum", self, axis=axis, dtype=dtype, out=out)

    def cumprod(self, axis: Any = None, dtype: Any = None, out: Any = None) -> DeviceArray:
        return ops().scan("cumprod", self, axis=axis, dtype=dtype, out=out)

    def sort(self, axis: Any = -1, kind: Any = None, order: Any = None, stable: Any = None) -> None:
        """Sort in place (numpy's ndarray.sort)."""
        array = cast("DeviceArray", self)
        if array._readonly:               # (a DeviceArray slot)
            raise ValueError("sort array is read-only")
        array[...] = ops().sort(self, axis=axis, kind=kind, order=order, stable=stable)

    def argsort(self, axis: Any = -1, kind: Any = None, order: Any = None, stable: Any = None) -> DeviceArray:
        me = cast("DeviceArray", self)
        if me.ndim == 0:        # numpy's argsort of a 0-d array: [0], for axis None, 0 or -1
            from ._array import _normalize_axis
            from ._creation import zeros
            if axis is not None:
                _normalize_axis(axis, 1)
            return zeros((1,), "int64", me.context)
        return ops().argsort(self, axis=axis, kind=kind, order=order, stable=stable)

    def dot(self, b: Any, out: Any = None) -> DeviceArray:
        return ops().dot(self, b, out=out)

    # parts of numbers (numpy's): a complex array's real and imag are views of its memory; a real
    # array's real is the array itself, its imag read-only zeros, and its conj method the array
    # itself (numpy's method returns a real array as it is; the np.conj ufunc makes a new one)
    @property
    def real(self) -> DeviceArray:
        from ._complex_parts import real
        return real(cast("DeviceArray", self))

    @real.setter
    def real(self, value: Any) -> None:
        self.real[...] = value

    @property
    def imag(self) -> DeviceArray:
        from ._complex_parts import imag
        return imag(cast("DeviceArray", self))

    @imag.setter
    def imag(self, value: Any) -> None:
        if cast("DeviceArray", self).dtype.kind != "c":
            raise TypeError("array does not have imaginary part to set")
        self.imag[...] = value

    def conj(self) -> DeviceArray:
        if cast("DeviceArray", self).dtype.kind == "c":
            return ops().ufunc_call("conjugate", (self,))
        from ._complex_parts import real
        return real(cast("DeviceArray", self))

    def conjugate(self) -> DeviceArray:
        return self.conj()

    def clip(self, min: Any = None, max: Any = None, out: Any = None, **kwargs: Any) -> DeviceArray:
        return ops().clip(self, min, max, out=out, **kwargs)

    def round(self, decimals: Any = 0, out: Any = None) -> DeviceArray:
        return ops().around(self, decimals, out=out)

    def nonzero(self) -> tuple[DeviceArray, ...]:
        return ops().nonzero(self)

    # ndarray methods that are gnp functions (imported when called: those modules import this one)
    def diagonal(self, offset: Any = 0, axis1: Any = 0, axis2: Any = 1) -> DeviceArray:
        from ._views import diagonal
        return diagonal(cast("DeviceArray", self), offset, axis1, axis2)

    def trace(self, offset: Any = 0, axis1: Any = 0, axis2: Any = 1, dtype: Any = None, out: Any = None) -> DeviceArray:
        from ._products import trace
        return trace(cast("DeviceArray", self), offset, axis1, axis2, dtype, out)

    def repeat(self, repeats: Any, axis: Any = None) -> DeviceArray:
        from ._rearranging import repeat
        return repeat(cast("DeviceArray", self), repeats, axis)

    def __matmul__(self, other: Any) -> DeviceArray:
        return ops().matmul(self, other)

    def __rmatmul__(self, other: Any) -> DeviceArray:
        return ops().matmul(other, self)


for _stem, _ufunc in BINARY_OPERATORS.items():
    _f, _r, _i = _binary(_ufunc)
    for _name, _fn in ((f"__{_stem}__", _f), (f"__r{_stem}__", _r), (f"__i{_stem}__", _i)):
        _fn.__name__ = _fn.__qualname__ = _name
        _fn.__doc__ = f"np.{_ufunc} on the device"
        setattr(ArrayOperators, _name, _fn)
for _stem, _ufunc in COMPARISONS.items():
    _c = _comparison(_ufunc)
    _c.__name__ = _c.__qualname__ = f"__{_stem}__"
    _c.__doc__ = f"np.{_ufunc} on the device (a bool array)"
    setattr(ArrayOperators, f"__{_stem}__", _c)
for _stem, _ufunc in UNARY_OPERATORS.items():
    _u = _unary(_ufunc)
    _u.__name__ = _u.__qualname__ = f"__{_stem}__"
    _u.__doc__ = f"np.{_ufunc} on the device"
    setattr(ArrayOperators, f"__{_stem}__", _u)


def _divmod(self, other: Any):
    return ops().binary("floor_divide", self, other), ops().binary("remainder", self, other)


def _rdivmod(self, other: Any):
    return ops().binary("floor_divide", other, self), ops().binary("remainder", other, self)


# installed like the loops above (the TYPE_CHECKING block declares them)
for _name, _fn in (("__divmod__", _divmod), ("__rdivmod__", _rdivmod)):
    setattr(ArrayOperators, _name, _fn)
