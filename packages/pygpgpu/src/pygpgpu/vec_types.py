"""``pygpgpu.vec_types``: the 50 vector types (float4, int3, ...) and ``funcs``."""
from pygpgpu_core import funcs  # noqa: F401
from pygpgpu_core.vec_types import *  # noqa: F401,F403
