"""@kernel on CPU devices (issue 33, items 4-5; ``pygpgpu_translate._cpu_choices``): the
one-element kernel instead of the GPU-shaped wide one, and a row-shaped group picked per launch
instead of the runtime's (PoCL's divisor of the global size: groups of one work item for a prime
length). Real kernels on an OpenCL CPU device (PoCL), checked against numpy; the group a launch
ran with is read back from the kernel (``gpu.get_local_size``)."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import skip_no_device
from pygpgpu_core import gnp, gpu, registry
from pygpgpu_core.errors import GPGPUError
from pygpgpu_translate import _cpu_choices, kernel
from pygpgpu_translate._cpu_choices import GROUPS_PER_UNIT, MIN_ROW, cpu_group_shape, group_limits, on_cpu


@pytest.fixture(scope="module")
def cpu():
    """An OpenCL CPU device (PoCL), or skip."""
    try:
        devices = registry.backend_devices("opencl")
    except GPGPUError as exc:
        skip_no_device("opencl", f"no OpenCL device here: {exc}")
    for dev in devices:
        if dev.is_cpu:
            return dev
    skip_no_device("opencl", f"no OpenCL CPU device among {[d.selector for d in devices]}")


def saxpy(a, x, y, out):
    for i in range(out.shape[0]):
        out[i] = a * x[i] + y[i]


def saxpy_groups(a, x, y, out, group):
    for i in range(out.shape[0]):
        out[i] = a * x[i] + y[i]
        group[i] = gpu.get_local_size(0)


def stencil_groups(a, out, group):
    for i, j in np.ndindex(a.shape):
        if 0 < i < a.shape[0] - 1 and 0 < j < a.shape[1] - 1:
            out[i, j] = 0.25 * (a[i - 1, j] + a[i + 1, j] + a[i, j - 1] + a[i, j + 1]) - a[i, j]
        group[i, j, 0] = gpu.get_local_size(0)
        group[i, j, 1] = gpu.get_local_size(1)


def _plan(k, dev):
    (plan,) = [p for key, p in k._kf._plans.items() if key[0] == id(dev)]
    return plan


@pytest.mark.parametrize("n", [1, 15, 16, 17, 4097, 100_003, 1_000_003])
def test_one_dimension_groups_are_rows_on_the_cpu(cpu, n):
    """A prime length took groups of one work item (PoCL's pick); now every work item of the
    launch ran in the group cpu_group_shape gives, and every element is right."""
    rng = np.random.default_rng(n)
    x, y = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    out, group = gnp.zeros(n, np.float32, device=cpu), gnp.zeros(n, np.int32, device=cpu)
    k = kernel(saxpy_groups)[cpu.selector]
    k(np.float32(3), gnp.asarray(x, device=cpu), gnp.asarray(y, device=cpu), out, group)
    np.testing.assert_allclose(out.get(), np.float32(3) * x + y, rtol=1e-6)
    units, limit = group_limits(cpu, _plan(k, cpu).kernel_handle.work_group_size)
    expected = cpu_group_shape((n,), units, limit)
    assert set(np.unique(group.get())) == {expected[0]}
    assert expected[0] >= min(MIN_ROW, n), expected


@pytest.mark.parametrize("shape", [(3, 5), (7, 1000), (1000, 3), (257, 263), (2048, 2048)])
def test_two_dimension_groups_are_rows_on_the_cpu(cpu, shape):
    """A 2-D domain runs in (width, 1) groups; the guard skips the work items that rounding the
    global size up to whole rows adds, so the stencil matches numpy at every shape."""
    a = np.random.default_rng(1).random(shape, dtype=np.float32)
    out = gnp.zeros(shape, np.float32, device=cpu)
    group = gnp.zeros(shape + (2,), np.int32, device=cpu)
    k = kernel(stencil_groups)[cpu.selector]
    k(gnp.asarray(a, device=cpu), out, group)
    want = np.zeros(shape, np.float32)
    want[1:-1, 1:-1] = 0.25 * (a[:-2, 1:-1] + a[2:, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:]) - a[1:-1, 1:-1]
    np.testing.assert_allclose(out.get(), want, rtol=1e-5, atol=1e-6)
    units, limit = group_limits(cpu, _plan(k, cpu).kernel_handle.work_group_size)
    width, height = cpu_group_shape((shape[1], shape[0]), units, limit)
    assert height == 1
    got = group.get()
    assert (got[..., 0] == width).all() and (got[..., 1] == 1).all()


def test_no_wide_kernel_on_the_cpu(cpu):
    """The wide (float4 per work item) form is for GPUs: the CPU plan runs the one-element kernel,
    while the translation for no device (and for a GPU) stays wide."""
    n = 1003
    x = np.arange(n, dtype=np.float32)
    k = kernel(saxpy)
    assert k.inspect(np.float32(2), x, x, x, backend="opencl").lanes == 4
    out = gnp.zeros(n, np.float32, device=cpu)
    k[cpu.selector](np.float32(2), gnp.asarray(x, device=cpu), gnp.asarray(x, device=cpu), out)
    np.testing.assert_array_equal(out.get(), 3 * x)
    plan = _plan(k[cpu.selector], cpu)
    assert plan.t.lanes == 1 and "float4" not in plan.t.source


def test_switched_off_keeps_the_gpu_shapes(cpu, monkeypatch):
    """PYGPGPU_CPU_TUNING=0 (ENABLED False): the wide kernel and the runtime's group pick, as before."""
    monkeypatch.setattr(_cpu_choices, "ENABLED", False)
    assert not on_cpu(cpu) and group_limits(cpu, 4096) is None
    n = 1003
    x = np.arange(n, dtype=np.float32)
    k = kernel(saxpy)[cpu.selector]
    out = gnp.zeros(n, np.float32, device=cpu)
    k(np.float32(2), gnp.asarray(x, device=cpu), gnp.asarray(x, device=cpu), out)
    np.testing.assert_array_equal(out.get(), 3 * x)
    plan = _plan(k, cpu)
    assert plan.t.lanes == 4 and plan.cpu_groups is None


def group_sized(x):
    gpu.work_size(x)
    t = gpu.local_array(gpu.get_local_size(0), np.float32)
    i = gpu.get_global_id(0)
    t[gpu.get_local_id(0)] = 1.0
    if i < x.shape[0]:
        x[i] = x[i] + t[gpu.get_local_id(0)]


def test_kernels_whose_groups_show_keep_the_runtime_pick(cpu):
    """An array sized by the group: no CPU pick, so a call without a local size still says it
    needs one (a barrier without local arrays is refused the same way before any pick)."""
    n = 1001
    x = gnp.asarray(np.arange(n, dtype=np.float32), device=cpu)
    k = kernel(group_sized)
    with pytest.raises(ValueError, match="needs the local size at the call"):
        k[cpu.selector](x)
    k[cpu.selector][(1024, 64)](x)
    np.testing.assert_array_equal(x.get(), np.arange(n, dtype=np.float32) + 1)
    assert _plan(k[cpu.selector], cpu).cpu_groups is None


class _Gpu:
    is_gpu, is_cpu, compute_units, max_work_group_size = True, False, 132, 1024


def test_gpu_devices_keep_their_choices():
    assert not on_cpu(_Gpu()) and group_limits(_Gpu(), 1024) is None


@pytest.mark.parametrize("size", [(1,), (7,), (16,), (4096,), (1_000_003,), (1 << 24,), (3, 1000), (1000, 3),
                                  (2048, 2048), (64, 64, 64)])
@pytest.mark.parametrize("units,limit", [(1, 4096), (2, 4096), (16, 4096), (64, 1024), (16, 256)])
def test_group_shape_rule(size, units, limit):
    """A row: a power of two along dimension 0, within the limit, no wider than the row needs
    (the next power of two), and at least GROUPS_PER_UNIT groups a unit unless MIN_ROW stops it."""
    shape = cpu_group_shape(size, units, limit)
    width = shape[0]
    assert shape[1:] == (1,) * (len(size) - 1)
    assert width & (width - 1) == 0 and 1 <= width <= limit
    assert width < 2 * size[0] or width == 1
    groups = -(-int(np.prod(size)) // width)
    assert groups >= units * GROUPS_PER_UNIT or width <= MIN_ROW
