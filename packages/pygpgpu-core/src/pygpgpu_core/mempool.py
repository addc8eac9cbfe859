"""Moved to :mod:`pygpgpu_core.backend.mempool`; importing this old name gives that very module."""
import sys

from .backend import mempool as _moved

sys.modules[__name__] = _moved
