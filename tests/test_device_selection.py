"""Device selection (issue 20): the order of devices within a backend, ``PYGPGPU_BACKEND`` as a
full selector, translation errors before device errors, and why PoCL did not start.

Cases that depend on environment variables read at enumeration (``POCL_DEVICES``,
``PYGPGPU_BACKEND``, cache directories) run in a subprocess, so this process's registry and
device list stay as they are.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest
from pygpgpu_core import registry
from pygpgpu_core.device_order import ACCELERATOR, CPU, GPU, order_devices, type_rank
from pygpgpu_core.errors import GPGPUError
from pygpgpu_translate import kernel

from conftest import first_device, skip_no_device


def _run(code: str, where, **env: str | None) -> subprocess.CompletedProcess:
    """Run ``code`` as a script file in ``where`` (kernels need a .py file for their source) in a
    fresh interpreter; ``env`` adds variables (None removes one). PYGPGPU_BACKEND is unset unless given."""
    script = where / f"script_{len(list(where.glob('script_*.py')))}.py"
    script.write_text(textwrap.dedent(code))
    full = dict(os.environ)
    full.pop("PYGPGPU_BACKEND", None)
    for k, v in env.items():
        if v is None:
            full.pop(k, None)
        else:
            full[k] = v
    return subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=full, timeout=300,
                          check=False, cwd=str(where))


def _json_out(proc: subprocess.CompletedProcess):
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _opencl_devices():
    try:
        return registry.backend_devices("opencl")
    except GPGPUError as exc:
        skip_no_device("opencl", f"no OpenCL device here: {exc}")


def _pocl_devices():
    """Skip unless PoCL's CPU driver is what runs OpenCL here (POCL_DEVICES then shapes the list)."""
    devices = _opencl_devices()
    if not any("portable computing language" in d.platform.name.lower() for d in devices):
        pytest.skip("PoCL is not installed here")
    return devices


# ---- the ordering rule, on fake devices -----------------------------------------------------------

class FakeDevice:
    def __init__(self, name, is_gpu=False, is_cpu=False):
        self.name, self.is_gpu, self.is_cpu = name, is_gpu, is_cpu

    def __repr__(self):
        return self.name


class Untyped:
    """A device of a backend that does not say what it is (every CUDA and HIP device)."""

    def __init__(self, name):
        self.name = name


def test_gpus_first_then_accelerators_then_cpus():
    cpu0, cpu1 = FakeDevice("cpu0", is_cpu=True), FakeDevice("cpu1", is_cpu=True)
    gpu0, gpu1 = FakeDevice("gpu0", is_gpu=True), FakeDevice("gpu1", is_gpu=True)
    fpga = FakeDevice("fpga")
    assert [type_rank(d) for d in (gpu0, fpga, cpu0)] == [GPU, ACCELERATOR, CPU]
    # PoCL's platform enumerated before the GPU's (as on the GPU machine): the GPU still comes first
    assert order_devices([cpu0, gpu0]) == [gpu0, cpu0]
    assert order_devices([cpu0, fpga, gpu0, cpu1, gpu1]) == [gpu0, gpu1, fpga, cpu0, cpu1]


def test_order_keeps_driver_order_within_a_kind_and_is_stable():
    devices = [FakeDevice(f"cpu{i}", is_cpu=True) for i in range(3)] + [FakeDevice(f"gpu{i}", is_gpu=True) for i in range(3)]
    first = order_devices(devices)
    assert [d.name for d in first] == ["gpu0", "gpu1", "gpu2", "cpu0", "cpu1", "cpu2"]
    assert order_devices(first) == first                     # ordering an ordered list changes nothing
    assert order_devices(list(devices)) == first             # same input, same order, every time


def test_devices_that_do_not_say_their_type_keep_their_order():
    devices = [Untyped("a"), Untyped("b"), Untyped("c")]
    assert order_devices(devices) == devices
    # a GPU and CPU flag on one device (never seen, but legal in OpenCL's bit field): the GPU wins
    both = FakeDevice("apu", is_gpu=True, is_cpu=True)
    assert order_devices([FakeDevice("cpu", is_cpu=True), both])[0] is both


# ---- the ordering rule in the OpenCL backend ------------------------------------------------------

_LIST_DEVICES = """
    import json
    from pygpgpu_core import registry
    devs = registry.backend_devices("opencl")
    print(json.dumps({"devices": [[d.selector, d.index, d.is_cpu, d.name, d.platform.name] for d in devs],
                      "available": registry.available_devices(),
                      "first": registry.get_device("opencl").selector,
                      "second": registry.get_device("opencl:1").selector}))
"""


def test_two_pocl_cpu_devices_are_numbered_in_enumeration_order_every_run(tmp_path):
    _pocl_devices()
    runs = [_json_out(_run(_LIST_DEVICES, tmp_path, POCL_DEVICES="pthread pthread")) for _ in range(2)]
    assert runs[0] == runs[1]                       # the same numbering in every run
    got = runs[0]
    pocl = [d for d in got["devices"] if "portable computing language" in d[4].lower()]
    assert len(pocl) == 2 and all(d[2] for d in pocl)
    assert [d[1] for d in got["devices"]] == list(range(len(got["devices"])))   # index == position
    assert [d[0] for d in got["devices"]] == [f"opencl:{i}" for i in range(len(got["devices"]))]
    assert [s for s in got["available"] if s.startswith("opencl:")] == [d[0] for d in got["devices"]]
    assert (got["first"], got["second"]) == ("opencl:0", "opencl:1")


def test_opencl_numbers_a_gpu_before_a_cpu_enumerated_earlier(tmp_path):
    """Two PoCL devices where the second says it is a GPU (its type word is replaced at
    enumeration): it is numbered before the first, and a real kernel runs on it. Other OpenCL
    drivers may be present (NVIDIA's on the GPU machine, which no environment variable hides from
    every ICD loader), so the expected order is worked out from what the child enumerated: GPUs,
    then other devices, then CPUs, each kind in enumeration order."""
    _pocl_devices()
    code = """
        import json
        import numpy as np
        import pygpgpu_opencl._device as D
        from pygpgpu_opencl import _constants as C
        from pygpgpu_core import registry
        from pygpgpu_translate import kernel

        enumerated, pocl = [], []
        original_init = D.Device.__init__

        def init(self, backend, index, platform, handle):
            original_init(self, backend, index, platform, handle)
            enumerated.append(handle)
            if "portable computing language" in platform.name.lower():
                pocl.append(handle)
                if len(pocl) == 2:
                    self.type = C.CL_DEVICE_TYPE_GPU

        D.Device.__init__ = init

        @kernel
        def add1(a, out):
            for i in range(out.shape[0]):
                out[i] = a[i] + 1

        a = np.arange(64, dtype=np.float32)
        out = np.zeros_like(a)
        k = add1["opencl"]
        k(a, out)
        default_ok = bool(np.array_equal(out, a + 1))
        devs = registry.backend_devices("opencl")
        by_handle = {d.handle: d for d in devs}
        kind = lambda h: 0 if by_handle[h].is_gpu else 2 if by_handle[h].is_cpu else 1
        expected = sorted(enumerated, key=kind)           # sorted() is stable: driver order within a kind
        position = {d.handle: n for n, d in enumerate(devs)}
        promoted = devs[position[pocl[1]]]
        out[:] = 0
        add1[promoted.selector](a, out)
        print(json.dumps({
            "pocl_devices": len(pocl),
            "order_is_gpus_first_in_enumeration_order": [d.handle for d in devs] == expected,
            "promoted_before_first_pocl": position[pocl[1]] < position[pocl[0]],
            "promoted_is_gpu": promoted.is_gpu,
            "selectors": [d.selector for d in devs] == [f"opencl:{n}" for n in range(len(devs))],
            "get_device": registry.get_device("opencl") is devs[0],
            "kernel_device": k._device is devs[0],
            "result_ok": default_ok,
            "promoted_result_ok": bool(np.array_equal(out, a + 1)),
        }))
    """
    got = _json_out(_run(code, tmp_path, POCL_DEVICES="pthread pthread"))
    assert got == {"pocl_devices": 2, "order_is_gpus_first_in_enumeration_order": True, "promoted_before_first_pocl": True,
                   "promoted_is_gpu": True, "selectors": True, "get_device": True, "kernel_device": True,
                   "result_ok": True, "promoted_result_ok": True}


def test_opencl_devices_here_follow_the_order_rule():
    devices = _opencl_devices()
    ranks = [type_rank(d) for d in devices]
    assert ranks == sorted(ranks)
    assert [d.index for d in devices] == list(range(len(devices)))
    assert registry.get_device("opencl") is devices[0]


@kernel
def _add1(a, out):
    for i in range(out.shape[0]):
        out[i] = a[i] + 1


def test_k_opencl_runs_on_the_gpu_when_one_exists():
    """On the GPU machine (PoCL and NVIDIA's OpenCL both installed) k["opencl"] is the H200."""
    devices = _opencl_devices()
    gpus = [d for d in devices if d.is_gpu]
    if not gpus:
        pytest.skip(f"no OpenCL GPU here ({[d.name for d in devices]}); the GPU machine runs this test")
    assert registry.get_device("opencl").is_gpu
    assert registry.get_device("opencl") is gpus[0]
    a = np.arange(1000, dtype=np.float32)
    out = np.zeros_like(a)
    k = _add1["opencl"]
    k(a, out)
    np.testing.assert_array_equal(out, a + 1)
    assert k._device is gpus[0]


# ---- PYGPGPU_BACKEND takes any selector the bracket takes -----------------------------------------

DIST = os.path.join(os.path.dirname(__file__), "registry_dist")


@pytest.fixture
def acme(monkeypatch):
    """The test-only plug-in backend 'acme' (three devices: Rocket 9000, Anvil, Rocket 9000), with
    the warning about its broken sibling plug-in silenced."""
    monkeypatch.syspath_prepend(DIST)
    registry.reset_registry()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        yield monkeypatch
    registry.reset_registry()


@pytest.mark.parametrize("value, name, index", [
    ("acme", "Acme Rocket 9000", 0),
    ("acme:1", "Acme Anvil", 1),
    ("acme:anvil", "Acme Anvil", 1),
    ("ACME:rocket:1", "Acme Rocket 9000", 2),
    ("anvil", "Acme Anvil", 1),            # a name part alone: every backend is searched
])
def test_env_selector_picks_the_device(acme, value, name, index):
    acme.setenv("PYGPGPU_BACKEND", value)
    dev = registry.get_device()
    assert (dev.name, dev.index) == (name, index)
    assert registry.default_backend_name() == "acme"
    assert registry.get_device("acme:0").index == 0          # an explicit selector still wins


@pytest.mark.parametrize("value, error, detail", [
    ("acme:7", "DeviceNotFound", "index 7 is out of range"),
    ("acme:nonesuch", "DeviceNotFound", "nothing matches 'nonesuch'"),
    ("vulkan", "DeviceNotFound", "'vulkan' is neither an installed backend"),
    ("nodevice", "BackendUnavailable", "reports no device"),
    ("acme::", "ValueError", "malformed device selector"),
    ("acme:1:2", "ValueError", "cannot be followed"),
])
def test_bad_env_selector_names_the_variable_and_lists_devices(acme, value, error, detail):
    acme.setenv("PYGPGPU_BACKEND", value)
    with pytest.raises((GPGPUError, ValueError)) as info:
        registry.get_device()
    text = str(info.value)
    assert type(info.value).__name__ == error, text
    assert f"environment variable PYGPGPU_BACKEND={value!r}" in text and detail in text
    if error != "ValueError":
        assert "Available devices: " in text and "acme:0, acme:1, acme:2" in text
    assert "'opencl:nvidia'" in text       # says what the variable accepts
    if not value.startswith(("acme:", "nodevice")) or error == "ValueError":
        # no backend named: finding the backend means finding the device, with the same error
        with pytest.raises(type(info.value)) as again:
            registry.default_backend_name()
        assert str(again.value) == text


_KERNEL_ON_DEFAULT = """
    import json
    import numpy as np
    from pygpgpu_core import registry
    from pygpgpu_translate import kernel

    @kernel
    def add1(a, out):
        for i in range(out.shape[0]):
            out[i] = a[i] + 1

    a = np.arange(50, dtype=np.float32)
    out = np.zeros_like(a)
    result = {}
    try:
        add1(a, out)
        result["device"] = add1._root._device.selector
        result["ok"] = bool(np.array_equal(out, a + 1))
        out[:] = 0
        add1["opencl:0"](a, out)                 # an explicit selector overrides the variable
        result["explicit_ok"] = bool(np.array_equal(out, a + 1))
        result["backend"] = registry.default_backend_name()
    except Exception as exc:
        result["error"] = [type(exc).__name__, str(exc)]
    print(json.dumps(result))
"""


_ALL_DEVICES = """
    import json
    from pygpgpu_core import registry
    devs = [registry.get_device(s) for s in registry.available_devices()]
    print(json.dumps([[d.selector, " ".join(str(getattr(d, a, "")) for a in ("name", "vendor", "arch")).lower(),
                       "portable computing language" in getattr(getattr(d, "platform", None), "name", "").lower()]
                      for d in devs]))
"""


def _two_pocl_devices_listed(tmp_path):
    """Every device of every backend a child process with two PoCL devices sees (the GPU machine
    also has CUDA and NVIDIA's OpenCL), and a word of PoCL's device names: "pthread" on older PoCL
    releases, "cpu" on newer ones ("cpu-skylake-avx512-...")."""
    _pocl_devices()
    listed = _json_out(_run(_ALL_DEVICES, tmp_path, POCL_DEVICES="pthread pthread"))
    pocl = [hay for _selector, hay, is_pocl in listed if is_pocl]
    assert len(pocl) == 2, listed
    word = pocl[0].split("-")[0]
    assert word and all(word in hay for hay in pocl), pocl
    return listed, word


@pytest.mark.parametrize("value", [
    "opencl:1",
    "ocl:{pocl}:1",                          # alias, name part, n-th match
    "OpenCL:0",
    "{pocl}:1",                              # a name part with no backend: every backend's devices count
])
def test_env_selector_chooses_the_device_kernels_run_on(tmp_path, value):
    listed, word = _two_pocl_devices_listed(tmp_path)
    # the device the value means, from the child's own list: the n-th of the OpenCL devices (of every
    # device when no backend is named), counting only those whose name, vendor or arch has the word
    pool = [(sel, hay) for sel, hay, _ in listed if sel.startswith("opencl:") or value.startswith("{pocl}")]
    if "{pocl}" in value:
        pool = [(sel, hay) for sel, hay in pool if word in hay]
    selector = pool[int(value.rsplit(":", 1)[1])][0]
    assert selector.startswith("opencl:"), (value, listed)
    got = _json_out(_run(_KERNEL_ON_DEFAULT, tmp_path, POCL_DEVICES="pthread pthread",
                         PYGPGPU_BACKEND=value.format(pocl=word)))
    assert got == {"device": selector, "ok": True, "explicit_ok": True, "backend": "opencl"}


def test_bad_env_selector_stops_a_kernel_call_naming_the_variable(tmp_path):
    listed, _word = _two_pocl_devices_listed(tmp_path)
    opencl = [sel for sel, _hay, _ in listed if sel.startswith("opencl:")]
    value = f"opencl:{len(opencl)}"                         # one past the last OpenCL device
    got = _json_out(_run(_KERNEL_ON_DEFAULT, tmp_path, POCL_DEVICES="pthread pthread", PYGPGPU_BACKEND=value))
    kind, text = got["error"]
    assert kind == "DeviceNotFound"
    assert f"environment variable PYGPGPU_BACKEND={value!r}" in text and f"index {len(opencl)} is out of range" in text
    assert ", ".join(opencl) in text



_FILE_KERNEL_ON_DEFAULT = """
    import json
    import numpy as np
    from pygpgpu_core import kernel_files as kf
    m = kf.load({path!r})
    a = np.arange(100, dtype=np.float32)
    out = np.zeros_like(a)
    m.vecadd(a, a, out, 100)
    used = [d.selector for d in m.__kernel_file__._devices.values()]
    print(json.dumps({{"devices": used, "ok": bool((out == 2 * a).all())}}))
"""


@pytest.mark.parametrize("value,want", [("opencl:1", 1), ("ocl:0", 0), ("cuda:1", 0)])
def test_env_selector_chooses_the_device_kernel_files_run_on(tmp_path, value, want):
    """A .cl file's kernel without a bracket runs where PYGPGPU_BACKEND points when that is an
    OpenCL device (it always took the first OpenCL device, so one worker per device all shared
    device 0); a variable naming another backend leaves it on OpenCL's first device."""
    listed, _word = _two_pocl_devices_listed(tmp_path)
    opencl = [sel for sel, _hay, _ in listed if sel.startswith("opencl:")]
    src = tmp_path / "vecadd.cl"
    src.write_text((Path(__file__).parent / "kernel_files" / "vecadd.cl").read_text())
    got = _json_out(_run(_FILE_KERNEL_ON_DEFAULT.format(path=str(src)), tmp_path, POCL_DEVICES="pthread pthread",
                         PYGPGPU_BACKEND=value))
    assert got == {"devices": [opencl[want]], "ok": True}

# ---- translation errors that do not depend on the device come first --------------------------------

_BAD_SYNTAX = """
    import json
    import numpy as np
    from pygpgpu_translate import kernel

    def helper(x):
        return [x, 1][0]                                  # HELPER-LINE

    class Tools:
        @staticmethod
        def clamp(x):
            try:                                          # STATIC-LINE
                return x
            except ValueError:
                return 0

    @kernel
    def bad_kernel(a, out):
        for i in range(out.shape[0]):
            out[i] = {"k": a[i]}["k"]                     # KERNEL-LINE

    @kernel
    def bad_helper(a, out):
        for i in range(out.shape[0]):
            out[i] = helper(a[i])

    @kernel
    def bad_static(a, out):
        for i in range(out.shape[0]):
            out[i] = Tools.clamp(a[i])

    @kernel
    def good(a, out):
        for i in range(out.shape[0]):
            out[i] = a[i] + 1

    a = np.arange(8, dtype=np.float32)
    out = np.zeros_like(a)
    lines = open(__file__).read().splitlines()
    marks = {m: 1 + next(n for n, text in enumerate(lines) if text.rstrip().endswith(m))
             for m in ("HELPER-LINE", "STATIC-LINE", "KERNEL-LINE")}
    result = {}
    for name, k, mark in (("kernel", bad_kernel, "KERNEL-LINE"), ("helper", bad_helper, "HELPER-LINE"),
                          ("static", bad_static, "STATIC-LINE"), ("good", good, None)):
        for attempt in range(2):                          # the second call takes the cached path
            try:
                k(a, out)
                result[f"{name}{attempt}"] = "ran"
            except Exception as exc:
                same_line = isinstance(exc, SyntaxError) and exc.lineno == marks.get(mark)
                result[f"{name}{attempt}"] = [type(exc).__name__, same_line, getattr(exc, "filename", None) == __file__,
                                              str(exc)[:400]]
    print(json.dumps(result))
"""


def _check_syntax_first(got, device_error):
    for name in ("kernel", "helper", "static"):
        for attempt in (0, 1):
            kind, same_line, same_file, text = got[f"{name}{attempt}"]
            assert (kind, same_line, same_file) == ("SyntaxError", True, True), (name, text)
    for attempt in (0, 1):            # a kernel without syntax problems gets the device error, unchanged
        kind, _line, _file, text = got[f"good{attempt}"]
        assert kind == device_error, text
    return got["good0"][3]


def test_syntax_error_comes_before_a_bad_pygpgpu_backend(tmp_path):
    got = _json_out(_run(_BAD_SYNTAX, tmp_path, PYGPGPU_BACKEND="vulkan"))
    text = _check_syntax_first(got, "DeviceNotFound")
    assert "PYGPGPU_BACKEND='vulkan'" in text


def test_syntax_error_comes_before_a_malformed_pygpgpu_backend(tmp_path):
    got = _json_out(_run(_BAD_SYNTAX, tmp_path, PYGPGPU_BACKEND="opencl::"))
    assert "PYGPGPU_BACKEND='opencl::'" in _check_syntax_first(got, "ValueError")


def test_syntax_error_comes_before_no_device_at_all(tmp_path):
    # no runtime at all: every backend's library is a missing file (an empty OCL_ICD_VENDORS folder is
    # not enough: the Khronos loader that CUDA toolkits ship ignores the variable and still finds PoCL)
    got = _json_out(_run(_BAD_SYNTAX, tmp_path, PYGPGPU_OPENCL_LIB="/nonexistent/libOpenCL.so.1",
                         PYGPGPU_CUDA_LIB="/nonexistent/libcuda.so.1", PYGPGPU_HIP_LIB="/nonexistent/libamdhip64.so"))
    assert "no backend has a device" in _check_syntax_first(got, "DeviceNotFound")


# ---- "no OpenCL devices" when PoCL is installed says why PoCL did not start ------------------------

_OPENCL_STATUS = """
    import json
    import warnings
    warnings.simplefilter("ignore")
    from pygpgpu_core import registry
    from pygpgpu_core.errors import GPGPUError
    out = {"diagnostics": registry.diagnostics()["opencl"], "available": registry.available_devices()}
    for key, selector in (("get_device", "opencl"), ("default", None)):
        try:
            registry.get_device(selector)
            out[key] = None
        except GPGPUError as exc:
            out[key] = [type(exc).__name__, str(exc)]
    print(json.dumps(out))
"""


def _pocl_only_env(tmp_path, icd_library=None) -> dict:
    """Environment where OpenCL sees PoCL alone (a vendors directory with only its ICD file) and
    CUDA and HIP see nothing, so the default-device error is about PoCL on any machine."""
    _pocl_devices()
    from pygpgpu_opencl._diagnose import registered_icds
    _where, icds = registered_icds()
    pocl = [lib for path, lib in icds.items() if "pocl" in (path + lib).lower()]
    if not pocl:
        pytest.skip("PoCL runs here but its ICD file was not found")
    vendors = tmp_path / "vendors"
    vendors.mkdir()
    (vendors / "pocl.icd").write_text((icd_library or pocl[0]) + "\n")
    return {"OCL_ICD_VENDORS": str(vendors), "PYGPGPU_CUDA_LIB": "/nonexistent/libcuda.so.1",
            "PYGPGPU_HIP_LIB": "/nonexistent/libamdhip64.so", "POCL_CACHE_DIR": None, "XDG_CACHE_HOME": None,
            "POCL_DEVICES": None}


@pytest.mark.parametrize("variable, cache_dir", [
    ("POCL_CACHE_DIR", "{blocker}/pocl"),
    ("XDG_CACHE_HOME", "{blocker}/pocl/kcache"),
    ("HOME", "{blocker}/.cache/pocl/kcache"),
])
def test_pocl_without_a_writable_cache_dir_is_reported_as_failing_to_start(tmp_path, variable, cache_dir):
    # a path below a regular file cannot be created, even by root (chmod would not stop root)
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    env = _pocl_only_env(tmp_path)
    env[variable] = f"{blocker}/pocl" if variable == "POCL_CACHE_DIR" else str(blocker)
    got = _json_out(_run(_OPENCL_STATUS, tmp_path, **env))
    assert not [d for d in got["available"] if d.startswith("opencl:")]
    text = got["diagnostics"]
    assert "PoCL is installed" in text and "failed to start" in text, text
    assert f"kernel cache directory {cache_dir.format(blocker=blocker)} (taken from {variable})" in text, text
    assert f"{blocker} is a file, not a directory" in text and "set POCL_CACHE_DIR to a writable directory" in text
    assert "apt-get install pocl" not in text
    assert got["get_device"] == ["BackendUnavailable", f"backend 'opencl' is unavailable: {text}"]
    kind, default = got["default"]
    assert kind == "DeviceNotFound" and "failed to start" in default and "apt-get install pocl" not in default



def test_an_empty_pocl_cache_dir_is_refused_before_pocl_aborts_the_process(tmp_path):
    """POCL_CACHE_DIR set but empty makes PoCL 3 fail an assertion while it starts, which kills
    the process (SIGABRT) on the first device listing, `pygpgpu info` included; the OpenCL backend
    is unavailable instead, saying why, and nothing calls into the ICD loader."""
    env = _pocl_only_env(tmp_path)
    env["POCL_CACHE_DIR"] = ""
    got = _json_out(_run(_OPENCL_STATUS, tmp_path, **env))
    assert not [d for d in got["available"] if d.startswith("opencl:")]
    text = got["diagnostics"]
    assert "POCL_CACHE_DIR is set but empty" in text and "unset it" in text, text
    assert got["get_device"] == ["BackendUnavailable", f"backend 'opencl' is unavailable: {text}"]

def test_pocl_icd_naming_a_missing_library_is_reported(tmp_path):
    env = _pocl_only_env(tmp_path, icd_library="/nonexistent/libpocl.so.2")
    got = _json_out(_run(_OPENCL_STATUS, tmp_path, **env))
    text = got["diagnostics"]
    assert "PoCL is installed" in text and "no platform came up" in text, text
    assert "/nonexistent/libpocl.so.2, does not exist" in text and "apt-get install pocl" not in text


def test_pocl_that_starts_is_not_diagnosed(tmp_path):
    got = _json_out(_run(_OPENCL_STATUS, tmp_path, **_pocl_only_env(tmp_path)))
    assert got["diagnostics"].startswith("ok (") and got["get_device"] is None and got["default"] is None


@kernel
def _double(x):
    for i in range(x.shape[0]):
        x[i] = 2 * x[i]


def test_a_device_object_in_the_bracket_selects_that_device():
    """k[dev] and k[dev, (n, 64)], as PyOpenCL and CuPy users pass device objects: the device's
    selector; it failed as a bad global work size."""
    dev = first_device("opencl")
    x = np.arange(256, dtype=np.float32)
    _double[dev](x)
    _double[dev, (256, 64)](x)
    _double[(dev, 256)](x)
    np.testing.assert_array_equal(x, np.arange(256, dtype=np.float32) * 8)
    assert _double[dev]._config.selector == dev.selector == _double[dev, 256]._config.selector
