"""Moved to :mod:`pygpgpu_core.backend.hostpin`; importing this old name gives that very module."""
import sys
from typing import TYPE_CHECKING

from .backend import hostpin as _moved

if TYPE_CHECKING:
    from .backend.hostpin import *  # noqa: F403  (what type checkers see under the old name)

sys.modules[__name__] = _moved
