"""Cached binaries are checked for structure before any driver sees them, whatever their
checksum says (issue 13, item 4). A truncated binary behind a valid checksum used to reach
PoCL, which read past its end and crashed the process: these tests run the second build in
a subprocess so that a crash is a failure, not the end of the test run."""
from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from pygpgpu_core.binary_check import EM_AMDGPU, EM_CUDA, elf_problem, fatbin_problem, offload_bundle_problem
from pygpgpu_core.cache import DiskCache

DATA = Path(__file__).parent / "kernel_files"

SOURCES = {
    "opencl": "__kernel void twice(__global float* x) {{ int i = get_global_id(0); x[i] = {k}.0f * x[i]; }}\n",
    "cuda": 'extern "C" __global__ void twice(float* x) {{ int i = blockIdx.x * blockDim.x + threadIdx.x; '
            "x[i] = {k}.0f * x[i]; }}\n",
    "hip": '#include <hip/hip_runtime.h>\nextern "C" __global__ void twice(float* x) {{ '
           "int i = blockIdx.x * blockDim.x + threadIdx.x; x[i] = {k}.0f * x[i]; }}\n",
}
NAMESPACE = {"opencl": ("opencl", ".bin"), "cuda": ("cuda", ".cubin"), "hip": ("hip", ".hsaco")}

SCRIPT = textwrap.dedent("""
    import json, sys
    import numpy as np
    from pygpgpu_core import registry
    device = registry.get_device(sys.argv[1])
    program = device.context().program(sys.stdin.read())
    x = np.arange(256, dtype=np.float32)
    program.kernel("twice")[(256, 64)](x)
    print(json.dumps(x.tolist()))
""")


def _build(backend, source, cache):
    env = dict(os.environ, PYGPGPU_CACHE_DIR=str(cache))
    proc = subprocess.run([sys.executable, "-c", SCRIPT, backend], input=source, capture_output=True, text=True,
                          env=env, timeout=300)
    assert proc.returncode == 0, f"exit status {proc.returncode}: {proc.stderr[-2000:]}"
    return np.array(json.loads(proc.stdout.strip().splitlines()[-1]), dtype=np.float32)


def _dialect(backend):
    from pygpgpu_core import registry
    return registry.get_device(backend).backend.dialect


@pytest.mark.parametrize("keep", [0.5, 0.97])
def test_a_truncated_cached_binary_with_a_valid_checksum_is_rebuilt(tmp_path, backend, keep):
    dialect = _dialect(backend)
    source = SOURCES[dialect].format(k=3 + int(keep * 100))      # a source of its own: a fresh cache key
    factor = 3 + int(keep * 100)
    cache = tmp_path / "cache"
    expect = np.arange(256, dtype=np.float32) * factor
    np.testing.assert_array_equal(_build(backend, source, cache), expect)
    namespace, suffix = NAMESPACE[dialect]
    store = DiskCache(namespace, root=cache)
    entries = sorted((cache / namespace).glob(f"*{suffix}"))
    assert entries
    for entry in entries:
        key = entry.name[: -len(suffix)]
        whole = store.get(key, suffix)
        store.put(key, whole[: int(len(whole) * keep)], suffix)    # checksum of the truncated bytes
    np.testing.assert_array_equal(_build(backend, source, cache), expect)


CL_SCRIPT = textwrap.dedent("""
    import sys
    import numpy as np
    from pygpgpu_core import kernel_files as kf
    m = kf.load(sys.argv[1])
    a = np.arange(300, dtype=np.float32)
    out = np.zeros_like(a)
    m.vecadd[(300, 64)](a, a, out, len(a))
    assert (out == 2 * a).all(), out
    print(m.__kernel_file__.programs.stats)
""")


def test_a_truncated_clcache_binary_with_a_valid_checksum_is_rebuilt(tmp_path):
    from conftest import first_device
    first_device("opencl")
    src = tmp_path / "vecadd.cl"
    shutil.copy(DATA / "vecadd.cl", src)
    env = dict(os.environ, PYGPGPU_CACHE_DIR=str(tmp_path / "cache"))

    def run():
        proc = subprocess.run([sys.executable, "-c", CL_SCRIPT, str(src)], capture_output=True, text=True,
                              env=env, timeout=300)
        assert proc.returncode == 0, f"exit status {proc.returncode}: {proc.stderr[-2000:]}"
        return proc.stdout

    assert "'builds': 1" in run()
    bins = list((tmp_path / "__clcache__").glob("*.bin"))
    assert bins
    from pygpgpu_opencl._binary_check import checked_binary, seal
    for path in bins:
        store = DiskCache(path.parent.name, root=path.parent.parent)
        key = path.name[: -len(".bin")]
        raw, problem = checked_binary(store.get(key))             # program.binary: our seal around PoCL's bytes
        assert problem is None
        store.put(key, seal(raw[: len(raw) * 2 // 3]))           # PoCL's bytes cut, both checksums valid
    assert "'builds': 1" in run()                               # rebuilt, never handed to PoCL


# ---- the checks themselves, on real compiler output ---------------------------------------------
def _cuts(image):
    return sorted({len(image) - 1, len(image) - 8, len(image) * 3 // 4, len(image) // 2, 200, 64, 60, 10})


def test_cubin_structure_check(nvrtc_compile):
    from pygpgpu_cuda._cubin import image_problem

    cubin = nvrtc_compile(SOURCES["cuda"].format(k=2), arch="sm_90")
    assert elf_problem(cubin, EM_CUDA) is None and image_problem(cubin) is None
    for n in _cuts(cubin):
        assert image_problem(cubin[:n]) is not None, n
    assert "machine" in elf_problem(cubin, EM_AMDGPU)
    damaged = bytearray(cubin)
    struct.pack_into("<Q", damaged, 0x28, len(cubin) - 16)       # section headers past the end
    assert "section header table" in image_problem(bytes(damaged))
    ptx = b"//\n.version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k() { ret; }\n\0"
    assert image_problem(ptx) is None
    assert image_problem(ptx[:-12]) is not None                   # truncated: braces do not balance
    assert "NUL" in image_problem(ptx[:-1])                       # the driver reads a C string


def test_hip_code_object_structure_check(hiprtc_compile):
    from pygpgpu_hip._codeobject import code_object_problem

    code = hiprtc_compile(SOURCES["hip"].format(k=2), "gfx1030")
    assert code_object_problem(code) is None
    for n in _cuts(code):
        assert code_object_problem(code[:n]) is not None, n
    assert code_object_problem(b"not a code object at all") is not None
    triple = b"hipv4-amdgcn-amd-amdhsa--gfx1030"
    header_len = 24 + 8 + 24 + len(triple)
    bundle = (b"__CLANG_OFFLOAD_BUNDLE__" + struct.pack("<Q", 1)
              + struct.pack("<QQQ", header_len, len(code), len(triple)) + triple + code)
    assert offload_bundle_problem(bundle) is None and code_object_problem(bundle) is None
    assert "runs past the end" in code_object_problem(bundle[:-10])


def test_fatbin_header_check():
    body = bytes(64)
    fat = struct.pack("<IHHQ", 0xBA55ED50, 1, 16, len(body)) + body
    assert fatbin_problem(fat) is None
    assert "past the end" in fatbin_problem(fat[:-1])


def _pocl_files(*pairs: "tuple[bytes, bytes]") -> bytes:
    return b"".join(struct.pack("<I", len(n)) + n + struct.pack("<I", len(c)) + c for n, c in pairs)


def _pocl_blob(version: int, roots: "list[bytes]", scope_vars: bool, kernels: int) -> bytes:
    """A PoCL binary of ``version`` laid out as pocl_binary.c writes it: the 77-byte header, the
    program-scope variable size (version >= 10, flag bit 1), the root entries, the kernel records
    (a field of the record's own before its files, as versions 10-12 add)."""
    head = (b"poclbin\0" + bytes(8) + struct.pack("<IIQI", version, kernels, 2 if scope_vars else 0, len(roots))
            + b"0" * 41)
    body = struct.pack("<Q", 4096) if scope_vars else b""
    body += b"".join(struct.pack("<Q", len(r)) + r for r in roots)
    for _ in range(kernels):
        files = _pocl_files((b"k.so", b"\x7fELF" + bytes(12)))
        body += struct.pack("<QQI", 20 + 6 + len(files), len(files), 6) + b"field!" + files
    return head + body


@pytest.mark.parametrize("version", [10, 11, 12])
def test_pocl_5_and_6_binaries_are_checked_too(version):
    """PoCL 5/6 write format 11/12 (the GPU machine's PoCL 5.0 binaries were all refused and
    rebuilt while only 9 was known): a sound one passes, any cut or a later version does not."""
    from pygpgpu_opencl._binary_check import pocl_binary_problem

    blob = _pocl_blob(version, [_pocl_files((b"program.bc", b"B" * 40)), _pocl_files((b"extra", b"x"))],
                      scope_vars=True, kernels=2)
    assert pocl_binary_problem(blob) is None
    for n in (len(blob) - 1, len(blob) - 30, 120, 90, 80):
        assert pocl_binary_problem(blob[:n]) is not None, n
    assert pocl_binary_problem(blob + b"\0") is not None
    assert "format version 13" in pocl_binary_problem(_pocl_blob(13, [], False, 0))
    no_scope = _pocl_blob(version, [_pocl_files((b"program.bc", b"B"))], scope_vars=False, kernels=1)
    assert pocl_binary_problem(no_scope) is None


def test_pocl_binary_structure_is_checked_inside_our_seal():
    from pygpgpu_opencl._binary_check import checked_binary, seal

    from conftest import first_device
    dev = first_device("opencl")
    if "PoCL" not in dev.platform.name and "Portable" not in dev.platform.name:
        pytest.skip("the PoCL binary layout is only checked on PoCL")
    prog = dev.context().program("__kernel void k(__global int* x) { x[0] = 1; }")
    raw = checked_binary(prog.binary)[0]
    assert checked_binary(seal(raw)) == (raw, None)
    for n in (len(raw) - 1, len(raw) // 2, 80):
        assert checked_binary(seal(raw[:n]))[1] is not None, n
