"""Every Python identifier compiles on every dialect (issue 12, item 10).

Kernels named like C builtins (``step``, ``dot``, ``sqrt``, ``main``, ``printf``...), locals named
like macros (``M_PI``, ``INFINITY``, ``FLT_MAX``) or keywords of another language (``xor``,
``__kernel``), parameters named like the hidden arguments pygpgpu generates (``out_shape0``,
``_pyg_n0``): each keeps its Python meaning and gets a C name no dialect reserves, and the
launcher finds the kernel under that name.

The whole reserved lists are tested, not a sample: every word of ``_c_words`` (what the
compilers themselves reject, see scripts/c_words.py) is used as a parameter name and a local
name, and every word the lists spell out as a kernel name. The kernels are generated into
modules, translated for each dialect and compiled together: PoCL runs the locals and parameters
kernels (looked up by their C names); the kernel names are compiled by clang with PoCL's kernel
header (PoCL's own front end; PoCL needs ~50 ms per kernel to build, too slow for ~1300 kernels);
NVRTC and hiprtc compile every kernel for CUDA and HIP, whose symbols are checked. The issue's
names also run end to end through the normal launch path on every backend.
"""
from __future__ import annotations

import importlib.util
import keyword
import os
import re
import subprocess
import sys

import numpy as np
import pytest

from pygpgpu_translate import _c_words
from pygpgpu_translate._names import RESERVED, RESERVED_FAMILIES, c_identifier, is_reserved

from conftest import skip_no_device

# The issue's cases, pygpgpu's own generated names, C's reserved _X/__x, one member of each
# reserved family the lists do not spell out, and non-ASCII Python identifiers.
EXTRA = """step dot normalize length sqrt min max exp abs round main double printf get_global_id M_PI INFINITY NAN
FLT_MAX __kernel out_shape0 _pyg_n0 _pyg_n1 _pyg_err _t1 _t2 x_shape0 x_shape1 v_0 v_15 pg_dot_float4 pg_make_float4
pyg_helper pyg_clamp01 step_ upyg_helper_ __global__ __shared__ _Bool _Generic __syncthreads __fdividef __expf
cudaNewThing CU_NEW_THING CUDA_NEW NV_NEW_TARGET hipNewApi HIP_NEW_MACRO convert_int4_sat_rte CLK_NEW_FLAG
intel_new_builtin self_w α naïve""".split()

WORDS = sorted({w for words in (_c_words.KEYWORDS, _c_words.OPENCL_C, _c_words.CUDA, _c_words.HIP, _c_words.PYGPGPU)
                for w in words} | set(EXTRA))
PY_WORDS = [w for w in WORDS if w.isidentifier() and not keyword.iskeyword(w)]
PARAMS_PER_KERNEL = 128


def _one_per_c_name(words):
    # step and step_ would both be step_: fine apart (a program holds one user-named kernel), but
    # this test links every kernel into one program
    seen = set()
    return [w for w in words if not (c_identifier(w) in seen or seen.add(c_identifier(w)))]


# Every word as a local and as a parameter. As a kernel name every word the lists spell out, but
# of the families mangled whole by prefix (_*, cuda*, hip*, CLK_*, convert_*...: about 2400 words,
# 1000 of them cuda*) only the members in EXTRA: one translation per kernel name and dialect is
# the slow part of this module.
KERNEL_WORDS = _one_per_c_name([w for w in PY_WORDS if not RESERVED_FAMILIES.match(w) or w in EXTRA])


def test_the_lists_are_complete_enough_to_matter():
    # what the issue named, and what each compiler rejects first, is in the data
    for w in ("step", "dot", "normalize", "length", "sqrt", "printf", "M_PI", "INFINITY", "NAN", "FLT_MAX",
              "get_global_id", "threadIdx", "atomicAdd", "xor", "and_eq", "float4", "make_float4", "hipThreadIdx_x"):
        assert is_reserved(w), w
    assert len(_c_words.OPENCL_C) > 1000 and len(_c_words.CUDA) > 1000 and len(_c_words.HIP) > 500
    assert {"global", "local", "constant", "kernel", "const", "volatile"} <= _c_words.KEYWORDS


def test_mangled_names_are_plain_c_identifiers_outside_every_list():
    for w in WORDS:
        c = c_identifier(w)
        assert c.isascii() and c.isidentifier() and c not in RESERVED, (w, c)
        if c != w:      # mangled: outside C's _X/__x, pygpgpu's own names and its derived x_shape0 / v_0
            assert c.endswith("_") and not c.startswith(("_", "pyg_", "pg_")), (w, c)
    assert c_identifier("x") == "x" and c_identifier("acc") == "acc"     # ordinary names keep their spelling
    assert c_identifier("step") == "step_" and c_identifier("_pyg_n0") == "u_pyg_n0_"
    assert c_identifier("out_shape0") == "out_shape0_" and c_identifier("α") != c_identifier("naïve")


def _module(tmp_path, name, text):
    path = tmp_path / f"{name}.py"
    path.write_text("from pygpgpu_translate import kernel as _w12_kernel\n\n" + text)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    """One module per role: a kernel named after every word, one kernel with every word as a
    local, kernels whose parameters are the words (the first one an array)."""
    tmp = tmp_path_factory.mktemp("names")
    words = PY_WORDS
    named = [f"@_w12_kernel\ndef {w}(_w12_out):\n    _w12_out[{j}] = {j + 1}\n\n\n" for j, w in enumerate(KERNEL_WORDS)]
    names_mods = [_module(tmp, f"w12_kernel_names{i}", "".join(named[i:i + 200]))   # small files: sources are
                  for i in range(0, len(named), 200)]                              # read per function
    kernels = [getattr(names_mods[j // 200], w) for j, w in enumerate(KERNEL_WORDS)]
    body = [f"        {w} = {'_w12_i' if j == 0 else words[j - 1]} + 1\n" for j, w in enumerate(words)]
    locals_mod = _module(tmp, "w12_locals", "@_w12_kernel\ndef _w12_locals(_w12_out):\n"
                         "    for _w12_i in range(_w12_out.shape[0]):\n" + "".join(body)
                         + f"        _w12_out[_w12_i] = {words[-1]}\n")
    chunks = [words[i:i + PARAMS_PER_KERNEL] for i in range(0, len(words), PARAMS_PER_KERNEL)]
    params = "".join(f"@_w12_kernel\ndef _w12_params{k}({', '.join(c)}):\n    {c[0]}[0] = {' + '.join(c[1:]) or '0'}\n\n\n"
                     for k, c in enumerate(chunks))
    params_mod = _module(tmp, "w12_params", params)
    return kernels, locals_mod, params_mod, chunks


def _translations(generated, dialect):
    """(inspection, args) for every generated kernel, in one list."""
    kernels, locals_mod, params_mod, chunks = generated
    out = np.zeros(len(KERNEL_WORDS), np.int32)
    items = [(k.inspect(out, backend=dialect), (out,)) for k in kernels]
    items.append((locals_mod._w12_locals.inspect(out, backend=dialect), (out,)))
    for k, c in enumerate(chunks):
        args = (np.zeros(1, np.int32),) + tuple(range(1, len(c)))
        items.append((getattr(params_mod, f"_w12_params{k}").inspect(*args, backend=dialect), args))
    return items


def _program(items):
    return "\n".join(ins.source for ins, _ in items)       # no prelude: each kernel only stores ints


def _c_args(ins, args):
    """The C argument list of a translated kernel from its Python arguments, by its layout."""
    by_name = dict(zip([item[1] for item in ins.layout if item[0] in ("buffer", "scalar")], args))
    out = []
    for item in ins.layout:
        if item[0] == "buffer":
            out.append(by_name[item[1]])
        elif item[0] == "shape":
            out.append(item[3].type(by_name[item[1]].shape[item[2]]))
        elif item[0] == "scalar":
            out.append(item[2].type(by_name[item[1]]))
        else:
            raise AssertionError(f"unexpected layout item {item}")
    return out


def test_every_word_as_parameter_and_local_name_runs_on_pocl(generated):
    from pygpgpu_core import registry
    try:
        device = registry.get_device("opencl")
    except Exception as exc:
        skip_no_device("opencl", f"no OpenCL device: {exc}")
    items = _translations(generated, "opencl")[len(KERNEL_WORDS):]
    program = device.context().program(_program(items), name="w12_names.cl")
    ins, _ = items[0]                                    # every word as a local
    local_out = np.zeros(8, np.int32)
    program.kernel(ins.entry)[(8,)](local_out, np.int32(8), np.int32(8))
    np.testing.assert_array_equal(local_out, np.arange(8) + len(PY_WORDS))
    for ins, args in items[1:]:                          # every word as a parameter
        result = np.zeros(1, np.int32)
        program.kernel(ins.entry)[(1,)](*_c_args(ins, (result,) + args[1:]))
        assert result[0] == sum(args[1:]), ins.entry


def _pocl_compiler():
    """clang with PoCL's kernel header: the front end PoCL runs on every build (libpocl depends on
    clang). PoCL itself needs ~50 ms per kernel to build, too slow for a program of ~1300 kernels."""
    import glob
    import shutil

    clang = shutil.which("clang-15") or shutil.which("clang")
    headers = glob.glob("/usr/share/pocl/include/_kernel.h") + glob.glob("/usr/local/share/pocl/include/_kernel.h")
    if clang is None or not headers:
        why = f"clang ({clang}) and PoCL's kernel headers ({headers}) are needed"
        if os.environ.get("PYGPGPU_REQUIRE_COMPILERS", "") not in ("", "0"):
            pytest.fail(why)
        pytest.skip(why)
    return clang, headers[0]


def test_every_word_as_kernel_name_compiles_as_pocl_builds_it(generated, tmp_path):
    clang, header = _pocl_compiler()
    items = _translations(generated, "opencl")[:len(KERNEL_WORDS)]
    src = tmp_path / "kernel_names.cl"
    src.write_text(_program(items))
    proc = subprocess.run([clang, "-x", "cl", "-cl-std=CL1.2", f"-I{os.path.dirname(header)}", "-include", header,
                           "-S", "-emit-llvm", "-O0", "-o", "-", str(src)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    kernels = set(re.findall(r"spir_kernel void @([A-Za-z_]\w*)\(", proc.stdout))
    missing = [ins.entry for ins, _ in items if ins.entry not in kernels]    # e.g. renamed to _cl_step
    assert not missing, f"{len(missing)} kernels not defined under their C name, e.g. {missing[:5]}"


def _symbols_present(binary: bytes, items):
    missing = [ins.entry for ins, _ in items if b"\0" + ins.entry.encode() + b"\0" not in binary]
    assert not missing, f"{len(missing)} kernels missing from the binary, e.g. {missing[:5]}"


def test_every_word_compiles_for_cuda(generated, nvrtc_compile):
    items = _translations(generated, "cuda")
    _symbols_present(nvrtc_compile(_program(items)), items)


def test_every_word_compiles_for_hip(generated, hiprtc_compile):
    items = _translations(generated, "hip")
    _symbols_present(hiprtc_compile(_program(items), "gfx1030"), items)


# ---- the issue's names end to end, through the normal launch path ------------------------------

@pytest.fixture(scope="module")
def issue_module(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("issue_names")
    text = "".join(f"@_w12_kernel\ndef {w}(out, scale):\n    for i in range(out.shape[0]):\n        out[i] = i * scale\n\n\n"
                   for w in "step dot normalize length sqrt min max exp abs round main double printf".split())
    text += ("@_w12_kernel\ndef macro_locals(out, out_shape0, _pyg_n0, _t1):\n    for i in range(out.shape[0]):\n"
             "        get_global_id = i\n        M_PI = 3 * i\n        INFINITY = out_shape0\n        NAN = _pyg_n0\n"
             "        FLT_MAX = _t1\n        __kernel = 1.5\n        _t2 = i\n"
             "        out[i] = get_global_id + M_PI + INFINITY + NAN + FLT_MAX + __kernel + _t2\n")
    return _module(tmp, "w12_issue_names", text)


@pytest.mark.parametrize("name", "step dot normalize length sqrt min max exp abs round main double printf".split())
def test_kernels_named_like_c_builtins_run(issue_module, name, backend):
    k = getattr(issue_module, name)
    out = np.zeros(6, np.float32)
    k[backend](out, 2.5)
    np.testing.assert_array_equal(out, np.arange(6) * np.float32(2.5))


def test_locals_and_parameters_named_like_macros_and_generated_names(issue_module, backend):
    k = issue_module.macro_locals
    out = np.zeros(7, np.float32)
    k[backend](out, 10, 20, 30)
    want = np.zeros(7, np.float32)
    k.py_func(want, 10, 20, 30)
    np.testing.assert_array_equal(out, want)
