"""The backends this project ships: the one table of their names in core.

Everything else core knows about backends comes from what is registered (the
``pygpgpu.backends`` entry points, :mod:`.registry`), so a plug-in appears wherever a built-in
does. This table holds only what registration cannot give, because it is needed while a
built-in is *not* installed: the order in which to try them when nothing is selected (CUDA, then
HIP, then OpenCL: a vendor's own API before the portable one), the short aliases users type in
selectors (``cl:0``, ``rocm``), and which names have a pip extra of this project
(``pygpgpu[cuda]``, named as the backend: ``registry.install_hint``).
"""
from __future__ import annotations

from dataclasses import dataclass

__all__ = ["BuiltinBackend", "BUILTIN_BACKENDS"]


@dataclass(frozen=True)
class BuiltinBackend:
    name: str
    """The registry name (the entry point's name, the cache namespace of its binaries)."""
    aliases: "tuple[str, ...]"
    """Other words a selector may use for it (lowercase)."""
    cpu_runtime: str = ""
    """How it runs without a GPU, when it can (OpenCL: PoCL); the extra recommended to a user
    who has no backend at all."""


BUILTIN_BACKENDS: "tuple[BuiltinBackend, ...]" = (     # in probe order
    BuiltinBackend("cuda", aliases=("cu", "nvidia")),
    BuiltinBackend("hip", aliases=("rocm", "amd")),
    BuiltinBackend("opencl", aliases=("ocl", "cl"), cpu_runtime="PoCL runs OpenCL on the CPU"),
)
