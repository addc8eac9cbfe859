"""Every disk cache key, table-driven: for each field of the key, changing only that field misses
(a new translation or build), and changing nothing hits. The keys (pickled-by-value kernels:
test_pickling_options.py; view staging: test_cache_keys_view_staging.py; the launch memo:
test_warm_equals_cold.py; OpenCL's program key: also test_opencl_cache.py):

- the generated-source cache (_translate.translate), observed through ``stats``;
- the binary caches of @kernel: CUDA's ``build_binary``, HIP's ``build_code_object`` (the compilers
  stood in for, so no NVRTC or HIP is needed), OpenCL's ``_program_cache_key``;
- the binary kept beside a kernel file (kernel_files/_program.py), with a stand-in device;
- the namespaces of the disk cache (DiskCache): one namespace never answers for another;
- the in-memory plans of a @kernel (one per device, argument tokens and index width).
"""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from pygpgpu_core import gnp
from pygpgpu_core.cache import DiskCache
from pygpgpu_translate import kernel, stats

# ---- the generated-source cache ------------------------------------------------------------------


def scale(x, out):
    for i in range(out.shape[0]):
        out[i] = x[i] * 2.0


def scale_edited(x, out):
    for i in range(out.shape[0]):
        out[i] = x[i] * 3.0


def _with_factor(factor):
    def scale_by(x, out):
        for i in range(out.shape[0]):
            out[i] = x[i] * factor
    return scale_by


F32 = (np.zeros(8, np.float32), np.zeros(8, np.float32))
F64 = (np.zeros(8, np.float64), np.zeros(8, np.float64))


def _inspect(func=scale, args=F32, backend="opencl", config=None, **options):
    k = kernel(func, **options)           # a new kernel object: no translation in memory
    return (k[config] if config is not None else k).inspect(*args, backend=backend)


TRANSLATION_FIELDS = {
    "source": lambda mp: _inspect(scale_edited),
    "signature": lambda mp: _inspect(args=F64),
    "dialect": lambda mp: _inspect(backend="cuda"),
    "default_float": lambda mp: _inspect(default_float="float64"),
    "index_bits": lambda mp: _inspect(config=(2**32, 256)),
    "bounds_check": lambda mp: _inspect(debug=True),
    "fastmath": lambda mp: _inspect(fastmath=True),
    "contract": lambda mp: _inspect(contract=False),
    "closure": None,                    # handled below: another value of a captured variable
    "wide_loads": lambda mp: (mp.setattr("pygpgpu_translate._wide.ENABLED", False), _inspect()),
    "translator_version": lambda mp: (mp.setattr("pygpgpu_translate._translate._TRANSLATOR_VERSION", "x"),
                                      _inspect()),
    "translator_code": lambda mp: (mp.setattr("pygpgpu_translate._translate.code_fingerprint", lambda: "edited"),
                                   _inspect()),
}


@pytest.mark.parametrize("field", list(TRANSLATION_FIELDS))
def test_translation_key(field, tmp_path, monkeypatch):
    monkeypatch.setenv("PYGPGPU_CACHE_DIR", str(tmp_path))
    base = (lambda: _inspect(_with_factor(2.0))) if field == "closure" else _inspect
    base()
    n, hits = stats["translations"], stats["source_cache_hits"]
    base()                                                    # nothing changed: from disk
    assert (stats["translations"], stats["source_cache_hits"]) == (n, hits + 1)
    if field == "closure":
        _inspect(_with_factor(5.0))
    else:
        TRANSLATION_FIELDS[field](monkeypatch)
    assert (stats["translations"], stats["source_cache_hits"]) == (n + 1, hits + 1), f"{field}: not a miss"


# ---- CUDA's binary cache (build_binary), NVRTC stood in for ---------------------------------------

@pytest.fixture
def cuda_builds(tmp_path, monkeypatch):
    from pygpgpu_cuda import _driver, _program
    monkeypatch.setenv("PYGPGPU_CACHE_DIR", str(tmp_path))
    calls = []

    def compile_with_log(source, arch, options, name=""):
        calls.append(source)
        return b"\x7fELF image of " + source.encode(), ""

    monkeypatch.setattr(_program, "compile_with_log", compile_with_log)
    monkeypatch.setattr(_program, "nvrtc_version", lambda: (13, 0))
    monkeypatch.setattr(_driver, "driver", SimpleNamespace(calls=object()))
    monkeypatch.setattr(_driver, "driver_version", lambda: (13, 0))
    return _program, _driver, calls


CUDA_BASE = {"source": "__global__ void k() {}", "arch": "sm_90", "options": ("-DX=1",), "name": "k.cu"}
CUDA_FIELDS = {
    "source": lambda p, d, mp: {"source": "__global__ void k() { }"},
    "arch": lambda p, d, mp: {"arch": "sm_80"},
    "options": lambda p, d, mp: {"options": ("-DX=2",)},
    "name": lambda p, d, mp: {"name": "other.cu"},
    "nvrtc_version": lambda p, d, mp: (mp.setattr(p, "nvrtc_version", lambda: (13, 1)), {})[1],
    "driver_version": lambda p, d, mp: (mp.setattr(d, "driver_version", lambda: (13, 2)), {})[1],
    "package_version": lambda p, d, mp: (mp.setattr(p, "__version__", "0.0.0.other"), {})[1],
}


@pytest.mark.parametrize("field", list(CUDA_FIELDS))
def test_cuda_binary_key(cuda_builds, field, monkeypatch):
    program, driver, calls = cuda_builds

    def build(source, arch, options, name):
        return program.build_binary(source, arch, options, name)

    assert not build(**CUDA_BASE)[2]
    assert build(**CUDA_BASE)[2] and len(calls) == 1        # nothing changed: a hit
    changed = CUDA_FIELDS[field](program, driver, monkeypatch)
    assert not build(**{**CUDA_BASE, **changed})[2] and len(calls) == 2, f"{field}: not a miss"


# ---- HIP's code-object cache (build_code_object), the compiler stood in for ------------------------

@pytest.fixture
def hip_builds(tmp_path, monkeypatch):
    from pygpgpu_hip import compiler
    monkeypatch.setenv("PYGPGPU_CACHE_DIR", str(tmp_path))
    calls = []

    def compile_with_log(source, arch, options, name=""):
        calls.append(source)
        return b"\x7fELF code object of " + source.encode(), ""

    monkeypatch.setattr(compiler, "compile_with_log", compile_with_log)
    monkeypatch.setattr(compiler, "compiler_kind", lambda: "hiprtc")
    monkeypatch.setattr(compiler, "compiler_identity", lambda kind: f"{kind} 6.4")
    return compiler, calls


HIP_BASE = {"source": 'extern "C" __global__ void k() {}', "arch": "gfx90a", "options": ("-DX=1",)}
HIP_FIELDS = {
    "source": lambda c, mp: {"source": 'extern "C" __global__ void k() { }'},
    "arch": lambda c, mp: {"arch": "gfx1100"},
    "options": lambda c, mp: {"options": ("-DX=2",)},
    "compiler": lambda c, mp: (mp.setattr(c, "compiler_identity", lambda kind: f"{kind} 7.0"), {})[1],
    "package_version": lambda c, mp: (mp.setattr("pygpgpu_hip.__version__", "0.0.0.other"), {})[1],
}


@pytest.mark.parametrize("field", list(HIP_FIELDS))
def test_hip_code_object_key(hip_builds, field, monkeypatch):
    compiler, calls = hip_builds
    assert not compiler.build_code_object(**HIP_BASE)[2]
    assert compiler.build_code_object(**HIP_BASE)[2] and len(calls) == 1
    changed = HIP_FIELDS[field](compiler, monkeypatch)
    assert not compiler.build_code_object(**{**HIP_BASE, **changed})[2] and len(calls) == 2, f"{field}: not a miss"


# ---- OpenCL's program key (the device fields are in test_opencl_cache.py; here all of them) --------

OPENCL_DEVICE = {"name": "dev", "vendor": "ven", "version": "OpenCL 3.0", "driver_version": "6.0"}
OPENCL_PLATFORM = {"name": "Portable Computing Language", "version": "OpenCL 3.0 PoCL 6.0"}
OPENCL_FIELDS = ["source", "options", *(f"device.{k}" for k in OPENCL_DEVICE),
                 *(f"platform.{k}" for k in OPENCL_PLATFORM), "package_version"]


@pytest.mark.parametrize("field", OPENCL_FIELDS)
def test_opencl_program_key(field, monkeypatch):
    pytest.importorskip("pygpgpu_opencl")
    from pygpgpu_opencl._program import _program_cache_key

    def key(source="src", options=("-cl-std=CL1.2",), device=OPENCL_DEVICE, platform=OPENCL_PLATFORM):
        ctx = SimpleNamespace(device=SimpleNamespace(**device, platform=SimpleNamespace(**platform)))
        return _program_cache_key(ctx, source, list(options))

    base = key()
    assert key() == base
    if field == "source":
        changed = key(source="src2")
    elif field == "options":
        changed = key(options=("-cl-std=CL2.0",))
    elif field.startswith("device."):
        changed = key(device={**OPENCL_DEVICE, field[7:]: "other"})
    elif field.startswith("platform."):
        changed = key(platform={**OPENCL_PLATFORM, field[9:]: "other"})
    else:
        monkeypatch.setattr("pygpgpu_opencl.__version__", "0.0.0.other")
        changed = key()
    assert changed != base, f"{field}: not part of the key"


# ---- the binary kept beside a kernel file ------------------------------------------------------------

class _Program:
    def __init__(self, binary: bytes, from_binary: bool):
        self.binary = binary
        self.from_binary = from_binary


class _Context:
    def __init__(self, own_build_options=()):
        self.own_build_options = own_build_options
        self.builds = 0

    def program(self, source, options, name=""):
        self.builds += 1
        return _Program(f"binary of {source} {options}".encode(), False)

    def program_from_binary(self, binary, *, source="", options=(), name=""):
        return _Program(binary, True)


class _Backend:
    def __init__(self, name="fake", version="driver 1.0"):
        self.name, self._version = name, version

    def version(self):
        return self._version


class _Device:
    def __init__(self, name="Fake GPU", arch="fk1", backend=None, context=None):
        self.name, self.arch, self.selector = name, arch, "fake:0"
        self.backend = backend or _Backend()
        self._context = context or _Context()

    def context(self):
        return self._context


KERNEL_FILE_FIELDS = {
    "source": lambda path: (path.write_text(path.read_text() + "\n// edited\n"), {})[1],
    "backend": lambda path: {"backend": _Backend(name="other")},
    "device_name": lambda path: {"name": "Other GPU"},
    "arch": lambda path: {"arch": "fk2"},
    "driver_version": lambda path: {"backend": _Backend(version="driver 2.0")},
    "options": lambda path: {"options": ("-DX=2",)},
    "own_build_options": lambda path: {"context": _Context(("-DPOCL_DEVICE=2",))},
}


@pytest.mark.parametrize("field", list(KERNEL_FILE_FIELDS))
def test_kernel_file_binary_key(field, tmp_path):
    from pygpgpu_core.kernel_files._cache import SourceCache
    from pygpgpu_core.kernel_files._program import FilePrograms

    path = tmp_path / "k.cl"
    path.write_text("__kernel void k(__global int* x) { x[0] = 1; }\n")

    def build(options=("-DX=1",), **device):
        dev = _Device(**device)
        programs = FilePrograms(path, SourceCache(path, "__clcache__"), options)   # nothing in memory
        program = programs.program(dev)
        return program.from_binary, dev.context().builds

    assert build() == (False, 1)
    assert build() == (True, 0)                          # nothing changed: the kept binary
    changed = KERNEL_FILE_FIELDS[field](path)
    assert build(**changed) == (False, 1), f"{field}: the binary of another key was loaded"


# ---- the disk cache's namespaces ------------------------------------------------------------------

@pytest.mark.parametrize("field", ["nothing", "namespace", "key", "suffix"])
def test_disk_cache_namespaces(field, tmp_path):
    DiskCache("translate", root=tmp_path).put("k" * 64, b"payload", ".json")
    namespace, key, suffix = "translate", "k" * 64, ".json"
    if field == "namespace":
        namespace = "opencl"
    elif field == "key":
        key = "j" * 64
    elif field == "suffix":
        suffix = ".bin"
    got = DiskCache(namespace, root=tmp_path).get(key, suffix)
    assert got == (b"payload" if field == "nothing" else None)


# ---- a @kernel's in-memory plans ---------------------------------------------------------------------

def add_into(x, out, c):
    for i in range(out.shape[0]):
        out[i] = x[i] + c


PLAN_FIELDS = {
    "nothing": lambda: (np.arange(6, dtype=np.float32), np.zeros(6, np.float32), 1.5),
    "array_dtype": lambda: (np.arange(6, dtype=np.float64), np.zeros(6, np.float32), 1.5),
    "array_kind": lambda: (np.arange(6, dtype=np.float32), "device", 1.5),
    "scalar_type": lambda: (np.arange(6, dtype=np.float32), np.zeros(6, np.float32), 2),
}


@pytest.mark.parametrize("field", list(PLAN_FIELDS))
def test_plan_key(field, backend):
    kf = kernel(add_into)
    x, out, c = PLAN_FIELDS["nothing"]()
    kf[backend](x, out, c)
    kf[backend](x, out, c)
    assert len(kf._plans) == 1
    x, out, c = PLAN_FIELDS[field]()
    if field == "array_kind":                       # a device array where a numpy array was
        out = gnp.zeros(6, np.float32, device=backend)
    kf[backend](x, out, c)
    np.testing.assert_array_equal(np.asarray(out), (x + c).astype(np.float32))
    assert len(kf._plans) == (1 if field == "nothing" else 2), field


# ---- a @kernel's in-memory translations: (dialect, argument tokens, index width) -----------------------

TRANSLATION_MEMORY_FIELDS = {
    "nothing": lambda kf: kf.inspect(*F32, backend="opencl"),
    "dialect": lambda kf: kf.inspect(*F32, backend="cuda"),
    "tokens": lambda kf: kf.inspect(*F64, backend="opencl"),
    "index_bits": lambda kf: kf[(2**32, 256)].inspect(*F32, backend="opencl"),
}


@pytest.mark.parametrize("field", list(TRANSLATION_MEMORY_FIELDS))
def test_translation_memory_key(field):
    kf = kernel(scale)
    first = kf.inspect(*F32, backend="opencl")
    assert len(kf._translations) == 1
    other = TRANSLATION_MEMORY_FIELDS[field](kf)
    assert len(kf._translations) == (1 if field == "nothing" else 2), field
    assert (other.source == first.source) == (field == "nothing")


# ---- cache_key itself: the digest every disk key above is made with --------------------------------

CACHE_KEY_PARTS = {
    "nothing": lambda mp: (b"ab", b"c", 1, None),
    "package_version": lambda mp: (mp.setattr("pygpgpu_core.cache.PACKAGE_VERSION", "0.0.0.other"),
                                   (b"ab", b"c", 1, None))[1],
    "part_boundary": lambda mp: (b"a", b"bc", 1, None),       # the same bytes, cut elsewhere
    "int_or_text": lambda mp: (b"ab", b"c", "1", None),
    "none_or_text": lambda mp: (b"ab", b"c", 1, "None"),
    "bytes_or_text": lambda mp: ("ab", b"c", 1, None),
    "one_more_part": lambda mp: (b"ab", b"c", 1, None, b""),
}


@pytest.mark.parametrize("field", list(CACHE_KEY_PARTS))
def test_cache_key_digest(field, monkeypatch):
    from pygpgpu_core.cache import cache_key
    base = cache_key(b"ab", b"c", 1, None)
    other = cache_key(*CACHE_KEY_PARTS[field](monkeypatch))
    assert (other == base) == (field == "nothing"), field


# ---- the small-batch staging layouts a launch plan keeps (gnp/_staging.SmallBatchCache) -------------

def _small_key(**change):
    from pygpgpu_core.gnp import _staging
    layout = [(64, _staging.UPLOAD), (32, _staging.DOWNLOAD)]
    if "nbytes" in change:
        layout[0] = (change["nbytes"], layout[0][1])
    if "group" in change:
        layout[1] = (layout[1][0], change["group"])
    if "arguments" in change:
        layout.append((16, _staging.BOTH))
    return tuple(layout), change.get("mapped_max")


SMALL_BATCH_FIELDS = {
    "nothing": {},
    "nbytes": {"nbytes": 128},
    "group": {"group": 1},                # another group than DOWNLOAD (checked below)
    "arguments": {"arguments": True},
    "mapped_max": {"mapped_max": 1 << 12},
}


@pytest.mark.parametrize("field", list(SMALL_BATCH_FIELDS))
def test_small_batch_layout_key(field, backend):
    from pygpgpu_core import registry
    from pygpgpu_core.gnp import _staging
    context = registry.get_device(backend).context()
    if not _staging.batch_supported(context):
        pytest.skip(f"{backend} stages no small batches")
    assert SMALL_BATCH_FIELDS["group"]["group"] != _staging.DOWNLOAD
    cache = _staging.SmallBatchCache(context)
    key, mapped = _small_key()
    first = cache.take(key, mapped_max=mapped)
    cache.give(first)
    key, mapped = _small_key(**SMALL_BATCH_FIELDS[field])
    again = cache.take(key, mapped_max=mapped)
    try:
        assert (again is first) == (field == "nothing"), field
        assert again.key == (key, mapped)
    finally:
        cache.give(again)
        cache.close()
