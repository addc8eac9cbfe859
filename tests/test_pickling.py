"""Pickling kernels, kernel methods, device arrays and devices (issue 19, item 1).

Kernels pickle by reference when importable (like functions), by value with their source
through cloudpickle otherwise (``__main__``, notebook cells, kernels made inside functions);
device arrays pickle as data + their device's selector; devices as their selector. Processes
that load the payloads run the kernels and the results are compared with numpy.
"""
from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import textwrap

import _mp_kernels as mk
import numpy as np
import pygpgpu.numpy as gnp
import pytest
from pygpgpu import kernel
from pygpgpu_core import pickling as core_pickling
from pygpgpu_core import registry


def _fresh_python(code: str, cwd, **env) -> str:
    """Run ``code`` in a new interpreter (no state shared with this one); its last stdout line."""
    full = dict(os.environ)
    full.pop("PYGPGPU_BACKEND", None)
    full.update(env)
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          cwd=str(cwd), env=full, timeout=240, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout.strip().splitlines()[-1]


# ---- kernels by reference ---------------------------------------------------------------------
def test_module_kernel_pickles_by_reference_and_runs(backend):
    x = np.linspace(-2, 2, 1000, dtype=np.float32)
    mk.scale[backend](x, np.empty_like(x), 3.0)         # compiled first: nothing of that may travel
    data = pickle.dumps(mk.scale)
    assert len(data) < 200, "a module-level kernel pickles as module + name, like a function"
    k = pickle.loads(data)
    assert k is mk.scale
    view = pickle.loads(pickle.dumps(mk.scale[backend]))
    out = np.empty_like(x)
    view(x, out, 3.0)
    np.testing.assert_allclose(out, mk.scale_host(x, 3.0), rtol=1e-6, atol=1e-6)   # FMA on the device


def test_kernel_method_pickles_with_its_instance(backend):
    m = mk.Model(512)
    m.weights[:] = np.arange(512, dtype=np.float32) % 7
    x = np.random.default_rng(1).standard_normal(512).astype(np.float32)
    m2, bound = pickle.loads(pickle.dumps((m, m.apply)))
    assert bound._bound_self is m2                     # one instance, its arrays with it
    np.testing.assert_array_equal(m2.weights, m.weights)
    out = np.empty_like(x)
    bound[backend](x, out)
    np.testing.assert_allclose(out, x * m.weights + np.float32(0.25), rtol=1e-6)


# ---- kernels by value -------------------------------------------------------------------------
def _triple(v):
    return v * 3


def test_kernel_defined_in_a_function_pickles_by_value(backend, monkeypatch):
    pytest.importorskip("cloudpickle")
    from pygpgpu_translate import _pickling

    # A process keeps one kernel per payload, so this test's other backend runs would hand back
    # the kernel they unpickled (and ran): unpickle here as a process that never saw this one.
    monkeypatch.setattr(_pickling, "_by_value", {})

    @kernel
    def local_kernel(x, out, add):
        for i in range(out.shape[0]):
            out[i] = _triple(x[i]) + add

    x = np.arange(100, dtype=np.int32)
    local_kernel[backend](x, np.empty_like(x), 1)
    with pytest.raises((pickle.PicklingError, AttributeError)):
        pickle.dumps(local_kernel.py_func)         # plain pickle cannot do a local function...
    data = pickle.dumps(local_kernel)
    assert b"LaunchPlan" not in data and b"_plans" not in data
    k = pickle.loads(data)                         # ...but the kernel carries it with cloudpickle
    assert k is not local_kernel and k.__qualname__ == local_kernel.__qualname__
    assert not k._plans and not k._translations     # caches are per process
    out = np.empty_like(x)
    k[backend](x, out, 5)
    np.testing.assert_array_equal(out, x * 3 + 5)
    assert pickle.loads(pickle.dumps(local_kernel)) is k    # one kernel object per payload here


def test_unimportable_kernel_without_cloudpickle_says_what_to_do(monkeypatch):
    @kernel
    def local_kernel(x, out):
        for i in range(out.shape[0]):
            out[i] = x[i]

    monkeypatch.setitem(sys.modules, "cloudpickle", None)     # import cloudpickle -> ImportError
    with pytest.raises(pickle.PicklingError, match="install cloudpickle"):
        pickle.dumps(local_kernel)
    assert pickle.loads(pickle.dumps(mk.scale)) is mk.scale  # by reference needs no cloudpickle


_MAIN_SCRIPT = """
import pickle, sys
import cloudpickle
import numpy as np
from pygpgpu import kernel

GAIN = 4.0

def helper(v):
    return v * GAIN - 1.0

@kernel
def main_kernel(x, out):
    for i in range(out.shape[0]):
        out[i] = helper(x[i])

class Scaler:
    def __init__(self, n):
        self.w = np.arange(n, dtype=np.float32)

    @kernel
    def apply(self, x, out):
        for i in range(out.shape[0]):
            out[i] = x[i] * self.w[i]

s = Scaler(64)
with open(sys.argv[1], "wb") as f:
    f.write(cloudpickle.dumps((main_kernel, s, s.apply)))
"""

_LOAD_AND_RUN = """
import json, pickle
import numpy as np
with open({path!r}, "rb") as f:
    k, s, bound = pickle.load(f)
x = np.linspace(-1, 1, 64, dtype=np.float32)
a = np.empty_like(x); k(x, a)
b = np.empty_like(x); bound(x, b)
c = np.empty_like(x); s.apply(x, c)
print(json.dumps([a.tolist(), b.tolist(), c.tolist()]))
"""


def _expected_main(x):
    return x * np.float32(4.0) - np.float32(1.0), x * np.arange(64, dtype=np.float32)


def test_main_kernel_runs_where_its_file_does_not_exist(tmp_path):
    """A script's kernel (and its helper, constant and a class with a kernel method) pickled by
    cloudpickle, then loaded by a process that has no copy of the script: the source travels."""
    pytest.importorskip("cloudpickle")
    script = tmp_path / "user_script.py"
    script.write_text(_MAIN_SCRIPT)
    payload = tmp_path / "payload.bin"
    full = dict(os.environ)
    full.pop("PYGPGPU_BACKEND", None)
    proc = subprocess.run([sys.executable, str(script), str(payload)], capture_output=True, text=True,
                          env=full, timeout=240, check=False)
    assert proc.returncode == 0, proc.stderr
    script.unlink()
    elsewhere = tmp_path / "worker"
    elsewhere.mkdir()
    a, b, c = json.loads(_fresh_python(_LOAD_AND_RUN.format(path=str(payload)), elsewhere))
    x = np.linspace(-1, 1, 64, dtype=np.float32)
    want_a, want_b = _expected_main(x)
    np.testing.assert_allclose(a, want_a, rtol=1e-6)
    np.testing.assert_allclose(b, want_b, rtol=1e-6)
    np.testing.assert_allclose(c, want_b, rtol=1e-6)


def test_notebook_cell_kernel_runs_in_another_process(tmp_path):
    """A kernel typed into a notebook: its file is a name only IPython's linecache knows."""
    pytest.importorskip("cloudpickle")
    payload = tmp_path / "cell.bin"
    cell = _MAIN_SCRIPT.split("s = Scaler(64)")[0] + "s = Scaler(64)\n"
    _fresh_python(f"""
        import linecache, pickle, sys, __main__
        import cloudpickle
        cell = {cell!r}
        name = "/tmp/ipykernel_4242/2718281828.py"          # as ipykernel names cells; no such file
        linecache.cache[name] = (len(cell), None, cell.splitlines(True), name)
        exec(compile(cell, name, "exec"), __main__.__dict__)
        with open({str(payload)!r}, "wb") as f:
            f.write(cloudpickle.dumps((main_kernel, s, s.apply)))
        print("ok")
    """, tmp_path)
    a, b, c = json.loads(_fresh_python(_LOAD_AND_RUN.format(path=str(payload)), tmp_path))
    x = np.linspace(-1, 1, 64, dtype=np.float32)
    want_a, want_b = _expected_main(x)
    np.testing.assert_allclose(a, want_a, rtol=1e-6)
    np.testing.assert_allclose(b, want_b, rtol=1e-6)
    np.testing.assert_allclose(c, want_b, rtol=1e-6)


# ---- device arrays and devices ----------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int8, np.uint16, np.int64, np.bool_, np.complex64])
def test_device_array_round_trip(backend, dtype):
    host = (np.arange(24) % 5).astype(dtype).reshape(2, 3, 4)
    g = gnp.asarray(host, device=backend)
    back = pickle.loads(pickle.dumps(g, protocol=pickle.HIGHEST_PROTOCOL))
    assert isinstance(back, gnp.DeviceArray)
    assert back.shape == g.shape and back.dtype == g.dtype and back.device is g.device
    assert back.buffer is not g.buffer
    np.testing.assert_array_equal(back.get(), host)


def test_device_array_edge_shapes_and_views(backend):
    for host in (np.float32(7.5).reshape(()), np.empty((0, 3), np.int32)):
        back = pickle.loads(pickle.dumps(gnp.asarray(host, device=backend)))
        assert back.shape == host.shape
        np.testing.assert_array_equal(back.get(), host)
    g = gnp.arange(12, dtype=np.float32, device=backend)
    view = g.reshape(3, 4)
    back = pickle.loads(pickle.dumps(view))
    np.testing.assert_array_equal(back.get(), np.arange(12, dtype=np.float32).reshape(3, 4))


def test_device_array_pickled_after_a_kernel_holds_its_result(backend):
    x = gnp.asarray(np.arange(4096, dtype=np.float32), device=backend)
    out = gnp.empty_like(x)
    mk.scale[backend](x, out, 0.5)
    back = pickle.loads(pickle.dumps(out))          # pickling waits for the queued kernel
    np.testing.assert_allclose(back.get(), mk.scale_host(np.arange(4096, dtype=np.float32), 0.5), rtol=1e-6)


def test_device_array_onto_the_default_device_when_its_own_is_absent(backend):
    host = np.arange(10, dtype=np.float32)
    for selector in ("opencl:97", "cuda:97", "nosuchbackend:0"):
        g = core_pickling.array_from_host(host, selector)
        assert g.device is registry.select_device(None)
        np.testing.assert_array_equal(g.get(), host)


def test_device_pickles_as_its_selector(backend):
    dev = registry.get_device(backend)
    data = pickle.dumps(dev)
    assert dev.selector.encode() in data and len(data) < 200
    assert pickle.loads(data) is dev


# ---- kernels of imported kernel files -----------------------------------------------------------
_FILE_KERNEL_WORKER = """
import json, pickle, sys
import numpy as np
with open(sys.argv[1] if len(sys.argv) > 1 else {path!r}, "rb") as f:
    plain, bracketed = pickle.load(f)
a = np.arange(300, dtype=np.float32)
out1, out2 = np.zeros_like(a), np.zeros_like(a)
plain(a, a, out1, len(a))
bracketed(a, a, out2, len(a))
print(json.dumps([out1.tolist(), out2.tolist(), repr(bracketed)]))
"""


def test_kernel_file_kernel_pickles_by_reference_and_runs_elsewhere(tmp_path):
    """``module.vecadd`` of an imported .cl file, and with brackets, pickles as its file's path,
    kernel name and brackets (was: TypeError, cannot pickle '_thread.lock'); a fresh process
    without the import hook loads the file and runs it."""
    import shutil
    from pathlib import Path

    from conftest import first_device
    from pygpgpu_core import kernel_files as kf

    first_device("opencl")
    src = tmp_path / "vecadd.cl"
    shutil.copy(Path(__file__).parent / "kernel_files" / "vecadd.cl", src)
    m = kf.load(src)
    a = np.arange(300, dtype=np.float32)
    m.vecadd(a, a, np.zeros_like(a), len(a))            # compiled here first: nothing of that travels
    again = pickle.loads(pickle.dumps(m.vecadd))
    out = np.zeros_like(a)
    again(a, a, out, len(a))
    np.testing.assert_array_equal(out, 2 * a)
    payload = tmp_path / "kernels.pkl"
    payload.write_bytes(pickle.dumps((m.vecadd, m.vecadd["opencl:0"][(512, 64)])))
    one, two, text = json.loads(_fresh_python(_FILE_KERNEL_WORKER.format(path=str(payload)), tmp_path))
    np.testing.assert_array_equal(one, 2 * a)
    np.testing.assert_array_equal(two, 2 * a)
    assert "opencl:0" in text and "(512,)" in text
