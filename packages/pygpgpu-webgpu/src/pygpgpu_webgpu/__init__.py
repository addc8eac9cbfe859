"""PyGPGPU's WebGPU backend: WGSL compute shaders through wgpu-py, on Vulkan, Metal or D3D12.

A plug-in like any third party's: registered in the ``pygpgpu.backends`` entry-point group as
``webgpu``, built on the public protocols of ``pygpgpu_core`` only. ``import pygpgpu_webgpu``
loads nothing; wgpu-py is imported when devices are first asked for. Handwritten ``.wgsl``
files import as modules after ``import pygpgpu_webgpu.wgslimport`` (docs/webgpu.md).
"""
from __future__ import annotations

from ._backend import WebGPUBackend

__all__ = ["WebGPUBackend", "backend", "load"]

backend = WebGPUBackend()


def load(path, name=None):   # noqa: ANN001 (documented in _files.load)
    """Import the ``.wgsl`` file at ``path`` as a module (see :func:`pygpgpu_webgpu._files.load`)."""
    from ._files import load as _load
    return _load(path, name)
