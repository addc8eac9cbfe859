"""What ``pygpgpu info`` and ``pygpgpu.diagnostics()`` report: versions, every backend with its
libraries and devices (or the reason it is unavailable), the cache and the ``PYGPGPU_*`` settings.

Collecting loads every installed backend's vendor libraries (that is the point); nothing here
raises for a broken backend: its entry says why instead.
"""
from __future__ import annotations

import os
import platform
import sys
from typing import Any

__all__ = ["diagnostics", "format_report", "device_facts", "device_summary", "human_size", "DISTRIBUTIONS"]

DISTRIBUTIONS = ("pygpgpu", "pygpgpu-core", "pygpgpu-translate", "pygpgpu-opencl", "pygpgpu-cuda", "pygpgpu-hip")

# every Device has these (pygpgpu_core.protocols.Device) ...
_DEVICE_FIELDS = ("name", "vendor", "arch", "global_mem_size", "compute_units", "max_work_group_size",
                  "fp64", "fp16", "host_unified_memory")
# ... and a backend's devices may add these
_OPTIONAL_DEVICE_FIELDS = ("target", "compute_capability", "version", "driver_version", "local_mem_size",
                           "max_clock_mhz")


def _distribution_versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for dist in DISTRIBUTIONS:
        try:
            out[dist] = version(dist)
        except PackageNotFoundError:
            out[dist] = "not installed"
    return out


def _plain(value: Any) -> Any:
    """JSON-ready: tuples to lists, anything unusual to its string."""
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return str(value)


def device_facts(device: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"selector": device.selector}
    for field in _DEVICE_FIELDS:
        out[field] = _plain(getattr(device, field, None))
    for field in _OPTIONAL_DEVICE_FIELDS:
        if hasattr(device, field):
            out[field] = _plain(getattr(device, field))
    plat = getattr(device, "platform", None)
    if plat is not None and hasattr(plat, "name"):
        out["platform"] = plat.name
    return out


def _backend(name: str, status: str) -> dict[str, Any]:
    from pygpgpu_core import registry
    from pygpgpu_core.errors import GPGPUError
    from pygpgpu_core.libinfo import unavailable
    from pygpgpu_core.protocols import Describable, supports

    entry: dict[str, Any] = {"status": status, "available": False, "details": {}, "devices": []}
    try:
        backend = registry.get_backend(name)
    except GPGPUError:
        return entry  # the plug-in did not load: status says why
    if supports(backend, Describable):   # optional for third-party backends
        try:
            entry["details"] = _plain(backend.describe())
        except Exception as exc:  # a plug-in's own report must not break ours
            entry["details"] = {"describe": unavailable(exc)}
    try:
        devices = registry.backend_devices(name)
    except GPGPUError:
        devices = []
    entry["available"] = bool(devices)
    entry["devices"] = [device_facts(d) for d in devices]
    return entry


def diagnostics() -> dict[str, Any]:
    """Everything ``pygpgpu info`` prints, as a dict (``pygpgpu info --json`` prints the same).

    Keys: ``pygpgpu`` (version, where it was imported from, the version of each PyGPGPU
    distribution), ``python``, ``numpy``, ``backends`` (per installed backend: ``status`` — "ok (N
    devices)" or the reason it is unavailable —, ``available``, ``details`` — library paths and
    driver/compiler versions —, and ``devices`` with their selector and key properties),
    ``default_device``, ``cache`` (``pygpgpu.cache_info()``, plus ``problem`` when the disk cache
    is not in use), ``native_launcher`` (whether ``pygpgpu build-native`` built it) and ``environment`` (every ``PYGPGPU_*`` variable that is set).
    """
    import numpy as np

    import pygpgpu
    from pygpgpu_core import registry
    from pygpgpu_core.backend.native import status as native_status
    from pygpgpu_core.errors import GPGPUError
    from pygpgpu_core.libinfo import unavailable

    statuses = registry.diagnostics()
    backends = {name: _backend(name, status) for name, status in statuses.items()}
    try:
        default = registry.get_device().selector
    except (GPGPUError, ValueError) as exc:
        default = unavailable(exc)
    return {
        "pygpgpu": {"version": pygpgpu.__version__, "location": os.path.dirname(pygpgpu.__file__),
                    "distributions": _distribution_versions()},
        "python": {"version": platform.python_version(), "implementation": platform.python_implementation(),
                   "executable": sys.executable, "platform": platform.platform()},
        "numpy": {"version": np.__version__},
        "backends": backends,
        "default_device": default,
        "cache": cache_report(),
        "native_launcher": native_status(),
        "environment": {k: v for k, v in sorted(os.environ.items()) if k.startswith("PYGPGPU_")},
    }


def cache_report() -> "dict[str, Any]":
    """``pygpgpu.cache_info()``, with ``problem`` saying why when the disk cache is not in use."""
    from pygpgpu_core._cachedir import default_location, unsafe_reason
    from pygpgpu_core.cache import cache_info
    from pygpgpu_core.libinfo import unavailable

    try:
        cache: dict[str, Any] = cache_info()
    except OSError as exc:
        return {"path": None, "problem": unavailable(exc)}
    if cache["path"] is None:       # unsafe or unusable (a CacheWarning said so)
        folder = default_location()[0]
        cache["problem"] = f"{folder}: {unsafe_reason(folder) or 'it cannot be created or written'}"
    return cache


def cache_summary(cache: dict) -> str:
    """One line for ``pygpgpu_core.cache.cache_info()``: where, how much, the bound."""
    if cache.get("path") is None:
        return f"not in use ({cache.get('problem') or 'its folder is unsafe or unusable'})"
    limit = cache.get("limit")
    bound = f"limit {human_size(limit)}" if limit else "no size limit"
    return f"{cache['path']}  {human_size(cache['bytes'])} in {cache['entries']} entries ({bound})"


def human_size(nbytes: int) -> str:
    value = float(nbytes)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{nbytes} B"


def device_summary(d: dict[str, Any]) -> str:
    """One line: ``opencl:0  NVIDIA H200 (NVIDIA Corporation), arch sm_90, 132 CUs, 139.8 GiB, fp64``."""
    facts = [f"arch {d['arch']}", f"{d['compute_units']} CUs", human_size(d["global_mem_size"] or 0)]
    facts += [flag for flag in ("fp64", "fp16") if d.get(flag)]
    if d.get("host_unified_memory"):
        facts.append("host memory")
    where = f" [{d['platform']}]" if d.get("platform") else ""
    return f"{d['selector']:<10} {d['name']} ({d['vendor']}){where}, " + ", ".join(facts)


def _detail_lines(details: dict[str, Any], indent: str, status: str) -> list[str]:
    lines = []
    said = {f"unavailable: {status}"}   # a reason already printed is not repeated
    for key, value in details.items():
        label = key.replace("_", " ")
        if isinstance(value, str) and value in said:
            value = "unavailable (the reason above)"
        elif isinstance(value, str) and value.startswith("unavailable: "):
            said.add(value)
        if isinstance(value, dict):
            lines.append(f"{indent}{label}:" + ("" if value else " none"))
            lines += [f"{indent}  {k}: {v}" for k, v in value.items()]
        elif isinstance(value, list):
            lines.append(f"{indent}{label}:" + ("" if value else " none"))
            lines += [f"{indent}  {v}" for v in value]
        else:
            lines.append(f"{indent}{label}: {value}")
    return lines


def format_report(info: dict[str, Any]) -> str:
    """``diagnostics()`` as the text ``pygpgpu info`` prints."""
    pkg, py = info["pygpgpu"], info["python"]
    lines = [f"PyGPGPU {pkg['version']}  ({pkg['location']})"]
    lines.append("  " + ", ".join(f"{k} {v}" for k, v in pkg["distributions"].items()))
    lines.append(f"Python {py['version']} ({py['implementation']}, {py['executable']}) on {py['platform']}")
    lines.append(f"numpy {info['numpy']['version']}")
    lines.append("")
    lines.append("Backends (probe order)" if info["backends"] else "Backends: none installed")
    for name, b in info["backends"].items():
        lines.append(f"  {name}: {b['status']}")
        lines += _detail_lines(b["details"], "      ", b["status"])
        lines += [f"    {device_summary(d)}" for d in b["devices"]]
    lines.append(f"Default device: {info['default_device']}")
    lines.append("")
    lines.append("Cache: " + cache_summary(info["cache"]))
    lines.append("Native launcher: " + info["native_launcher"])
    env = info["environment"]
    lines.append("Environment:" + ("" if env else " no PYGPGPU_* variable is set"))
    lines += [f"  {k}={v}" for k, v in env.items()]
    return "\n".join(lines)
