"""``import pygpgpu_webgpu.wgslimport`` lets ``import name`` load ``name.wgsl`` from ``sys.path``."""
from ._files import WGSLFinder, install, load, uninstall

__all__ = ["WGSLFinder", "install", "load", "uninstall", "finder"]

finder = install()
