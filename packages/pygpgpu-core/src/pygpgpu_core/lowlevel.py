"""Moved to :mod:`pygpgpu_core.backend.lowlevel`; importing this old name gives that very module."""
import sys

from .backend import lowlevel as _moved

sys.modules[__name__] = _moved
