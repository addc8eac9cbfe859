"""The native OpenCL sub-group path: where the device compiler defines cl_khr_subgroups (or OpenCL C
3.0's __opencl_c_subgroups, or cl_intel_subgroups) and an indexed shuffle (cl_khr_subgroup_shuffle or
cl_intel_subgroups), the generated source uses sub_group_* builtins, else the 32-lane local-memory
emulation. The device's extension list must say so too (build_options then defines
PG_SG_DEVICE_SUBGROUPS): clang-based compilers such as oclgrind's define the SPIR extension macros
whatever the device. No device here has those extensions, so the choice is checked with fake
extension lists and fake devices through a C preprocessor, and both paths are compiled by clang for
SPIR; PoCL and oclgrind run the emulation (tests/test_lang_subgroups.py, test_lang_oclgrind_ports.py)."""
from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest

from conftest import skip_no_compiler
from pygpgpu_translate._kernel import build_options
from pygpgpu_translate.prelude import prelude_source
from pygpgpu_translate.prelude._subgroups import native_opencl_subgroups
from test_lang_subgroups import every_op, via_helpers

KHR = ["cl_khr_subgroups", "cl_khr_subgroup_shuffle"]

# (the device compiler's macros, whether the native path is taken)
CASES = [([], False),
         (["cl_khr_subgroups"], False),                               # no indexed shuffle
         (["cl_khr_subgroup_shuffle", "cl_khr_subgroup_ballot"], False),  # no sub-group builtins
         (KHR, True),
         (KHR + ["cl_khr_subgroup_ballot", "cl_khr_subgroup_shuffle_relative"], True),
         (["__opencl_c_subgroups", "cl_khr_subgroup_shuffle"], True),  # OpenCL C 3.0 feature macro
         (["cl_intel_subgroups"], True),
         (["cl_khr_fp64", "cl_khr_int64_base_atomics"], False)]


@pytest.mark.parametrize("macros, native", CASES)
def test_the_python_mirror_of_the_choice(macros, native):
    assert native_opencl_subgroups(set(macros)) is native


def _preprocessor() -> str:
    cpp = shutil.which("cpp") or shutil.which("clang-15") or shutil.which("clang")
    if cpp is None:
        pytest.skip("no C preprocessor (cpp or clang) on this machine")
    return cpp


class FakeDevice:
    def __init__(self, extensions, opencl_c_version="OpenCL C 1.2 fake", is_gpu=True):
        self.extensions = frozenset(extensions)
        self.is_gpu = is_gpu
        self.opencl_c_version = opencl_c_version


SUBGROUPS = ("subgroups",)          # the translation's features of a kernel using them


@pytest.mark.parametrize("macros, native", CASES)
def test_build_options_define_native_subgroups_from_the_devices_extension_list(macros, native):
    device = FakeDevice(macros)
    assert ("-DPG_SG_DEVICE_SUBGROUPS" in build_options(device, "opencl", False, True, SUBGROUPS)) is native
    assert ("-DPG_SG_DEVICE_SUBGROUPS" in build_options(device, "opencl", True, True, SUBGROUPS)) is native
    assert ("-DPG_SG_DEVICE_SUBGROUPS" in build_options(device, "opencl", False, False, SUBGROUPS)) is native
    assert "-DPG_SG_DEVICE_SUBGROUPS" not in build_options(device, "opencl", False, True, ("fp64",))
    assert "-DPG_SG_DEVICE_SUBGROUPS" not in build_options(device, "cuda", False, True, SUBGROUPS)


def test_a_cpu_device_emulates_subgroups_even_with_the_extensions():
    # PoCL 5 on x86 lists cl_khr_subgroups but makes a sub-group the whole work-group (256 lanes):
    # measured wrong against the 32-lane model, so CPUs keep the emulation.
    device = FakeDevice(("cl_khr_subgroups", "cl_khr_subgroup_shuffle"), "OpenCL C 3.0 pocl", is_gpu=False)
    assert not any("PG_SG_DEVICE_SUBGROUPS" in o for o in build_options(device, "opencl", False, True, SUBGROUPS))


@pytest.mark.parametrize("version, std", [("OpenCL C 1.2 pocl", None), ("OpenCL C 2.0 ", "-cl-std=CL2.0"),
                                          ("OpenCL C 3.0 (Intel)", "-cl-std=CL3.0"), ("", None)])
def test_a_native_subgroup_kernel_builds_with_the_devices_newest_opencl_c(version, std):
    """cl_khr_subgroups declares its builtins from OpenCL C 2.0 on; kernels otherwise build as 1.2."""
    options = build_options(FakeDevice(KHR, version), "opencl", False, True, SUBGROUPS)
    assert [o for o in options if o.startswith("-cl-std=")] == ([std] if std else [])
    assert not any(o.startswith("-cl-std=") for o in build_options(FakeDevice([], version), "opencl", False, True,
                                                                    SUBGROUPS))


def _preprocess(tmp_path, defines) -> str:
    source = prelude_source("opencl", ["subgroup_base:int", "subgroup_shuffle:float", "subgroup_ballot:int"])
    probe = tmp_path / "probe.c"
    probe.write_text(source + "\npg_probe_native = PG_SG_NATIVE; pg_probe_items = PG_SG_SCRATCH_ITEMS;\n")
    cpp = _preprocessor()
    args = [cpp, "-P"] + (["-x", "c", "-E"] if "clang" in cpp else []) + [f"-D{m}=1" for m in defines] + [str(probe)]
    return subprocess.run(args, capture_output=True, text=True, check=True).stdout


@pytest.mark.parametrize("macros, native", CASES)
def test_the_generated_source_chooses_by_the_extension_macros(tmp_path, macros, native):
    """The #if of the subgroup_base piece, through a C preprocessor: the compiler's macros and the
    define of build_options for a device listing the same extensions."""
    out = _preprocess(tmp_path, macros + [o[2:] for o in build_options(FakeDevice(macros), "opencl", False, True,
                                                                       SUBGROUPS) if o.startswith("-D")])
    assert f"pg_probe_native = {int(native)};" in out
    assert f"pg_probe_items = {1 if native else 1024};" in out        # no scratch where native
    assert ("sub_group_shuffle(" in out or "intel_sub_group_shuffle(" in out) is native
    assert ("__local ulong* s" in out) is not native                  # the emulation's functions


@pytest.mark.parametrize("macros", [KHR, ["cl_intel_subgroups"]])
def test_a_compiler_defining_the_macros_for_a_device_without_them_emulates(tmp_path, macros):
    """oclgrind's case: its clang defines the SPIR extension macros, its device lists none."""
    out = _preprocess(tmp_path, macros)
    assert "pg_probe_native = 0;" in out and "__local ulong* s" in out


def _clang() -> str:
    clang = shutil.which("clang-15") or shutil.which("clang")
    if clang is None:
        skip_no_compiler("clang", "no clang to compile OpenCL C for SPIR")
    return clang


def _compile(tmp_path, source: str, extensions: str, std: str = "CL2.0") -> subprocess.CompletedProcess:
    path = tmp_path / "k.cl"
    path.write_text(source)
    return subprocess.run([_clang(), f"-cl-std={std}", "-target", "spir64", "-Xclang", "-finclude-default-header",
                           "-Xclang", f"-cl-ext={extensions}", "-fsyntax-only", "-x", "cl", str(path)]
                          + (["-DPG_SG_DEVICE_SUBGROUPS"] if "+cl_khr_subgroups" in extensions
                             or "+cl_intel_subgroups" in extensions else []),
                          capture_output=True, text=True)


def _sources():
    for dtype in (np.int32, np.uint32, np.int64, np.uint64, np.float32, np.float64):
        yield every_op.inspect(np.zeros(64, dtype), np.zeros((64, 12)), backend="opencl").source
    yield via_helpers.inspect(np.zeros(64, np.int32), np.zeros((64, 2), np.int64), backend="opencl").source


FP64_30 = "+cl_khr_fp64,+__opencl_c_fp64"


@pytest.mark.parametrize("std, extensions, native", [
    ("CL2.0", "-all,+cl_khr_fp64,+cl_khr_subgroups,+cl_khr_subgroup_shuffle,+cl_khr_subgroup_ballot", True),
    ("CL2.0", "-all,+cl_khr_fp64,+cl_khr_subgroups,+cl_khr_subgroup_shuffle,-cl_khr_subgroup_ballot", True),
    ("CL2.0", "-all,+cl_khr_fp64,+cl_intel_subgroups", True),
    ("CL2.0", "-all,+cl_khr_fp64", False),
    ("CL3.0", f"-all,{FP64_30},+cl_khr_subgroups,+__opencl_c_subgroups,+cl_khr_subgroup_shuffle", True),
    ("CL3.0", f"-all,{FP64_30}", False),
    ("CL1.2", "-all,+cl_khr_fp64,+cl_khr_subgroups,+cl_khr_subgroup_shuffle", False)])   # 1.2: no builtins
def test_both_paths_compile_for_spir(tmp_path, std, extensions, native):
    """Every op at every type, in the kernel and in helpers (which then ignore their scratch parameter)."""
    for source in _sources():
        done = _compile(tmp_path, source + "\n#if PG_SG_NATIVE != " + str(int(native)) + "\n#error wrong path\n#endif\n",
                        extensions, std)
        assert done.returncode == 0, done.stderr[-3000:]


def test_the_emulation_is_what_pocl_runs():
    """PoCL (OpenCL C 1.2 here) defines none of the macros: the model of 32 emulated lanes holds."""
    from conftest import first_device
    device = first_device("opencl")
    assert not native_opencl_subgroups(set(device.extensions))
    x = np.arange(64, dtype=np.int32)
    out = np.zeros((64, 12))
    every_op[device.selector](x, out)
    assert (out[:, 11] == 32).all() and (out[:, 10] == np.arange(64) % 32).all()
