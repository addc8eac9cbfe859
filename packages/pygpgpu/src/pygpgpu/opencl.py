"""``pygpgpu.opencl``: the opencl backend's low-level API (re-exported from pygpgpu_opencl)."""
from pygpgpu_opencl import *  # noqa: F401,F403
