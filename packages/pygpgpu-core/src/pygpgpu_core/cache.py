"""Moved to :mod:`pygpgpu_core.backend.cache`; importing this old name gives that very module."""
import sys

from .backend import cache as _moved

sys.modules[__name__] = _moved
