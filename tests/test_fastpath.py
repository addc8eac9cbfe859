"""The one generator of the backends' warm launch functions (issue 33, item 1;
``pygpgpu_core.backend.fastpath``): a backend gives how each argument kind is packed and its
launch, the generator writes the rest. OpenCL's launcher is generated there (it no longer
writes its own Python); kernels run on OpenCL (PoCL on the CPU) and are compared with numpy."""
from __future__ import annotations

import threading

import numpy as np
import pytest

import pygpgpu_opencl
from pygpgpu_core.backend import fastpath
from pygpgpu_core.backend.args import normalize_kind
from pygpgpu_core.errors import BackendUnavailable
from pygpgpu_opencl import Context
from conftest import skip_no_device

SOURCE = "__kernel void axpy(__global float* x, float a, int n) { int i = get_global_id(0); if (i < n) x[i] += a; }"


@pytest.fixture(scope="module")
def ctx():
    try:
        devices = pygpgpu_opencl.backend.devices()
    except BackendUnavailable as exc:
        skip_no_device("opencl", f"no OpenCL runtime on this machine: {exc}")
    if not devices:
        skip_no_device("opencl", "the OpenCL runtime lists no device")
    context = Context(devices[0])
    yield context
    context.close()


def test_the_opencl_launcher_comes_from_the_one_generator(ctx, monkeypatch):
    labels = []
    real = fastpath.compile_source

    def recording(src, label, env):
        labels.append(label)
        return real(src, label, env)

    monkeypatch.setattr(fastpath, "compile_source", recording)
    k = ctx.program(SOURCE).kernel("axpy")
    fn = k.launcher(["buffer", np.float32, np.int32], native=False)
    assert labels == ["<pygpgpu-opencl launcher axpy>"]
    host = np.arange(10, dtype=np.float32)
    buf = ctx.buffer(host.nbytes)
    buf.write(host)
    fn(10, None, (buf, 1.5, 10))
    fn(10, None, (buf, 1.5, 7))                     # a changed scalar is set again
    np.testing.assert_array_equal(buf.read(np.empty(10, np.float32)), host + np.r_[[3.0] * 7, [1.5] * 3])
    with pytest.raises(TypeError, match="takes 3 arguments"):
        fn(10, None, (buf, 1.5))


def test_a_recipe_gives_packing_and_launch_and_the_generator_the_rest(ctx):
    k = ctx.program(SOURCE).kernel("axpy")
    launched = []

    def driver(geometry, packed):               # the backend's launch(handle, geometry, packed)
        launched.append(geometry)
        k.launch(geometry, None, packed)

    kinds = [normalize_kind(t) for t in ("buffer", np.float32, np.int32)]
    recipe = fastpath.LaunchRecipe(
        label="<test launcher>", env={"lock": threading.Lock(), "driver": driver, "np": np},
        kinds=kinds,
        pack_arg=lambda i, kind: f"a{i}" if kind.tag == "buffer" else f"np.{kind.dtype.name}(a{i})",
        pack=lambda pieces: [f"packed = ({', '.join(pieces)},)"],
        launch=["driver(global_size, packed)"],
        unpack_failed="raise TypeError(f'3 arguments, got {len(args)}') from None",
        variants={"twice": ["driver(global_size, packed)", "driver(global_size, packed)"]},
        extra="def count():\n    return 3\n")
    fn = fastpath.generate(recipe)
    host = np.zeros(4, np.float32)
    buf = ctx.buffer(host.nbytes)
    buf.write(host)
    fn(4, None, (buf, 2.0, 4))
    fn.twice(4, None, (buf, 0.5, 4))
    assert fn.count() == 3 and launched == [4, 4, 4] and fn.source.startswith("def launch(")
    np.testing.assert_array_equal(buf.read(np.empty(4, np.float32)), np.full(4, 3.0, np.float32))
    with pytest.raises(TypeError, match="3 arguments, got 2"):
        fn(4, None, (buf, 2.0))
