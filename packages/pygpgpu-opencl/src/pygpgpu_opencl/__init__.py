"""pygpgpu-opencl: see the project README."""

__version__ = "0.1.0"
