"""Moved to :mod:`pygpgpu_core.backend.handles`; importing this old name gives that very module."""
import sys
from typing import TYPE_CHECKING

from .backend import handles as _moved

if TYPE_CHECKING:
    from .backend.handles import *  # noqa: F403  (what type checkers see under the old name)

sys.modules[__name__] = _moved
