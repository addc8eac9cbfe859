"""PYGPGPU_REQUIRE_DEVICES and PYGPGPU_REQUIRE_COMPILERS turn skips for a missing device or tool into
failures (conftest.skip_no_device / skip_no_compiler). Checked in a child pytest run, and by
reading the test sources: a device-absence skip that bypasses the helpers would stay green."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pygpgpu_core import registry
from pygpgpu_core.errors import GPGPUError

HERE = Path(__file__).resolve().parent

CHILD_TESTS = '''
from conftest import first_device, skip_no_compiler


def test_first_device():
    first_device("{backend}")


def test_kernel_backends(backend):
    assert backend


def test_tool():
    skip_no_compiler("a made-up compiler", "not installed")
'''


def _backend_without_devices():
    for name in registry.backend_names():
        try:
            if not registry.backend_devices(name):
                return name
        except GPGPUError:
            return name
    pytest.skip(f"every backend {registry.backend_names()} has a device here: none can go missing")


def _child(tmp_path, backend, **env):
    shutil.copy(HERE / "conftest.py", tmp_path / "conftest.py")
    (tmp_path / "test_child.py").write_text(CHILD_TESTS.format(backend=backend))
    run_env = {k: v for k, v in os.environ.items()
               if k not in ("PYGPGPU_REQUIRE_DEVICES", "PYGPGPU_REQUIRE_COMPILERS", "PYGPGPU_TEST_BACKENDS")}
    run_env.update(env)
    proc = subprocess.run([sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider", str(tmp_path)],
                          cwd=tmp_path, env=run_env, capture_output=True, text=True, timeout=300, check=False)
    return proc.stdout + proc.stderr


def _outcome(text, test):
    """The verbose outcome word of ``test`` (PASSED, SKIPPED, FAILED, ERROR) in the child's output."""
    for line in text.splitlines():
        head, _, rest = line.partition(f"test_child.py::{test} ")
        if _ and not head.strip() and rest.split():
            return rest.split()[0]
    raise AssertionError(f"{test} not reported:\n{text[-3000:]}")


def test_missing_device_skips_unless_required(tmp_path):
    missing = _backend_without_devices()
    text = _child(tmp_path, missing)
    assert _outcome(text, "test_first_device") == "SKIPPED", text[-2000:]
    text = _child(tmp_path, missing, PYGPGPU_REQUIRE_DEVICES=missing)
    assert _outcome(text, "test_first_device") == "FAILED", text[-2000:]
    assert f"PYGPGPU_REQUIRE_DEVICES={missing} requires a {missing} device" in text
    # the kernel tests run the required backend although it has no device: they fail for it
    assert _outcome(text, f"test_kernel_backends[{missing}]") in ("FAILED", "ERROR"), text[-2000:]


def test_missing_tool_skips_unless_required(tmp_path):
    missing = _backend_without_devices()
    assert _outcome(_child(tmp_path, missing), "test_tool") == "SKIPPED"
    assert _outcome(_child(tmp_path, missing, PYGPGPU_REQUIRE_COMPILERS="1"), "test_tool") == "FAILED"


def test_unknown_required_backend_is_a_usage_error(tmp_path):
    text = _child(tmp_path, "opencl", PYGPGPU_REQUIRE_DEVICES="opencl,cdua")
    assert "PYGPGPU_REQUIRE_DEVICES names unknown backends ['cdua']" in text


# a skip for a missing device or tool written with plain pytest.skip / skipif escapes both variables
# (skips for a missing *feature* of a present device or tool, e.g. "no OpenCL GPU", are fine)
BYPASS = re.compile(r"pytest\.(skip\(|mark\.skipif\().*?(no (OpenCL|CUDA|HIP|AMD)( device| runtime|\b(?! GPU))|"
                    r"lists no device|needs an AMD GPU|no device|"
                    r"(oclgrind|NVRTC|hiprtc|clang|hipcc)\b.{0,40}(not installed|unavailable|missing)|"
                    r"no (oclgrind|NVRTC|hiprtc|clang|hipcc)\b)", re.IGNORECASE)


def test_device_and_tool_skips_go_through_the_conftest_helpers():
    offenders = []
    for path in sorted(HERE.glob("test_*.py")):
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if BYPASS.search(line):
                offenders.append(f"{path.name}:{n}: {line.strip()}")
    assert not offenders, "use conftest.skip_no_device / skip_no_compiler:\n" + "\n".join(offenders)
