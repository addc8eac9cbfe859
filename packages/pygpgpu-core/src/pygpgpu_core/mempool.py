"""Moved to :mod:`pygpgpu_core.backend.mempool`; importing this old name gives that very module."""
import sys
from typing import TYPE_CHECKING

from .backend import mempool as _moved

if TYPE_CHECKING:
    from .backend.mempool import *  # noqa: F403  (what type checkers see under the old name)

sys.modules[__name__] = _moved
