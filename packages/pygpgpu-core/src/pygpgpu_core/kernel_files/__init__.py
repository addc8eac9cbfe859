"""Handwritten ``.cl`` / ``.cu`` / ``.hip`` kernel files imported as Python modules.

``install("cl")`` (what ``from pygpgpu import climport`` does) lets ``import vecadd`` load
``vecadd.cl`` from ``sys.path``. The module holds a kernel object per ``__kernel`` /
``extern "C" __global__`` function (bracket syntax: ``m.vecadd["opencl:0"][(n, 256)](...)``),
a ctypes class per struct with the device layout, the integer/float ``#define`` and enum
constants, and ``__kernels__``. A ``.pyi`` stub is written beside the file, and parsed
metadata plus compiled binaries go to ``__clcache__/`` (``__cucache__/``, ``__hipcache__/``).
``load(path)`` imports one file by path without touching ``sys.path``.
"""
from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Iterable

from ..cdecl import normalise_options
from ._args import ArgumentRangeError
from ._lengths import LengthOutOfRange
from ._finder import KernelFileFinder, KernelFileLoader, install, installed, uninstall
from ._kernel import FileKernel, parse_work_size
from ._module import KINDS, Kind, KernelFileWarning
from ._structs import CStruct, CUnion, CVector, numpy_dtype, struct_ctype, vector_ctype
from ._stub import stub_text, write_stub

__all__ = [
    "install",
    "uninstall",
    "installed",
    "load",
    "FileKernel",
    "CStruct",
    "CUnion",
    "CVector",
    "ArgumentRangeError",
    "LengthOutOfRange",
    "KINDS",
    "Kind",
    "KernelFileWarning",
    "KernelFileFinder",
    "KernelFileLoader",
    "parse_work_size",
    "struct_ctype",
    "vector_ctype",
    "numpy_dtype",
    "stub_text",
    "write_stub",
]


def load(path: "str | Path", kind: "str | None" = None, name: "str | None" = None, *,
         options: "str | Iterable[str] | None" = None):
    """Import the kernel file at ``path`` as a module (kind from the extension unless given).

    ``options``: build options for the device compiler (``["-DBLOCK=16"]`` or ``"-DBLOCK=16"``),
    after the file's own ``// pygpgpu: options ...`` lines; their ``-D``/``-U`` also decide the
    file's ``#if`` branches for the declarations, and they are part of the compiled binary's
    cache key. The module is not added to ``sys.modules``; call again after editing the file to
    reload."""
    path = Path(path).resolve()
    if kind is None:
        kind = next((k for k, v in KINDS.items() if v.extension == path.suffix), None)
        if kind is None:
            raise ValueError(f"cannot tell the kernel language of {path.name}; pass kind= one of "
                             f"{', '.join(repr(k) for k in KINDS)}")
    if kind not in KINDS:
        raise ValueError(f"unknown kernel file kind {kind!r}; expected one of {', '.join(KINDS)}")
    k = KINDS[kind]
    if not path.is_file():
        raise FileNotFoundError(f"no kernel file at {path}")
    modname = name or path.stem
    loader = KernelFileLoader(modname, str(path), k, normalise_options(options))
    spec = importlib.util.spec_from_file_location(modname, str(path), loader=loader)
    assert spec is not None, "a spec with a loader given"
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module
