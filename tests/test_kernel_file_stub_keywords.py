"""The ``.pyi`` written beside a kernel file whose parameters and struct fields are named like
Python keywords (``lambda``, ``in``, ``from``, ``class`` are plain C names): the stub must
still be valid Python, naming them with a trailing underscore, and the kernel still runs
with positional arguments and by the stub's names
(compared with numpy)."""
from __future__ import annotations

import ast

import numpy as np

from conftest import first_device

from pygpgpu_core import kernel_files as kf

SOURCE = """
typedef struct { float lambda; int global_; int yield; } Params;

__kernel void blend(__global const float* in, __global float* lambda, Params from, int class)
{
    int i = get_global_id(0);
    if (i < class) lambda[i] = in[i] * from.lambda + (float)from.yield;
}
"""


def _stub_functions(tree: ast.Module) -> dict:
    out = {}
    for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
        for f in (n for n in cls.body if isinstance(n, ast.FunctionDef)):
            out[(cls.name, f.name)] = [a.arg for a in f.args.args]
    return out


def test_keyword_parameter_names_give_a_valid_stub(tmp_path):
    backend = first_device("opencl").selector     # an OpenCL C file runs on OpenCL devices only
    path = tmp_path / "kwnames.cl"
    path.write_text(SOURCE)
    mod = kf.load(path)
    text = (tmp_path / "kwnames.pyi").read_text()
    tree = ast.parse(text)                          # a SyntaxError here: the stub is not Python
    compile(tree, "kwnames.pyi", "exec")
    functions = _stub_functions(tree)
    assert functions[("_blend_kernel", "__call__")] == ["self", "in_", "lambda_", "from_", "class_"]
    assert functions[("Params", "__init__")] == ["self", "lambda_", "global_", "yield_"]
    x = np.arange(8, dtype=np.float32)
    out = np.zeros(8, np.float32)
    params = mod.Params(2.5, 0, 3)
    mod.blend[backend, (8,)](x, out, params, 6)
    want = np.zeros(8, np.float32)
    want[:6] = x[:6] * np.float32(2.5) + 3
    np.testing.assert_array_equal(out, want)
    out[:] = 0
    mod.blend[backend, (8,)](x, lambda_=out, from_=params, class_=6)    # the stub's names, by keyword
    np.testing.assert_array_equal(out, want)
