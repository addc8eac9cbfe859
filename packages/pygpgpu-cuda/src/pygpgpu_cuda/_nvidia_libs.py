"""Finding and switching off NVIDIA's math libraries (cuFFT, cuSOLVER; cuBLAS has its own copy in
``_cublas``): cuda-pathfinder's search first (NVIDIA's pip wheels, conda, CUDA_PATH), then the
dynamic loader's own search by name; ``PYGPGPU_<NAME>=0`` keeps pygpgpu from using one at all."""
from __future__ import annotations

import os
from typing import Callable

from pygpgpu_core.backend.library import LazyLibrary
from pygpgpu_core.errors import BackendUnavailable

__all__ = ["locator", "Availability"]


def locator(name: str, system_names: "list[str]") -> Callable[[], "list[str]"]:
    """The candidates of library ``name`` (cuda-pathfinder's name: "cufft", "cusolver")."""
    def locate() -> "list[str]":
        try:
            from cuda.pathfinder import load_nvidia_dynamic_lib
        except ImportError:
            return system_names
        try:
            return [load_nvidia_dynamic_lib(name).abs_path]
        except Exception:  # DynamicLibNotFoundError and friends: the loader may still know a system copy
            return system_names
    return locate


class Availability:
    """Whether a library may be used: not turned off by ``use_env=0`` (read on every call: tests
    switch it) and loadable (tried once; ``reason`` keeps why not)."""

    def __init__(self, library: LazyLibrary, use_env: str):
        self.library = library
        self.use_env = use_env
        self.reason: "str | None" = None

    def __call__(self) -> bool:
        if self.reason is not None or os.environ.get(self.use_env, "1") == "0":
            return False
        try:
            self.library()
        except BackendUnavailable as exc:
            self.reason = str(exc)
            return False
        return True
