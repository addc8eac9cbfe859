"""What ``pygpgpu info`` reports about OpenCL: the ICD loader that was loaded, the driver (ICD)
files it reads, and each platform with its version. Loads libOpenCL; never raises."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pygpgpu_core.libinfo import library_path, probe

from ._diagnose import registered_icds
from ._library import lib

if TYPE_CHECKING:
    from ._device import OpenCLBackend

__all__ = ["describe"]


def describe(backend: "OpenCLBackend") -> dict[str, Any]:
    where, icds = registered_icds()
    return {
        "library": probe(lambda: library_path(lib().cdll)),
        "icd_vendors": where,
        "icd_files": icds,
        "platforms": probe(lambda: [f"{p.name}, {p.version} ({p.vendor})" for p in backend.platforms()]),
    }
