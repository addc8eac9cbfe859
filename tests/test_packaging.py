"""The seven distributions: one version, LICENSE and PEP 639 metadata in every wheel and sdist,
a real README on each index page, NVRTC only where NVIDIA ships it, and the hint a base install
without a backend gives. Builds run hatchling from this venv (no index needed)."""
from __future__ import annotations

import email
import importlib.util
import re
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from pathlib import Path

import pygpgpu_core
import pytest

from conftest import skip_no_compiler

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = sorted(p.parent for p in (ROOT / "packages").glob("*/pyproject.toml"))
VERSION_FILE = ROOT / "packages/pygpgpu-core/src/pygpgpu_core/_version.py"
VERSION = re.search(r'^__version__ = "([^"]+)"$', VERSION_FILE.read_text(), re.M).group(1)


def _pyproject(pkg: Path) -> dict:
    return tomllib.loads((pkg / "pyproject.toml").read_text())


def _build(pkg: Path, out: Path, *targets: str) -> None:
    # The build backend is a tool like a compiler: `make test` and CI install it; a machine without
    # it (the GPU machine has no package index) skips, unless PYGPGPU_REQUIRE_COMPILERS=1.
    if importlib.util.find_spec("hatchling") is None:
        skip_no_compiler("hatchling", f"{sys.executable} cannot import hatchling (pip install 'hatchling>=1.27')")
    flags = [arg for target in targets for arg in ("-t", target)]
    built = subprocess.run([sys.executable, "-m", "hatchling", "build", *flags, "-d", str(out)],
                           cwd=pkg, check=False, capture_output=True, text=True)
    assert built.returncode == 0, f"hatchling build of {pkg.name} failed:\n{built.stdout}{built.stderr}"


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    for pkg in PACKAGES:
        _build(pkg, out)
    return out


def test_seven_packages_found():
    assert [p.name for p in PACKAGES] == ["pygpgpu", "pygpgpu-core", "pygpgpu-cuda", "pygpgpu-hip",
                                          "pygpgpu-opencl", "pygpgpu-translate", "pygpgpu-webgpu"]


@pytest.mark.parametrize("pkg", PACKAGES, ids=lambda p: p.name)
def test_version_is_read_from_the_one_version_file(pkg):
    data = _pyproject(pkg)
    assert "version" not in data["project"] and data["project"]["dynamic"] == ["version"]
    assert (pkg / data["tool"]["hatch"]["version"]["path"]).resolve() == VERSION_FILE


def test_every_runtime_version_is_the_shared_one():
    import pygpgpu
    import pygpgpu_cuda
    import pygpgpu_hip
    import pygpgpu_opencl
    import pygpgpu_translate
    from pygpgpu_core import cache

    versions = {m.__name__: m.__version__ for m in (pygpgpu, pygpgpu_core, pygpgpu_translate, pygpgpu_opencl,
                                                     pygpgpu_cuda, pygpgpu_hip)}
    versions["cache.PACKAGE_VERSION"] = cache.PACKAGE_VERSION
    assert set(versions.values()) == {VERSION}, versions


def test_internal_pins_follow_the_version():
    # Members are released together and pin each other to the version's minor series.
    series = ".".join(VERSION.split(".")[:2]) + ".*"
    pins = []
    for pkg in PACKAGES:
        project = _pyproject(pkg)["project"]
        reqs = list(project.get("dependencies", []))
        for extra in project.get("optional-dependencies", {}).values():
            reqs += extra
        pins += [r for r in reqs if r.startswith("pygpgpu")]
    assert pins and all(re.fullmatch(rf"pygpgpu(-[a-z]+)?=={re.escape(series)}", p) for p in pins), pins


@pytest.mark.parametrize("pkg", PACKAGES, ids=lambda p: p.name)
def test_license_copy_and_readme_stand_alone(pkg):
    assert (pkg / "LICENSE").read_bytes() == (ROOT / "LICENSE").read_bytes()
    readme = (pkg / "README.md").read_text()
    # the README is the package's index page: links into the repository would be dead there
    assert "](../" not in readme and "](docs/" not in readme
    assert len(readme.split()) > 60


def test_wheels_and_sdists_carry_license_and_pep639_metadata(dist):
    license_text = (ROOT / "LICENSE").read_bytes()
    wheels = sorted(dist.glob("*.whl"))
    sdists = sorted(dist.glob("*.tar.gz"))
    assert len(wheels) == 7 and len(sdists) == 7
    for wheel in wheels:
        with zipfile.ZipFile(wheel) as z:
            info = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA")).rsplit("/", 1)[0]
            assert z.read(f"{info}/licenses/LICENSE") == license_text, wheel.name
            meta = email.message_from_bytes(z.read(f"{info}/METADATA"))
        assert meta["Version"] == VERSION
        assert meta["License-Expression"] == "MIT" and meta["License-File"] == "LICENSE"
        classifiers = meta.get_all("Classifier")
        assert not [c for c in classifiers if c.startswith("License ::")], wheel.name
        assert "Typing :: Typed" in classifiers and "Programming Language :: Python :: 3.13" in classifiers
        assert {u.split(",")[0] for u in meta.get_all("Project-URL")} >= {"Source", "Documentation", "Issues"}
        assert meta["Description-Content-Type"] == "text/markdown" and "](../" not in meta.get_payload()
    for sdist in sdists:
        with tarfile.open(sdist) as t:
            top = sdist.name[: -len(".tar.gz")]
            assert t.extractfile(f"{top}/LICENSE").read() == license_text
            assert f"{top}/PKG-INFO" in t.getnames()


def test_a_wheel_builds_from_an_unpacked_sdist(dist, tmp_path):
    # The version file lives in pygpgpu-core; an sdist of another package must not need it.
    with tarfile.open(dist / f"pygpgpu_cuda-{VERSION}.tar.gz") as t:
        t.extractall(tmp_path, filter="data") if sys.version_info >= (3, 12) else t.extractall(tmp_path)
    _build(tmp_path / f"pygpgpu_cuda-{VERSION}", tmp_path / "out", "wheel")
    assert (tmp_path / "out" / f"pygpgpu_cuda-{VERSION}-py3-none-any.whl").exists()


def test_cuda_extras_pull_nvrtc_only_where_nvidia_ships_wheels():
    from packaging.requirements import Requirement
    from pygpgpu_cuda._nvrtc import NVRTC_WHEEL_PLATFORMS

    extras = _pyproject(ROOT / "packages/pygpgpu")["project"]["optional-dependencies"]
    nvrtc = [Requirement(r) for name in ("cuda", "cu12", "cu13", "all") for r in extras[name] if "nvrtc" in r]
    assert len(nvrtc) == 4
    machines = {("linux", "x86_64"), ("linux", "aarch64"), ("linux", "ppc64le"), ("darwin", "arm64"),
                ("win32", "AMD64"), ("win32", "ARM64")}
    for req in nvrtc:
        for plat, machine in machines:
            wanted = (plat, machine) in NVRTC_WHEEL_PLATFORMS
            assert req.marker.evaluate({"sys_platform": plat, "platform_machine": machine}) == wanted, (req, plat)


def test_nvrtc_hint_off_the_wheel_platforms_names_the_library_variable(monkeypatch):
    from pygpgpu_cuda import _nvrtc

    monkeypatch.setattr(sys, "platform", "darwin")
    hint = _nvrtc._install_hint()
    assert "no nvidia-cuda-nvrtc wheel for darwin" in hint and "PYGPGPU_NVRTC_LIB" in hint


def test_a_base_install_without_a_backend_names_the_pip_extra(monkeypatch):
    from pygpgpu_core import registry
    from pygpgpu_core.errors import DeviceNotFound

    monkeypatch.delenv("PYGPGPU_BACKEND", raising=False)
    registry.reset_registry()
    try:
        monkeypatch.setattr(registry, "_entry_points", {})   # as if no backend distribution were installed
        with pytest.raises(DeviceNotFound) as err:
            registry.get_device()
        message = str(err.value)
        assert "'pygpgpu[opencl]'" in message and "--no-index --find-links dist" in message
        assert "apt-get" not in message
    finally:
        monkeypatch.undo()
        registry.reset_registry()


def test_the_core_wheel_carries_the_native_launchers_source_and_no_build_of_it(dist):
    """`pygpgpu build-native` compiles the source the installed wheel holds; a module built in
    this checkout (ignored by git) must not end up in the wheel, built for one Python."""
    (wheel,) = dist.glob("pygpgpu_core-*.whl")
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
    assert "pygpgpu_core/backend/_native_launch.c" in names
    assert not [n for n in names if "_native_launch" in n and n.endswith((".so", ".pyd"))]
