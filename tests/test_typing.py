"""The typed public API: a user program type-checks clean under ``mypy --strict`` and pyright (strict),
misuse next to it is reported, kernels keep their parameters through brackets and methods, the
names ``pygpgpu`` exports lazily are declared for type checkers, and the generated vector stub
(scripts/generate_vector_stubs.py) matches the runtime classes.

The checkers run in a temporary folder on copies of the files, so no configuration of this
repository (mypy.ini) applies: they see the installed packages as a user's project would.
"""
from __future__ import annotations

import ast
import importlib.util
import inspect
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import skip_no_compiler
from pygpgpu_core import vec_types as vt

ROOT = Path(__file__).resolve().parent.parent
USER_SCRIPT = Path(__file__).with_name("typing_user_script.py")
STUB = ROOT / "packages/pygpgpu-core/src/pygpgpu_core/vec_types.pyi"

# Misuse a type checker must report (lines marked "# E"), and types it must infer (reveal_type).
PROBE = '''\
import numpy as np
import numpy.typing as npt
from pygpgpu import kernel, float4, int4, uchar16

@kernel
def scale(x: npt.NDArray[np.float32], out: npt.NDArray[np.float32], k: float) -> None: ...

@kernel(backend="opencl", debug=True)
def fill(out: npt.NDArray[np.int32], value: int) -> None: ...

class Model:
    @kernel
    def apply(self, x: npt.NDArray[np.float32]) -> None: ...

a = np.zeros(4, np.float32)
reveal_type(scale)
reveal_type(scale["opencl"][(1024, 64)])
reveal_type(fill)
reveal_type(Model().apply)
reveal_type(float4(1.0).xyz)
reveal_type(float4(1.0) < float4(2.0))
reveal_type(uchar16(1).lo)
scale(a, a)  # E  missing k
scale["cuda"](a, a, "2")  # E  a str for a float
scale["cuda", (4, 2)](a, a, 2.0, 1)  # E  one argument too many
fill(np.zeros(4, np.int32), value="x")  # E
Model().apply(a, 1)  # E  self is bound
y = scale(a, a, 2.0) + 1  # E  a launch returns None
v = int4(1) / 2  # E  integer vectors have no true division
w = float4(1.0) & 1  # E  float vectors have no bit operators
float4(1.0).xy = float4(1.0).zw  # E  swizzles are read-only

import pygpgpu
import pygpgpu.numpy as gnp
from pygpgpu import funcs

@kernel
def both(x: pygpgpu.Array[np.float32], out: pygpgpu.ArrayLike) -> None: ...

g = gnp.zeros(4, np.float32)
both(g, a)      # a device array where the annotation names numpy's float32: accepted
both(a, g)
both([1.0, 2.0], g)  # E  a list is neither a numpy nor a device array
reveal_type(pygpgpu.get_device())
reveal_type(funcs.normalize(float4(1.0)))
reveal_type(g.sum())
reveal_type(gnp.sum(g))
'''

REVEALED = {   # reveal_type line -> what the type must mention (mypy and pyright spell types differently)
    "scale": ["KernelFunction", "x:", "out:", "k: float"],
    'scale["opencl"][(1024, 64)]': ["ConfiguredKernel", "x:", "out:", "k: float"],
    "fill": ["KernelFunction", "out:", "value: int"],
    "Model().apply": ["ConfiguredKernel", "x:"],
    "float4(1.0).xyz": ["float3"],
    "float4(1.0) < float4(2.0)": ["int4"],
    "uchar16(1).lo": ["uchar8"],
    "pygpgpu.get_device()": ["Device"],
    "funcs.normalize(float4(1.0))": ["float4"],
    "g.sum()": ["DeviceArray"],
    "gnp.sum(g)": ["DeviceArray"],
}


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    d = tmp_path_factory.mktemp("typing")
    shutil.copy(USER_SCRIPT, d / "user_script.py")
    (d / "probe.py").write_text(PROBE)
    return d


def _marked_lines(text: str) -> set[int]:
    return {n for n, line in enumerate(text.splitlines(), 1) if "# E" in line}


def _reveal_lines(text: str) -> dict[int, str]:
    out = {}
    for n, line in enumerate(text.splitlines(), 1):
        if line.startswith("reveal_type("):
            out[n] = line[len("reveal_type("):-1]
    return out


@pytest.fixture(scope="module")
def mypy_result(workdir):
    if importlib.util.find_spec("mypy") is None:
        skip_no_compiler("mypy", "not installed in this environment (pip install mypy)")
    out = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(workdir / ".mypy_cache"),
                          "--no-error-summary", "--hide-error-context", "user_script.py", "probe.py"],
                         cwd=workdir, capture_output=True, text=True, timeout=600)
    return out.stdout + out.stderr


def test_user_script_is_clean_under_mypy_strict(mypy_result):
    problems = [line for line in mypy_result.splitlines() if line.startswith("user_script.py")]
    assert not problems, "\n".join(problems)


def test_mypy_reports_misuse_and_keeps_kernel_parameters(mypy_result):
    lines = [line for line in mypy_result.splitlines() if line.startswith("probe.py:")]
    errors = {int(line.split(":")[1]) for line in lines if ": error:" in line}
    assert errors == _marked_lines(PROBE), "\n".join(lines)
    revealed = {int(line.split(":")[1]): line.split("Revealed type is ", 1)[1]
                for line in lines if "Revealed type is" in line}
    for n, expr in _reveal_lines(PROBE).items():
        for part in REVEALED[expr]:
            assert part in revealed[n], (expr, revealed[n])


@pytest.fixture(scope="module")
def pyright_result(workdir):
    exe = shutil.which("pyright", path=str(Path(sys.executable).parent)) or shutil.which("pyright")
    if exe is None:
        skip_no_compiler("pyright", "not installed in this environment (pip install pyright; it needs Node.js)")
    out = subprocess.run([exe, "--outputjson", "--pythonpath", sys.executable, "user_script.py", "probe.py"],
                         cwd=workdir, capture_output=True, text=True, timeout=600)
    try:
        return json.loads(out.stdout)["generalDiagnostics"]
    except (ValueError, KeyError):
        skip_no_compiler("pyright", f"did not run: {(out.stdout + out.stderr)[-500:]}")


def test_user_script_is_clean_under_pyright_strict(pyright_result):
    problems = [d for d in pyright_result if d["file"].endswith("user_script.py")]
    assert not problems, json.dumps(problems, indent=1)


def test_pyright_reports_misuse_and_keeps_kernel_parameters(pyright_result):
    probe = [d for d in pyright_result if d["file"].endswith("probe.py")]
    errors = {d["range"]["start"]["line"] + 1 for d in probe if d["severity"] == "error"}
    assert errors == _marked_lines(PROBE), json.dumps(probe, indent=1)
    revealed = {d["range"]["start"]["line"] + 1: d["message"] for d in probe if d["severity"] == "information"}
    for n, expr in _reveal_lines(PROBE).items():
        for part in REVEALED[expr]:
            assert part in revealed[n], (expr, revealed[n])


def test_user_script_runs(backend):
    """The type-checked program is a real one: it runs and checks its results."""
    import typing_user_script

    assert typing_user_script.run(256, backend) > 0


# ---- the names pygpgpu exports lazily ------------------------------------------------------------
def _type_checking_names(path: Path) -> set[str]:
    """Names bound under ``if TYPE_CHECKING:`` in ``path`` (re-exports ``x as x`` and annotations)."""
    names: set[str] = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for stmt in node.body:
                if isinstance(stmt, ast.ImportFrom):
                    names |= {a.asname for a in stmt.names if a.asname == a.name}
                elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                    names.add(stmt.target.id)
    return names


def test_lazy_exports_are_declared_for_type_checkers():
    import pygpgpu

    declared = _type_checking_names(ROOT / "packages/pygpgpu/src/pygpgpu/__init__.py")
    assert declared == set(pygpgpu._EXPORTS) | set(pygpgpu._IMPORT_HOOKS)
    for name in pygpgpu._EXPORTS:                  # and each resolves at runtime
        assert getattr(pygpgpu, name) is not None


def test_kernel_stays_the_decorator_after_importing_the_submodule_name():
    out = subprocess.run([sys.executable, "-c",
                          "import pygpgpu, types\n"
                          "from pygpgpu.kernel import KernelFunction, ConfiguredKernel\n"
                          "import pygpgpu.kernel\n"
                          "assert not isinstance(pygpgpu.kernel, types.ModuleType), pygpgpu.kernel\n"
                          "assert type(pygpgpu).__name__ == 'module' and type(pygpgpu.__dict__.get('kernel',"
                          " pygpgpu.kernel)).__name__ == 'function'\n"
                          "assert type(__import__('sys').modules['pygpgpu.kernel']) is types.ModuleType\n"
                          "print('ok')\n"], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "ok", out.stderr


# ---- the vector stub -------------------------------------------------------------------------------
def _generator():
    spec = importlib.util.spec_from_file_location("generate_vector_stubs", ROOT / "scripts/generate_vector_stubs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_vector_stub_is_what_the_generator_writes():
    assert STUB.read_text() == _generator().stub_text(), \
        "vec_types.pyi is out of date: run .venv/bin/python scripts/generate_vector_stubs.py"


def _stub_classes() -> dict[str, ast.ClassDef]:
    return {n.name: n for n in ast.parse(STUB.read_text()).body if isinstance(n, ast.ClassDef)}


def _properties(cls: ast.ClassDef) -> dict[str, tuple[str, bool]]:
    """property name -> (declared type, has a setter)."""
    out: dict[str, tuple[str, bool]] = {}
    for f in cls.body:
        if not isinstance(f, ast.FunctionDef) or not f.decorator_list:
            continue
        deco = ast.unparse(f.decorator_list[0])
        if deco == "property":
            out[f.name] = (ast.unparse(f.returns), False)
        elif deco.endswith(".setter"):
            out[f.name] = (out[f.name][0], True)
    return out


def _methods(cls: ast.ClassDef) -> set[str]:
    return {f.name for f in cls.body if isinstance(f, ast.FunctionDef)} | \
        {t.target.id for t in cls.body if isinstance(t, ast.AnnAssign) and isinstance(t.target, ast.Name)}


def _base_args(base: ast.expr) -> tuple[str, list[str]]:
    assert isinstance(base, ast.Subscript)
    args = base.slice.elts if isinstance(base.slice, ast.Tuple) else [base.slice]
    return ast.unparse(base.value), [ast.unparse(a) for a in args]


def test_vector_stub_declares_the_runtime_module():
    tree = ast.parse(STUB.read_text())
    stub_all = next(ast.literal_eval(n.value) for n in tree.body
                    if isinstance(n, ast.Assign) and ast.unparse(n.targets[0]) == "__all__")
    assert stub_all == vt.__all__
    classes = _stub_classes()
    assert {c for c in classes if not c.startswith("_")} == {"Vector", *vt.VECTOR_TYPES}
    functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    for name in ("vector_type", "vector_dtype", "vector_type_of_dtype", "comparison_type"):
        assert [a.arg for a in functions[name].args.args] == list(inspect.signature(getattr(vt, name)).parameters)
    declared = _methods(classes["Vector"])
    public = {n for n, v in vars(vt.Vector).items() if callable(v) or isinstance(v, classmethod)} - {"__slots__"}
    runtime_only = {"__setattr__", "_from_record", "_component_name", "_swizzle_indices", "_operand", "_is_int",
                    "_binary", "_no_int_truediv", "_compare"}   # helpers and the write path the stub leaves out
    operators = set().union(*(_methods(classes[c]) for c in ("_FloatVector", "_IntVector")))
    assert public - runtime_only <= declared | operators, sorted(public - runtime_only - declared - operators)


def _scalar_name(value) -> str:
    return f"np.{type(value).__name__}"


@pytest.mark.parametrize("name", list(vt.VECTOR_TYPES))
def test_vector_stub_matches_each_class(name):
    """Per class: its bases name its component type, narrower/wider kin and comparison type; every
    declared component and swizzle exists at runtime with the declared type, and no runtime
    component is missing; the declared operators work and the other kind's raise TypeError."""
    cls = vt.VECTOR_TYPES[name]
    classes = _stub_classes()
    ops_base, lanes_base = classes[name].bases
    kind, (compare,) = _base_args(ops_base)
    lanes, lane_args = _base_args(lanes_base)
    is_int = np.issubdtype(cls.base, np.integer)
    assert kind == ("_IntVector" if is_int else "_FloatVector")
    assert compare == vt.vector_type(vt.comparison_type(cls.base), cls.width).name
    assert lanes == f"_Lanes{cls.width}"
    params = _base_args(classes[lanes].bases[1])[1]        # Generic[_S, _V2, ...]
    binding = dict(zip(params, lane_args))

    v = cls(*range(1, cls.width + 1))
    declared = _properties(classes[lanes])
    for prop, (declared_type, settable) in declared.items():
        value = getattr(v, prop)
        expected = binding[declared_type]
        got = type(value).__name__ if isinstance(value, vt.Vector) else _scalar_name(value)
        assert got == expected, (prop, got, expected)
        if settable:
            setattr(v, prop, 1)
            assert getattr(v, prop) == 1
    candidates = ["x", "y", "z", "w"] + [f"s{c}" for c in "0123456789abcdefABCDEF"]
    runtime_components = set()
    for c in candidates:
        try:
            getattr(v, c)
        except AttributeError:
            continue
        runtime_components.add(c)
    assert runtime_components == {p for p, (_, settable) in declared.items() if settable}

    mine, other = ("_IntVector", "_FloatVector") if is_int else ("_FloatVector", "_IntVector")
    for method in sorted(_methods(classes[mine]) - {"eq", "ne"}):
        args = () if method == "__invert__" else (cls(1),)
        getattr(v, method)(*args)
    for method in sorted(_methods(classes[other]) - _methods(classes[mine])):
        with pytest.raises(TypeError):
            getattr(v, method)(cls(1))
    if is_int:
        with pytest.raises(TypeError):
            v + 1.5              # an integer vector takes no float operand (the stub's _IntOperand)


# ---- how much of the public API type checkers see typed -----------------------------------------
VERIFYTYPES_MIN = 0.90


def test_pyright_verifytypes_sees_at_least_90_percent_of_the_public_api_typed(tmp_path):
    """``pyright --verifytypes pygpgpu --ignoreexternal``: the share of exported names whose type is
    fully known (was 52.6%: device arrays, gnp functions and the kernel classes came back partly Any)."""
    exe = shutil.which("pyright", path=str(Path(sys.executable).parent)) or shutil.which("pyright")
    if exe is None:
        skip_no_compiler("pyright", "not installed in this environment (pip install pyright; it needs Node.js)")
    # pyright finds the environment through the `python` on PATH: this interpreter's folder first
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    out = subprocess.run([exe, "--verifytypes", "pygpgpu", "--ignoreexternal", "--outputjson"], cwd=tmp_path,
                         env=env, capture_output=True, text=True, timeout=600)
    try:
        report = json.loads(out.stdout)["typeCompleteness"]
    except (ValueError, KeyError):
        skip_no_compiler("pyright", f"did not run: {(out.stdout + out.stderr)[-500:]}")
    assert report["packageRootDirectory"], "pyright did not find the installed pygpgpu"
    unknown = sorted(s["name"] for s in report["symbols"] if s["isExported"] and not s["isTypeKnown"])
    assert report["completenessScore"] >= VERIFYTYPES_MIN, (report["completenessScore"], unknown)


def test_repository_mypy_checks_every_body_of_the_translator():
    """mypy.ini (run by .ci/run) checks the body of every function of pygpgpu_translate, annotated
    or not (issue 34): no translator module is exempt from check_untyped_defs."""
    import configparser
    config = configparser.ConfigParser()
    config.read(ROOT / "mypy.ini")
    assert config.getboolean("mypy-pygpgpu_translate.*", "check_untyped_defs")
    exempt = [section for section in config.sections()
              if "pygpgpu_translate" in section and config.has_option(section, "check_untyped_defs")
              and not config.getboolean(section, "check_untyped_defs")]
    assert exempt == [], f"translator modules exempt from check_untyped_defs: {exempt}"
