"""Programs (NVRTC-compiled, disk-cached CUBIN/PTX, loaded modules) and their kernels."""
from __future__ import annotations

import time
from typing import Sequence

from pygpgpu_core.backend.driver import DriverKernel, DriverProgram
from pygpgpu_core.backend.driver.module import KernelInfo
from pygpgpu_core.cache import DiskCache, cache_key
from pygpgpu_core.logs import get_logger, log_build

from . import __version__
from ._cubin import entry_names, image_problem, is_cubin
from ._nvrtc import compile_with_log, nvrtc_version

__all__ = ["Program", "Kernel", "build_binary"]

_CACHE = DiskCache("cuda")
logger = get_logger("cuda")


def build_binary(source: str, arch: str, options: Sequence[str], name: str, *, use_cache: bool = True
                 ) -> tuple[bytes, str, bool]:
    """``(image, log, cache_hit)``: the CUBIN/PTX for ``arch``, from the disk cache when possible.

    The key holds everything that changes the output: source, options, arch, NVRTC version,
    driver version and package version.
    """
    from ._driver import driver, driver_version

    drv = driver_version() if driver.calls is not None else None
    key = cache_key("cuda-module", source, tuple(options), name, arch, nvrtc_version(), drv, __version__)
    if use_cache:
        image = _CACHE.get(key, ".cubin")
        if image is not None:
            logger.debug("binary cache hit: %s for %s (key %s)", name, arch, key)
            return image, "", True
    logger.debug("binary cache miss: compiling %s for %s with NVRTC (key %s)", name, arch, key)
    started = time.perf_counter()
    image, log = compile_with_log(source, arch, options, name=name or "kernel.cu")
    log_build(logger, name or "kernel.cu", arch, time.perf_counter() - started, key)
    _CACHE.put(key, image, ".cubin")
    return image, log, False


class Kernel(DriverKernel):
    """One ``__global__`` function. ``launch`` is the convenient path; ``launcher`` the fast one."""

    dynamic_shared_default = 48 * 1024  # dynamic shared memory above this needs an opt-in attribute


class Program(DriverProgram):
    """A CUDA C++ source compiled with NVRTC for the device's exact ``sm_XY`` and loaded as a module."""

    default_name = "kernel.cu"
    kernel_class = Kernel
    bad_image_codes = frozenset({200, 209, 218, 222})  # invalid image / no binary for GPU / PTX too new

    def _build(self, source: str, options: Sequence[str], name: str, use_cache: bool) -> tuple[bytes, str, bool]:
        return build_binary(source, self.context.device.arch, options, name, use_cache=use_cache)

    def _image_problem(self, image: bytes) -> "str | None":
        return image_problem(image)

    def _kernels_of(self, image: bytes) -> "dict[str, KernelInfo]":
        return {name: KernelInfo(name) for name in entry_names(image)}

    def _binary_kind(self, image: bytes) -> str:
        return "cubin" if is_cubin(image) else "ptx"
