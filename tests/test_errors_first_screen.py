"""What a newcomer sees first when something goes wrong: the "no device" error (one short line, then
one line per backend with its fix first), translation errors that end at the user's line (all the
translator's frames only under PYGPGPU_DEBUG), the NVRTC line of ``pygpgpu info``, and the message
for a vector where a scalar belongs (five vector names are also numpy's scalar names)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import traceback

import numpy as np
import pytest

from pygpgpu.vec import int8
from pygpgpu_core.errors import BackendUnavailable
from pygpgpu_translate import kernel
from pygpgpu_translate._source import KernelTypeError


def _nesting(text: str) -> int:
    depth = deepest = 0
    for ch in text:
        depth += (ch == "(") - (ch == ")")
        deepest = max(deepest, depth)
    return deepest


_NO_DEVICE = """
    import json, warnings
    warnings.simplefilter("ignore")
    import numpy as np
    from pygpgpu import kernel, DeviceNotFound

    @kernel
    def copy(x, out):
        for i in range(out.shape[0]):
            out[i] = x[i]

    x = np.ones(4, np.float32)
    try:
        copy(x, x)
        print(json.dumps(None))
    except DeviceNotFound as exc:
        print(json.dumps(str(exc)))
"""


def test_no_device_error_is_a_short_line_then_one_fix_first_line_per_backend(tmp_path):
    script = tmp_path / "nodevice.py"
    script.write_text(textwrap.dedent(_NO_DEVICE))
    env = dict(os.environ, PYGPGPU_OPENCL_LIB="/nonexistent/libOpenCL.so.1",
               PYGPGPU_CUDA_LIB="/nonexistent/libcuda.so.1", PYGPGPU_HIP_LIB="/nonexistent/libamdhip64.so")
    env.pop("PYGPGPU_BACKEND", None)
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=300,
                          check=False, cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    message = json.loads(proc.stdout.strip().splitlines()[-1])
    assert message is not None, "no device expected with every driver library missing"
    lines = message.splitlines()
    assert len(lines[0]) <= 80 and "no backend has a device" in lines[0], lines[0]
    assert "<default>" not in message
    by_backend = {ln.split(":", 1)[0].strip(): ln for ln in lines[1:] if ln.startswith("  ") and ":" in ln}
    for name in ("cuda", "hip", "opencl"):
        assert name in by_backend, message
        assert _nesting(by_backend[name]) <= 2, by_backend[name]
    # the fix first, what went wrong after it
    cuda = by_backend["cuda"]
    assert cuda.index("PYGPGPU_CUDA_LIB") < cuda.index("could not be loaded"), cuda
    opencl = by_backend["opencl"]
    assert opencl.index("apt-get install") < opencl.index("cannot load libOpenCL"), opencl
    assert "/nonexistent/libOpenCL.so.1: /nonexistent/libOpenCL.so.1" not in opencl   # the path once


def test_nvrtc_not_found_is_one_line_with_each_clause_once(monkeypatch):
    pathfinder = pytest.importorskip("cuda.pathfinder")
    from pygpgpu_cuda import _nvrtc

    def not_found(name):
        # the shape cuda-pathfinder 1.9 raises: a clause per search step, then a newline and attachments
        raise pathfinder.DynamicLibNotFoundError(
            'Failure finding "libnvrtc.so.13 or libnvrtc.so.12": No such file: libnvrtc.so.13 or libnvrtc.so.12, '
            "No such file: libnvrtc.so.13 or libnvrtc.so.12\n")

    monkeypatch.setattr(pathfinder, "load_nvidia_dynamic_lib", not_found)
    with pytest.raises(BackendUnavailable) as info:
        _nvrtc._locate()
    reason = info.value.reason
    assert "\n" not in reason, repr(reason)
    assert reason.count("No such file: libnvrtc.so.13 or libnvrtc.so.12") == 1, reason
    assert "nvidia-cuda-nvrtc" in info.value.fix


def _bad_string(x, out):
    for i in range(out.shape[0]):
        out[i] = x[i] + "s"


def _translator_frames(exc: BaseException) -> list[str]:
    return [f.filename for f in traceback.extract_tb(exc.__traceback__) if "pygpgpu_translate" in f.filename
            and not f.filename.endswith("_kernel.py")]


def test_translation_error_shows_the_users_line_not_the_translators_frames(backend, monkeypatch):
    monkeypatch.delenv("PYGPGPU_DEBUG", raising=False)
    k = kernel(_bad_string)
    x = np.ones(4, np.float32)
    with pytest.raises(SyntaxError) as info:
        k[backend](x, x)
    assert _translator_frames(info.value) == []
    assert len(traceback.extract_tb(info.value.__traceback__)) <= 3
    shown = "".join(traceback.format_exception(info.value))
    assert 'out[i] = x[i] + "s"' in shown and __file__ in shown


def test_pygpgpu_debug_keeps_the_full_traceback(backend, monkeypatch):
    monkeypatch.setenv("PYGPGPU_DEBUG", "1")
    k = kernel(_bad_string)
    x = np.ones(4, np.float32)
    with pytest.raises(SyntaxError) as info:
        k[backend](x, x)
    assert len(_translator_frames(info.value)) >= 3


def _vector_for_scalar(out):
    for i in range(out.shape[0]):
        out[i] = int8(1)      # pygpgpu.vec.int8: the 8-wide vector, not numpy's scalar


def test_vector_where_a_scalar_belongs_names_the_clash_with_numpy(backend):
    k = kernel(_vector_for_scalar)
    out = np.zeros(4, np.int8)
    with pytest.raises(KernelTypeError) as info:
        k[backend](out)
    text = str(info.value)
    assert "np.int8" in text and "pygpgpu.vec.int8" in text and "8 x int32" in text, text
    assert "out[i] = int8(1)" in text      # the user's line, quoted
    assert _translator_frames(info.value) == []
