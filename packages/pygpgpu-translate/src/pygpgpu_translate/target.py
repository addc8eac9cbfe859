"""The public extension API of the translator: everything a plug-in target needs.

A target is one object, :class:`Target` (``pygpgpu_core.targets``), registered in code with
:func:`register_target` or through the ``pygpgpu.targets`` entry-point group. Its ``dialect`` is
a :class:`Dialect`: subclass the closest built-in one (:class:`OpenCL`, :class:`CUDA`,
:class:`HIP`) and override what your language spells differently, including its reserved words
(``reserved_words``) and how a kernel is declared (:meth:`Dialect.kernel_signature`, told each
launched parameter as a :class:`KernelParam`, answering a :class:`KernelSignature`). See
docs/writing-a-backend.md#a-target-of-your-own. What the language cannot express, the dialect
refuses by raising :class:`KernelTypeError` (or a subclass) naming the construct; the translator
adds the user's file and line (the statement being written, the call that asked for a prelude
piece, or the kernel's ``def`` line for a parameter).
"""
from __future__ import annotations

from pygpgpu_core.cdecl import Language
from pygpgpu_core.targets import Target, target, target_names

from ._dialects import (CUDA, HIP, Dialect, KernelParam, KernelSignature, OpenCL, UnknownDialect, dialect_for,
                        dialect_names, register_dialect)
from ._source import KernelTypeError
from ._types import Scalar, Vector

__all__ = ["Target", "Language", "register_target", "target", "target_names", "Dialect", "OpenCL", "CUDA", "HIP",
           "KernelParam", "KernelSignature", "UnknownDialect", "dialect_for", "dialect_names", "register_dialect",
           "Scalar", "Vector", "KernelTypeError"]


def register_target(t: Target) -> Target:
    """Register target ``t`` (its kernel-file language and cache namespace in core) and its
    dialect at once, so the dialect's reserved words are known before the next translation."""
    from pygpgpu_core.targets import register_target as register_in_core
    from ._dialects import _resolve
    register_in_core(t)
    register_dialect(t.name, _resolve(t.dialect))
    return t
