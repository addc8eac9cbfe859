"""Kernel objects of imported kernel files: bracket syntax, argument binding, launch.

``k(args)``, ``k["opencl:1"](args)``, ``k[(n, 256)](args)``, ``k[(n, 256)]["opencl:0"](args)``:
brackets chain in any order and pick the device (a selector of the file's backend family) and
the work size ``(global, local)`` with total-work semantics. Without a work size the launch
covers the first array argument's element count; a given local size rounds global up to a
multiple of it, so a kernel must compare its index against the real length.
"""
from __future__ import annotations

import inspect
import logging
from typing import Any, Callable

from .. import registry
from ..errors import GPGPUError
from ..logs import get_logger, logged_launcher
from ..selector import Selector, canonical_backend, parse_selector
from . import _args
from ._args import CallState, arg_type, converter_for
from ._lengths import bounds_check_enabled, check_lengths, length_checks
from ._names import python_names
from ._pickling import reduce_kernel

__all__ = ["FileKernel", "parse_work_size"]


def _dims(value: Any, what: str) -> "tuple[int, ...] | None":
    if value is None:
        return None
    if isinstance(value, bool):
        raise TypeError(f"{what} must be an int or a tuple of ints, got a bool")
    if isinstance(value, int) or hasattr(value, "__index__") and not isinstance(value, (tuple, list)):
        value = (value,)
    try:
        dims = tuple(int(v.__index__()) for v in value)
    except (TypeError, AttributeError):
        raise TypeError(f"{what} must be an int or a tuple of up to 3 ints, got {value!r}") from None
    if not 1 <= len(dims) <= 3 or any(d < 0 for d in dims):
        raise ValueError(f"{what} must have 1 to 3 non-negative dimensions, got {dims}")
    return dims


def parse_work_size(config: Any) -> "tuple[tuple[int, ...] | None, tuple[int, ...] | None]":
    """``1024`` -> global only; ``(1024, 256)`` -> (global, local); ``((64, 64), (8, 8))`` -> 2-D;
    ``(None, 256)`` -> automatic global, local 256."""
    if isinstance(config, (tuple, list)):
        if len(config) == 2:
            g, l_ = config
            return _dims(g, "the global work size"), _dims(l_, "the local work size")
        if len(config) == 1:
            return _dims(config[0], "the global work size"), None
        raise ValueError(f"a work size is total or (total, per_group), e.g. k[(1024, 256)] or "
                         f"k[((64, 64), (8, 8))]; got {config!r}")
    return _dims(config, "the global work size"), None


def _is_device(obj: Any) -> bool:
    return hasattr(obj, "context") and hasattr(obj, "selector") and not isinstance(obj, str)


class FileKernel:
    """One kernel of an imported kernel file (``module.vecadd``)."""

    def __init__(self, decl, module_state, selector: Any = None, work: Any = None):
        self._decl = decl
        self._state = module_state
        self._selector = selector
        self._work = work  # (global, local) or None
        self.__name__ = decl.name
        self.__qualname__ = decl.name
        self.__doc__ = f"{decl.prototype}\n\nDefined at {decl.file}:{decl.line}."
        self._keywords = python_names([p.name for p in decl.params])
        """The keyword of each parameter: its C name, ``in_`` for ``in`` (see ``_names``)."""
        self.__signature__ = inspect.Signature(
            [inspect.Parameter(k, inspect.Parameter.POSITIONAL_OR_KEYWORD) for k in self._keywords])

    # ---- introspection -----------------------------------------------------------------
    @property
    def name(self) -> str:
        return self._decl.name

    @property
    def prototype(self) -> str:
        """The C prototype, e.g. ``__kernel void vecadd(__global const float* a, ...)``."""
        return self._decl.prototype

    @property
    def params(self) -> list:
        """The parsed parameters (``cdecl.Param``: name, C type, access)."""
        return list(self._decl.params)

    @property
    def access(self) -> "dict[str, str]":
        """Parameter name -> ``read`` (upload only), ``readwrite`` (upload + read back), ``local``, ``value``."""
        return {p.name: p.access for p in self._decl.params}

    def __repr__(self) -> str:
        extra = []
        if self._selector is not None:
            extra.append(f"device={self._selector!r}")
        if self._work is not None:
            extra.append(f"work={self._work}")
        tail = f" [{', '.join(extra)}]" if extra else ""
        return f"<kernel {self.prototype} from {self._state.path.name}{tail}>"

    def __reduce__(self) -> tuple:
        return reduce_kernel(self)       # by reference: the file's path, the name, the brackets

    # ---- brackets ----------------------------------------------------------------------
    def __getitem__(self, config: Any) -> "FileKernel":
        selector, work = self._selector, self._work
        items = config if isinstance(config, tuple) and any(isinstance(c, str) or _is_device(c) for c in config) \
            else (config,)
        for item in items:
            if isinstance(item, str) or _is_device(item):
                selector = item
            else:
                work = parse_work_size(item)
        return type(self)(self._decl, self._state, selector, work)

    # ---- call --------------------------------------------------------------------------
    def _bind(self, args: tuple, kwargs: dict) -> list:
        params = self._decl.params
        if len(args) > len(params) or (not kwargs and len(args) != len(params)):
            raise TypeError(f"kernel {self.name!r} takes {len(params)} argument{'s' if len(params) != 1 else ''} "
                            f"but {len(args)} were given; its C prototype is: {self.prototype}")
        values = list(args)
        if kwargs:
            for p, keyword in zip(params, self._keywords):
                if p.name != keyword and p.name in kwargs:
                    raise TypeError(f"kernel {self.name!r} got an unexpected argument {p.name!r} (a Python keyword: "
                                    f"pass it as {keyword}=...); its C prototype is: {self.prototype}")
            for keyword in self._keywords[len(args):]:
                if keyword not in kwargs:
                    raise TypeError(f"kernel {self.name!r} is missing argument {keyword!r}; its C prototype is: "
                                    f"{self.prototype}")
                values.append(kwargs.pop(keyword))
            if kwargs:
                name = next(iter(kwargs))
                dup = name in self._keywords
                raise TypeError(f"kernel {self.name!r} got {'multiple values for' if dup else 'an unexpected'} "
                                f"argument {name!r}; its C prototype is: {self.prototype}")
        return values

    def _device(self, values: list) -> Any:
        state = self._state
        if self._selector is None:
            for v in values:  # a resident array decides, when it lives on this file's backend family
                dev = getattr(v, "device", None) if getattr(v, "buffer", None) is not None else None
                if dev is not None and state.same_family(dev):
                    return dev
        return state.device(self._selector)

    def __call__(self, *args: Any, **kwargs: Any) -> None:
        values = self._bind(args, kwargs)
        device = self._device(values)
        plan = self._state.plan(self._decl, device)
        if plan.lengths:     # PYGPGPU_BOUNDS_CHECK=1: a length larger than its arrays is refused
            check_lengths(self.name, plan.lengths, values)
        st = CallState(device, plan.context)
        try:
            launch_args = [conv(v, st) for conv, v in zip(plan.converters, values)]
            global_size, local_size = self._work if self._work is not None else (None, None)
            if global_size is None:
                if st.count is None:
                    raise TypeError(f"kernel {self.name!r}: no array argument to take the work size from; give it in "
                                    f"brackets, e.g. {self.name}[(n, 256)](...)")
                global_size = (st.count,)
            if local_size is not None:
                if len(local_size) != len(global_size):
                    raise ValueError(f"kernel {self.name!r}: local size {local_size} and global size {global_size} "
                                     "have different numbers of dimensions")
                if any(x == 0 for x in local_size):
                    raise ValueError(f"kernel {self.name!r}: a local size must be positive, got {local_size}")
                global_size = tuple(-(-g // l_) * l_ for g, l_ in zip(global_size, local_size))
            if all(g > 0 for g in global_size):
                plan.launch(global_size, local_size, launch_args)
            for view, copy, written in st.views:
                if written:
                    view[...] = copy      # a device copy, queued after the launch
            for buf, host, target in st.readback:
                buf.read(host)
                _args.record_transfer("d2h", host.nbytes)
                if target is not host:
                    target[...] = host
            if st.temps and not st.readback:
                plan.context.synchronize()  # temporaries must outlive the launch
        finally:
            for buf in st.temps:
                try:
                    buf.close()
                except GPGPUError:
                    pass


class LaunchPlan:
    """Everything a warm call needs for one (kernel, device): handle, converters, launcher."""

    __slots__ = ("name", "context", "kernel", "converters", "_launcher", "_arg_types", "lengths")

    def __init__(self, decl, program: Any, context: Any):
        self.name = decl.name
        self.context = context
        try:
            self.kernel = program.kernel(decl.name)
        except LookupError:
            # PoCL renames a kernel that shadows an OpenCL builtin (``step`` -> ``_cl_step``)
            try:
                self.kernel = program.kernel(f"_cl_{decl.name}")
            except LookupError:
                raise LookupError(f"the compiled program has no kernel {decl.name!r}") from None
        self.converters = [converter_for(decl.name, decl.prototype, p) for p in decl.params]
        self._arg_types = [arg_type(p) for p in decl.params]
        self._launcher: "Callable[[Any, Any, Any], None] | None" = None
        self.lengths = length_checks(decl) if bounds_check_enabled() else ()

    def launch(self, global_size, local_size, args) -> None:
        launcher = self._launcher
        if launcher is None:
            make = getattr(self.kernel, "launcher", None)
            launcher = make(self._arg_types) if make is not None else self.kernel.launch
            if get_logger("launch").isEnabledFor(logging.DEBUG):   # decided once, as for @kernel
                launcher = logged_launcher(launcher, self.name, self.context.device.selector)
            self._launcher = launcher
        launcher(global_size, local_size, args)


def resolve_family_selector(selector: Any, backend: str, dialect: str, path_name: str) -> Any:
    """The Selector for ``selector`` within the backends speaking ``dialect``."""
    if selector is None:
        return Selector(backend=backend)
    sel = parse_selector(selector, set(registry.backend_names()))
    if sel.backend is None:
        return Selector(backend, sel.index, sel.match, sel.nth)
    if canonical_backend(sel.backend) != backend:
        other = registry.get_backend(sel.backend)
        if getattr(other, "dialect", None) != dialect:
            raise ValueError(f"{path_name} is {dialect} source and cannot run on the {sel.backend!r} backend; "
                             f"choose a {backend} device, e.g. '{backend}:0'")
    return sel
