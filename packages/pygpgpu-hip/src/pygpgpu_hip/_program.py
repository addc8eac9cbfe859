"""Programs (hiprtc- or clang-compiled, disk-cached code objects loaded as ``hipModule_t``) and
their kernels: the driver kit's classes with what is HIP's own."""
from __future__ import annotations

from typing import TYPE_CHECKING, Sequence, cast

from pygpgpu_core.backend.driver import DriverKernel, DriverProgram
from pygpgpu_core.backend.driver.module import KernelInfo

from ._codeobject import code_object_problem, read_code_object
from .compiler import build_code_object

if TYPE_CHECKING:
    from ._device import Device

__all__ = ["Program", "Kernel"]


class Kernel(DriverKernel):
    """One kernel of a Program (a ``hipFunction_t``). ``launch`` is convenient; ``launcher`` fast.

    Its limits and parameter sizes come from the code object's metadata: ``hipModuleLaunchKernel``
    reads as many parameters as the kernel declares, whatever the caller passed."""

    float16_arguments = False  # float16 kernel arguments are not offered on HIP (use float32)


class Program(DriverProgram):
    """A code object compiled for the context's device target and loaded as a ``hipModule_t``."""

    default_name = "kernel.hip"
    kernel_class = Kernel
    bad_image_codes = frozenset({200, 209, 218})  # stale cache entry, or code built for another target

    def _build(self, source: str, options: Sequence[str], name: str, use_cache: bool) -> tuple[bytes, str, bool]:
        device = cast("Device", self.context.device)      # a HIP context's device: it has the target
        return build_code_object(source, device.target, options, name=name, use_cache=use_cache)

    def _image_problem(self, image: bytes) -> "str | None":
        return code_object_problem(image)

    def _kernels_of(self, image: bytes) -> "dict[str, KernelInfo]":
        return read_code_object(image).kernels

    def _binary_kind(self, image: bytes) -> str:
        return "code object"
