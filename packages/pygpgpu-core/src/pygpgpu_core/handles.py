"""Moved to :mod:`pygpgpu_core.backend.handles`; importing this old name gives that very module."""
import sys

from .backend import handles as _moved

sys.modules[__name__] = _moved
