"""``pygpgpu.kernel``: the translator's public names (``from pygpgpu.kernel import KernelFunction``).

The top-level ``pygpgpu.kernel`` is the ``@kernel`` decorator. Importing this submodule
rebinds that attribute to the module, so the module itself is made callable and behaves
exactly like the decorator.
"""
import sys
import types

from pygpgpu_translate import *  # noqa: F401,F403
from pygpgpu_translate import kernel as _kernel

__all__ = [n for n in dir(sys.modules["pygpgpu_translate"]) if not n.startswith("_")]


class _DecoratorModule(types.ModuleType):
    def __call__(self, *args, **kwargs):
        return _kernel(*args, **kwargs)


sys.modules[__name__].__class__ = _DecoratorModule
