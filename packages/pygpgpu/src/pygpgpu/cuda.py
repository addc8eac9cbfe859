"""``pygpgpu.cuda``: the cuda backend's low-level API (re-exported from pygpgpu_cuda)."""
from pygpgpu_cuda import *  # noqa: F401,F403
