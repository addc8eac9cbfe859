"""The one place the PyGPGPU version is written.

The six distributions are released together: every ``pyproject.toml`` reads this file
(hatch's dynamic version) and every package's ``__version__`` is imported from here.
Members pin each other to the same minor series (``pygpgpu-core==X.Y.*``); a test checks
those pins against this version.
"""

__version__ = "0.1.0"
