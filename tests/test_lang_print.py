"""``print()`` inside kernels (issue 15, item 2): one device printf per call, formatted like
Python (space-separated, newline; floats as %g, bools as True/False, vectors as float4(...),
f-string format specs passed on). printf writes to the process's C-level stdout, so each test
runs its kernels in a subprocess and compares the lines it printed (as a multiset: the order
across work items is unspecified)."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from pygpgpu_translate import kernel
from pygpgpu_translate._source import KernelTypeError
from test_vec_helpers import rtc_compile  # noqa: F401 - fixture

KERNELS = '''
import sys
import numpy as np
from pygpgpu import kernel, gpu


def report(i, x):
    print("helper", i, x * 2)


@kernel
def values(x, v, big, ubig, small, d):
    for i in range(x.shape[0]):
        print("step", i, x[i], i % 2 == 0, v[i])
        print(i, x[i], sep=",", end=";\\n")
        print(big[i], ubig[i], small[i], d[i])
        report(i, x[i])
        report(i, big[i])


@kernel
def formatted(x, flags):
    gpu.work_size(x)
    i = gpu.get_global_id(0)
    print(f"i={i:03d} x={x[i]:.3f} {x[i]:>9.2e}|{i:<4d}|{i:+d} {flags[i] != 0} {i:x}")
    print("100% \\"quoted\\" \\\\ é ?? end")
    print()


@kernel
def bools(a, b):
    for i in range(a.shape[0]):
        print(a[i] > 0, b[i] > 0, a[i] > b[i], not a[i] > 0)
'''

MAIN = '''
x = np.array([0.5, 2.25, 1e-05], np.float32)
v = np.arange(12, dtype=np.float32).reshape(3, 4) / 4
big = np.array([2**40 + 1, -5, 2**63 - 1], np.int64)
ubig = np.array([2**64 - 1, 0, 7], np.uint64)
small = np.array([-128, 5, 127], np.int8)
d = np.array([0.1, -2.5, 1e100])
backend = sys.argv[1]
values[backend](x, v, big, ubig, small, d)
formatted[backend](x, np.array([1, 0, 1], np.int32))
bools[backend](np.array([1, -1, 2, -2], np.int32), np.array([1, 1, -1, -1], np.int32))
'''


def _g(value) -> str:
    return "%g" % value


def _expected() -> list[str]:
    x = np.array([0.5, 2.25, 1e-05], np.float32)
    v = np.arange(12, dtype=np.float32).reshape(3, 4) / 4
    big = [2**40 + 1, -5, 2**63 - 1]
    ubig = [2**64 - 1, 0, 7]
    small = [-128, 5, 127]
    d = [0.1, -2.5, 1e100]
    flags = [1, 0, 1]
    lines = []
    for i in range(3):
        lines.append(f"step {i} {_g(x[i])} {i % 2 == 0} float4({', '.join(_g(c) for c in v[i])})")
        lines.append(f"{i},{_g(x[i])};")
        lines.append(f"{big[i]} {ubig[i]} {small[i]} {_g(d[i])}")
        lines.append(f"helper {i} {_g(x[i] * 2)}")
        lines.append(f"helper {i} {big[i] * 2 if i < 2 else -2}")      # int64 wraps like numpy
        lines.append(f"i={i:03d} x={float(x[i]):.3f} {float(x[i]):>9.2e}|{i:<4d}|{i:+d} {flags[i] != 0} {i:x}")
        lines.append('100% "quoted" \\ é ?? end')
        lines.append("")
    a, b = [1, -1, 2, -2], [1, 1, -1, -1]
    for i in range(4):
        lines.append(f"{a[i] > 0} {b[i] > 0} {a[i] > b[i]} {not a[i] > 0}")
    return sorted(lines)


def _run(tmp_path, backend) -> list[str]:
    script = tmp_path / "print_kernels.py"
    script.write_text(KERNELS + MAIN, encoding="utf-8")
    env = dict(os.environ, PYTHONIOENCODING="utf-8")
    proc = subprocess.run([sys.executable, str(script), backend], capture_output=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    return proc.stdout.decode("utf-8").split("\n")[:-1]


def test_print_lines_from_every_work_item(tmp_path, backend):
    got = _run(tmp_path, backend)
    assert sorted(got) == _expected()


# ---- the generated printf ---------------------------------------------------------------------------------------
def _load_kernels(tmp_path):
    path = tmp_path / "print_kernels_mod.py"
    path.write_text(KERNELS, encoding="utf-8")
    import importlib.util
    spec = importlib.util.spec_from_file_location("print_kernels_mod", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _args(mod):
    return {
        "values": (np.zeros(3, np.float32), np.zeros((3, 4), np.float32), np.zeros(3, np.int64), np.zeros(3, np.uint64),
                   np.zeros(3, np.int8), np.zeros(3)),
        "formatted": (np.zeros(3, np.float32), np.zeros(3, np.int32)),
        "bools": (np.zeros(4, np.int32), np.zeros(4, np.int32)),
    }


def test_one_printf_per_line_with_literal_formats(tmp_path):
    mod = _load_kernels(tmp_path)
    src = mod.values.inspect(*_args(mod)["values"], backend="opencl").source
    assert 'printf("%ld %lu %d %lg\\n"' in src                # 64-bit ints with OpenCL's long
    assert 'printf("step %d %g True float4(%g, %g, %g, %g)\\n"' in src
    assert 'printf("step %d %g False float4(%g, %g, %g, %g)\\n"' in src
    cuda = mod.values.inspect(*_args(mod)["values"], backend="cuda").source
    assert 'printf("%lld %llu %d %lg\\n"' in cuda
    fsrc = mod.formatted.inspect(*_args(mod)["formatted"], backend="opencl").source
    assert '"100%% \\"quoted\\" \\\\ \\303\\251 \\077\\077 end\\n"' in fsrc     # escaped, UTF-8, no trigraph
    bsrc = mod.bools.inspect(*_args(mod)["bools"], backend="opencl").source
    assert bsrc.count("printf(") == 16                     # 4 bools: one literal format per combination


@pytest.mark.parametrize("name", ["values", "formatted", "bools"])
def test_print_kernels_compile_for_cuda_and_hip(tmp_path, name, rtc_compile):
    dialect, compile_ = rtc_compile
    mod = _load_kernels(tmp_path)
    src = getattr(mod, name).inspect(*_args(mod)[name], backend=dialect).source
    assert "printf(" in src
    assert compile_(src)


# ---- errors ------------------------------------------------------------------------------------------------------
def _translate(fn, *args):
    return kernel(fn).inspect(*args, backend="opencl")


def test_printing_an_array_is_an_error():
    def k(x):
        for i in range(x.shape[0]):
            print(x)

    with pytest.raises(SyntaxError, match="cannot print a whole array"):
        _translate(k, np.zeros(4, np.float32))


def test_print_keywords_other_than_sep_and_end_are_errors():
    def k(x):
        for i in range(x.shape[0]):
            print(x[i], flush=True)

    with pytest.raises(SyntaxError, match="print\\(\\) takes no argument 'flush'"):
        _translate(k, np.zeros(4, np.float32))

    def k2(x, s):
        for i in range(x.shape[0]):
            print(x[i], sep=s)

    with pytest.raises(SyntaxError, match="must be a string literal"):
        _translate(k2, np.zeros(4, np.float32), 1)


def test_format_specs_printf_cannot_express_are_errors():
    def grouping(x):
        for i in range(x.shape[0]):
            print(f"{i:,}")

    with pytest.raises(SyntaxError, match="format spec ',' has no printf equivalent"):
        _translate(grouping, np.zeros(4, np.float32))

    def dynamic(x, w):
        for i in range(x.shape[0]):
            print(f"{x[i]:{w}}")

    with pytest.raises(SyntaxError, match="format spec computed at run time"):
        _translate(dynamic, np.zeros(4, np.float32), 3)

    def float_as_int(x):
        for i in range(x.shape[0]):
            print(f"{x[i]:d}")

    with pytest.raises(KernelTypeError, match="format type 'd' needs an integer, got float32"):
        _translate(float_as_int, np.zeros(4, np.float32))


def test_too_many_bools_in_one_print():
    def k(a):
        for i in range(a.shape[0]):
            print(a[i] > 0, a[i] > 1, a[i] > 2, a[i] > 3, a[i] > 4)

    with pytest.raises(SyntaxError, match="at most 4 bool values per call, got 5"):
        _translate(k, np.zeros(4, np.int32))


def _nul_literal(x):
    for i in range(x.shape[0]):
        print("nul\0end", i)


def _nul_sep(x):
    for i in range(x.shape[0]):
        print("nul", i, sep="\0")


def _nul_end(x):
    for i in range(x.shape[0]):
        print("nul", i, end="\0\n")


def _nul_fstring(x):
    for i in range(x.shape[0]):
        print(f"nul\0{i}")


@pytest.mark.parametrize("fn", [_nul_literal, _nul_sep, _nul_end, _nul_fstring], ids=["literal", "sep", "end", "f-string"])
def test_printing_a_nul_character_is_refused_clearly(backend, fn):
    # (issue 30, item 9) the format string ended at the NUL: "nul" printed, the rest and the newline lost
    with pytest.raises(SyntaxError, match="cannot print a NUL character"):
        kernel(fn)[backend](np.zeros(2, np.int32))
