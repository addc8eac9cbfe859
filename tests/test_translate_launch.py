"""Calling kernels: bracket syntax, methods, argument handling, read/write analysis and the
copies it saves, device arrays, inspection and debug logging."""
from __future__ import annotations

import logging

import numpy as np
import pytest

from pygpgpu_core import gnp, gpu, registry
from pygpgpu_core.errors import GPGPUError
from pygpgpu_core.vec_types import float4
from pygpgpu_translate import Inspection, KernelFunction, kernel

import test_translate_helpers as th
from conftest import skip_no_device


@kernel
def saxpy(x, y, out, alpha):
    for i in range(out.shape[0]):
        out[i] = x[i] * alpha + y[i]


def _xy(n=100):
    x = np.arange(n, dtype=np.float32)
    return x, x * 0.5, np.zeros(n, np.float32)


def test_plain_call_uses_the_default_backend():
    if not registry.available_devices():
        skip_no_device("any", "no device on this machine")
    x, y, out = _xy()
    saxpy(x, y, out, 2.0)
    np.testing.assert_array_equal(out, x * 2 + y)


def test_bracket_syntax_any_order(backend):
    x, y, out = _xy(1000)
    for k in (saxpy[backend], saxpy[backend][(1024, 64)], saxpy[(1024, 64)][backend], saxpy[backend][1024],
              saxpy[backend][(None, 32)], saxpy[None][backend], saxpy[f"{backend}:0"], saxpy[backend, (1024, 128)],
              saxpy[(1024, 128), backend], saxpy[backend, 1024, 64]):
        out[:] = 0
        k(x, y, out, 3.0)
        np.testing.assert_array_equal(out, x * 3 + y)
    assert saxpy[backend] is saxpy[backend]              # cheap cached objects
    assert saxpy[backend][(1024, 64)] is saxpy[backend][(1024, 64)]


def test_bad_bracket_values_raise():
    with pytest.raises(ValueError):
        saxpy[(0, 16)]
    with pytest.raises(ValueError):
        saxpy[((4, 4), (2,))]


def test_wrong_argument_count_names_the_parameters(backend):
    with pytest.raises(TypeError, match=r"takes 4 arguments \(x, y, out, alpha\)"):
        saxpy[backend](np.zeros(3, np.float32))


def test_unknown_backend_raises_a_pygpgpu_error():
    with pytest.raises((GPGPUError, ValueError)):
        saxpy["nosuchbackend:7"](*_xy(), 1.0)


# ---- methods -------------------------------------------------------------------------------------------
class Model:
    def __init__(self, n=64, dtype=np.float32, lr=0.01):
        self.weights = np.linspace(0, 1, n).astype(dtype)
        self.lr = lr

    @kernel
    def apply(self, x, out):
        for i in range(out.shape[0]):
            out[i] = x[i] * self.weights[i] + self.lr

    @staticmethod
    @kernel
    def doubled(x, out):
        for i in range(out.shape[0]):
            out[i] = x[i] * 2

    @kernel
    @staticmethod
    def tripled(x, out):
        for i in range(out.shape[0]):
            out[i] = x[i] * 3


def test_method_self_attributes_become_arguments(backend):
    m = Model()
    x = np.linspace(-1, 1, 64).astype(np.float32)
    out = np.zeros_like(x)
    m.apply[backend](x, out)
    np.testing.assert_allclose(out, x * m.weights + np.float32(0.01), rtol=1e-6)
    m.lr = 0.5                                   # attributes are read on every call
    m.apply[backend](x, out)
    np.testing.assert_allclose(out, x * m.weights + 0.5, rtol=1e-6)
    assert isinstance(Model.apply, KernelFunction)


def test_two_instances_with_different_attribute_types_specialize_separately(backend, device):
    a = Model(dtype=np.float32, lr=1)
    b = Model(dtype=np.int32, lr=2)
    x = np.ones(64, np.float32)
    out_a, out_b = np.zeros_like(x), np.zeros_like(x)
    a.apply[backend](x, out_a)
    b.apply[backend](x, out_b)
    np.testing.assert_allclose(out_a, a.weights + 1, rtol=1e-6)
    np.testing.assert_allclose(out_b, b.weights + 2, rtol=1e-6)
    sa = Model.apply.inspect(a, x, out_a, backend="opencl")
    sb = Model.apply.inspect(b, x, out_b, backend="opencl")
    assert sa.signature != sb.signature and "self.weights" in sa.access and sa.access["self.weights"] == "read"


def test_static_methods(backend):
    x = np.arange(5, dtype=np.float32)
    out = np.zeros_like(x)
    Model.doubled[backend](x, out)
    np.testing.assert_array_equal(out, x * 2)
    Model().tripled[backend](x, out)
    np.testing.assert_array_equal(out, x * 3)


# ---- arguments ----------------------------------------------------------------------------------------------
def test_non_contiguous_input_is_copied(backend):
    base = np.arange(40, dtype=np.float32)
    x = base[::2]
    out = np.zeros(20, np.float32)
    saxpy[backend](x, x, out, 1.0)
    np.testing.assert_array_equal(out, x * 2)


def test_non_contiguous_or_read_only_output_raises_naming_the_parameter(backend):
    x = np.arange(20, dtype=np.float32)
    with pytest.raises(ValueError, match="'out'.*C-contiguous"):
        saxpy[backend](x[:10], x[:10], np.zeros(20, np.float32)[::2], 1.0)
    ro = np.zeros(20, np.float32)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="'out'.*read-only"):
        saxpy[backend](x, x, ro, 1.0)


def test_arrays_must_have_1_to_3_dims():
    with pytest.raises(ValueError, match="'x'.*1 to 3"):
        saxpy.inspect(np.zeros((2, 2, 2, 2), np.float32), np.zeros(2, np.float32), np.zeros(2, np.float32), 1.0,
                      backend="opencl")


@kernel
def halves(x, out):
    for i in range(out.shape[0]):
        out[i] = x[i] * 0.5


def test_float16_is_refused_on_cuda_and_hip(backend, device):
    x = np.ones(4, np.float16)
    src = halves.inspect(x, x.copy(), backend="opencl").source
    assert "half" in src
    if device.backend.dialect != "opencl":
        with pytest.raises(TypeError, match="float16"):
            halves[backend](x, x.copy())
    elif device.fp16:
        out = np.zeros_like(x)
        halves[backend](x, out)
        np.testing.assert_array_equal(out, x * np.float16(0.5))
    else:
        with pytest.raises(TypeError, match="float16"):
            halves[backend](x, x.copy())


# ---- read/write analysis -------------------------------------------------------------------------------------
@kernel
def rw_mix(a, b, out, acc, counts, alias_target):
    for i in range(out.shape[0]):
        src = b
        t = alias_target
        out[i] = a[i] + src[i] * 2.0
        acc[i] += 1.0
        gpu.atomic_add(counts, 0, 1)
        th.fill_row(t, i, 3.0)


def test_access_analysis_reads_writes_aliases_atomics_helpers():
    z = np.zeros(8, np.float32)
    info = rw_mix.inspect(z, z, z, z, np.zeros(1, np.int32), z, backend="opencl")
    assert isinstance(info, Inspection)
    assert info.access == {"a": "read", "b": "read", "out": "write", "acc": "readwrite", "counts": "readwrite",
                           "alias_target": "write"}
    assert "domain" in info.work_size
    hip = rw_mix.inspect(z, z, z, z, np.zeros(1, np.int32), z, backend="hip")   # no HIP device needed
    assert 'extern "C" __global__' in hip.source and hip.access == info.access


@kernel
def partial(out, n):
    for i in range(n):
        out[i] = 1.0


@kernel
def full(x, out):
    for i in range(out.shape[0]):
        out[i] = x[i] + 1.0


def test_elements_the_kernel_does_not_write_survive(backend):
    out = np.full(10, 7.0, np.float32)
    partial[backend](out, 4)
    assert out.tolist() == [1.0] * 4 + [7.0] * 6


def test_copies_follow_the_analysis(backend, device):
    # a read-only input and a small written array are copied (not aliased) on every device, so
    # each real copy is counted by gnp.transfer_stats
    x = np.arange(4096, dtype=np.float32)
    x.flags.writeable = False
    out = np.zeros(4096, np.float32)
    full[backend](x, out)             # warm up (compile)
    gnp.reset_transfer_stats()
    full[backend](x, out)
    s = gnp.transfer_stats()
    np.testing.assert_array_equal(out, x + 1)
    assert s["h2d"] == 1 and s["d2h"] == 1          # x up (read-only), out down (fully overwritten: not uploaded)
    gnp.reset_transfer_stats()
    partial[backend](out, 5)
    s = gnp.transfer_stats()
    assert s["h2d"] == 1 and s["d2h"] == 1          # partially written: uploaded so the rest survives


def test_device_arrays_are_passed_without_copies(backend, device):
    x = gnp.asarray(np.arange(256, dtype=np.float32), device=device)
    out = gnp.zeros(256, np.float32, device=device)
    full[backend](x, out)
    gnp.reset_transfer_stats()
    for _ in range(3):
        full[backend](out, out)
    assert gnp.transfer_stats()["h2d"] == 0 and gnp.transfer_stats()["d2h"] == 0
    np.testing.assert_array_equal(out.get(), np.arange(256, dtype=np.float32) + 4)


# ---- inspection and logging -----------------------------------------------------------------------------------
def test_inspect_without_devices_for_every_dialect():
    x, y, out = _xy(10)
    for dialect, marker in (("opencl", "__kernel void saxpy"), ("cuda", 'extern "C" __global__ void saxpy'),
                            ("hip", 'extern "C" __global__ void saxpy')):
        info = saxpy.inspect(x, y, out, 2.0, backend=dialect)
        assert marker in info.source and info.dialect == dialect
        assert "#line" in info.source and __file__ in info.source
        assert info.access == {"x": "read", "y": "read", "out": "write"}


def test_debug_logging(backend, caplog):
    # DEBUG on the pygpgpu loggers (what PYGPGPU_DEBUG=1 switches on; tests/test_logging.py has more)
    @kernel
    def fresh(out):
        for i in range(out.shape[0]):
            out[i] = i

    with caplog.at_level(logging.DEBUG, logger="pygpgpu"):
        fresh[backend](np.zeros(3, np.float32))
    text = caplog.text
    assert "translated fresh" in text and "program fresh ready on" in text


def test_vector_arguments_and_returns_from_helpers(backend):
    @kernel
    def shift(a, out, d):
        for i in range(out.shape[0]):
            out[i] = a[i] + d.zyxw
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    out = np.zeros_like(a)
    shift[backend](a, out, float4(1, 2, 3, 4))
    np.testing.assert_array_equal(out, a + np.array([3, 2, 1, 4], np.float32))


@kernel
def gid_with_loop(out):
    i = gpu.get_global_id(0)
    for j in range(4):
        out[i * 4 + j] = i * 10 + j


def test_gid_kernel_top_level_loops_are_ordinary_loops(backend):
    out = np.zeros(32, np.int32)
    gid_with_loop[backend][(8, 4)](out)
    assert out.tolist() == [i * 10 + j for i in range(8) for j in range(4)]


def test_build_failure_reports_log_and_generated_source(backend, monkeypatch):
    from pygpgpu_core.errors import CompileError
    from pygpgpu_translate import _emit

    @kernel
    def broken(out):
        for i in range(out.shape[0]):
            out[i] = 1.0

    real = _emit.emit_program

    def sabotaged(*a, **kw):        # simulate a dialect bug: the compiler must report it cleanly
        return real(*a, **kw).replace("out[i] = 1.0f;", "out[i] = undeclared_thing;")

    monkeypatch.setattr(_emit, "emit_program", sabotaged)     # translate() imports it on a cache miss
    with pytest.raises(CompileError) as info:
        broken[backend](np.zeros(4, np.float32))
    err = info.value
    assert "undeclared_thing" in err.log and err.source_path
    with open(err.source_path) as f:
        assert "undeclared_thing" in f.read()
    assert "broken" in str(err)


@kernel
def with_defaults(x, out, scale=2.0, offset=1):
    for i in range(out.shape[0]):
        out[i] = x[i] * scale + offset


def test_keyword_arguments_and_defaults(backend):
    x = np.arange(6, dtype=np.float32)
    out = np.zeros_like(x)
    with_defaults[backend](x, out)
    np.testing.assert_array_equal(out, x * 2 + 1)
    with_defaults[backend](x, out=out, offset=5)
    np.testing.assert_array_equal(out, x * 2 + 5)
    with pytest.raises(TypeError, match="with_defaults"):
        with_defaults[backend](x, out, nope=1)


@kernel
def rows_out(vecs, out):
    for i, v in enumerate(vecs):
        out[i] = v * 2.0


def test_whole_rows_written_at_the_domain_index_count_as_overwritten(backend):
    vecs = np.arange(64, dtype=np.float32).reshape(16, 4)
    vecs.flags.writeable = False
    out = np.zeros((16, 4), np.float32)
    rows_out[backend](vecs, out)
    gnp.reset_transfer_stats()
    rows_out[backend](vecs, out)
    s = gnp.transfer_stats()
    np.testing.assert_array_equal(out, vecs * 2)
    assert s["h2d"] == 1 and s["d2h"] == 1            # out is not uploaded: every row is overwritten
    assert rows_out.inspect(vecs, out, backend="opencl").access["out"] == "write"


@kernel
def halves(x, out):
    n = x.shape[0]
    half = n // 2
    for i in range(half):
        out[i] = x[i] + x[i + half]


@kernel
def framed(img, out):
    h, w = out.shape
    for y, x in np.ndindex(h - 2, w - 2):
        out[y + 1, x + 1] = img[y + 1, x + 1] * 2.0


@kernel
def bound_set_in_a_branch(x, out, flag):
    n = x.shape[0]
    if flag:
        n = 1
    for i in range(n):
        out[i] = x[i]


def test_domain_sizes_from_local_names(backend):
    """Plain assignments before the magic loop size it, evaluated on the host like the loop."""
    x = np.arange(10, dtype=np.float32)
    out = np.zeros(10, np.float32)
    halves[backend](x, out)
    np.testing.assert_array_equal(out[:5], x[:5] + x[5:])
    assert (out[5:] == 0).all()
    img = np.arange(20, dtype=np.float32).reshape(4, 5)
    res = np.zeros_like(img)
    framed[backend](img, res)
    want = np.zeros_like(img)
    want[1:-1, 1:-1] = img[1:-1, 1:-1] * 2
    np.testing.assert_array_equal(res, want)


def test_a_domain_size_set_in_a_branch_is_refused():
    x = np.zeros(4, np.float32)
    with pytest.raises(SyntaxError, match="iteration domain depends on 'n'") as info:
        bound_set_in_a_branch.inspect(x, x.copy(), True)
    assert "range(x.shape[0])" in str(info.value) and info.value.lineno is not None
