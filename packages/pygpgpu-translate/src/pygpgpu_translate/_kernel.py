"""``@kernel``: the decorator object, bracket syntax, specialization cache and launch.

Warm path (docs/architecture.md#the-launch-path): signature tokens from the arguments -> one dict lookup -> plan.run.
Everything else (translation, compilation, plan building) happens once per
(backend, device, signature) and is cached in memory; generated sources are also cached on
disk, binaries by the backend.
"""
from __future__ import annotations

import ast
import difflib
import inspect as _inspect
import logging
import time
import types as _types
from dataclasses import dataclass
from typing import Any, Callable, Concatenate, Generic, ParamSpec, Protocol, Tuple, Union, overload

import numpy as np

from pygpgpu_core import registry
from pygpgpu_core.cache import atomic_write, cache_dir
from pygpgpu_core.errors import ClosedError, CompileError, GPGPUError
from pygpgpu_core.protocols import option
from pygpgpu_core.forking import ForkedProcessError
from pygpgpu_core.protocols import Device
from pygpgpu_core.scoped_device import SCOPES, scoped_device

from ._aliases import device_view_aliases
from ._bounds_host import CheckedLaunchPlan, bounds_check_default
from ._cpu_choices import narrow_kernels
from ._dialects import DEFAULT_DIALECT, DIALECTS, UnknownDialect, dialect_for, dialect_names
from ._launch import CallPlan
from ._launch_checks import WideIndexNeeded, needs_wide_ids
from ._memo import forget, remember
from ._signature import INDEX_LIMIT, FAST_TOKENS, arg_token, is_device_array, plain_ndarray, spec_from_token
from ._captures import captured_arrays, captured_tokens, kernel_cells
from ._source import function_source
from ._state import log, refs_current, stats
from ._types import Scalar
from ._user_errors import USER_ERRORS, for_user

__all__ = ["kernel", "KernelFunction", "ConfiguredKernel", "Inspection"]

P = ParamSpec("P")      # the kernel function's parameters: calls, brackets and bound methods keep them
Q = ParamSpec("Q")

# What brackets take: a selector "cuda:1", a work size 1024 / (1024, 256) / ((h, w), (lh, lw)),
# or a tuple holding a selector and a work size, k["cuda", (1024, 256)] (_Config.merged).
Bracket = Union[str, int, "np.integer[Any]", Tuple[Any, ...], Device]


@dataclass
class Inspection:
    """What ``k.inspect(*args)`` returns: the generated source and what the launch will do."""
    source: str
    access: "dict[str, str]"
    signature: "tuple[Any, ...]"
    work_size: str
    dialect: str
    layout: "list[Any]"
    entry: str = ""          # the kernel's name in the source (mangled where a dialect reserves it: step -> step_)
    lanes: int = 1           # consecutive elements each work item handles (> 1: a wide kernel, _wide)

    def __str__(self) -> str:
        return self.source


def _default_float(value) -> Scalar:
    if value is None:
        return Scalar("float32")
    try:
        dt = np.dtype(value)
    except TypeError:
        dt = None
    if dt is None or dt.kind != "f" or dt.name == "float16":
        raise ValueError(f"default_float must be np.float32 or np.float64, got {value!r}")
    return Scalar(dt.name)


def _parse_work(item):
    """(global, local) from a bracket work size: ``total``, ``(total, local)``, ``((h, w), (lh, lw))``
    or a 3-tuple total; None = automatic."""
    def dims(v, what):
        if v is None:
            return None
        if isinstance(v, (int, np.integer)):
            if v <= 0:
                raise ValueError(f"{what} work size must be positive, got {v}")
            return (int(v),)
        if isinstance(v, tuple) and 1 <= len(v) <= 3 and all(isinstance(x, (int, np.integer)) and x > 0 for x in v):
            return tuple(int(x) for x in v)
        raise ValueError(f"bad {what} work size {v!r}: use an int or a tuple of 1-3 positive ints")
    if isinstance(item, tuple) and len(item) == 2:     # always (total, per group), as for handwritten kernels
        g, l = item
        g, l = dims(g, "global"), dims(l, "local")
        if g is not None and l is not None and len(g) != len(l):
            raise ValueError(f"global {g} and local {l} work sizes have different dimensions")
        return g, l
    return dims(item, "global"), None


def _selector_of(x):
    """A device object in a bracket (``k[dev]``, ``k[dev, 1024]``, as PyOpenCL and CuPy users pass
    devices) stands for its selector, ``"opencl:0"``; anything else is itself."""
    selector = getattr(x, "selector", None)
    return selector if isinstance(selector, str) else x


def _scoped_selector() -> "str | None":
    """The selector of the scoped default device (``with pygpgpu.device(...)``), None outside one."""
    dev = scoped_device()
    return None if dev is None else dev.selector


def _dims(sizes) -> str:
    return " x ".join(str(n) for n in sizes) if isinstance(sizes, tuple) else str(sizes)


class _Config:
    __slots__ = ("selector", "global_size", "local_size", "wide")

    def __init__(self, selector=None, global_size=None, local_size=None):
        self.selector = selector
        self.global_size = global_size
        self.local_size = local_size
        self.wide = needs_wide_ids(global_size)      # a work size past 32-bit ids: 64-bit indexing

    def merged(self, item) -> "_Config":
        c = _Config(self.selector, self.global_size, self.local_size)
        if item is None:
            return c
        item = tuple(map(_selector_of, item)) if isinstance(item, tuple) else _selector_of(item)
        if isinstance(item, str):
            c.selector = item
            return c
        if isinstance(item, tuple) and any(isinstance(x, str) for x in item):   # k["cuda", (1024, 256)]
            selectors = [x for x in item if isinstance(x, str)]
            if len(selectors) > 1:      # which one was meant? (chained brackets k["a"]["b"] do replace)
                raise ValueError(f"two device selectors in one bracket: {item!r}; give one")
            c.selector = selectors[0]
            rest = tuple(x for x in item if not isinstance(x, str))
            if not rest:
                return c
            item = rest[0] if len(rest) == 1 else rest
        c.global_size, c.local_size = _parse_work(item)
        c.wide = needs_wide_ids(c.global_size)
        return c

    def key(self):
        return (self.selector, self.global_size, self.local_size)

    def describe(self) -> str:
        """For reprs: ``on opencl``, ``on the default device, 1024 work items in groups of 256``."""
        text = f"on {self.selector}" if self.selector else "on the default device"
        if self.global_size is not None:
            text += f", {_dims(self.global_size)} work items"
        if self.local_size is not None:
            text += f" in groups of {_dims(self.local_size)}"
        return text


class ConfiguredKernel(Generic[P]):
    """``k["cuda"]``, ``k[(1024, 256)]``: a cheap, cached view of a kernel with a fixed config, called
    like the kernel (same parameters); brackets on it merge into its configuration."""

    __slots__ = ("_kf", "_config", "_device", "_bound_self", "_children", "_memo", "_memo2")

    def __init__(self, kf: "KernelFunction[P]", config: Any, bound_self: object = None) -> None:
        self._kf = kf
        self._config = config
        self._device = None
        self._bound_self = bound_self
        self._children: dict[Any, ConfiguredKernel[P]] = {}
        self._memo = self._memo2 = None     # (hit, state) of the last two resident warm calls (_memo)

    def __getitem__(self, item: Bracket) -> ConfiguredKernel[P]:
        try:
            return self._children[item]
        except (KeyError, TypeError):
            pass
        child: ConfiguredKernel[P] = ConfiguredKernel(self._kf, self._config.merged(item), self._bound_self)
        try:
            self._children[item] = child
        except TypeError:
            pass
        return child

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> None:
        if self._config.selector is None and SCOPES.get():
            # with pygpgpu.device(...): / with dev: -> the view for that device, with its own memo
            return self[scoped_device()](*args, **kwargs)
        memo = self._memo               # the one memo check of a call (_memo; k(...) comes here too)
        if memo is not None and not kwargs:
            try:
                if memo[0](args, memo[1]):      # the last call's inputs again: launched
                    return None
                memo = self._memo2
                if memo is not None and memo[0](args, memo[1]):
                    return None
            except ClosedError:                 # the ordinary path says what was closed, or rebuilds
                forget(self)
        try:
            if self._device is None:
                self._device = self._kf._resolve_device(self._config.selector)
            values: tuple[Any, ...] = args
            if self._bound_self is not None:
                values = (self._bound_self,) + values
            if kwargs:
                values = self._kf._bind(values, kwargs)
            self._kf._launch(self._device, self._config, values, self)
        except USER_ERRORS as exc:              # the user's line, not the translator's frames (_user_errors)
            raise for_user(exc) from exc.__cause__
        return None

    @property
    def py_func(self) -> Callable[..., object]:
        """The Python function, to run on the host: bound to the instance for a kernel method taken
        from one (``m.apply.py_func(x, out)``, as ``m.apply(x, out)`` is called)."""
        func = self._kf.py_func
        return func if self._bound_self is None else _types.MethodType(func, self._bound_self)

    @property
    def __name__(self) -> str:
        return self._kf.__name__

    def inspect(self, *args: Any, backend: str | None = None, **kwargs: Any) -> Inspection:
        if self._bound_self is not None:
            args = (self._bound_self,) + args
        if kwargs:
            args = self._kf._bind(args, kwargs)
        sel = backend or self._config.selector or _scoped_selector()
        try:
            return self._kf._inspect(args, sel, self._config.wide)
        except USER_ERRORS as exc:
            raise for_user(exc) from exc.__cause__

    def __repr__(self) -> str:
        return f"<kernel {self._kf.__name__} {self._config.describe()}>"

    def __reduce__(self) -> Any:   # the kernel, the brackets and the bound instance (_pickling)
        from ._pickling import reduce_configured
        return reduce_configured(self)


_Configured = ConfiguredKernel      # the name _pickling rebuilds it by


class KernelFunction(Generic[P]):
    """What ``@kernel`` returns: the Python function, compiled for the GPU on its first call per
    argument types and device. Call it like the function; ``k["backend:device"]`` and
    ``k[(global, local)]`` choose the device and the work size; ``k.inspect(*args)`` shows the
    generated source; ``k.py_func`` is the original function. See :func:`kernel`."""

    def __init__(self, func: Callable[P, object], backend: str | None = None, default_float: Any = None,
                 debug: bool = False, fastmath: bool = False, contract: bool = True) -> None:
        if fastmath and not contract:
            raise ValueError("@kernel(fastmath=True, contract=False) asks for two opposite things: fast math "
                             "lets the compiler contract; choose one")
        self._static = isinstance(func, staticmethod)
        if isinstance(func, staticmethod):        # @kernel over @staticmethod: the plain function
            func = func.__func__
        self.py_func = func
        self.backend = backend
        self.default_float: Scalar = _default_float(default_float)
        # the bounds-checked debug mode (_bounds, _bounds_host): fixed when the kernel is defined
        self.debug: bool = bool(debug) or bounds_check_default()
        # fast-math build options (Dialect.fast_math_options): fixed when the kernel is defined,
        # like debug, so the plans and translations this object caches never mix the two modes
        self._fastmath = bool(fastmath)
        self._contract = bool(contract)    # False: no fused multiply-add (Dialect.no_contract_options)
        self.__name__: str = func.__name__
        self.__qualname__ = getattr(func, "__qualname__", func.__name__)
        self.__doc__ = func.__doc__
        self.__module__ = func.__module__
        self.__wrapped__ = func
        sig = _inspect.signature(func)
        self._param_names = list(sig.parameters)
        self._n_params = len(self._param_names)
        self._varargs = any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in sig.parameters.values())
        self._is_method = (not self._static and bool(self._param_names) and self._param_names[0] == "self"
                           and "." in self.__qualname__)
        self._self_attrs = self._scan_self_attrs() if self._is_method else ()
        self._cells = kernel_cells(func)     # names from an enclosing function, module arrays (_captures)
        self._plans: dict = {}
        self._closed_drops = 0      # times _forget_closed_plans dropped plans (a retry's witness)
        self._translations: dict = {}
        self._root: ConfiguredKernel[P] = ConfiguredKernel(self, _Config(backend))
        self._devices: dict = {}
        self._syntax_checked = False     # the device-independent syntax gate passed (_check_syntax_once)

    # ---- decorator plumbing -----------------------------------------------------------------------
    @overload
    def __get__(self, obj: None, objtype: type | None = None) -> KernelFunction[P]: ...
    @overload
    def __get__(self: KernelFunction[Concatenate[Any, Q]], obj: object,
                objtype: type | None = None) -> ConfiguredKernel[Q]: ...   # bound: self is filled in

    def __get__(self, obj: object, objtype: type | None = None) -> Any:
        if obj is None or not self._is_method:
            return self
        return ConfiguredKernel(self, self._root._config, obj)

    def __getitem__(self, item: Bracket) -> ConfiguredKernel[P]:
        return self._root[item]

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> None:
        return self._root(*args, **kwargs)      # the default configuration: its memo, its device

    def __repr__(self) -> str:
        return f"<pygpgpu kernel {self.__qualname__}>"

    @property
    def fastmath(self) -> bool:
        """Whether this kernel builds with its dialect's fast-math options (``@kernel(fastmath=True)``)."""
        return self._fastmath

    @property
    def contract(self) -> bool:
        """Whether the compiler may fuse ``a * b + c`` into one rounding (``@kernel(contract=False)``
        turns it off, so float results match numpy's bit for bit where each operation is
        correctly rounded)."""
        return self._contract

    def __reduce__(self) -> Any:   # by reference like a function, or by value with its source (_pickling)
        from ._pickling import reduce_kernel
        return reduce_kernel(self)

    def inspect(self, *args: Any, backend: str | None = None, **kwargs: Any) -> Inspection:
        """Translate for ``args`` without running: ``.source``, ``.access``, ``.signature``, ``.work_size``."""
        if kwargs:
            args = self._bind(args, kwargs)
        try:
            return self._inspect(args, backend or self.backend or _scoped_selector())
        except USER_ERRORS as exc:
            raise for_user(exc) from exc.__cause__

    def split(self, devices: Any, weights: Any = None) -> Any:
        """``k.split(["opencl:0", "opencl:1"])(x, out)``: one 1-D launch divided among devices that run
        at once; numpy arrays are sliced per device, scalars passed as they are (_split)."""
        from ._split import SplitKernel
        return SplitKernel(self, devices, weights)

    def _bind(self, args, kwargs):
        """Keyword arguments and defaults -> the positional tuple the fast path expects."""
        sig = _inspect.signature(self.py_func)
        unknown = [k for k in kwargs if k not in sig.parameters]
        if unknown:          # sig.bind would first complain about a missing argument instead
            near = difflib.get_close_matches(unknown[0], list(sig.parameters), n=1)
            raise TypeError(f"kernel {self.__name__}(): unknown keyword argument {unknown[0]!r}"
                            + (f" (did you mean {near[0]!r}?)" if near else "")
                            + f"; its parameters are {', '.join(sig.parameters)}")
        try:
            bound = sig.bind(*args, **kwargs)
        except TypeError as exc:
            raise TypeError(f"kernel {self.__name__}(): {exc}") from None
        bound.apply_defaults()
        return tuple(bound.arguments.values())     # keyword-only parameters too, in order (no *args here)

    def _scan_self_attrs(self):
        src = function_source(self.py_func)
        names = []
        for node in ast.walk(src.tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self"
                    and isinstance(node.ctx, ast.Load) and node.attr not in names):
                names.append(node.attr)
        return tuple(names)

    # ---- devices ----------------------------------------------------------------------------------
    def _resolve_device(self, selector):
        try:
            return self._devices[selector]
        except KeyError:
            pass
        try:
            dev = registry.select_device(selector)
        except (GPGPUError, ValueError) as exc:
            error = exc
        else:
            self._devices[selector] = dev
            return dev
        # No device (a bad PYGPGPU_BACKEND, no driver): unsupported syntax, which does not depend on
        # the device, is reported first, at the user's line and without the device traceback.
        self._check_syntax_once()
        raise error

    def _check_syntax_once(self):
        if not self._syntax_checked:
            from ._precheck import check_syntax_deep
            check_syntax_deep(self.py_func)
            self._syntax_checked = True

    # ---- signature --------------------------------------------------------------------------------
    def _call_values(self, args):
        if self._varargs:     # reported as a SyntaxError at the def line
            from ._frontend import check_syntax
            check_syntax(function_source(self.py_func))
        names = self._param_names
        if len(args) < len(names) and (self.py_func.__defaults__ or self.py_func.__kwdefaults__):
            args = self._bind(args, {})     # parameters with defaults; else it names the missing one
        if len(args) != len(names):
            raise TypeError(f"kernel {self.__name__}() takes {len(names) - (1 if self._is_method else 0)} "
                            f"arguments ({', '.join(n for n in names if n != 'self' or not self._is_method)}), "
                            f"{len(args) - (1 if self._is_method else 0)} given{self._unbound_hint(args)}")
        values = list(args)
        if self._is_method:
            obj = args[0]
            for a in self._self_attrs:
                v = getattr(obj, a, None)
                if callable(v) and not isinstance(v, np.ndarray) and not is_device_array(v):
                    values.append(None)
                else:
                    values.append(v)
        if self._cells:                  # captured arrays ride along last, like self attributes
            values.extend(captured_arrays(self._cells))
        names = self._all_names()
        for k, v in enumerate(values):
            if isinstance(v, np.ndarray) and type(v) is not np.ndarray:    # np.memmap; masked arrays are refused
                values[k] = plain_ndarray(v, names[k])
        return values

    def _unbound_hint(self, args) -> str:
        """For a call one argument short of a kernel defined in a class whose first parameter is not
        ``self``: Python would bind the instance to it, but a kernel method is one only by that name
        (its ``self.attr`` reads become kernel arguments)."""
        owner = self.__qualname__.rpartition(".")[0]
        if (self._is_method or self._static or not owner or owner.endswith("<locals>")
                or len(args) != len(self._param_names) - 1):
            return ""
        return (f"; a kernel method is bound to its instance only when its first parameter is named self "
                f"(here {self._param_names[0]!r})")

    def _signature(self, values):
        names = self._param_names
        tokens = []
        big = False
        start = 1 if self._is_method else 0
        for i in range(start, len(names)):
            v = values[i]
            tok = arg_token(v, names[i])
            tokens.append(tok)
            if tok[0] in ("a", "d") and v.size > INDEX_LIMIT:
                big = True
            elif tok == "l" or tok == "L":
                big = True
        if self._is_method:
            obj = values[0]
            tokens.append(("self", type(obj)))
            for a, v in zip(self._self_attrs, values[len(names):]):
                if v is None:
                    tokens.append(None)
                    continue
                tok = arg_token(v, f"self.{a}")
                tokens.append(tok)
                if tok[0] in ("a", "d") and v.size > INDEX_LIMIT:
                    big = True
        if self._cells:      # no array captured: the arguments' signature (the warm path's key)
            extra = captured_tokens(self._cells, values[len(names) + len(self._self_attrs):], arg_token)
            if extra is not None:
                tokens.extend(extra[0])
                big = big or extra[1]
        return tuple(tokens), (64 if big else 32)

    def _specs(self, tokens):
        specs = []
        names = self._param_names
        start = 1 if self._is_method else 0
        if self._is_method:
            from ._bindings import KernelParamSpec
            specs.append(KernelParamSpec("self", "self"))
        for i, tok in zip(range(start, len(names)), tokens):
            specs.append(spec_from_token(tok, names[i], self.default_float))
        if self._is_method:
            for a, tok in zip(self._self_attrs, tokens[len(names) - start + 1:]):
                if tok is not None:
                    specs.append(spec_from_token(tok, f"self.{a}", self.default_float))
        base = len(self._param_names) + len(self._self_attrs)
        for (name, _cell), tok in zip(self._cells, tokens[base:]):     # captured arrays
            if tok is not None:
                specs.append(spec_from_token(tok, name, self.default_float))
        return specs

    def _flat_tokens(self, tokens):
        """Tokens aligned with the call values (self, params, self attributes)."""
        if not self._is_method:
            return list(tokens)
        n = len(self._param_names) - 1
        return [None] + list(tokens[:n]) + list(tokens[n + 1:])

    def _all_names(self):
        return self._param_names + [f"self.{a}" for a in self._self_attrs] + [name for name, _cell in self._cells]

    # ---- translation ------------------------------------------------------------------------------
    def _translation(self, dialect, tokens, bits, self_obj, wide=True):
        """``wide=False``: no wide kernels (a CPU device, _cpu_choices)."""
        key = (dialect, tokens, bits, self.debug, self._fastmath, self._contract, wide)
        t = self._translations.get(key)
        if t is None or not refs_current(t.refs):
            from ._translate import translate      # the translator loads on first use
            t = translate(self.py_func, self._specs(tokens), (tokens, bits), dialect, self.default_float, bits,
                          self_obj, bounds_check=self.debug, fastmath=self._fastmath, contract=self._contract,
                          wide=wide)
            self._translations[key] = t
        return t

    def _inspect(self, args, backend, wide=False):
        values = self._call_values(args)
        tokens, bits = self._signature(values)
        if wide:
            bits = 64
        dialect = _dialect_of(backend)
        t = self._translation(dialect, tokens, bits, values[0] if self._is_method else None)
        if t.domain_ndim:
            rule = (f"{t.domain_kind} domain of {t.domain_ndim} dimension(s); global size = the domain reversed "
                    "(last index -> dimension 0), local size automatic unless given in brackets")
            if t.lanes > 1:
                rule += (f"; wide: each work item handles {t.lanes} consecutive elements with vector loads and "
                         f"stores, so the global size is ceil(n / {t.lanes})")
        else:
            rule = "no iteration domain: give a bracket work size k[(total, local)]"
        return Inspection(t.source, dict(t.access), (tokens, bits), rule, dialect, list(t.layout), t.entry, t.lanes)

    # ---- launch -----------------------------------------------------------------------------------
    def warm_plan(self, device, config, args):
        """The plan a warm call with ``args`` takes (docs/architecture.md#the-launch-path): a token
        per argument by exact type, one dict lookup; None where the call must take the full path
        (an argument without a fast token, no plan yet, a rebound helper or module constant)."""
        if self._is_method or len(args) != self._n_params:
            return None
        tokens = []
        big = False
        for v in args:
            fn = FAST_TOKENS.get(type(v))
            tok = fn(v) if fn is not None else None
            if tok is None:
                return None
            tokens.append(tok)
            k = tok[0]
            if k == "a":
                if v.size > INDEX_LIMIT:
                    big = True
            elif k == "d":
                shape = v.shape
                if (shape[0] > INDEX_LIMIT if len(shape) == 1 else len(shape) and _prod(shape) > INDEX_LIMIT):
                    big = True
        bits = 64 if big or config.wide else 32
        plan = self._plans.get((id(device), tuple(tokens), bits))
        if plan is not None and (not plan.t.refs or refs_current(plan.t.refs)):
            return plan
        return None

    def _launch(self, device, config, args, owner=None):
        """Launch on ``device``; ``owner``: the configured kernel whose memo a resident warm call
        becomes (_memo)."""
        plan = self.warm_plan(device, config, args)
        if plan is not None:
            try:
                ran = plan.run(args, config.global_size, config.local_size)
                if ran is not None and owner is not None:    # resident arrays: keep the call
                    remember(owner, plan, args, ran)
                return
            except WideIndexNeeded:      # nothing ran: the full path takes the 64-bit plan
                pass
            except ClosedError as exc:   # see _forget_closed_plans; the full path rebuilds
                if isinstance(exc, ForkedProcessError) or not (self._forget_closed_plans(device)
                                                               or getattr(plan.context, "closed", False)):
                    raise
        drops = self._closed_drops
        try:
            self._launch_full(device, config, args)
        except ClosedError as exc:
            # (another thread may have dropped the closed plan this call used: drops then moved on)
            if isinstance(exc, ForkedProcessError) or not (self._forget_closed_plans(device)
                                                           or self._closed_drops != drops):
                raise
            self._launch_full(device, config, args)   # the device's shared context was closed: rebuild once

    def _launch_full(self, device, config, args):
        args = _adopt_foreign(args, device)
        passed = self._call_values(args)
        # after _call_values: self attributes and captured arrays may be views too
        values, views = _contiguous_views(passed)
        tokens, bits = self._signature(values)
        if config.wide:
            bits = 64
        try:
            plan = self._plan(device, tokens, bits, values)
            if views:
                device_view_aliases(views, passed, plan.arrays, self.__name__)
            plan.run(values, config.global_size, config.local_size)
        except WideIndexNeeded:                  # the domain needs ids past 2**31: 64-bit indexing
            plan = self._plan(device, tokens, 64, values)
            plan.run(values, config.global_size, config.local_size)
        if views:
            _write_back_views(views, plan)

    def _forget_closed_plans(self, device) -> bool:
        """After a user closed ``device``'s shared context (allowed: ``device.context()`` then makes
        a fresh one), drop this kernel's plans for that device, whose programs died with it. True
        when there was such a plan to drop, so the caller retries once on the fresh context."""
        stale = [k for k, plan in list(self._plans.items())
                 if k[0] == id(device) and getattr(plan.context, "closed", False)]
        for key in stale:
            self._plans.pop(key, None)      # (another thread may drop it at the same time)
        if stale:
            self._closed_drops += 1
        return bool(stale)

    def _plan(self, device, tokens, bits, values):
        plan = self._plans.get((id(device), tokens, bits))
        if plan is None or not refs_current(plan.t.refs):
            if plan is not None:          # a helper or module constant was rebound: translate again
                self._forget(tokens, bits)
            plan = self._build_plan(device, tokens, bits, values)
            self._plans[(id(device), tokens, bits)] = plan
        return plan

    def _forget(self, tokens, bits):
        for key in [k for k in self._translations if k[1:3] == (tokens, bits)]:
            del self._translations[key]
        for key in [k for k in self._plans if k[1:] == (tokens, bits)]:
            del self._plans[key]

    def _build_plan(self, device, tokens, bits, values):
        backend = device.backend
        dialect = _backend_dialect(backend)
        t = self._translation(dialect, tokens, bits, values[0] if self._is_method else None, wide=not narrow_kernels(device))
        if "fp64" in t.features and not getattr(device, "fp64", True):
            raise GPGPUError(f"kernel {self.__name__!r} uses float64, which {device.selector} ({device.name}) does not "
                             "support; pass float32 arrays or use @kernel(default_float=np.float32)")
        if "fp16" in t.features and not (dialect_for(dialect).float16 and getattr(device, "fp16", False)):
            raise TypeError(f"kernel {self.__name__!r}: float16 arrays are not supported on {device.selector}"
                            f"{'' if dialect_for(dialect).float16 else f' ({dialect} kernels take float32)'}; use float32")
        t0 = time.perf_counter()
        try:
            options = build_options(device, dialect, self._fastmath, self._contract, t.features)
            program = device.context().program(t.source, options, name=t.name)
        except CompileError as exc:
            raise _with_source_path(exc, t, dialect) from None
        handle = program.kernel(t.entry or t.name)      # the C name: a mangled `step` is step_
        stats["compiles"] += 1
        debug = log.isEnabledFor(logging.DEBUG)   # decided here, on the cold path, for this plan's life
        if debug:
            log.debug("program %s ready on %s in %.1f ms", t.name, device.selector, (time.perf_counter() - t0) * 1e3)
        # the one place a plan is made, complete: nothing is set on it afterwards
        return (CheckedLaunchPlan if t.bounds_sites is not None else CallPlan)(
            t, program, handle, device, names=self._all_names(), func=self.py_func,
            tokens=self._flat_tokens(tokens), bits=bits, n_call_params=len(self._param_names),
            build_options=options, log_launches=debug)


def _adopt_foreign(args, device):
    """torch/CuPy/JAX/Numba device arrays (``__cuda_array_interface__`` or ``__dlpack__``) become
    gnp arrays sharing their memory, so the kernel runs on them without a copy. Only reached
    when the warm path did not recognize an argument."""
    out = None
    for k, v in enumerate(args):
        t = type(v)
        if t in FAST_TOKENS or isinstance(v, (np.ndarray, np.generic)):
            continue
        if hasattr(v, "__cuda_array_interface__") or hasattr(v, "__dlpack__"):
            from pygpgpu_core.gnp import as_device_array
            if out is None:
                out = list(args)
            out[k] = as_device_array(v, device)
    return args if out is None else tuple(out)


def _contiguous_views(values):
    """gnp views (``g[::2]``, ``g.T``, ``g[1:]``) reach a kernel as contiguous device copies, as
    kernels index C-contiguous arrays from their buffer's start: ``(values, [(positions, view,
    copy)])``. Equal views (``k(v, v)``, or a view passed and also captured) share one copy, so the
    kernel sees one array through both, as the host does (_aliases refuses overlapping other
    ones). Only reached when the warm path did not recognize an argument."""
    groups: dict = {}
    out = None
    for k, v in enumerate(values):
        if is_device_array(v) and (getattr(v, "offset", 0) != 0 or not getattr(v, "is_contiguous", True)):
            if out is None:
                out = list(values)
            key = (id(v.buffer), v.offset, v.shape, v.strides, v.dtype)
            if key not in groups:
                copy = v.copy()
                copy._readonly = v._readonly     # a read-only view stays refused where it is written
                groups[key] = ([], v, copy)
            groups[key][0].append(k)
            out[k] = groups[key][2]
    views = [(tuple(positions), view, copy) for positions, view, copy in groups.values()]
    return (values, views) if out is None else (out, views)


def _write_back_views(views, plan):
    """Copy what the kernel wrote into the contiguous stand-ins back into the views."""
    written = {pos for pos, _name, _reads, writes, _covered in plan.arrays if writes}
    for positions, view, copy in views:
        if written.intersection(positions):
            view[...] = copy


def _prod(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def _with_source_path(exc: CompileError, t, dialect) -> CompileError:
    """The build failed: keep the generated source on disk and say where (its #line directives
    already point the log at the Python lines)."""
    path = exc.source_path
    if not path:
        import hashlib
        ext = dialect_for(dialect).source_suffix
        try:      # an unusable cache folder (CacheUnavailable is an OSError): no path to show
            target = cache_dir() / "failed" / f"{t.name}-{hashlib.sha256(t.source.encode()).hexdigest()[:12]}{ext}"
            atomic_write(target, t.source.encode())
            path = str(target)
        except OSError:
            path = None
    message = str(exc).split("\n", 1)[0]
    return CompileError(f"kernel {t.name!r}: the generated {dialect} source failed to build: {message}",
                        exc.log, t.source, path)


def build_options(device, dialect: str, fastmath: bool, contract: bool = True, features=()) -> tuple:
    """The compiler options of a translated kernel. Exact (the default): the device's
    ``exact_math_options``, e.g. OpenCL's correctly rounded float32 division and sqrt, which
    Python semantics need. ``fastmath``: the device's ``fast_math_options`` if it declares
    them (a plug-in backend's compiler), else its dialect's (``-cl-fast-relaxed-math``,
    ``--use_fast_math``, ``-ffast-math``). ``contract=False`` adds the dialect's
    ``no_contract_options`` (``--fmad=false``, ``-ffp-contract=off``). A kernel using subgroups
    (``features``) on an OpenCL device that reports sub-groups with a shuffle gets what lets it use
    them (``prelude/_subgroups.device_subgroup_options``)."""
    from .prelude._subgroups import device_subgroup_options
    return _math_options(device, dialect, fastmath, contract) + device_subgroup_options(device, dialect, features)


def _math_options(device, dialect: str, fastmath: bool, contract: bool) -> tuple:
    if not contract:
        return tuple(option(device, "exact_math_options")) + dialect_for(dialect).no_contract_options
    if fastmath:
        own = option(device, "fast_math_options")
        if own is not None:
            return tuple(own)
        return dialect_for(dialect).fast_math_options
    return tuple(option(device, "exact_math_options"))


def _dialect_of(backend) -> str:
    """The dialect a backend selector (``"cuda:1"``, ``"relay"``) or a dialect name is written in.
    No backend named and none installed: the default dialect. An unknown name is an error."""
    from pygpgpu_core.selector import canonical_backend
    if backend is None:
        try:
            backend = registry.default_backend_name()
        except GPGPUError:
            return DEFAULT_DIALECT
    name = canonical_backend(str(backend).split(":")[0])
    if name in DIALECTS:          # a dialect's name (each built-in backend is named for its dialect)
        return name
    try:
        found = registry.get_backend(name)
    except GPGPUError as exc:
        try:
            return dialect_for(name).name         # a dialect of a target from the pygpgpu.targets entry points
        except UnknownDialect:
            raise UnknownDialect(f"cannot tell which dialect to write for {backend!r}: {exc}; name a backend or a "
                                 f"dialect ({', '.join(dialect_names())})") from None
    return _backend_dialect(found)


def _backend_dialect(backend) -> str:
    """A backend's ``dialect`` attribute, checked against the registry (an unknown one raises)."""
    name = getattr(backend, "dialect", None)
    if not name:
        raise UnknownDialect(f"backend {getattr(backend, 'name', backend)!r} declares no dialect: the Backend "
                             "protocol's 'dialect' attribute names the source the translator writes for it")
    return dialect_for(name).name


class _KernelDecorator(Protocol):
    """What ``kernel(backend=...)`` returns: the decorator proper."""
    def __call__(self, func: Callable[Q, object], /) -> KernelFunction[Q]: ...


@overload
def kernel(func: Callable[P, object], *, backend: str | None = None, default_float: Any = None,
           debug: bool = False, fastmath: bool = False, contract: bool = True) -> KernelFunction[P]: ...
@overload
def kernel(func: None = None, *, backend: str | None = None, default_float: Any = None,
           debug: bool = False, fastmath: bool = False, contract: bool = True) -> _KernelDecorator: ...


def kernel(func: Callable[P, object] | None = None, *, backend: str | None = None, default_float: Any = None,
           debug: bool = False, fastmath: bool = False, contract: bool = True) -> KernelFunction[P] | _KernelDecorator:
    """Turn a plain Python function over arrays and scalars into a GPU kernel.

    Use it bare or with options::

        @kernel
        def saxpy(x, y, out, alpha):
            for i in range(out.shape[0]):      # the launch domain: one work item per i
                out[i] = alpha * x[i] + y[i]

        @kernel(backend="cuda", default_float=np.float64, debug=True)
        def ...

    Calling the result translates the function for the argument types of that call (numpy or
    ``pygpgpu.numpy`` arrays, numpy scalars, Python numbers, vectors) into OpenCL C, CUDA C++ or
    HIP C++, compiles it once, caches both on disk, and runs it; numpy arrays are copied in and
    back only as far as the kernel reads and writes them. Helpers the kernel calls stay plain,
    undecorated Python.

    Calling forms::

        saxpy(x, y, out, 2.0)                      # default device: cuda, then hip, then opencl
        saxpy["opencl"](x, y, out, 2.0)            # a backend, or a device: "cuda:1", "hip:gfx90a"
        saxpy[(1 << 20, 256)](x, y, out, 2.0)      # a work size: (total work items, per group)
        saxpy["cuda"][(1 << 20, 256)](...)         # both, in either order
        saxpy.inspect(x, y, out, 2.0, backend="cuda").source   # the generated source, no device needed

    The launch domain comes from the outermost ``for i in range(n)`` (or ``np.ndindex(shape)``,
    ``np.ndenumerate(a)``, ``enumerate(a)``), from ``gpu.work_size(a)`` in a gid-style kernel, or
    from a bracket; without any of these a call raises instead of guessing.

    :param func: the function (when used as ``@kernel`` without parentheses).
    :param backend: selector the kernel runs on when a call names none (``"cuda"``,
        ``"opencl:1"``...); default: ``$PYGPGPU_BACKEND``, else the first backend with a device.
    :param default_float: the type of a Python float on its own, ``np.float32`` (default) or
        ``np.float64``.
    :param debug: check every array subscript on the device and raise ``IndexError`` naming the
        array, index, shape and Python line for the first one out of bounds (also switched on
        for kernels defined while ``PYGPGPU_BOUNDS_CHECK=1``).
    :param fastmath: build with the backend's fast-math options (``--use_fast_math`` on CUDA,
        ``-cl-fast-relaxed-math`` on OpenCL, ``-ffast-math`` on HIP): float division, sqrt
        and transcendentals become approximate, denormals may flush to zero, and the
        compiler may reorder float arithmetic and assume no NaN or infinity
        (``math.isnan`` may then answer False). Default: exact, IEEE-rounded as numpy.
    :param contract: ``False`` forbids fusing ``a * b + c`` into one fused multiply-add (CUDA's
        ``--fmad=false``, OpenCL's ``FP_CONTRACT OFF``, HIP's ``-ffp-contract=off``), so float
        results match numpy's bit for bit wherever each operation is correctly rounded. By
        default compilers may contract, as CUDA, CuPy and Numba do: the last bit can differ.
    :returns: a :class:`KernelFunction`.
    :raises SyntaxError: at the first call, for Python the translator does not accept, pointing
        at your file and line and saying what to write instead.
    """
    if func is None:
        def decorate(f: Callable[Q, object]) -> KernelFunction[Q]:
            return KernelFunction(f, backend=backend, default_float=default_float, debug=debug, fastmath=fastmath,
                                  contract=contract)
        return decorate
    return KernelFunction(func, backend=backend, default_float=default_float, debug=debug, fastmath=fastmath,
                          contract=contract)
