"""The example programs in examples/: each one run at a small size on each test backend and its
result checked against numpy; each one run as a script once; pictures written with Pillow, or
skipped with a note without it."""
from __future__ import annotations

import importlib
import os
import resource
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from pygpgpu_core import registry
from conftest import assert_code_object, assert_cubin, skip_no_device

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
SCRIPTS = sorted(p.name for p in EXAMPLES.glob("[0-9][0-9]_*.py"))
SMALL = {"01_saxpy.py": 1000, "02_monte_carlo_pi.py": 512, "03_heat_diffusion.py": 40, "04_mandelbrot.py": 90,
         "05_nbody.py": 64, "06_histogram.py": 5000, "07_blur_rgb.py": 48, "08_compare_backends.py": 2000,
         "09_handwritten_kernel.py": 3000, "10_class_kernels.py": 1000, "11_prefix_sum.py": 3000}

try:
    import PIL  # noqa: F401
    HAVE_PILLOW = True
except ImportError:
    HAVE_PILLOW = False


@pytest.fixture
def example(monkeypatch, tmp_path, backend):
    """``example("04_mandelbrot")`` -> the module, running on ``backend``, pictures in tmp_path."""
    monkeypatch.syspath_prepend(str(EXAMPLES))
    monkeypatch.setenv("PYGPGPU_EXAMPLE_OUT", str(tmp_path))
    monkeypatch.setenv("PYGPGPU_BACKEND", backend)     # the examples use the default device

    def fresh_import(name):
        # a fresh module per test: a module-level @kernel keeps the default device of its first
        # call, so a module cached by the previous backend's test would run there again
        monkeypatch.delitem(sys.modules, name, raising=False)
        return importlib.import_module(name)

    return fresh_import


def _png_size(path: Path) -> "tuple[int, int]":
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", path
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


def _check_picture(tmp_path: Path, name: str, capsys, size: "tuple[int, int] | None" = None) -> None:
    text = capsys.readouterr().out
    if HAVE_PILLOW:
        assert (tmp_path / name).exists(), text
        if size is not None:
            assert _png_size(tmp_path / name) == size
    else:
        assert f"skipped the picture {name}" in text or f"skipped the chart {name}" in text


def test_every_example_is_tested():
    assert set(SCRIPTS) == set(SMALL), "add the new example to SMALL and give it a test here"
    assert "08_compare_backends.py" in SCRIPTS


def _ran_only_on(kf, backend):
    """Every plan of the example's kernel is on the test's device (a module kept from the previous
    backend's test would still launch there)."""
    dev = registry.get_device(backend)
    assert kf._plans and all(p.device is dev for p in kf._plans.values()), [p.device for p in kf._plans.values()]


def test_saxpy(example, backend):
    mod = example("01_saxpy")
    r = mod.main(SMALL["01_saxpy.py"])
    np.testing.assert_allclose(r["out"], np.float32(2) * r["x"] + r["y"], rtol=1e-6)
    _ran_only_on(mod.saxpy, backend)


def test_monte_carlo_pi_counts_match_the_host_generator(example):
    mod = example("02_monte_carlo_pi")
    n = SMALL["02_monte_carlo_pi.py"]
    r = mod.main(n)
    # gpu.uniform on numpy counters: the same floats, and the circle test is exact in float64
    np.testing.assert_array_equal(r["hits"], mod.host_hits(n, r["seed"]))
    assert r["pi"] == 4.0 * int(mod.host_hits(n, r["seed"]).sum()) / (n * mod.SAMPLES)
    assert abs(r["pi"] - np.pi) < 0.05
    other = mod.main(n, seed=r["seed"] + 1)
    assert not np.array_equal(other["hits"], r["hits"])           # the seed is a kernel argument
    np.testing.assert_array_equal(other["hits"], mod.host_hits(n, r["seed"] + 1))


def test_heat_diffusion(example, backend, tmp_path, capsys):
    mod = example("03_heat_diffusion")
    r = mod.main(SMALL["03_heat_diffusion.py"], steps=30)
    np.testing.assert_allclose(r["result"], mod.host_steps(r["initial"], 30), atol=1e-3)
    _ran_only_on(r["kernel"], backend)
    _check_picture(tmp_path, "heat_diffusion.png", capsys, (40, 40))
    # alpha is a closure constant of make_diffuse: another value is compiled in anew
    slow = mod.main(SMALL["03_heat_diffusion.py"], steps=30, alpha=0.05)
    np.testing.assert_allclose(slow["result"], mod.host_steps(slow["initial"], 30, 0.05), atol=1e-3)
    assert np.abs(slow["result"] - r["result"]).max() > 1.0
    with pytest.raises(ValueError, match="alpha"):
        mod.make_diffuse(0.3)


def test_mandelbrot(example, tmp_path, capsys):
    mod = example("04_mandelbrot")
    r = mod.main(SMALL["04_mandelbrot.py"])
    host = mod.host_mandelbrot(*r["counts"].shape, r["x0"], r["y0"], r["step"])
    # float32 on both sides; a contracted multiply-add can flip a pixel on the set's boundary
    assert np.mean(r["counts"] != host) < 0.01
    assert 0 < np.count_nonzero(r["counts"] == mod.MAX_ITER) < r["counts"].size
    _check_picture(tmp_path, "mandelbrot.png", capsys, (90, 60))


def test_nbody_record_array(example):
    mod = example("05_nbody")
    r = mod.main(SMALL["05_nbody.py"], steps=1)
    assert r["bodies"].dtype == mod.PARTICLE
    want = mod.host_step(r["start"])
    np.testing.assert_allclose(r["bodies"]["pos"], want["pos"], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(r["bodies"]["vel"], want["vel"], rtol=1e-3, atol=1e-5)
    np.testing.assert_array_equal(r["bodies"]["mass"], r["start"]["mass"])
    assert np.abs(r["bodies"]["vel"] - r["start"]["vel"]).max() > 0
    b = r["bodies"]
    momentum = (b["vel"].astype(np.float64) * b["mass"][:, None]).sum(0)
    np.testing.assert_allclose(r["momentum"], momentum, rtol=1e-4, atol=1e-6)


def test_histogram_atomics(example):
    mod = example("06_histogram")
    r = mod.main(SMALL["06_histogram.py"])
    bins = np.minimum((r["data"] * np.float32(mod.BINS)).astype(np.int64), mod.BINS - 1)
    np.testing.assert_array_equal(r["counts"], np.bincount(bins, minlength=mod.BINS))


def test_blur_rgb_uint8(example, tmp_path, capsys):
    mod = example("07_blur_rgb")
    r = mod.main(SMALL["07_blur_rgb.py"])
    assert r["out"].dtype == np.uint8
    np.testing.assert_array_equal(r["out"], mod.host_blur(r["img"]))
    _check_picture(tmp_path, "blur_rgb.png", capsys, (96, 27))


def test_compare_backends_runs_every_device(example, tmp_path, capsys):
    mod = example("08_compare_backends")
    r = mod.main(SMALL["08_compare_backends.py"], repeats=2)
    assert [s for s, _, _ in r["rows"]] == registry.available_devices()
    for selector, out in r["outputs"].items():
        np.testing.assert_allclose(out, mod.host_iterate(r["inputs"][selector]), rtol=1e-4, err_msg=selector)
    text = capsys.readouterr().out
    assert all(s in text for s in r["outputs"])
    if HAVE_PILLOW:
        width, height = _png_size(tmp_path / "compare_backends.png")
        assert height == 40 + 28 * len(r["rows"])
    else:
        assert "skipped the chart compare_backends.png" in text


def test_handwritten_cl_kernel(example, backend):
    if registry.get_device(backend).selector.split(":")[0] != "opencl":
        pytest.skip("color_ops.cl is OpenCL C: it runs on OpenCL devices only")
    mod = example("09_handwritten_kernel")
    r = mod.main(SMALL["09_handwritten_kernel.py"])
    out, luma = mod.host_adjust(r["rgba"], r["gain"], r["offset"])
    np.testing.assert_array_equal(r["out"], out)
    np.testing.assert_allclose(r["luma"], luma, rtol=1e-5, atol=1e-3)


def test_prefix_sum_block_scan(example):
    mod = example("11_prefix_sum")
    r = mod.main(SMALL["11_prefix_sum.py"])
    np.testing.assert_array_equal(r["result"], np.cumsum(r["x"]))
    r = mod.main(mod.BLOCK * mod.BLOCK + 5)          # more than BLOCK blocks: two levels of block totals
    np.testing.assert_array_equal(r["result"], np.cumsum(r["x"]))
    for n in (1, mod.BLOCK):
        r = mod.main(n)
        np.testing.assert_array_equal(r["result"], np.cumsum(r["x"]))


def _example_kernel_launches(monkeypatch):
    """(kernel, args) for the kernels of the issue-15 examples (random numbers, a closure, a
    record array with print(), a private array and a tuple helper, local memory and barriers)."""
    monkeypatch.syspath_prepend(str(EXAMPLES))
    mods = {name: importlib.import_module(name) for name in
            ("02_monte_carlo_pi", "03_heat_diffusion", "05_nbody", "07_blur_rgb", "11_prefix_sum")}
    bodies = mods["05_nbody"].initial_bodies(8)
    grid = np.zeros((8, 8), np.float32)
    img = np.zeros((6, 8, 3), np.uint8)
    x = np.zeros(300, np.int32)
    return [(mods["02_monte_carlo_pi"].count_hits, (np.zeros(4, np.int32), 7)),
            (mods["03_heat_diffusion"].make_diffuse(0.1), (grid, grid.copy())),
            (mods["05_nbody"].nbody_step, (bodies, bodies.copy())),
            (mods["05_nbody"].summary, (bodies, np.zeros((1, 3), np.float32))),
            (mods["07_blur_rgb"].blur, (img, img.copy())),
            (mods["11_prefix_sum"].scan_blocks, (x, x.copy(), np.zeros(2, np.int32))),
            (mods["11_prefix_sum"].add_offsets, (x, np.zeros(2, np.int32)))]


def test_example_kernels_compile_for_cuda(monkeypatch, nvrtc_compile):
    for k, args in _example_kernel_launches(monkeypatch):
        source = k.inspect(*args, backend="cuda").source
        assert_cubin(nvrtc_compile(source, "sm_90"), source)


def test_example_kernels_compile_for_hip(monkeypatch, hiprtc_compile):
    for k, args in _example_kernel_launches(monkeypatch):
        source = k.inspect(*args, backend="hip").source
        assert_code_object(hiprtc_compile(source, "gfx90a"), source)


def test_class_kernels(example):
    r = example("10_class_kernels").main(SMALL["10_class_kernels.py"])
    np.testing.assert_allclose(r["first"], np.maximum(r["x"] * r["weights"] + np.float32(0.5), 0), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(r["second"], np.maximum(r["x"] * r["weights"] - np.float32(0.25), 0), rtol=1e-5, atol=1e-6)


def test_pictures_are_skipped_with_a_note_without_pillow(example, tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "PIL", None)          # `from PIL import ...` now raises ImportError
    r = example("04_mandelbrot").main(30)
    assert r["counts"].shape == (20, 30)
    assert "skipped the picture mandelbrot.png: Pillow is not installed" in capsys.readouterr().out
    assert not (tmp_path / "mandelbrot.png").exists()


# What a newcomer's `python examples/NAME.py` may cost on a 2-core CPU: 10 s of wall time, counted as
# 20 s of CPU time (both cores busy), because the wall clock of a shared CI machine is noisy.
DEFAULT_RUN_CPU_SECONDS = 20.0


@pytest.mark.parametrize("script", SCRIPTS)
def test_example_runs_as_a_script_at_its_default_size(script, tmp_path):
    """Run as a newcomer runs it (no size argument): it finishes in seconds on the test device."""
    if not registry.available_devices():
        skip_no_device("any", "no device: the examples need one")
    env = {**os.environ, "PYGPGPU_EXAMPLE_OUT": str(tmp_path)}
    env.pop("PYGPGPU_EXAMPLE_SIZE", None)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run([sys.executable, str(EXAMPLES / script)], capture_output=True,
                         text=True, env=env, cwd=tmp_path, timeout=300)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert out.returncode == 0, out.stderr
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    assert cpu < DEFAULT_RUN_CPU_SECONDS, f"{script} took {cpu:.1f} s of CPU time at its default size"
    assert out.stdout.strip() and "Traceback" not in out.stderr
    if script == "05_nbody.py":                      # print() in a kernel: device printf
        assert "total momentum float3(" in out.stdout, out.stdout


def test_demo_still_runs():
    if not registry.available_devices():
        skip_no_device("any", "no device: the demo needs one")
    out = subprocess.run([sys.executable, str(EXAMPLES / "demo.py")], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and "result check: OK" in out.stdout, out.stderr


def test_compare_backends_sizes_per_device_and_shows_progress(example, capsys):
    """Without a size, a CPU device gets the small size (4M values took two minutes on PoCL) and
    each device's line is printed before its work starts."""
    mod = example("08_compare_backends")
    r = mod.main(repeats=1)
    text = capsys.readouterr().out
    for selector, x in r["inputs"].items():
        dev = registry.get_device(selector)
        assert len(x) == (mod.CPU_SIZE if getattr(dev, "is_cpu", False) else mod.GPU_SIZE)
        assert f"{selector}: {len(x):,} values" in text
        np.testing.assert_allclose(r["outputs"][selector], mod.host_iterate(x), rtol=1e-4, err_msg=selector)
