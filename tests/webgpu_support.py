"""The WebGPU device of the webgpu tests, or a skip that says why there is none (pygpgpu-webgpu
not installed, wgpu-py missing, no Vulkan/Metal/D3D12 adapter). ``PYGPGPU_REQUIRE_DEVICES=webgpu``
(CI, after installing lavapipe) turns those skips into failures."""
from __future__ import annotations

import importlib.util

from pygpgpu_core import registry
from pygpgpu_core.errors import GPGPUError

from conftest import skip_no_device


def webgpu_device():
    if importlib.util.find_spec("pygpgpu_webgpu") is None:
        skip_no_device("webgpu", "pygpgpu-webgpu is not installed in this environment "
                                 "(pip install -e packages/pygpgpu-webgpu, or make webgpu-setup)")
    try:
        devices = registry.backend_devices("webgpu")
    except GPGPUError as exc:
        skip_no_device("webgpu", f"no WebGPU adapter here: {exc}")
    return devices[0]
