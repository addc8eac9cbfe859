"""Moved to :mod:`pygpgpu_core.backend.hostpin`; importing this old name gives that very module."""
import sys

from .backend import hostpin as _moved

sys.modules[__name__] = _moved
