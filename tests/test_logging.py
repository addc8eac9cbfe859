"""Loggers under ``pygpgpu`` (translate, build, cache hits and misses with keys, launch geometry),
PYGPGPU_DEBUG as a switch for them, a slow build said at INFO, nothing logged on the warm path,
and PyGPGPUWarning attributed to the user's line."""
from __future__ import annotations

import logging
import os
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np

from pygpgpu_core import logs, registry

SCRIPT = textwrap.dedent('''
    import logging, sys
    import numpy as np
    if sys.argv[2] == "basicConfig":
        logging.basicConfig(level=logging.DEBUG, format="%(name)s|%(levelname)s|%(message)s")
    from pygpgpu import kernel

    @kernel
    def saxpy_{tag}(x, y, out, alpha):
        for i in range(out.shape[0]):
            out[i] = x[i] * alpha + y[i]

    x = np.arange(1000, dtype=np.float32)
    out = np.zeros_like(x)
    saxpy_{tag}[sys.argv[1]](x, x, out, 2.0)
    saxpy_{tag}[sys.argv[1]](x, x, out, 2.0)
    assert np.array_equal(out, x * np.float32(2) + x), out[:5]
    print("RESULT OK")
''')


def _run(tmp_path: Path, backend: str, mode: str, cache: Path, debug_env: "str | None" = None):
    script = tmp_path / "user_script.py"
    script.write_text(SCRIPT.replace("{tag}", tmp_path.name.replace("-", "_")))
    env = {k: v for k, v in os.environ.items() if k != "PYGPGPU_DEBUG"}
    env["PYGPGPU_CACHE_DIR"] = str(cache)
    if debug_env is not None:
        env["PYGPGPU_DEBUG"] = debug_env
    out = subprocess.run([sys.executable, str(script), backend, mode], capture_output=True, text=True,
                         env=env, timeout=300)
    assert out.returncode == 0 and "RESULT OK" in out.stdout, out.stderr
    return out.stderr


def _wide(device) -> bool:
    """Whether a saxpy-shaped kernel is built 4-wide for ``device``."""
    from pygpgpu_translate import _cpu_choices
    return os.environ.get("PYGPGPU_WIDE_LOADS") != "0" and not _cpu_choices.on_cpu(device)


def _backend_name(selector: str) -> str:
    return registry.get_device(selector).selector.split(":")[0]


def test_basic_config_shows_translate_build_cache_and_launch(backend, tmp_path):
    cache = tmp_path / "cache"
    name = _backend_name(backend)
    selector = registry.get_device(backend).selector
    first = _run(tmp_path, backend, "basicConfig", cache)
    assert "pygpgpu.translate|DEBUG|translating saxpy_" in first and "generated-source cache key " in first
    assert f"pygpgpu.{name}|DEBUG|binary cache miss:" in first and "(key " in first
    assert f"pygpgpu.{name}|DEBUG|built " in first or f"pygpgpu.{name}|INFO|building " in first
    launches = [ln for ln in first.splitlines() if ln.startswith("pygpgpu.launch|DEBUG|launch saxpy_")]
    # saxpy is a wide kernel: 4 float32 elements per work item (docs/architecture.md), unless switched off
    # or the device is a CPU (one element per work item there: pygpgpu_translate._cpu_choices)
    items = 250 if _wide(registry.get_device(backend)) else 1000
    assert len(launches) == 2 and all(f"on {selector}: global ({items},)" in ln for ln in launches), launches
    # a second process finds both caches
    second = _run(tmp_path, backend, "basicConfig", cache)
    assert "pygpgpu.translate|DEBUG|generated-source cache hit: saxpy_" in second
    assert f"pygpgpu.{name}|DEBUG|binary cache hit:" in second
    assert "translating saxpy_" not in second and "binary cache miss" not in second


def test_silent_by_default_and_pygpgpu_debug_switches_it_on(backend, tmp_path):
    quiet = _run(tmp_path, backend, "plain", tmp_path / "c1")
    assert "pygpgpu" not in quiet
    loud = _run(tmp_path, backend, "plain", tmp_path / "c2", debug_env="1")
    assert "pygpgpu.translate: translating saxpy_" in loud and "pygpgpu.launch: launch saxpy_" in loud
    assert "pygpgpu" not in _run(tmp_path, backend, "plain", tmp_path / "c3", debug_env="0")
    # with the application's own logging configured, PYGPGPU_DEBUG adds no second copy
    both = _run(tmp_path, backend, "basicConfig", tmp_path / "c4", debug_env="1")
    lines = [ln for ln in both.splitlines() if "translating saxpy_" in ln]
    assert len(lines) == 1 and lines[0].startswith("pygpgpu.translate|DEBUG|"), both


def _fresh_kernel(tag: str):
    """A kernel whose source no cache has seen (a new constant in its text)."""
    from pygpgpu import kernel

    namespace: dict = {}
    path = Path(__file__).parent / "__pycache__" / f"logging_kernel_{tag}.py"
    path.parent.mkdir(exist_ok=True)
    path.write_text(textwrap.dedent(f'''
        from pygpgpu import kernel

        @kernel
        def add_{tag}(x, out):
            for i in range(out.shape[0]):
                out[i] = x[i] + {len(tag)}.5
    '''))
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    del kernel
    return namespace[f"add_{tag}"]


def test_a_slow_build_says_so_once_at_info(backend, monkeypatch, caplog, tmp_path):
    monkeypatch.setenv("PYGPGPU_CACHE_DIR", str(tmp_path))
    name = _backend_name(backend)
    x = np.arange(64, dtype=np.float32)
    out = np.zeros_like(x)
    monkeypatch.setattr(logs, "SLOW_BUILD_SECONDS", 1e9)
    with caplog.at_level(logging.INFO, logger="pygpgpu"):
        _fresh_kernel(f"fast{os.getpid()}_{tmp_path.name[-6:]}".replace("-", "_"))[backend](x, out)
    assert np.array_equal(out, x + np.float32(len(f"fast{os.getpid()}_{tmp_path.name[-6:]}") + 0.5))
    assert not [r for r in caplog.records if r.levelno >= logging.INFO]
    caplog.clear()
    monkeypatch.setattr(logs, "SLOW_BUILD_SECONDS", 0.0)  # every build counts as slow
    tag = f"slow{os.getpid()}_{tmp_path.name[-6:]}".replace("-", "_")
    with caplog.at_level(logging.INFO, logger="pygpgpu"):
        k = _fresh_kernel(tag)
        k[backend](x, out)
        k[backend](x, out)                     # warm: nothing more
    infos = [r for r in caplog.records if r.levelno == logging.INFO]
    assert len(infos) == 1 and infos[0].name == f"pygpgpu.{name}", [r.getMessage() for r in infos]
    assert "building add_" in infos[0].getMessage() and " took " in infos[0].getMessage()
    assert np.array_equal(out, x + np.float32(len(tag) + 0.5))


def test_warm_launches_make_no_logging_calls(backend, monkeypatch):
    from pygpgpu import kernel

    @kernel
    def triple(x, out):
        for i in range(out.shape[0]):
            out[i] = x[i] * 3

    x = np.arange(100, dtype=np.float32)
    out = np.zeros_like(x)
    triple[backend](x, out)                    # cold: translate and build
    calls = []
    for method in ("isEnabledFor", "debug", "info", "_log"):
        original = getattr(logging.Logger, method)

        def counting(self, *a, _original=original, _method=method, **kw):
            calls.append((_method, self.name))
            return _original(self, *a, **kw)
        monkeypatch.setattr(logging.Logger, method, counting)
    for _ in range(20):
        triple[backend](x, out)
    assert calls == []
    assert np.array_equal(out, x * 3)


def test_debug_on_when_a_kernel_is_prepared_logs_its_launches(backend, caplog):
    from pygpgpu import kernel

    @kernel
    def quadruple(x, out):
        for i in range(out.shape[0]):
            out[i] = x[i] * 4

    x = np.arange(50, dtype=np.float32)
    out = np.zeros_like(x)
    with caplog.at_level(logging.DEBUG, logger="pygpgpu"):
        quadruple[backend](x, out)
        quadruple[backend][(64, 32)](x, out)
    geometry = [r.getMessage() for r in caplog.records if r.name == "pygpgpu.launch"]
    device = registry.get_device(backend)
    selector = device.selector
    # a wide kernel: 4 elements per work item, so 50 elements (also the 64 the bracket reaches) take 13
    items = (13, 13) if _wide(device) else (50, 64)
    # an OpenCL GPU gets the group shape @kernel chooses (Device.guarded_local_size), a CPU one row
    # (pygpgpu_translate._cpu_choices), others the runtime's
    from pygpgpu_translate import _cpu_choices
    pick = getattr(device, "guarded_local_size", None)
    chosen = pick(1, 1024) if pick is not None else None
    limits = _cpu_choices.group_limits(device, None)
    if limits is not None:
        chosen = _cpu_choices.cpu_group_shape((items[0],), *limits)
    automatic = f"local {chosen}" if chosen else "local automatic"
    assert geometry == [f"launch quadruple on {selector}: global ({items[0]},), {automatic}",
                        f"launch quadruple on {selector}: global ({items[1]},), local (32,)"], geometry
    assert np.array_equal(out, x * 4)


def test_pygpgpu_warning_points_at_the_user_line(monkeypatch):
    import pygpgpu

    monkeypatch.syspath_prepend(str(Path(__file__).parent / "registry_dist"))
    registry.reset_registry()
    try:
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            registry.available_devices(); line = sys._getframe().f_lineno  # noqa: E702
        broken = [w for w in record if "broken on purpose" in str(w.message)]
        assert len(broken) == 1
        w = broken[0]
        assert issubclass(w.category, pygpgpu.PyGPGPUWarning) and issubclass(w.category, RuntimeWarning)
        assert (w.filename, w.lineno) == (__file__, line)
    finally:
        registry.reset_registry()


def test_cache_warning_is_a_pygpgpu_warning():
    import pygpgpu
    from pygpgpu_core.cache import CacheWarning

    assert issubclass(CacheWarning, pygpgpu.PyGPGPUWarning) and issubclass(pygpgpu.PyGPGPUWarning, UserWarning)


def test_kernel_files_log_their_binary_loads_and_launches(tmp_path, caplog, monkeypatch):
    """An imported .cl file under DEBUG logs, like @kernel: the compiled binary loaded back from
    __clcache__ (with its key) and each launch's geometry; neither was logged, so PYGPGPU_DEBUG
    showed nothing for a kernel file once its binary was cached."""
    from conftest import first_device
    from pygpgpu_core import kernel_files as kf

    device = first_device("opencl")
    monkeypatch.setenv("PYGPGPU_CACHE_DIR", str(tmp_path / "cache"))
    src = tmp_path / "vecadd.cl"
    src.write_text((Path(__file__).parent / "kernel_files" / "vecadd.cl").read_text()
                   + f"// {tmp_path.name}\n")
    a = np.arange(100, dtype=np.float32)
    out = np.zeros_like(a)
    kf.load(src).vecadd[device.selector](a, a, out, 100)          # built and kept beside the file
    with caplog.at_level(logging.DEBUG, logger="pygpgpu"):
        kf.load(src).vecadd[device.selector][(128, 64)](a, a, out, 100)    # a new module: loaded back
    messages = [(r.name, r.getMessage()) for r in caplog.records]
    assert any(name == "pygpgpu.opencl" and "binary loaded from" in m and str(src) in m and "key" in m
               for name, m in messages), messages
    assert ("pygpgpu.launch", f"launch vecadd on {device.selector}: global (128,), local (64,)") in messages
    np.testing.assert_array_equal(out, 2 * a)
