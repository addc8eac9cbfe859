"""The one place that imports wgpu-py: on first use, never at ``import pygpgpu_webgpu``."""
from __future__ import annotations

from typing import Any

from pygpgpu_core.errors import BackendUnavailable

__all__ = ["wgpu", "INSTALL_FIX", "DRIVER_FIX"]

INSTALL_FIX = "pip install 'pygpgpu[webgpu]' (or pip install wgpu)"
DRIVER_FIX = ("WebGPU runs on Vulkan, Metal or Direct3D 12: on Linux install a Vulkan driver (the GPU vendor's, or "
              "lavapipe on the CPU: apt-get install mesa-vulkan-drivers libvulkan1); macOS has Metal and Windows "
              "D3D12 built in")

_module: Any = None


def wgpu() -> Any:
    """The ``wgpu`` module, imported now; BackendUnavailable saying how to install it."""
    global _module
    if _module is None:
        try:
            import wgpu as module
            import wgpu.backends.wgpu_native  # noqa: F401 (selects the native backend, wgpu-native in the wheel)
        except ImportError as exc:
            raise BackendUnavailable("webgpu", f"wgpu-py is not installed ({exc})", fix=INSTALL_FIX) from exc
        _module = module
    return _module


def native_version() -> str:
    """wgpu-native's version (the library inside the wheel) as text."""
    try:
        from wgpu.backends.wgpu_native import lib_version_info
        return ".".join(str(v) for v in lib_version_info)
    except Exception:          # an older wheel without it: the Python package's version still keys the cache
        return "unknown"
