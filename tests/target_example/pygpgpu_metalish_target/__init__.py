"""An example target plug-in: a Metal-like language, as docs/writing-a-backend.md#a-target-of-your-own
describes. It only renders (no runtime): tests/test_target_plugin.py checks the source it writes
and runs it on the host as C++. Everything comes from public names. The target object needs
only core, so that core reads its kernel-file language and cache namespace without importing
the translator; the dialect is named by reference and lives in :mod:`.dialect`.

What makes it unlike C: the thread's position is a kernel parameter the language fills in
(``uint3 pg_thread_position_in_grid [[thread_position_in_grid]]``), every launched parameter
carries its slot as an attribute (``[[buffer(i)]]``), scalars are passed by constant
reference, and ``device``, ``constant``, ``threadgroup`` and ``thread`` are keywords.
"""
from __future__ import annotations

from types import MappingProxyType

from pygpgpu_core.cdecl import Language
from pygpgpu_core.targets import Target

METALISH = Language(
    name="metalish", suffix="metal", long_bytes=8, long_long_reserved=False, vector_widths=(2, 3, 4),
    vector3_padded=True, vector_align_cap=0, kernel_words=frozenset({"kernel"}), kernels_need_extern_c=False,
    tags_are_type_names=True, attributes_after_brace=False,
    predefined=MappingProxyType({"__METAL_VERSION__": "300"}))

target = Target("metalish", "pygpgpu_metalish_target.dialect:Metalish", language=METALISH)
