"""Conveniences the backends' low-level ``Kernel`` classes share: the ``k[(global, local)]``
bracket, numpy arrays passed where buffers are (copied in, read back afterwards), and finding a
kernel's symbol in a compiled C++ module (CUDA, HIP)."""
from __future__ import annotations

from typing import Any, Callable, Iterable, Sequence

import numpy as np

from ..host_aliases import earlier_same

__all__ = ["split_work_bracket", "bracket_call", "read_back", "launch_with_host_arrays", "resolve_kernel_name",
           "kernel_symbol", "kernel_attribute"]


def split_work_bracket(config: Any, kernel_name: str, selector: str) -> "tuple[Any, Any]":
    """``(global_size, local_size)`` from ``k[n]``, ``k[(n,)]`` or ``k[(global, local)]``."""
    if isinstance(config, str):
        raise TypeError(f"kernel {kernel_name!r} is already bound to {selector}; a bracket here takes the work "
                        "size, e.g. k[(n, 256)] or k[n]")
    if isinstance(config, tuple) and len(config) == 2:
        return config
    if isinstance(config, tuple) and len(config) == 1:
        return config[0], None
    return config, None


def bracket_call(kernel: Any, config: Any) -> Callable[..., None]:
    """What ``kernel[config]`` returns: a function launching ``kernel`` with that work size."""
    global_size, local_size = split_work_bracket(config, kernel.name, kernel.context.device.selector)

    def call(*args: Any) -> None:
        kernel.launch(global_size, local_size, args)

    return call


def launch_with_host_arrays(kernel: Any, global_size: Any, local_size: Any, args: Sequence[Any], *,
                            kind_of_value: Callable[[Any, "int | None"], Any], buffer_type: "type[Any]",
                            adapt: "Callable[[Any], Any] | None" = None) -> None:
    """``Kernel.launch`` of the backends whose launcher takes argument kinds (CUDA, HIP).

    ``adapt(value)`` applies the backend's own conversions and refusals first; then numpy
    arrays become temporary device buffers (read back after the launch if writable; one array
    passed twice is one buffer), buffers of
    ``buffer_type`` must live on the kernel's device, and ``kind_of_value(value, param_size)``
    names each argument's kind for ``kernel.launcher(kinds)``."""
    args = list(args)
    context = kernel.context
    sizes = kernel.param_sizes
    staged: "list[tuple[np.ndarray, Any]]" = []
    staged_at: "list[int]" = []       # the argument each staged array was first passed as
    kinds = []
    try:
        p = 0
        for i, value in enumerate(args):
            try:
                if adapt is not None:
                    value = adapt(value)
                if isinstance(value, np.ndarray):
                    # The same array twice is one buffer (host_aliases); nothing tells which
                    # parameters the kernel writes, so a writable array counts as written.
                    k = earlier_same(value, value.flags.writeable,
                                     [(host, host.flags.writeable, f"argument {staged_at[j]}")
                                      for j, (host, _) in enumerate(staged)])
                    if k is None:
                        staged.append((value, context.buffer_from_host(value)))
                        staged_at.append(i)
                        k = len(staged) - 1
                    value = staged[k][1]
                elif isinstance(value, buffer_type) and value.context.device is not context.device:
                    raise ValueError(f"it lives on {value.context.device.selector}, the kernel on "
                                     f"{context.device.selector}")
                args[i] = value
                size = sizes[p] if sizes is not None and p < len(sizes) else None
                kind = kind_of_value(value, size)
            except (TypeError, ValueError) as exc:
                if type(exc) not in (TypeError, ValueError):
                    raise                 # a pygpgpu error (ClosedError, ...) says what it is itself
                raise type(exc)(f"argument {i} of kernel {kernel.name!r}: {exc}") from None
            kinds.append(kind)
            if not (isinstance(kind, str) and kind == "local"):
                p += 1        # dynamic local memory is not a kernel parameter
        kernel.launcher(kinds)(global_size, local_size, args)
        if staged:
            context.synchronize()
            read_back(staged)
    finally:
        for _, buf in staged:
            buf.close()


def read_back(staged: "Iterable[tuple[np.ndarray, Any]]") -> None:
    """Copy each temporary buffer back into its writable host array (any memory layout)."""
    for host, buf in staged:
        if not host.flags.writeable:
            continue  # a read-only array cannot have been meant as an output
        if host.flags.c_contiguous:
            buf.read(host)
        else:
            tmp = np.empty_like(host, order="C")
            buf.read(tmp)
            host[...] = tmp


def _mangled_prefix(name: str) -> str:
    parts = name.split("::")
    if len(parts) == 1:
        return f"_Z{len(name)}{name}"
    return "_ZN" + "".join(f"{len(p)}{p}" for p in parts) + "E"


def resolve_kernel_name(name: str, symbols: "list[str]") -> "str | list[str]":
    """The symbol for a source-level ``name`` (``"vecadd"``, ``"ns::f"``) among a module's
    ``symbols``, or the list of candidates when none or several match (a template instantiated
    more than once). C++ names are matched by their Itanium-mangled prefix."""
    if name in symbols:
        return name
    prefix = _mangled_prefix(name)
    hits = [s for s in symbols if s.startswith(prefix) and not s[len(prefix):len(prefix) + 1].isdigit()]
    return hits[0] if len(hits) == 1 else hits


def kernel_symbol(name: str, symbols: "list[str]", where: str) -> str:
    """The symbol of kernel ``name``; a KeyError listing what ``where`` (e.g. "CUDA program
    'x'") defines when there is none, or the instantiations when the name is ambiguous."""
    if not symbols:
        return name          # nothing listed (an opaque binary): let the driver look it up
    symbol = resolve_kernel_name(name, symbols)
    if isinstance(symbol, list):
        detail = (f"it matches several instantiations ({', '.join(symbol)}): pass the mangled name"
                  if symbol else f"kernels in it: {', '.join(symbols) or 'none'}")
        raise KeyError(f"no kernel named {name!r} in {where}; {detail}")
    return symbol


def kernel_attribute(program: Any, name: str, ready: bool) -> Any:
    """``program.<name>`` as ``program.kernel(name)``, for a program's ``__getattr__`` (only
    reached for names that are not attributes); ``ready``: built far enough to look kernels up."""
    if name.startswith("_") or not ready:
        raise AttributeError(name)
    try:
        return program.kernel(name)
    except LookupError as exc:
        raise AttributeError(str(exc)) from None
