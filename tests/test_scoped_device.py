"""A scoped default device: ``with pygpgpu.device("opencl:1"):`` and ``with dev:`` make that device the
default of kernels called without a selector, of gnp creation without ``device=`` and of
``get_device()``; blocks nest, restore on exit (also on an exception) and belong to one thread.

Which device a kernel ran on is seen through a gnp array of one device: a kernel on another device
refuses it ("lives on opencl:1, but the kernel runs on opencl:0"). Two devices come from PoCL
(``POCL_DEVICES="pthread pthread"``) in a child process."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import pygpgpu
import pygpgpu.numpy as gnp
from pygpgpu_core import registry
from pygpgpu_core.errors import GPGPUError
from pygpgpu_core.scoped_device import scoped_device
from pygpgpu_translate import kernel

from conftest import skip_no_device


def _add1(a, out):
    for i in range(out.shape[0]):
        out[i] = a[i] + 1


_TWO_DEVICES = """
    import json, threading
    import numpy as np
    import pygpgpu
    import pygpgpu.numpy as gnp
    from pygpgpu import kernel

    @kernel
    def add1(a, out):
        for i in range(out.shape[0]):
            out[i] = a[i] + 1

    def where(k, a, out):
        # the device k ran on: the one whose arrays it accepted
        try:
            k(a, out)
            return "ran:" + str(out.get().tolist())
        except ValueError as exc:
            return "refused: " + str(exc).split("but the kernel runs on ")[1].split(";")[0]

    x = np.arange(4, dtype=np.float32)
    a1, o1 = gnp.asarray(x, device="opencl:1"), gnp.zeros(4, np.float32, device="opencl:1")
    got = {}
    got["outside"] = [where(add1, a1, o1), gnp.zeros(2).device.selector, pygpgpu.get_device().selector]
    with pygpgpu.device("opencl:1") as d1:
        got["bound"] = d1.selector
        got["scoped"] = [where(add1, a1, o1), where(add1, a1, o1),      # twice: the warm (memo) path too
                         gnp.zeros(2).device.selector, gnp.arange(3).device.selector,
                         pygpgpu.get_device().selector, where(add1[(4, 1)], a1, o1)]
        seen = []
        t = threading.Thread(target=lambda: seen.append(gnp.zeros(2).device.selector))
        t.start(); t.join()
        got["thread"] = seen
        with pygpgpu.get_device("opencl:0"):
            got["nested"] = [where(add1, a1, o1), gnp.zeros(2).device.selector]
        got["restored"] = [where(add1, a1, o1), gnp.zeros(2).device.selector]
        got["explicit"] = where(add1["opencl:0"], a1, o1)
    got["after"] = [where(add1, a1, o1), gnp.zeros(2).device.selector]
    try:
        with pygpgpu.device("opencl:1"):
            raise KeyError("body")
    except KeyError:
        pass
    got["after_raise"] = gnp.zeros(2).device.selector
    print(json.dumps(got))
"""


def test_scoped_device_steers_kernels_and_gnp_and_nests(tmp_path):
    try:
        devices = registry.backend_devices("opencl")
    except GPGPUError as exc:
        skip_no_device("opencl", f"no OpenCL device here: {exc}")
    if not any("portable computing language" in d.platform.name.lower() for d in devices):
        pytest.skip("PoCL is not installed here (two devices come from POCL_DEVICES)")
    script = tmp_path / "two_devices.py"
    script.write_text(textwrap.dedent(_TWO_DEVICES))
    env = dict(os.environ, POCL_DEVICES="pthread pthread", PYGPGPU_BACKEND="opencl")
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=300,
                          check=False, cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    ran = "ran:" + str((np.arange(4) + 1.0).tolist())
    assert got["outside"] == ["refused: opencl:0", "opencl:0", "opencl:0"]
    assert got["bound"] == "opencl:1"
    assert got["scoped"] == [ran, ran, "opencl:1", "opencl:1", "opencl:1", ran]
    assert got["thread"] == ["opencl:0"]                  # another thread keeps its own default
    assert got["nested"] == ["refused: opencl:0", "opencl:0"]
    assert got["restored"] == [ran, "opencl:1"]
    assert got["explicit"] == "refused: opencl:0"          # a selector in brackets wins over the scope
    assert got["after"] == ["refused: opencl:0", "opencl:0"]
    assert got["after_raise"] == "opencl:0"


def test_with_dev_runs_kernels_and_restores(backend):
    dev = registry.get_device(backend)
    k = kernel(_add1)
    x = np.arange(5, dtype=np.float32)
    assert scoped_device() is None
    with dev as bound:
        assert bound is dev and scoped_device() is dev and registry.get_device() is dev
        with pygpgpu.device(dev) as inner:          # nesting the same device
            assert inner is dev
            a = gnp.asarray(x)
            out = gnp.zeros_like(a)
            k(a, out)                            # resident arrays of dev: accepted only on dev
            assert a.device is dev
        np.testing.assert_array_equal(out.get(), x + 1)
        assert scoped_device() is dev
    assert scoped_device() is None


def test_threads_start_without_the_scope(backend):
    dev = registry.get_device(backend)
    seen = []
    with dev:
        t = threading.Thread(target=lambda: seen.append(scoped_device()))
        t.start()
        t.join()
    assert seen == [None]


def test_device_takes_a_selector_or_a_device_and_nothing_else(backend):
    with pytest.raises(TypeError, match="selector string"):
        pygpgpu.device(3)
    with pytest.raises(pygpgpu.DeviceNotFound):
        pygpgpu.device(f"{backend.split(':')[0]}:99")
