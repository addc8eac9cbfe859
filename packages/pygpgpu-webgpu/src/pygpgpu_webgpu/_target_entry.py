"""The entry point ``pygpgpu.targets: wgsl``. Core reads every target (kernel-file kinds, cache
namespaces) without importing the translator, so the dialect is named by reference and lives in
:mod:`._target`. WGSL has no C kernel files (``.wgsl`` files have their own loader, ``_files``),
so no ``Language``."""
from __future__ import annotations

from pygpgpu_core.targets import Target

TARGET = Target("wgsl", "pygpgpu_webgpu._target:WGSL")
