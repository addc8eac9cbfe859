"""The ``pygpgpu`` command (``python -m pygpgpu``): info, devices, cache, inspect, each run as a
user would run it, in a subprocess, and checked against the library's own answers."""
from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pygpgpu
import pytest
from pygpgpu_core import registry

from conftest import skip_no_device

KERNELS = textwrap.dedent('''
    import numpy as np
    from pygpgpu import kernel

    def twice_{n}(v):   # a name per test: identical functions in two files share cached translations
        return v * 2

    @kernel
    def saxpy(x, y, out, alpha):
        for i in range(out.shape[0]):
            out[i] = twice_{n}(x[i]) * alpha + y[i]

    @kernel
    def scale(m, out, k):
        for r, c in np.ndindex(out.shape):
            out[r, c] = m[r, c] * k

    @kernel
    def lengths(v, out):
        for i in range(out.shape[0]):
            out[i] = v[i].x * v[i].x + v[i].y * v[i].y

    NOT_A_KERNEL = 3
    print("module level output")
    if __name__ == "__main__":
        raise SystemExit("the __main__ block must not run")
''')


_COUNTER = itertools.count()


def run(*args: str, env: "dict[str, str] | None" = None, cwd: "Path | None" = None) -> subprocess.CompletedProcess:
    full_env = {**os.environ, **(env or {})}
    return subprocess.run([sys.executable, "-m", "pygpgpu", *args], capture_output=True, text=True,
                          env=full_env, cwd=cwd, timeout=300)


def load(path: Path):
    """The kernels file imported in this process (a fresh module per test folder)."""
    import importlib.util

    name = f"my_kernels_{abs(hash(str(path)))}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module        # inspect.getsource finds the file through it
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def kernels_file(tmp_path) -> Path:
    path = tmp_path / "my_kernels.py"
    path.write_text(KERNELS.replace("{n}", str(next(_COUNTER))))
    return path


def test_info_is_the_default_command_and_reports_everything(tmp_path):
    out = run(env={"PYGPGPU_CACHE_DIR": str(tmp_path / "cache"), "PYGPGPU_POOL_LIMIT": "123456"})
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert f"PyGPGPU {pygpgpu.__version__}" in text and "pygpgpu-core" in text
    assert f"Python {sys.version.split()[0]}" in text and f"numpy {np.__version__}" in text
    for name, status in registry.diagnostics().items():
        assert f"  {name}: {status}" in text
    for selector in registry.available_devices():
        assert f"    {selector} " in text
    assert f"Cache: {tmp_path / 'cache'}" in text
    assert "PYGPGPU_POOL_LIMIT=123456" in text and f"PYGPGPU_CACHE_DIR={tmp_path / 'cache'}" in text


def test_info_json_is_diagnostics(tmp_path):
    env = {"PYGPGPU_CACHE_DIR": str(tmp_path)}
    out = run("info", "--json", env=env)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert set(data) == {"pygpgpu", "python", "numpy", "backends", "default_device", "cache", "native_launcher",
                         "environment"}
    from pygpgpu_core.backend.native import status
    assert data["native_launcher"] == status()
    assert data["pygpgpu"]["version"] == pygpgpu.__version__
    assert data["pygpgpu"]["location"] == os.path.dirname(pygpgpu.__file__)
    assert data["numpy"]["version"] == np.__version__
    assert {n: b["status"] for n, b in data["backends"].items()} == registry.diagnostics()
    listed = [d["selector"] for b in data["backends"].values() for d in b["devices"]]
    assert sorted(listed) == sorted(registry.available_devices())
    for b in data["backends"].values():
        assert b["available"] == bool(b["devices"])
        for d in b["devices"]:
            dev = registry.get_device(d["selector"])
            # what does not change between processes (PoCL's global memory size follows the free memory)
            assert (d["name"], d["arch"], d["fp64"]) == (dev.name, dev.arch, dev.fp64)
            assert isinstance(d["global_mem_size"], int) and d["global_mem_size"] > 0
    if data["backends"].get("opencl", {}).get("available"):
        details = data["backends"]["opencl"]["details"]
        assert os.path.isfile(details["library"]) and details["platforms"]
    if registry.available_devices():
        assert data["default_device"] == registry.get_device().selector
    assert data["environment"]["PYGPGPU_CACHE_DIR"] == str(tmp_path)
    assert data["cache"]["path"] == str(tmp_path)     # pygpgpu.cache_info()
    # the in-process call returns the same report
    assert set(pygpgpu.diagnostics()) == set(data)


def test_info_without_any_gpu_runtime_says_why_for_each_backend(tmp_path):
    # Each backend's library is pointed at a missing file. An empty OCL_ICD_VENDORS folder would not
    # do for OpenCL: the Khronos loader that CUDA toolkits ship ignores it and still finds PoCL.
    env = {"PYGPGPU_OPENCL_LIB": "/nonexistent/libOpenCL.so.1", "PYGPGPU_HIP_LIB": "/nonexistent/libamdhip64.so",
           "PYGPGPU_CUDA_LIB": "/nonexistent/libcuda.so.1", "PYGPGPU_CACHE_DIR": str(tmp_path / "c")}
    out = run("--json", env=env)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    for name, b in data["backends"].items():
        assert not b["available"] and b["status"] and not b["status"].startswith("ok"), (name, b)
    assert "/nonexistent/libOpenCL.so.1" in data["backends"]["opencl"]["status"]
    assert data["default_device"].startswith("unavailable: ")
    devices = run("devices", env=env)
    assert devices.returncode == 1 and devices.stdout == "" and "no devices" in devices.stderr


def test_devices_prints_one_line_per_device():
    out = run("devices")
    expected = registry.available_devices()
    if not expected:
        skip_no_device("any", "no device here: `pygpgpu devices` has nothing to list")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert [ln.split()[0] for ln in lines] == expected
    for line, selector in zip(lines, expected):
        assert registry.get_device(selector).name in line


def test_console_script_is_installed():
    script = Path(sys.executable).with_name("pygpgpu")
    if not script.exists():
        pytest.skip(f"running from a source checkout without an install: no {script}")
    out = subprocess.run([str(script), "--version"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.strip() == f"pygpgpu {pygpgpu.__version__}"


def test_cache_info_and_clear(tmp_path, kernels_file):
    cache = tmp_path / "cache"
    env = {"PYGPGPU_CACHE_DIR": str(cache), "PYGPGPU_BACKEND": "opencl"}
    # fill the cache the way a user does: translate a kernel (no device needed for inspect)
    filled = run("inspect", f"{kernels_file}:saxpy", "--backend", "opencl",
                 "--types", "float32[:], float32[:], float32[:], float32", env=env)
    assert filled.returncode == 0, filled.stderr
    (cache / "opencl").mkdir(mode=0o700, exist_ok=True)
    (cache / "opencl" / ("ab" * 32 + ".bin")).write_bytes(b"x" * 1000)   # named as the library names entries
    (cache / "opencl" / "notes.txt").write_text("not an entry")          # someone else's file
    outside = tmp_path / "outside.txt"
    outside.write_text("keep me")
    (cache / "translate" / ("cd" * 32 + ".bin")).symlink_to(outside)     # a link is never followed

    info = run("cache", "info", "--json", env=env)
    assert info.returncode == 0, info.stderr
    stats = json.loads(info.stdout)                  # pygpgpu.cache_info(): only the library's own entries
    assert stats["path"] == str(cache) and stats["limit"] == 512 << 20
    assert stats["namespaces"]["opencl"] == {"bytes": 1000, "entries": 1}
    translated = stats["namespaces"]["translate"]
    assert translated["entries"] >= 1 and translated["bytes"] > 0
    assert stats["entries"] == translated["entries"] + 1 and stats["bytes"] == translated["bytes"] + 1000
    text = run("cache", env=env).stdout
    assert str(cache) in text and f"in {stats['entries']} entries" in text and "opencl" in text

    only = run("cache", "clear", "opencl", env=env)
    assert only.returncode == 0, only.stderr
    assert "removed 1 entries (1000 B)" in only.stdout
    assert json.loads(run("cache", "info", "--json", env=env).stdout)["namespaces"].get("translate") == translated
    cleared = run("cache", "clear", env=env)
    assert cleared.returncode == 0, cleared.stderr
    assert f"removed {translated['entries']} entries" in cleared.stdout and str(cache) in cleared.stdout
    assert json.loads(run("cache", "info", "--json", env=env).stdout)["entries"] == 0
    assert sorted(p.name for p in cache.rglob("*") if not p.is_dir()) == ["cd" * 32 + ".bin", "notes.txt"]
    assert outside.read_text() == "keep me"
    bad = run("cache", "clear", "nosuch", env=env)
    assert bad.returncode == 2 and "'nosuch' is not a cache namespace" in bad.stderr


def test_cache_clear_refuses_a_home_directory(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    (home / "precious.txt").write_text("mine")
    out = run("cache", "clear", env={"HOME": str(home), "PYGPGPU_CACHE_DIR": str(home)})
    assert out.returncode == 2 and "is not emptied because it is your home folder" in out.stderr
    assert "Traceback" not in out.stderr
    assert (home / "precious.txt").read_text() == "mine"


@pytest.mark.parametrize("dialect", ["opencl", "cuda", "hip"])
def test_inspect_prints_the_source_the_library_generates(kernels_file, dialect):
    out = run("inspect", f"{kernels_file}:saxpy", "--backend", dialect,
              "--types", "float32[:], float32[:], float32[:], float32")
    assert out.returncode == 0, out.stderr
    assert "module level output" in out.stderr and "module level output" not in out.stdout
    my_kernels = load(kernels_file)
    x = np.zeros(7, np.float32)
    expected = my_kernels.saxpy.inspect(x, x, x, np.float32(2), backend=dialect).source
    assert out.stdout == expected + "\n"


def test_inspect_2d_and_vector_types(kernels_file):
    my_kernels = load(kernels_file)

    out = run("inspect", f"{kernels_file}:scale", "--backend", "cuda", "--types", "float64[:, :], float64[:,:], float")
    assert out.returncode == 0, out.stderr
    m = np.zeros((3, 7))
    assert out.stdout == my_kernels.scale.inspect(m, m, 1.5, backend="cuda").source + "\n"
    out = run("inspect", f"{kernels_file}:lengths", "--backend", "opencl", "--types", "float2[:], float32[:]")
    assert out.returncode == 0, out.stderr
    v = np.zeros((9, 2), np.float32)
    assert out.stdout == my_kernels.lengths.inspect(v, np.zeros(9, np.float32), backend="opencl").source + "\n"



METHODS = textwrap.dedent('''
    import numpy as np
    from pygpgpu import kernel

    class Model:
        def __init__(self):
            self.weights = np.ones(8, np.float32)

        @kernel
        def apply_{n}(self, x, out):
            for i in range(out.shape[0]):
                out[i] = x[i] * self.weights[i]

    model = Model()
''')


def test_inspect_a_kernel_method(tmp_path):
    """FILE.py:instance.method prints the method's source for that instance (it said the
    ConfiguredKernel was not an @kernel function); FILE.py:Class.method, whose self no --types
    entry can stand for, says to name an instance (it asked for one type more than could be given)."""
    n = next(_COUNTER)
    path = tmp_path / "methods.py"
    path.write_text(METHODS.replace("{n}", str(n)))
    out = run("inspect", f"{path}:model.apply_{n}", "--backend", "opencl", "--types", "float32[:], float32[:]")
    assert out.returncode == 0, out.stderr
    module = load(path)
    x = np.zeros(5, np.float32)
    assert out.stdout == getattr(module.model, f"apply_{n}").inspect(x, x, backend="opencl").source + "\n"
    out = run("inspect", f"{path}:Model.apply_{n}", "--types", "float32[:], float32[:]")
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "is a kernel method" in out.stderr and "name an instance" in out.stderr

def test_inspected_cuda_source_compiles_with_nvrtc(kernels_file, nvrtc_compile):
    out = run("inspect", f"{kernels_file}:saxpy", "--backend", "cuda",
              "--types", "float32[:], float32[:], float32[:], float32")
    assert out.returncode == 0, out.stderr
    assert nvrtc_compile(out.stdout, "sm_90")[:4] == b"\x7fELF"


@pytest.mark.parametrize("args, message", [
    (["{file}:nope", "--types", "float32"], "has no 'nope'"),
    (["{file}:NOT_A_KERNEL", "--types", "float32"], "is not an @kernel function (its type is int)"),
    (["{dir}/missing.py:k", "--types", "float32"], "is not a file"),
    (["{file}", "--types", "float32"], "write FILE.py:KERNEL"),
    (["{file}:saxpy", "--types", "float32[:], float32"], "saxpy takes 4 arguments (x, y, out, alpha)"),
    (["{file}:saxpy", "--types", "float32[:], complex64, float32[:], float32"], "not a number type"),
    (["{file}:saxpy", "--types", "float32[:], floaty[:], float32[:], float32"], "unknown type 'floaty'"),
    (["{file}:saxpy", "--types", "float32[:], float32[:, :, :, :], float32[:], float32"], "1 to 3 dimensions"),
    (["{file}:saxpy", "--types", "float32[:], float32[2], float32[:], float32"], "[:], [:, :] or [:, :, :]"),
    (["{file}:saxpy", "--types", "float32[:],, float32"], "empty entry"),
    (["{file}:saxpy", "--backend", "nosuch", "--types", "float32[:], float32[:], float32[:], float32"],
     "names no backend"),
])
def test_inspect_bad_input_is_a_one_line_error(kernels_file, args, message):
    args = [a.format(file=kernels_file, dir=kernels_file.parent) for a in args]
    out = run("inspect", *args)
    assert out.returncode == 2, (out.stdout, out.stderr)
    assert message in out.stderr and "Traceback" not in out.stderr and out.stdout == ""



def test_output_into_a_closed_pipe_ends_quietly(kernels_file):
    """``pygpgpu inspect ... | head -1``: the reader leaves early; the command stops without
    an error message (it printed ``pygpgpu inspect: error: [Errno 32] Broken pipe``)."""
    proc = subprocess.Popen([sys.executable, "-m", "pygpgpu", "inspect", f"{kernels_file}:saxpy", "--types",
                             "float32[:], float32[:], float32[:], float32"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.read(1)
    proc.stdout.close()
    err = proc.stderr.read().decode()
    proc.wait(timeout=300)
    assert "Broken pipe" not in err and "Traceback" not in err and "Exception ignored" not in err, err

def test_unknown_command_and_help():
    bad = run("frobnicate")
    assert bad.returncode == 2 and "invalid choice" in bad.stderr
    helped = run("--help")
    assert helped.returncode == 0 and all(c in helped.stdout for c in ("info", "devices", "cache", "inspect"))


def test_cache_clear_leaves_an_unsafe_cache_folder_alone(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "someone-elses.bin").write_bytes(b"x")
    shared.chmod(0o777)                        # writable by others: never used as a cache
    out = run("cache", "clear", env={"PYGPGPU_CACHE_DIR": str(shared)})
    assert out.returncode == 2 and "pygpgpu cache: error:" in out.stderr and "Traceback" not in out.stderr
    assert (shared / "someone-elses.bin").exists()
    info = run("cache", env={"PYGPGPU_CACHE_DIR": str(shared)})
    assert info.returncode == 0 and f"not in use ({shared}: group and others may write to it" in info.stdout
