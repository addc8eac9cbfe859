"""Import machinery for kernel files: finder, module contents, .pyi stubs, caches (no device needed)."""
from __future__ import annotations

import ast
import importlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from pygpgpu_core import kernel_files as kf
from pygpgpu_core.cache import cache_dir
from pygpgpu_core.kernel_files import CStruct, FileKernel, parse_work_size

DATA = Path(__file__).parent / "kernel_files"


@pytest.fixture
def kdir(tmp_path):
    """A private copy of tests/kernel_files on sys.path with the .cl finder installed."""
    folder = tmp_path / "k"
    shutil.copytree(DATA, folder)
    sys.path.insert(0, str(folder))
    had = "cl" in kf.installed()
    kf.install("cl")
    before = set(sys.modules)
    yield folder
    for name in set(sys.modules) - before:
        mod = sys.modules[name]
        if str(getattr(mod, "__file__", "") or "").startswith(str(folder)) or name == "clpkg":
            del sys.modules[name]
    sys.path.remove(str(folder))
    if not had:
        kf.uninstall("cl")


def test_install_is_idempotent_and_validates_kind():
    had = "hip" in kf.installed()
    f1 = kf.install("hip")
    f2 = kf.install("hip")
    assert f1 is f2 and kf.installed().count("hip") == 1
    assert sys.meta_path.count(f1) == 1
    if not had:
        kf.uninstall("hip")
        assert "hip" not in kf.installed()
    with pytest.raises(ValueError, match="cl, cu, hip"):
        kf.install("metal")


def test_import_builds_kernels_structs_and_constants(kdir):
    import particles

    assert particles.__file__ == str(kdir / "particles.cl")
    assert particles.__kernels__ == ["advance", "scale", "pair_sum"]
    assert isinstance(particles.advance, FileKernel)
    assert particles.advance.prototype == ("__kernel void advance(__global Particle* ps, const Force f, const float dt, "
                                        "const int n)")
    assert particles.SCALE == 2 and particles.MAX_PARTICLES == 1024 and particles.FLAG_ACTIVE == 4
    assert issubclass(particles.Particle, CStruct) and particles.Particle.__module__ == "particles"
    assert particles.Particle.dtype.itemsize == 48 and particles.Force.dtype.itemsize == 32
    assert particles.Pair.value.offset == 8
    assert particles.scale.access == {"x": "read", "out": "readwrite", "n": "value"}
    assert "particles.cl:" in particles.advance.__doc__
    with pytest.raises(AttributeError, match="kernels: advance, scale, pair_sum"):
        particles.nothing_here


def test_import_does_not_load_a_backend(tmp_path):
    shutil.copy(DATA / "vecadd.cl", tmp_path)
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]);"
        "from pygpgpu_core.kernel_files import install; install('cl');"
        "import vecadd; print(vecadd.vecadd.name, 'pygpgpu_opencl' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["vecadd", "False"]


def test_package_submodule_import(kdir):
    import clpkg.kernels

    assert clpkg.kernels.__kernels__ == ["twice"]
    assert clpkg.kernels.__name__ == "clpkg.kernels"
    assert clpkg.kernels.__file__ == str(kdir / "clpkg" / "kernels.cl")


def test_python_module_wins_over_kernel_file(kdir):
    (kdir / "vecadd.py").write_text("WHO = 'python'\n")
    importlib.invalidate_caches()
    import vecadd

    assert vecadd.WHO == "python"


def test_bad_signature_leaves_out_that_kernel_only_naming_file_and_line(kdir):
    with pytest.warns(kf.KernelFileWarning, match=r"kernel 'broken' is left out of the module: .*bad_signature.cl:5:"):
        import bad_signature
    assert bad_signature.__kernels__ == ["fine"] and callable(bad_signature.fine)
    with pytest.raises(AttributeError) as info:
        bad_signature.broken
    assert f"{kdir / 'bad_signature.cl'}:5:" in str(info.value)
    assert "mystery_t" in str(info.value) and "kernel 'broken' of bad_signature.cl" in str(info.value)


def test_mangled_cuda_kernel_explains_extern_c(tmp_path):
    shutil.copy(DATA / "vecadd.cu", tmp_path)
    m = kf.load(tmp_path / "vecadd.cu")
    assert m.__kernels__ == ["vecadd", "bodies_mass"] and m.BLOCK == 256
    with pytest.raises(AttributeError, match='extern "C"'):
        m.mangled
    shutil.copy(DATA / "template_kernel.cu", tmp_path)
    t = kf.load(tmp_path / "template_kernel.cu")
    assert t.__kernels__ == []
    with pytest.raises(AttributeError, match=r"template_kernel.cu:1: template kernels are not supported"):
        t.scale


def test_stub_is_written_beside_the_source(kdir):
    import particles
    import vecadd

    text = (kdir / "vecadd.pyi").read_text()
    tree = ast.parse(text)
    compile(tree, "vecadd.pyi", "exec")
    assert ("def __call__(self, a: npt.NDArray[np.float32] | DeviceArray, b: npt.NDArray[np.float32] | DeviceArray, "
            "out: npt.NDArray[np.float32] | DeviceArray, n: int | np.int32) -> None:") in text
    assert vecadd.vecadd.prototype in text and "vecadd: _vecadd_kernel" in text
    assert "a: __global const float* a (read-only: uploaded, not read back)" in text
    ptext = (kdir / "particles.pyi").read_text()
    ast.parse(ptext)
    assert "class Particle(CStruct):" in ptext and "    pos: CVector" in ptext and "    mass: float" in ptext
    assert "SCALE: int" in ptext and "MAX_PARTICLES: int" in ptext
    assert "f: Force" in ptext and "dt: float | np.float32" in ptext
    assert "Particle: 48 bytes, aligned 16 (opencl layout)" in ptext
    assert particles.__kernels__  # the module imported fine alongside its stub



def test_a_stub_written_by_hand_is_left_alone(kdir):
    """A vecadd.pyi that pygpgpu did not generate (written by hand, another tool's) is not
    overwritten on import: it was replaced, its content lost. A generated one is still updated."""
    mine = '"""My own stub."""\ndef vecadd(*args: object) -> None: ...\n'
    (kdir / "vecadd.pyi").write_text(mine)
    import vecadd

    assert vecadd.__kernels__ == ["vecadd"] and (kdir / "vecadd.pyi").read_text() == mine
    kf.load(kdir / "saxpy.cl")
    generated = (kdir / "saxpy.pyi").read_text()
    (kdir / "saxpy.pyi").write_text(generated.replace("daxpy", "old_name"))
    kf.load(kdir / "saxpy.cl")
    assert (kdir / "saxpy.pyi").read_text() == generated

def test_stub_skipped_silently_when_it_cannot_be_written(kdir):
    (kdir / "vecadd.pyi").mkdir()  # a directory where the stub would go: writing fails
    import vecadd

    assert vecadd.__kernels__ == ["vecadd"] and (kdir / "vecadd.pyi").is_dir()


def test_metadata_cache_is_used_and_invalidated_by_include_mtime(kdir):
    first = kf.load(kdir / "particles.cl")
    meta = kdir / "__clcache__" / "particles_cl.meta.json"
    doc = json.loads(meta.read_text())
    assert set(doc["stamps"]) == {str(kdir / "particles.cl"), str(kdir / "particles.h")}
    assert first.SCALE == 2
    # Plant a marker in the cached parse: a load that uses the cache sees it.
    parsed = json.loads(doc["parsed"])
    parsed["constants"]["SCALE"] = 99
    doc["parsed"] = json.dumps(parsed)
    meta.write_text(json.dumps(doc))
    assert kf.load(kdir / "particles.cl").SCALE == 99
    # A later mtime on the header (content unchanged) invalidates it: parsed again.
    st = os.stat(kdir / "particles.h")
    os.utime(kdir / "particles.h", ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))
    assert kf.load(kdir / "particles.cl").SCALE == 2
    assert json.loads(json.loads(meta.read_text())["parsed"])["constants"]["SCALE"] == 2


def test_corrupt_metadata_is_reparsed(kdir):
    kf.load(kdir / "vecadd.cl")
    meta = kdir / "__clcache__" / "vecadd_cl.meta.json"
    meta.write_text("{ not json")
    assert kf.load(kdir / "vecadd.cl").__kernels__ == ["vecadd"]
    assert json.loads(meta.read_text())["stamps"]


def test_unwritable_cache_folder_falls_back_to_user_cache(kdir):
    (kdir / "__clcache__").write_text("a file where the cache folder would go")
    m = kf.load(kdir / "saxpy.cl")
    assert m.__kernels__ == ["saxpy", "daxpy", "offset_index"]
    fallback = list((cache_dir() / "kernel_files").glob("*/__clcache__/saxpy_cl.meta.json"))
    assert any(json.loads(p.read_text())["source"] == str(kdir / "saxpy.cl") for p in fallback)


def test_reload_picks_up_edits(kdir):
    import vecadd

    assert vecadd.__kernels__ == ["vecadd"]
    src = kdir / "vecadd.cl"
    src.write_text(src.read_text() + "\n__kernel void extra(__global int* x) { x[0] = 1; }\n")
    st = os.stat(src)
    os.utime(src, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))
    importlib.reload(vecadd)
    assert vecadd.__kernels__ == ["vecadd", "extra"]


def test_argument_count_errors_name_kernel_and_prototype(kdir):
    import vecadd

    a = np.zeros(4, np.float32)
    with pytest.raises(TypeError, match=r"kernel 'vecadd' takes 4 arguments but 3 were given; its C prototype is: "
                                        r"__kernel void vecadd\(__global const float\* a"):
        vecadd.vecadd(a, a, a)
    with pytest.raises(TypeError, match="missing argument 'n'"):
        vecadd.vecadd(a, a, out=a)
    with pytest.raises(TypeError, match="unexpected argument 'm'"):
        vecadd.vecadd(a, a, a, n=1, m=2)


def test_wrong_backend_family_in_bracket(kdir):
    import vecadd

    a = np.zeros(4, np.float32)
    with pytest.raises(ValueError, match="vecadd.cl is opencl source and cannot run on the 'cuda' backend"):
        vecadd.vecadd["cuda"](a, a, a, 4)


def test_brackets_chain_in_any_order(kdir):
    import vecadd

    k = vecadd.vecadd[(1000, 256)]["opencl:0"]
    assert k._selector == "opencl:0" and k._work == ((1000,), (256,))
    k2 = vecadd.vecadd["opencl", (64, 8)]
    assert k2._selector == "opencl" and k2._work == ((64,), (8,))
    assert "opencl:0" in repr(k) and "vecadd.cl" in repr(k)


@pytest.mark.parametrize("config, expected", [
    (1024, ((1024,), None)),
    ((1024, 256), ((1024,), (256,))),
    ((1024, None), ((1024,), None)),
    ((None, 64), (None, (64,))),
    (((64, 32), (8, 8)), ((64, 32), (8, 8))),
    ((np.int64(100),), ((100,), None)),
])
def test_parse_work_size(config, expected):
    assert parse_work_size(config) == expected


@pytest.mark.parametrize("config", [(1, 2, 3), "x", ((1, 2, 3, 4), None), (-1, 4), True])
def test_parse_work_size_rejects(config):
    with pytest.raises((TypeError, ValueError)):
        parse_work_size(config)


def test_binary_cache_entries_per_device_replace_older_ones(tmp_path):
    from types import SimpleNamespace

    from pygpgpu_core.kernel_files._cache import SourceCache

    src = tmp_path / "vecadd.cl"
    shutil.copy(DATA / "vecadd.cl", src)
    cache = SourceCache(src, "__clcache__")
    dev = SimpleNamespace(backend=SimpleNamespace(name="opencl"), arch="gfx1036", name="Radeon")
    other = SimpleNamespace(backend=SimpleNamespace(name="opencl"), arch="sm_90", name="H200")
    cache.store_binary(dev, "a" * 64, b"old binary")
    cache.store_binary(other, "c" * 64, b"other device")
    assert cache.load_binary(dev, "a" * 64) == b"old binary"
    cache.store_binary(dev, "b" * 64, b"new binary")  # the file changed: the stale entry goes
    assert cache.load_binary(dev, "a" * 64) is None
    assert cache.load_binary(dev, "b" * 64) == b"new binary"
    assert cache.load_binary(other, "c" * 64) == b"other device"
    names = sorted(p.name for p in (tmp_path / "__clcache__").glob("*.bin"))
    assert names == [f"vecadd_cl.opencl-gfx1036-{'b' * 20}.bin", f"vecadd_cl.opencl-sm_90-{'c' * 20}.bin"]
    path = tmp_path / "__clcache__" / names[0]
    path.write_bytes(path.read_bytes()[:-1] + b"X")  # corrupt entries are dropped, never trusted
    assert cache.load_binary(dev, "b" * 64) is None and not path.exists()
