"""Backend discovery through the ``pygpgpu.backends`` entry-point group, and device lookup.

Discovery is lazy (nothing is scanned until a device is asked for) and cached. A backend
that fails to import or to enumerate is recorded with its reason and warned about once; it
only raises when the user asked for that backend by name.
"""
from __future__ import annotations

import os
import threading
import warnings
from typing import Any, Sequence

from .errors import BackendUnavailable, DeviceNotFound, GPGPUError
from .selector import Selector, canonical_backend, parse_selector

__all__ = [
    "PROBE_ORDER",
    "backend_names",
    "get_backend",
    "backend_devices",
    "available_devices",
    "get_device",
    "select_device",
    "default_backend_name",
    "diagnostics",
    "reset_registry",
]

ENTRY_POINT_GROUP = "pygpgpu.backends"
PROBE_ORDER = ("cuda", "hip", "opencl")

_lock = threading.RLock()
_entry_points: "dict[str, Any] | None" = None
_backends: dict[str, Any] = {}
_devices: dict[str, list] = {}
_failures: dict[str, str] = {}
_warned: set[str] = set()


def _scan() -> "dict[str, Any]":
    global _entry_points
    if _entry_points is None:
        from importlib.metadata import entry_points

        found = {}
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
        _warned.clear()


def backend_names() -> list[str]:
    """Installed backends: the built-in probe order first, then third-party ones alphabetically."""
    names = set(_scan())
    return [n for n in PROBE_ORDER if n in names] + sorted(names - set(PROBE_ORDER))


def _record_failure(name: str, reason: str, *, warn: bool = True) -> None:
    _failures[name] = reason
    if warn and name not in _warned:
        _warned.add(name)
        warnings.warn(f"pygpgpu backend {name!r} is unavailable: {reason}", RuntimeWarning, stacklevel=4)


def get_backend(name: str) -> Any:
    """The backend object registered as ``name`` (or an alias). Raises BackendUnavailable."""
    name = canonical_backend(name)
    with _lock:
        if name in _backends:
            return _backends[name]
        eps = _scan()
        if name not in eps:
            known = ", ".join(backend_names()) or "none"
            hint = {
                "opencl": "pip install 'pygpgpu[opencl]'",
                "cuda": "pip install 'pygpgpu[cuda]'",
                "hip": "pip install 'pygpgpu[hip]'",
            }.get(name, "install a package that registers it in the 'pygpgpu.backends' entry-point group")
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


def default_backend_name() -> str:
    """``$PYGPGPU_BACKEND`` if set, else the first of cuda -> hip -> opencl (then others) with a device."""
    forced = os.environ.get("PYGPGPU_BACKEND", "").strip()
    if forced:
        return canonical_backend(forced)
    for name in backend_names():
        if _try_devices(name):
            return name
    reasons = "; ".join(f"{n}: {r}" for n, r in diagnostics().items()) or "no backend package is installed"
    raise DeviceNotFound(
        "<default>", [], f"no backend has a device ({reasons}). Install a GPU driver, or PoCL for the CPU: "
        "apt-get install pocl-opencl-icd ocl-icd-libopencl1"
    )


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


def select_device(selector: "str | Selector | None" = None) -> Any:
    """Resolve a selector to a Device. ``None`` means the default backend's first device."""
    if selector is None:
        return backend_devices(default_backend_name())[0]
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


def get_device(selector: "str | None" = None) -> Any:
    """The Device for ``selector`` (e.g. ``"opencl:0"``, ``"cuda"``, ``"geforce:1"``)."""
    return select_device(selector)
