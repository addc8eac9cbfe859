"""What backend packages build on; not user API (that stays at the top of ``pygpgpu_core``).

* :mod:`.library`: a vendor library loaded on first use (override variable, candidate names,
  install hint, prototypes, fork safety) and its call table.
* :mod:`.errors`: a backend's status codes turned into :class:`~pygpgpu_core.errors.DriverError`.
* :mod:`.args` and :mod:`.launcher`: kernel arguments packed for the pointer-array launch ABI
  (``void** kernelParams``) that CUDA and HIP share, and the generated warm-path launcher.
* :mod:`.elf`: sections, symbols and notes of an ELF image (CUBIN, AMDGPU code object).
* :mod:`.driver`: the context, stream, buffer, program and kernel classes of a CUDA-like driver,
  written once over a per-backend call table (see ``docs/writing-a-backend.md``).

Importing this package imports none of them, and nothing here loads a vendor library.

The arrows run one way: the kit builds on core (errors, protocols, forking, the disk cache
:mod:`pygpgpu_core.cache`, the memory pool :mod:`pygpgpu_core.mempool`), and nothing in core
outside this package imports or names it (``tests/test_import_direction.py``): what core's own
parts share with backends lives in core.
"""
from __future__ import annotations
