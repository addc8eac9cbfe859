"""The HIP code-object disk cache: a hit skips the compiler, every key input forces a rebuild."""
from __future__ import annotations

import pytest

from conftest import skip_no_compiler

SOURCE = 'extern "C" __global__ void fill(float* x, int n) { int i = threadIdx.x; if (i < n) x[i] = VALUE; }\n'


@pytest.fixture
def counted(hiprtc_compile, tmp_path, monkeypatch):
    """compile_cached in a private cache folder, counting real compiler runs."""
    from pygpgpu_hip import compiler

    monkeypatch.setenv("PYGPGPU_CACHE_DIR", str(tmp_path))
    calls = []
    real = compiler.compile_with_log

    def counting(*args, **kwargs):
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(compiler, "compile_with_log", counting)
    return compiler.compile_cached, calls, tmp_path


def test_second_build_is_a_cache_hit(counted):
    compile_cached, calls, folder = counted
    first = compile_cached(SOURCE, "gfx1030", ["-DVALUE=1.0f"])
    second = compile_cached(SOURCE, "gfx1030", ["-DVALUE=1.0f"])
    assert first == second and first[:4] == b"\x7fELF"
    assert len(calls) == 1
    assert len(list((folder / "hip").glob("*.hsaco"))) == 1


@pytest.mark.parametrize("change", ["source", "arch", "options", "compiler", "package_version"])
def test_each_key_input_forces_a_rebuild(counted, monkeypatch, change):
    compile_cached, calls, _ = counted
    source, arch, options = SOURCE, "gfx1030", ["-DVALUE=1.0f"]
    compile_cached(source, arch, options)
    if change == "source":
        source = SOURCE.replace("x[i] = VALUE", "x[i] = VALUE + 1.0f")
    elif change == "arch":
        arch = "gfx90a"
    elif change == "options":
        options = ["-DVALUE=2.0f"]
    elif change == "compiler":
        from pygpgpu_hip import _clang, compiler

        try:
            _clang.find_compiler("clang")
        except Exception as exc:
            skip_no_compiler("clang", f"only one HIP compiler is installed: {exc}")
        monkeypatch.setenv("PYGPGPU_HIP_COMPILER", "clang")
        assert compiler.compiler_identity("clang") != compiler.compiler_identity("hiprtc")
    elif change == "package_version":
        import pygpgpu_hip

        monkeypatch.setattr(pygpgpu_hip, "__version__", pygpgpu_hip.__version__ + ".post1")
    compile_cached(source, arch, options)
    assert len(calls) == 2, f"changing the {change} did not rebuild"
    compile_cached(source, arch, options)
    assert len(calls) == 2  # and the new entry is then a hit


def test_corrupt_entry_is_rebuilt_not_trusted(counted):
    compile_cached, calls, folder = counted
    good = compile_cached(SOURCE, "gfx1030", ["-DVALUE=1.0f"])
    (entry,) = (folder / "hip").glob("*.hsaco")
    blob = bytearray(entry.read_bytes())
    blob[-10] ^= 0xFF
    entry.write_bytes(bytes(blob))
    again = compile_cached(SOURCE, "gfx1030", ["-DVALUE=1.0f"])
    assert again == good
    assert len(calls) == 2
