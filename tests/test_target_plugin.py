"""A target is one plug-in object from one entry point (issue 34, item 2): the example Metal-like
target of tests/target_example (docs/writing-a-backend.md#a-target-of-your-own) is found through
the ``pygpgpu.targets`` entry point, uses only public names, and its one object gives the
translator's dialect (reserved words, kernel signature with per-parameter attributes and an
implicit thread id), the kernel-file language and the cache namespace. The source it writes is
compiled as C++ on the host (a header maps Metal's address spaces away) and run work item by
work item, compared with the kernel run as Python."""
from __future__ import annotations

import ast
import ctypes
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from pygpgpu import gpu, kernel
from pygpgpu_core import _cachesize, cdecl, targets
from pygpgpu_core.kernel_files import KINDS
from pygpgpu_translate.target import dialect_for

EXAMPLE = Path(__file__).parent / "target_example"
PACKAGE = EXAMPLE / "pygpgpu_metalish_target"


@pytest.fixture
def metalish(monkeypatch):
    from pygpgpu_translate import _dialects
    monkeypatch.syspath_prepend(str(EXAMPLE))
    targets._reset_for_tests()
    yield
    _dialects.DIALECTS.pop("metalish", None)
    targets._reset_for_tests()
    sys.modules.pop("pygpgpu_metalish_target", None)
    sys.modules.pop("pygpgpu_metalish_target.dialect", None)


@kernel
def shift(x, out, a, n):
    for i in range(out.shape[0]):
        device = x[i] * a          # a Metal keyword as a local
        constant = device + n      # another
        out[i] = constant


def _args(size=100):
    x = np.linspace(-3, 3, size).astype(np.float32)
    return x, np.zeros_like(x), np.float32(2.5), 3


def test_the_example_target_imports_only_public_names():
    trees = [ast.parse(path.read_text()) for path in sorted(PACKAGE.glob("*.py"))]
    assert len(trees) == 2
    modules = [node.module for tree in trees for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module]
    modules += [alias.name for tree in trees for node in ast.walk(tree) if isinstance(node, ast.Import)
                for alias in node.names]
    ours = [m for m in modules if m.startswith("pygpgpu")]
    assert ours, "the example imports the extension API"
    private = [m for m in ours if any(part.startswith("_") for part in m.split("."))]
    assert not private, f"the example target imports private modules: {private}"


def test_one_target_object_gives_the_dialect_the_language_and_the_namespace(metalish):
    assert "metalish" in targets.target_names()            # found through its entry point
    t = targets.target("metalish")
    import pygpgpu_metalish_target as plugin
    assert t is plugin.target
    from pygpgpu_metalish_target.dialect import Metalish
    assert type(dialect_for("metalish")) is Metalish       # the translator's dialect is the target's reference
    assert cdecl.LANGUAGES["metalish"] is t.language       # kernel files of its language ...
    assert KINDS["metal"].dialect == "metalish" and KINDS["metal"].cache_folder == "__metalcache__"
    assert "metalish" in _cachesize.namespaces()            # ... and its cache namespace, derived


def _source(k, args) -> str:
    return k.inspect(*args, backend="metalish").source


def _head(src: str, name: str) -> "list[str]":
    m = re.search(rf"^kernel void {name}\((.*)\)$", src, re.M)
    assert m, src
    return m.group(1).split(", ")


def test_the_kernel_signature_carries_attributes_and_the_implicit_thread_id(metalish):
    src = _source(shift, _args())
    params = _head(src, "shift")
    launched = params[:-1]          # in launch order, each with its slot (hidden extents among them)
    assert [re.search(r"\[\[buffer\((\d+)\)\]\]$", p).group(1) for p in launched] == [str(k) for k in range(len(launched))]
    assert launched[0] == "device const float* x [[buffer(0)]]"            # read only: const
    for form in (r"device float\* out", r"constant float& a", r"constant int& n"):   # scalars by constant reference
        assert any(re.fullmatch(form + r" \[\[buffer\(\d+\)\]\]", p) for p in launched), (form, launched)
    # the thread id the body reads is declared, as the parameter the language fills in
    assert "pg_thread_position_in_grid.x" in src
    assert params[-1] == "uint3 pg_thread_position_in_grid [[thread_position_in_grid]]"
    # Metal's keywords are no names: the locals are renamed
    assert not re.search(r"\b(device|constant)\s*[;=]", src), src
    assert re.search(r"\bdevice_ = ", src) and re.search(r"\bconstant_ = ", src)


def test_a_kernel_reading_no_work_item_gets_no_implicit_parameter(metalish):
    @kernel
    def first(x, out):
        out[0] = x[0]

    x = np.ones(4, np.float32)
    params = _head(_source(first, (x, np.zeros_like(x))), "first")
    assert params[0] == "device const float* x [[buffer(0)]]"
    assert not [p for p in params if "thread_position" in p or "[[buffer(" not in p], params


# Metal's address spaces and attributes mapped away, so the generated source is C++ a host compiler runs
_HOST_SHIM = """
#include <cmath>
typedef unsigned int uint; typedef unsigned char uchar; typedef unsigned short ushort; typedef unsigned long ulong;
struct uint3 { uint x, y, z; };
#define kernel extern "C"
#define device
#define constant const
#define threadgroup
"""
_CTYPES = {"float": ctypes.c_float, "double": ctypes.c_double, "int": ctypes.c_int32, "uint": ctypes.c_uint32,
           "long": ctypes.c_int64, "ulong": ctypes.c_uint64}


class _UInt3(ctypes.Structure):
    _fields_ = [("x", ctypes.c_uint32), ("y", ctypes.c_uint32), ("z", ctypes.c_uint32)]


def _run_on_host(src, name, arrays, scalars, items, tmp_path):
    """Compile ``src`` as C++ and call kernel ``name`` once per work item, each argument as its
    declaration in the signature asks (pointers, constant references, the uint3 position)."""
    (tmp_path / "shim.h").write_text(_HOST_SHIM)
    (tmp_path / "k.cpp").write_text(src)
    lib = tmp_path / "k.so"
    built = subprocess.run([shutil.which("g++"), "-std=c++17", "-shared", "-fPIC", "-O1", "-Wno-attributes", "-include",
                            str(tmp_path / "shim.h"), str(tmp_path / "k.cpp"), "-o", str(lib)], capture_output=True, text=True)
    assert built.returncode == 0, f"the generated source does not compile as C++:\n{built.stderr}\n{src}"
    fn = getattr(ctypes.CDLL(str(lib)), name)
    fixed = []
    position = None
    for decl in _head(src, name):
        if m := re.fullmatch(r"device (?:const )?(\w+)\* (\w+) \[\[buffer\(\d+\)\]\]", decl):
            fixed.append(ctypes.c_void_p(arrays[m.group(2)].ctypes.data))
        elif m := re.fullmatch(r"constant (\w+)& (\w+) \[\[buffer\(\d+\)\]\]", decl):
            pname = m.group(2)
            shape = re.fullmatch(r"(\w+)_shape(\d+)", pname)
            value = arrays[shape.group(1)].shape[int(shape.group(2))] if shape else scalars[pname]
            fixed.append(ctypes.byref(_CTYPES[m.group(1)](value)))
        elif decl == "uint3 pg_thread_position_in_grid [[thread_position_in_grid]]":
            position = len(fixed)
            fixed.append(None)
        else:
            raise AssertionError(f"a parameter this host run does not know: {decl}")
    for gid in range(items):
        args = list(fixed)
        if position is not None:
            args[position] = _UInt3(gid, 0, 0)
        fn(*args)


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs a host C++ compiler (g++)")
def test_the_metal_like_source_computes_what_the_python_does(metalish, tmp_path, monkeypatch):
    from pygpgpu_translate import _wide
    monkeypatch.setattr(_wide, "ENABLED", False)      # PYGPGPU_WIDE_LOADS=0: one element per item, no vectors to shim
    x, out, a, n = _args()
    src = _source(kernel(shift.py_func), (x, out, a, n))      # a new kernel object: translated without wide loads
    _run_on_host(src, "shift", {"x": x, "out": out}, {"a": a, "n": n, "_pyg_n0": out.shape[0]},   # _pyg_n0: range(out.shape[0])
                 x.size, tmp_path)
    expected = np.zeros_like(x)
    shift.py_func(x, expected, a, n)
    np.testing.assert_allclose(out, expected, rtol=1e-6)
    assert np.any(out != 0)


class _Wgslish:
    """A WGSL-like dialect registered in code: types after names, the thread id a ``@builtin``
    parameter, arrays and scalars bindings at file scope, no ``#line``. Made in a function so
    the classes come from the public module only."""

    @staticmethod
    def make():
        from pygpgpu_translate.target import KernelSignature, OpenCL

        types = {"float": "f32", "int": "i32", "uint": "u32", "bool": "bool"}

        class Wgslish(OpenCL):
            reserved_words = OpenCL.reserved_words | frozenset({"var", "let", "fn", "array", "ptr", "storage", "uniform",
                                                                "workgroup", "f32", "i32", "u32", "vec3", "select"})
            work_items = {"global_id": "pg_gid.{d}"}
            vector_views = False                   # no pointer casts: no wide kernels, no row loads

            def c_type(self, type_name):
                return types.get(type_name, type_name)

            def declaration(self, type_text, name):
                return f"{name}: {type_text}"

            def local_variable(self, type_text, name):
                return f"var {name}: {type_text};"

            def cast(self, type_text, expr):
                return f"{type_text}({expr})"

            def line_directive(self, line, filename):
                return ""

            def ternary(self, cond, a, b):
                return f"select({b}, {a}, {cond})"

            def kernel_signature(self, name, params, work_items):
                scope = [f"@group(0) @binding({p.index}) var<storage, {'read_write' if p.written else 'read'}> "
                         f"{p.name}: array<{p.type_text}>;" if p.kind == "global" else
                         f"@group(0) @binding({p.index}) var<uniform> {p.name}: {p.type_text};" for p in params]
                builtin = ["@builtin(global_invocation_id) pg_gid: vec3<u32>"] if work_items else []
                return KernelSignature(f"@compute @workgroup_size(64)\nfn {name}({', '.join(builtin)})", scope)

        return Wgslish()


@pytest.fixture
def wgslish():
    from pygpgpu_translate import _dialects
    from pygpgpu_translate.target import Target, register_target
    yield register_target(Target("wgslish", _Wgslish.make()))
    _dialects.DIALECTS.pop("wgslish", None)
    targets._reset_for_tests()


def test_a_wgsl_like_target_binds_at_file_scope_and_spells_types_after_names(wgslish):
    @kernel
    def scale(x, out, a):
        for i in range(out.shape[0]):
            ptr = x[i] * a           # a WGSL word as a local
            out[i] = ptr if ptr > 0 else -ptr

    x = np.ones(8, np.float32)
    src = kernel(scale.py_func).inspect(x, np.zeros_like(x), np.float32(2.0), backend="wgslish").source
    assert "#line" not in src
    assert "@group(0) @binding(0) var<storage, read> x: array<f32>;" in src
    assert re.search(r"@group\(0\) @binding\(\d+\) var<storage, read_write> out: array<f32>;", src)
    assert re.search(r"@group\(0\) @binding\(\d+\) var<uniform> a: f32;", src)
    assert "@compute @workgroup_size(64)\nfn scale(@builtin(global_invocation_id) pg_gid: vec3<u32>)\n{" in src
    assert "var ptr_: f32;" in src and "pg_gid.x" in src
    assert re.search(r"select\(\(?-ptr_\)?, ptr_, \(?ptr_ > ", src) and "?" not in src, src
    assert src.index("var<uniform> a") < src.index("fn scale")          # bindings before the function
    assert "*" not in src.replace("x[i] * a", "")                       # no pointer: one element per access
    assert "float4" not in src and "_pyg_lane" not in src


def test_the_backend_guide_shows_only_public_names():
    """docs/writing-a-backend.md is the extension API's manual: its code imports no private module."""
    text = (Path(__file__).parent.parent / "docs" / "writing-a-backend.md").read_text()
    imports = re.findall(r"^\s*(?:from|import)\s+([\w.]+)", "\n".join(re.findall(r"```python\n(.*?)```", text, re.S)), re.M)
    assert any(m.startswith("pygpgpu_translate") for m in imports)
    assert not [m for m in imports if any(part.startswith("_") for part in m.split("."))]
    assert not re.search(r"pygpgpu_\w+\._", text), "the guide names a private module"


def test_the_prelude_comes_from_the_dialect_registered_now():
    """The prelude's pieces are the registered dialect's: a dialect registered again under a name
    (another class) writes its own atomics, not those cached for the earlier one."""
    from pygpgpu_translate import _dialects
    from pygpgpu_translate.target import OpenCL, Target, register_target

    def marked(text):
        class Marked(OpenCL):
            mark = text                 # a plain attribute: part of the dialect's fingerprint

            def atomic_source(self, op, type_name, local):
                return f"// {self.mark}\n" + super().atomic_source(op, type_name, local)
        return Marked()

    @kernel
    def count(hits, out):
        for i in range(hits.shape[0]):
            gpu.atomic_add(out, 0, hits[i])

    hits = np.ones(8, np.int32)
    sources = []
    for mark in ("first atomics", "second atomics"):
        register_target(Target("markedcl", marked(mark)))
        try:
            sources.append(kernel(count.py_func).inspect(hits, np.zeros(1, np.int32), backend="markedcl").source)
        finally:
            _dialects.DIALECTS.pop("markedcl", None)
            targets._reset_for_tests()
    assert "// first atomics" in sources[0] and "// second atomics" in sources[1]
    assert "// first atomics" not in sources[1]


def test_the_cache_namespaces_name_an_unloaded_target_without_importing_it(metalish):
    """The size bound asks for the namespaces on a cache write; a plug-in target is one by its
    entry point's name before anything of it (or of the translator it imports) is loaded."""
    assert "pygpgpu_metalish_target" not in sys.modules
    assert "metalish" in _cachesize.namespaces()
    assert "pygpgpu_metalish_target" not in sys.modules


def test_core_reads_a_target_without_importing_the_translator():
    """The kernel-file kinds (and so the import hooks) come from every target; loading the
    example's for them imports core only, its dialect being a reference the translator resolves."""
    code = ("import sys; from pygpgpu_core.kernel_files import KINDS; "
            "print(KINDS['metal'].dialect, 'pygpgpu_translate' in sys.modules)")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(EXAMPLE), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["metalish", "False"]


def _position():
    return gpu.get_global_id(0)


def _twice_at(x):                 # reads the position through another helper
    return x[_position()] * 2


@kernel
def doubled(x, out):
    i = gpu.get_global_id(0)
    if i < out.shape[0]:
        out[i] = _twice_at(x)


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs a host C++ compiler (g++)")
def test_helpers_reading_the_thread_id_take_it_from_their_caller(metalish, tmp_path):
    """Where the thread id is a kernel parameter, a helper that reads it (itself or through a
    callee) takes it as a parameter and every call passes it on."""
    x = np.linspace(-1, 1, 37).astype(np.float32)
    out = np.zeros_like(x)
    src = _source(doubled, (x, out))
    assert re.search(r"pyg__position\(uint3 pg_thread_position_in_grid\)", src), src
    assert re.search(r"pyg__twice_at\([^)]*, uint3 pg_thread_position_in_grid\)", src), src
    _run_on_host(src, "doubled", {"x": x, "out": out}, {}, x.size, tmp_path)
    np.testing.assert_array_equal(out, x * 2)


def test_a_target_entry_point_that_raises_says_why_in_the_error(tmp_path, monkeypatch):
    """A plug-in that cannot translate yet (pygpgpu-webgpu's ``wgsl``) raises from its entry point;
    the UnknownDialect error carries its message, so the user reads what runs instead."""
    from pygpgpu_translate.target import UnknownDialect
    (tmp_path / "notyet_mod.py").write_text(
        "def __getattr__(name):\n    raise NotImplementedError('not yet: run it on opencl instead')\n")
    info = tmp_path / "notyet-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: notyet\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[pygpgpu.targets]\nnotyet = notyet_mod:WGSL\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    targets._reset_for_tests()
    try:
        with pytest.raises(UnknownDialect, match="not yet: run it on opencl instead"):
            dialect_for("notyet")           # what a backend whose dialect attribute is "notyet" asks
        assert "notyet" not in targets.target_names()
    finally:
        targets._reset_for_tests()
        sys.modules.pop("notyet_mod", None)
