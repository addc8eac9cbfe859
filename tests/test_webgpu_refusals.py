"""What WGSL cannot express is refused while the kernel is translated for webgpu, and the error
names the user's file and line (the statement that uses the construct, the call that needs a
piece WGSL cannot have, the ``def`` line for a parameter's type), the type or construct, and the
backends that have it; as the translator's other type errors do. Only translation: no device needed."""
from __future__ import annotations

import inspect
import math
import os

import numpy as np
import pytest

from pygpgpu import funcs, gpu, kernel
from pygpgpu_core.vec_types import float8


def _marked_line(k) -> int:
    """The file line of the kernel's (or its helper's) line ending in ``# refused here``."""
    for fn in (k.py_func, _first):
        lines, start = inspect.getsourcelines(fn)
        for n, text in enumerate(lines):
            if text.rstrip().endswith("# refused here"):
                return start + n
    raise AssertionError("no marked line")


@kernel
def doubled(x, out):  # refused here
    for i in range(out.shape[0]):
        out[i] = x[i] * 2


@kernel
def doubled_int(x, out):
    for i in range(out.shape[0]):
        out[i] = x[i] * 2  # refused here


@kernel
def wide_local(x, out):
    for i in range(out.shape[0]):
        t = np.float64(x[i])  # refused here
        out[i] = np.float32(t * 2)


@kernel
def printing(x):
    for i in range(x.shape[0]):
        if x[i] > 0:
            print(x[i])  # refused here


def _first(a, i):  # refused here
    return a[i]


@kernel
def array_helper(x, out):
    for i in range(out.shape[0]):
        out[i] = _first(x, i)


@kernel
def counting(a, total):
    for i in range(a.shape[0]):
        gpu.atomic_add(total, 0, a[i])  # refused here


@kernel
def error_function(x, out):
    for i in range(out.shape[0]):
        out[i] = math.erf(x[i])  # refused here


@kernel
def wide_vector(v, out):
    for i in range(v.shape[0]):
        w = float8(v[i, 0], v[i, 1], v[i, 2], v[i, 3], v[i, 4], v[i, 5], v[i, 6], v[i, 7])  # refused here
        out[i] = funcs.dot(w, w)


@kernel
def drawing(out, seed):
    for i in range(out.shape[0]):
        out[i] = gpu.uniform(seed, i)  # refused here


@kernel
def launch_sized(x, out, n):  # refused here
    tile = gpu.local_array(n, np.float32)
    for i in range(out.shape[0]):
        tile[0] = x[i]
        out[i] = tile[0]


@kernel
def subgroup_sum(x, out):
    out[0] = gpu.subgroup_add(x[0])  # refused here


@kernel
def complex_values(z, out):  # refused here
    for i in range(out.shape[0]):
        out[i] = z[i] * z[i]


_F = np.ones(8, np.float32)
CASES = [
    (doubled, (np.ones(4), np.zeros(4)), "float64 type", "fp64"),
    (doubled_int, (np.ones(4, np.int64), np.zeros(4, np.int64)), "int64 type", "int64"),
    (wide_local, (_F, np.zeros(8, np.float32)), "float64 type", "fp64"),
    (printing, (_F,), "print()", "printf"),
    (array_helper, (_F, np.zeros(8, np.float32)), "helpers cannot take arrays", "pointer_arguments"),
    (counting, (_F, np.zeros(1, np.float32)), "atomics on float", "float_atomics"),
    (error_function, (_F, np.zeros(8, np.float32)), "math function erf()", "math_functions"),
    (wide_vector, (np.ones((4, 8), np.float32), np.zeros(4, np.float32)), "8-wide vectors (float8)", "wide_vectors"),
    # gpu.uniform's seed and counter are 64-bit: the conversion to them is what WGSL lacks first
    (drawing, (np.zeros(8, np.float32), 7), "int64 type", "int64"),
    (launch_sized, (_F, np.zeros(8, np.float32), 8), "local arrays sized at launch", "launch_sized_local"),
    (subgroup_sum, (_F, np.zeros(8, np.float32)), "subgroup operations", "subgroups"),
    (complex_values, (np.ones(8, np.complex64), np.zeros(8, np.complex64)), "complex", "complex"),
]


@pytest.mark.parametrize("k, args, construct, capability", CASES, ids=[
    "float64-parameter", "int64-parameter", "float64-local", "print", "array-helper", "float-atomics", "erf",
    "float8", "random", "launch-sized-local", "subgroup", "complex"])
def test_a_refusal_names_the_users_file_and_line_the_construct_and_the_backends_that_have_it(k, args, construct,
                                                                                           capability):
    pytest.importorskip("pygpgpu_webgpu")
    from pygpgpu_webgpu._target import WGSLUnsupported
    with pytest.raises(WGSLUnsupported) as err:
        k.inspect(*args, backend="wgsl")
    message, line = str(err.value), _marked_line(k)
    assert f"{os.path.basename(__file__)}:{line}: " in message, message
    assert err.value.filename == __file__ and err.value.lineno == line
    assert construct in message and "cuda, hip and opencl have it" in message, message
    assert "# refused here" in message        # the user's line, quoted
    # what is missing, by the name the device declares (the shared suite skips such tests on webgpu)
    from pygpgpu_webgpu._device import WebGPUDevice
    assert err.value.capability == capability and capability in WebGPUDevice.lacks


def test_a_launch_on_webgpu_raises_the_same_refusal_from_the_callers_frame():
    from webgpu_support import webgpu_device
    webgpu_device()
    from pygpgpu_webgpu._target import WGSLUnsupported
    with pytest.raises(WGSLUnsupported, match=r"print\(\) in kernels") as err:
        printing["webgpu"](_F)
    assert err.value.lineno == _marked_line(printing)
    # as the other user errors: the kernel call re-raises it, without the translator's frames below
    assert not [e for e in err.traceback if e.path.name in ("_emit.py", "_target.py", "_translate.py")]
