"""Moved to :mod:`pygpgpu_core.backend.worksize`; importing this old name gives that very module."""
import sys

from .backend import worksize as _moved

sys.modules[__name__] = _moved
