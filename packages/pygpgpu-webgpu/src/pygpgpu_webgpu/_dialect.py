"""The ``pygpgpu.targets`` entry point ``wgsl``: what the translator finds when a ``@kernel``
function is asked to run on a webgpu device.

``@kernel`` functions do not translate to WGSL yet: WGSL declares variables, functions, casts and
buffers in other forms than C, which the translator's public surface cannot express today
(docs/webgpu.md). Loading the entry point raises, and the translator puts this message into its
``UnknownDialect`` error, so the user reads why and what runs instead."""
from __future__ import annotations

MESSAGE = ("@kernel functions do not translate to WGSL yet (pygpgpu-webgpu runs handwritten .wgsl files and "
           "device arrays' storage only). Run the kernel on another backend (k['opencl'], k['cuda'], k['hip']), or "
           "write the shader in WGSL and import it with pygpgpu_webgpu.wgslimport")


def __getattr__(name: str) -> object:
    raise NotImplementedError(MESSAGE)
