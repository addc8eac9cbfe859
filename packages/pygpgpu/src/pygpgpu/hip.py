"""``pygpgpu.hip``: the hip backend's low-level API (re-exported from pygpgpu_hip)."""
from pygpgpu_hip import *  # noqa: F401,F403
