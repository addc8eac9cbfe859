"""The hiprtc compiler identity (part of every HIP binary cache key) names the HIP runtime's version
when the runtime loads: a renamed module once made that part drop out silently."""
from __future__ import annotations

from conftest import skip_no_compiler


def test_the_hiprtc_identity_names_the_hip_runtime():
    from pygpgpu_hip import _driver, compiler

    try:
        runtime = _driver.format_version(_driver.runtime_version())
        compiler._identity_cache.pop("hiprtc", None)
        identity = compiler.compiler_identity("hiprtc")
    except Exception as exc:
        skip_no_compiler("hiprtc and the HIP runtime (libamdhip64)", exc)
    assert f"HIP runtime {runtime}" in identity
