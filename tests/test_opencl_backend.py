"""OpenCL backend: loading, enumeration, device attributes, status names (real PoCL, no mocks)."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap

import pytest

import pygpgpu_opencl
from pygpgpu_core import registry
from pygpgpu_core.errors import BackendUnavailable, DriverError
from pygpgpu_opencl import STATUS_NAMES, check, status_name
from pygpgpu_opencl._device import device_arch
from conftest import skip_no_device


def _devices():
    try:
        devices = pygpgpu_opencl.backend.devices()
    except BackendUnavailable as exc:
        skip_no_device("opencl", f"no OpenCL runtime on this machine: {exc}")
    if not devices:
        skip_no_device("opencl", "the OpenCL runtime lists no device")
    return devices


def _run(code: str, **env: "str | None") -> subprocess.CompletedProcess:
    full_env = {k: v for k, v in dict(os.environ, **env).items() if v is not None}  # None: unset
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=full_env, timeout=120
    )


def test_import_does_not_load_libopencl():
    proc = _run(
        """
        import pygpgpu_opencl
        b = pygpgpu_opencl.backend
        assert b.name == "opencl" and b.dialect == "opencl"
        maps = open("/proc/self/maps").read()
        print("libOpenCL" in maps)
        """
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "False"


def test_missing_library_names_the_package_to_install():
    proc = _run(
        """
        import pygpgpu_opencl
        from pygpgpu_core.errors import BackendUnavailable
        try:
            pygpgpu_opencl.backend.devices()
        except BackendUnavailable as exc:
            print(exc)
        """,
        PYGPGPU_OPENCL_LIB="/nonexistent/libOpenCL.so.1",
    )
    assert proc.returncode == 0, proc.stderr
    assert "/nonexistent/libOpenCL.so.1" in proc.stdout
    assert "ocl-icd-libopencl1" in proc.stdout and "pocl-opencl-icd" in proc.stdout


def test_no_platform_is_backend_unavailable(tmp_path):
    _devices()  # needs the ICD loader itself
    proc = _run(
        """
        import pygpgpu_opencl
        from pygpgpu_core.errors import BackendUnavailable
        try:
            pygpgpu_opencl.backend.devices()
        except BackendUnavailable as exc:
            print("UNAVAILABLE", exc)
        """,
        OCL_ICD_VENDORS=str(tmp_path),  # an empty vendors folder hides every driver
        OCL_ICD_FILENAMES=None,  # some machines (containers) name drivers here as well
    )
    assert proc.returncode == 0, proc.stderr
    assert "UNAVAILABLE" in proc.stdout
    assert "no OpenCL platform" in proc.stdout and "pocl-opencl-icd" in proc.stdout


def test_enumeration_matches_clinfo_and_registry():
    devices = _devices()
    assert [d.index for d in devices] == list(range(len(devices)))
    assert [d.selector for d in devices] == [f"opencl:{i}" for i in range(len(devices))]
    # The registry reaches the same objects through the real entry point.
    assert registry.get_device("opencl:0") is devices[0]
    assert "opencl:0" in registry.available_devices()
    if shutil.which("clinfo"):
        listing = subprocess.run(["clinfo", "-l"], capture_output=True, text=True, timeout=60).stdout
        names = re.findall(r"Device #\d+: (.+)", listing)
        # clinfo may link another ICD loader that sees fewer drivers: every device it lists is ours
        ours = [d.name for d in devices]
        assert all(n.strip() in ours for n in names)


def test_device_attributes_are_consistent():
    for dev in _devices():
        assert dev.name and dev.vendor and dev.arch
        assert dev.global_mem_size > 0 and dev.max_mem_alloc_size <= dev.global_mem_size
        assert dev.compute_units >= 1
        assert dev.max_work_group_size >= 1
        assert len(dev.max_work_item_sizes) >= 3
        assert isinstance(dev.extensions, frozenset)
        if "cl_khr_fp64" in dev.extensions:
            assert dev.fp64
        assert dev.fp16 == ("cl_khr_fp16" in dev.extensions)
        assert isinstance(dev.host_unified_memory, bool)
        assert dev.mem_base_addr_align >= 1
        assert dev.backend is pygpgpu_opencl.backend
        if "portable computing language" in dev.platform.name.lower() and dev.is_cpu:
            assert dev.host_unified_memory
            assert dev.arch in dev.name  # the LLVM CPU name inside PoCL's device name


def test_backend_version_names_platform_and_driver():
    devices = _devices()
    version = pygpgpu_opencl.backend.version()
    assert devices[0].platform.version in version
    assert devices[0].driver_version in version


def test_shared_context_is_created_once_and_recreated_after_close():
    dev = _devices()[0]
    ctx = dev.context()
    assert dev.context() is ctx
    ctx.close()
    fresh = dev.context()
    assert fresh is not ctx and not fresh.closed


@pytest.mark.parametrize(
    "name, vendor, platform, nv_cc, expected",
    [
        ("NVIDIA H200", "NVIDIA Corporation", "NVIDIA CUDA", (9, 0), "sm_90"),
        ("NVIDIA GeForce RTX 3080", "NVIDIA Corporation", "NVIDIA CUDA", (8, 6), "sm_86"),
        ("gfx1036", "Advanced Micro Devices, Inc.", "AMD Accelerated Parallel Processing", None, "gfx1036"),
        ("gfx90a:sramecc+:xnack-", "Advanced Micro Devices, Inc.", "AMD Accelerated Parallel Processing", None, "gfx90a"),
        ("pthread-skylake-avx512-Intel(R) Xeon(R) Processor", "GenuineIntel", "Portable Computing Language", None,
         "skylake-avx512"),
        ("cpu-haswell-Intel(R) Core(TM) i7-4770 CPU @ 3.40GHz", "GenuineIntel", "Portable Computing Language", None,
         "haswell"),
        ("Intel(R) UHD Graphics 630", "Intel(R) Corporation", "Intel(R) OpenCL HD Graphics", None,
         "intel-uhd-graphics-630"),
        ("Oclgrind Simulator", "University of Bristol", "Oclgrind", None, "oclgrind-simulator"),
    ],
)
def test_device_arch_strings(name, vendor, platform, nv_cc, expected):
    assert device_arch(name, vendor, platform, nv_cc) == expected


def test_status_table_and_check():
    # Every core code from -1..-19 and -30..-72 has its name.
    for code in list(range(-1, -20, -1)) + list(range(-30, -73, -1)):
        assert STATUS_NAMES[code].startswith("CL_")
    assert status_name(-54) == "CL_INVALID_WORK_GROUP_SIZE"
    assert status_name(-1001) == "CL_PLATFORM_NOT_FOUND_KHR"
    assert "UNKNOWN" in status_name(-123456)
    check(0, "clFinish")
    with pytest.raises(DriverError) as info:
        check(-54, "clEnqueueNDRangeKernel")
    err = info.value
    assert err.name == "CL_INVALID_WORK_GROUP_SIZE" and err.code == -54 and err.call == "clEnqueueNDRangeKernel"
    assert "local" in str(err)  # the hint says what to change


def test_objects_alive_at_exit_do_not_break_shutdown():
    _devices()
    proc = _run(
        """
        import numpy as np, pygpgpu_opencl
        ctx = pygpgpu_opencl.devices()[0].context()
        buf = ctx.buffer_from_host(np.arange(16, dtype=np.float32))
        prog = ctx.program("__kernel void k(__global float* x) { x[get_global_id(0)] += 1.0f; }")
        kern = prog.kernel("k")
        kern[16](buf)
        private = pygpgpu_opencl.Context(ctx.device)
        print("done")
        """
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "done"
    assert "Exception ignored" not in proc.stderr and "Traceback" not in proc.stderr


def test_objects_implement_the_core_protocols():
    from pygpgpu_core import protocols

    dev = _devices()[0]
    assert isinstance(pygpgpu_opencl.backend, protocols.Backend)
    assert isinstance(dev, protocols.Device)
    ctx = pygpgpu_opencl.Context(dev)
    try:
        assert isinstance(ctx, protocols.Context)
        assert isinstance(ctx.queue, protocols.Queue)
        buf = ctx.buffer(16)
        assert isinstance(buf, protocols.Buffer)
        prog = ctx.program("__kernel void k(__global int* x) { x[0] = 1; }")
        assert isinstance(prog, protocols.Program)
        assert isinstance(prog.kernel("k"), protocols.Kernel)
    finally:
        ctx.close()
