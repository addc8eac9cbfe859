"""Backend discovery through the ``pygpgpu.backends`` entry-point group, and device lookup.

Discovery is lazy (nothing is scanned until a device is asked for) and cached. A backend
that fails to import or to enumerate is recorded with its reason and warned about once; it
only raises when the user asked for that backend by name.
"""
from __future__ import annotations

import os
import threading
from typing import Any, Sequence

from . import logs
from .builtin_backends import BUILTIN_BACKENDS
from .errors import BackendUnavailable, DeviceNotFound, GPGPUError, PyGPGPUWarning
from .protocols import Device
from .scoped_device import scoped_device
from .selector import Selector, canonical_backend, parse_selector

__all__ = [
    "PROBE_ORDER",
    "backend_names",
    "known_backend_names",
    "get_backend",
    "backend_devices",
    "available_devices",
    "get_device",
    "select_device",
    "default_backend_name",
    "env_selector",
    "diagnostics",
    "reset_registry",
]

ENTRY_POINT_GROUP = "pygpgpu.backends"
PROBE_ORDER = tuple(b.name for b in BUILTIN_BACKENDS)    # cuda, hip, opencl

_lock = threading.RLock()
_entry_points: "dict[str, Any] | None" = None
_backends: dict[str, Any] = {}
_devices: dict[str, list] = {}
_failures: dict[str, str] = {}
_fixes: dict[str, tuple[str, str]] = {}     # backend -> (problem, fix), when the backend said how to fix it
_warned: set[str] = set()


def _scan() -> "dict[str, Any]":
    global _entry_points
    if _entry_points is None:
        from importlib.metadata import entry_points

        found: dict[str, Any] = {}
        for ep in entry_points(group=ENTRY_POINT_GROUP):
            found.setdefault(canonical_backend(ep.name), ep)
        _entry_points = found
    return _entry_points


def reset_registry() -> None:
    """Forget every cached backend, device list and failure (tests; after installing a backend)."""
    global _entry_points
    with _lock:
        _entry_points = None
        _backends.clear()
        _devices.clear()
        _failures.clear()
        _fixes.clear()
        _warned.clear()


def backend_names() -> list[str]:
    """Installed backends: the built-in probe order first, then third-party ones alphabetically."""
    names = set(_scan())
    return [n for n in PROBE_ORDER if n in names] + sorted(names - set(PROBE_ORDER))


def known_backend_names() -> list[str]:
    """Every backend name a user may mean: the built-ins in probe order, installed or not (a
    missing one is named so that the error can say how to install it), then registered plug-ins
    alphabetically. The names the CLI accepts and the cache namespaces come from here."""
    return list(PROBE_ORDER) + [n for n in backend_names() if n not in PROBE_ORDER]


def alias_words() -> list[str]:
    """The aliases of the built-in backends (``ocl``, ``cu``...), for messages that list them."""
    return [word for b in BUILTIN_BACKENDS for word in b.aliases]


def install_hint(backend: str) -> str:
    """How to add a built-in backend: its pip extra, installed from the wheels of this repository
    (the name ``pygpgpu`` on the public index is an unrelated project, so never from there)."""
    return (f"add the pip extra 'pygpgpu[{backend}]' from the wheels built in the PyGPGPU repository "
            f"(README, Install): pip install --no-index --find-links dist 'pygpgpu[{backend}]'")


class BackendWarning(PyGPGPUWarning, RuntimeWarning):
    """An installed backend plug-in is broken: it failed to load or to list its devices."""


def _record_failure(name: str, reason: str, *, warn: bool = True) -> None:
    _failures[name] = reason
    if warn and name not in _warned:
        _warned.add(name)
        logs.warn(f"pygpgpu backend {name!r} is unavailable: {reason}", BackendWarning)


def get_backend(name: str) -> Any:
    """The backend object registered as ``name`` (or an alias). Raises BackendUnavailable."""
    name = canonical_backend(name)
    with _lock:
        if name in _backends:
            return _backends[name]
        eps = _scan()
        if name not in eps:
            known = ", ".join(backend_names()) or "none"
            if name in PROBE_ORDER:
                hint = install_hint(name)
            else:
                hint = "install a package that registers it in the 'pygpgpu.backends' entry-point group"
            raise BackendUnavailable(name, f"no such backend is installed (installed: {known}); {hint}")
        if name in _failures:
            raise BackendUnavailable(name, _failures[name])
        try:
            backend = eps[name].load()
        except Exception as exc:  # a broken plug-in must never take the host down
            _record_failure(name, f"loading entry point {eps[name].value!r} raised {type(exc).__name__}: {exc}")
            raise BackendUnavailable(name, _failures[name]) from exc
        _backends[name] = backend
        return backend


def backend_devices(name: str) -> list:
    """The devices of one backend. Raises BackendUnavailable with the recorded reason."""
    name = canonical_backend(name)
    with _lock:
        if name in _devices:
            return _devices[name]
        backend = get_backend(name)
        if name in _failures:
            raise BackendUnavailable(name, _failures[name])
        try:
            devices = list(backend.devices())
        except BackendUnavailable as exc:
            # a missing driver or device is normal on most machines: recorded, not warned
            _record_failure(name, exc.reason, warn=False)
            if getattr(exc, "fix", ""):
                _fixes[name] = (exc.problem, exc.fix)
            raise
        except Exception as exc:
            _record_failure(name, f"enumerating devices raised {type(exc).__name__}: {exc}")
            raise BackendUnavailable(name, _failures[name]) from exc
        _devices[name] = devices
        return devices


def _try_devices(name: str) -> list:
    try:
        return backend_devices(name)
    except GPGPUError:
        return []


def available_devices() -> list[str]:
    """Every usable device as a ``"backend:index"`` string, e.g. ``['cuda:0', 'opencl:0']``."""
    return [d.selector for name in backend_names() for d in _try_devices(name)]


def diagnostics() -> dict[str, str]:
    """Backend name -> "ok (N devices)" or the reason it is unavailable."""
    out = {}
    for name in backend_names():
        devs = _try_devices(name)
        out[name] = f"ok ({len(devs)} device{'s' if len(devs) != 1 else ''})" if devs else _failures.get(name, "no devices")
    return out


ENV_VAR = "PYGPGPU_BACKEND"
_ENV_SYNTAX = (
    f"Set {ENV_VAR} to what k[...] takes: a backend ('opencl', 'cuda', 'hip' or an alias), 'backend:index' "
    "('opencl:1'), 'backend:name-part' ('opencl:nvidia') or a name part ('geforce'); or unset it"
)


def _env_value() -> str:
    return os.environ.get(ENV_VAR, "").strip()


def _env_selector(value: str) -> Selector:
    try:
        return parse_selector(value, set(backend_names()))
    except ValueError as exc:
        raise ValueError(f"environment variable {ENV_VAR}={value!r} is not a device selector: {exc}. "
                         f"{_ENV_SYNTAX}.") from None


def env_selector() -> "Selector | None":
    """``$PYGPGPU_BACKEND`` parsed (a ValueError naming the variable when it is malformed), or
    None when it is unset."""
    value = _env_value()
    return _env_selector(value) if value else None


def _env_error(value: str, exc: GPGPUError) -> GPGPUError:
    """``exc`` as raised for ``$PYGPGPU_BACKEND``: the same type (handlers keep working), with a
    message that names the variable, its value and what is available."""
    available = available_devices()
    if isinstance(exc, BackendUnavailable):
        cause = exc.reason
        err: GPGPUError = BackendUnavailable(exc.backend, exc.reason)
    elif isinstance(exc, DeviceNotFound):
        cause = exc.detail or "no device matches it"
        err = DeviceNotFound(value, available, exc.detail)
    else:
        cause = str(exc)
        err = GPGPUError()
    message = (f"environment variable {ENV_VAR}={value!r} selects no usable device: {cause}. "
               f"Available devices: {', '.join(available) or 'none'}. {_ENV_SYNTAX}.")
    err.args = (message,)
    return err


def _env_device(value: str) -> Any:
    """The device ``$PYGPGPU_BACKEND`` selects; errors name the variable."""
    sel = _env_selector(value)
    try:
        if sel.backend is None and sel.match is None:
            # an index alone counts in the first backend with a device, as k["1"] does without the variable
            return _pick(sel, backend_devices(_probe_backend_name()), value)
        return select_device(sel)
    except GPGPUError as exc:
        raise _env_error(value, exc) from None


def _backend_of(device: Any) -> str:
    return canonical_backend(device.selector.split(":", 1)[0])


def default_backend_name() -> str:
    """The backend of ``$PYGPGPU_BACKEND`` if set (any selector, e.g. ``opencl:nvidia``), else the
    first of cuda -> hip -> opencl (then others) with a device."""
    value = _env_value()
    if value:
        sel = _env_selector(value)
        if sel.backend is not None:
            # named: no probing, so k.inspect() on a compile-only machine still gets that dialect
            return sel.backend
        return _backend_of(_env_device(value))
    return _probe_backend_name()


def _probe_backend_name() -> str:
    """The first of cuda -> hip -> opencl (then others) with a device; ``$PYGPGPU_BACKEND`` aside."""
    for name in backend_names():
        if _try_devices(name):
            return name
    if not backend_names():
        raise _no_device("no backend package is installed (pygpgpu alone has none).", [_first_install_line()])
    raise _no_device("no backend has a device. The likely fix, backend by backend:", _backend_fix_lines())


def _first_install_line() -> str:
    """What to install when no backend is: the built-in that runs without a GPU, then the others."""
    cpu = next(b for b in BUILTIN_BACKENDS if b.cpu_runtime)
    hint = install_hint(cpu.name)
    others = " and ".join(f"'pygpgpu[{b.name}]'" for b in BUILTIN_BACKENDS if b is not cpu)
    return f"  {hint[:1].upper()}{hint[1:]} ({cpu.cpu_runtime}); the other extras are {others}."


def _backend_fix_lines() -> list[str]:
    """One line per backend: what to do first, then what went wrong (after "why:")."""
    lines = []
    for name, state in diagnostics().items():
        problem, fix = _fixes.get(name, (state, ""))
        lines.append(f"  {name}: {fix}. Why: {problem}" if fix else f"  {name}: {problem}")
    # a backend that already spoke about PoCL (PoCL failed to start, or how to install it) is not
    # contradicted with a generic "install PoCL"
    if "pocl" not in "".join(lines).lower():
        lines.append("  Without a GPU, PoCL runs OpenCL on the CPU: apt-get install pocl-opencl-icd ocl-icd-libopencl1")
    return lines


def _no_device(first_line: str, lines: list[str]) -> DeviceNotFound:
    """The error for "no device at all": one short line, then one line per way out."""
    err = DeviceNotFound("default", [], first_line)
    err.args = ("\n".join([first_line, *lines, "  `pygpgpu info` shows every backend's state."]),)
    return err


def _matches(device: Any, text: str) -> bool:
    hay = " ".join(str(getattr(device, a, "")) for a in ("name", "vendor", "arch")).lower()
    return text in hay


def _pick(sel: Selector, devices: Sequence[Any], original: str) -> Any:
    if sel.index is not None:
        if sel.index < len(devices):
            return devices[sel.index]
        raise DeviceNotFound(original, available_devices(), f"index {sel.index} is out of range")
    if sel.match is None:
        if devices:
            return devices[0]
        raise DeviceNotFound(original, available_devices())
    hits = [d for d in devices if _matches(d, sel.match)]
    if sel.nth < len(hits):
        return hits[sel.nth]
    detail = f"{len(hits)} device(s) match {sel.match!r}" if hits else f"nothing matches {sel.match!r}"
    raise DeviceNotFound(original, available_devices(), detail)


def select_device(selector: "str | Selector | None" = None) -> Device:
    """Resolve a selector to a Device. ``None`` means the device of the innermost ``with
    pygpgpu.device(...)`` / ``with dev:`` block of this thread, else the device ``$PYGPGPU_BACKEND``
    selects, else the first device of the first backend (cuda -> hip -> opencl) that has one."""
    if selector is None:
        scoped = scoped_device()
        if scoped is not None:
            return scoped
        value = _env_value()
        if value:
            return _env_device(value)
        return backend_devices(_probe_backend_name())[0]
    sel = selector if isinstance(selector, Selector) else parse_selector(selector, set(backend_names()))
    original = str(selector)
    if sel.backend is not None:
        return _pick(sel, backend_devices(sel.backend), original)
    if sel.index is not None:
        return _pick(sel, backend_devices(default_backend_name()), original)
    everything = [d for name in backend_names() for d in _try_devices(name)]
    if sel.match is not None and not any(_matches(d, sel.match) for d in everything):
        raise DeviceNotFound(
            original, available_devices(),
            f"{sel.match!r} is neither an installed backend ({', '.join(backend_names()) or 'none'}; "
            "aliases ocl, cu, rocm, amd) nor part of any device's name, vendor or arch",
        )
    return _pick(sel, everything, original)


def get_device(selector: "str | None" = None) -> Device:
    """The Device for ``selector`` (e.g. ``"opencl:0"``, ``"cuda"``, ``"geforce:1"``)."""
    return select_device(selector)
