"""The explicit backend contract (issue 14, shape 5): optional capabilities are declared in
``pygpgpu_core.protocols`` (capability protocols checked with ``supports``, optional attributes
read with ``option`` and their declared defaults), and core decides DLPack and the CUDA array
interface from a backend's declarations, never from its name. Runs on the simulated CUDA-like
backend of sim_driver.py, which can declare anything, and on the installed backends."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from pygpgpu_core import gnp, protocols, registry
from pygpgpu_core.protocols import (AsyncCopies, BinaryPrograms, BufferViews, Describable, ForeignPointers,
                                    HostMappedMemory, PinnedHostMemory, StreamWaits, option, supports)
from sim_driver import SimBackend

CORE = Path(protocols.__file__).parent


class _EntryPoint:
    def __init__(self, backend):
        self._backend = backend
        self.value = "sim_driver:backend"

    def load(self):
        return self._backend


@pytest.fixture
def sim(monkeypatch):
    """A simulated backend named 'sim', installed in the registry beside the real ones."""
    backend = SimBackend({})
    registry.reset_registry()
    registry._scan()
    monkeypatch.setitem(registry._entry_points, "sim", _EntryPoint(backend))
    for name in ("cuda", "hip"):    # they declare CUDA and ROCm memory too, and come first in probe order
        monkeypatch.delitem(registry._entry_points, name, raising=False)
    yield backend
    registry.reset_registry()
    for dev in backend.devices():
        if dev._context is not None:
            dev._context.close()


def test_a_backend_declaring_cuda_memory_exports_dlpack_and_the_cuda_array_interface(sim):
    dev = sim.devices()[0]
    g = gnp.asarray(np.arange(6, dtype=np.float32), device=dev)
    assert g.__dlpack_device__()[0] != 2 and not hasattr(g, "__cuda_array_interface__")   # declares nothing
    sim.dlpack_device_type, sim.cuda_array_interface = 2, True
    assert g.__dlpack_device__() == (2, 0)
    cai = g.__cuda_array_interface__
    assert cai["data"] == (g.buffer.ptr, False) and cai["shape"] == (6,) and cai["typestr"] == "<f4"
    assert cai["stream"] == dev.context().queue.handle.value        # our stream: the consumer orders after it


class _Foreign:
    """A producer of CUDA memory (as torch or CuPy would be), here the simulated device's."""

    def __init__(self, g):
        self._g = g
        self.__cuda_array_interface__ = dict(g.__cuda_array_interface__, stream=None)

    def __dlpack_device__(self):
        return self._g.__dlpack_device__()

    def __dlpack__(self, stream=None, **kw):
        return self._g.__dlpack__(stream=-1)


def test_foreign_memory_is_wrapped_on_the_backend_that_declares_it(sim):
    sim.dlpack_device_type, sim.cuda_array_interface = 2, True
    dev = sim.devices()[0]
    g = gnp.asarray(np.arange(8, dtype=np.int32), device=dev)
    for wrap in (lambda x: gnp.as_device_array(x), lambda x: gnp.from_dlpack(x),
                 lambda x: gnp.as_device_array(x, dev)):
        w = wrap(_Foreign(g))
        assert w.device is dev and w.buffer.ptr == g.buffer.ptr and not w.owns_memory   # shared, not copied
        np.testing.assert_array_equal(w.get(), np.arange(8))
    foreign = _Foreign(g)
    sim.cuda_array_interface = False
    with pytest.raises(ValueError, match="in CUDA device memory but the requested device is sim:0"):
        gnp.as_device_array(foreign, dev)
    with pytest.raises(BufferError, match="no installed PyGPGPU backend addresses CUDA device memory"):
        gnp.as_device_array(foreign)
    sim.dlpack_device_type = 10
    with pytest.raises(BufferError, match="DLPack device type 2 is not one gnp can wrap"):
        gnp.from_dlpack(type("D", (), {"__dlpack_device__": lambda self: (2, 0),
                                       "__dlpack__": lambda self, **kw: None})())


def test_declared_defaults_and_unknown_names():
    class Bare:
        pass

    assert option(Bare(), "mem_base_addr_align") == 1 and option(Bare(), "zero_copy") is False
    assert option(Bare(), "dlpack_device_type") is None and option(Bare(), "exact_math_options") == ()
    with pytest.raises(KeyError):
        option(Bare(), "no_such_capability")                       # the contract is the list
    for name, (on, _default, meaning) in protocols.OPTIONAL_ATTRIBUTES.items():
        assert on and meaning, name


def test_supports_sees_declared_methods_but_not_a_catch_all_getattr():
    class CatchAll:
        def __getattr__(self, name):
            return lambda *a: None                                # like an OpenCL Program's kernels

    class Views:
        def view(self, offset, nbytes=None):
            return self

    assert not supports(CatchAll(), BufferViews) and supports(Views(), BufferViews)
    assert supports(Views(), BufferViews)                          # cached per class
    inst = CatchAll.__new__(CatchAll)
    inst.__dict__["wait_for_stream"] = lambda stream: None
    assert supports(inst, StreamWaits) and not supports(inst, AsyncCopies)


def test_the_kit_backends_declare_what_they_offer(sim):
    import pygpgpu_cuda
    import pygpgpu_hip

    ctx = sim.devices()[0].context()
    buf = ctx.buffer(16)
    for capability in (HostMappedMemory, PinnedHostMemory, ForeignPointers, BinaryPrograms):
        assert supports(ctx, capability), capability
    assert supports(buf, AsyncCopies) and supports(buf, BufferViews) and supports(ctx.queue, StreamWaits)
    for backend in (pygpgpu_cuda.backend, pygpgpu_hip.backend):
        assert supports(backend, Describable)
    assert (option(pygpgpu_cuda.backend, "dlpack_device_type"), option(pygpgpu_cuda.backend, "cuda_array_interface")) \
        == (2, True)
    assert (option(pygpgpu_hip.backend, "dlpack_device_type"), option(pygpgpu_hip.backend, "cuda_array_interface")) \
        == (10, False)
    assert option(sim.devices()[0], "is_gpu") and not option(buf, "zero_copy")


def test_installed_backends_satisfy_the_protocols(device):
    assert isinstance(device.backend, protocols.Backend) and isinstance(device, protocols.Device)
    ctx = device.context()
    assert isinstance(ctx, protocols.Context)
    buf = ctx.buffer(64)
    assert isinstance(buf, protocols.Buffer)
    assert isinstance(option(device, "mem_base_addr_align"), int)
    if supports(buf, AsyncCopies):
        buf.write_async(np.arange(16, dtype=np.float32))
        ctx.synchronize()
        out = np.zeros(16, np.float32)
        buf.read(out)
        np.testing.assert_array_equal(out, np.arange(16))
    buf.close()


def test_core_never_branches_on_a_backend_name():
    """No file of core compares against a backend's name: dialect spellings are the translator's
    (issue 14, shapes 2 and 3), and what the kernel-file parser needs per language is a field of
    the language's description (cdecl._languages), looked up by name in one table."""
    compare = re.compile(r"""(==|!=|\bin)\s*\(?\s*["'](cuda|hip|opencl)["']|["'](cuda|hip|opencl)["']\s*(==|!=)"""
                         r"""|(startswith|endswith)\(\s*["'](cuda|hip|opencl)|\bcase\s+["'](cuda|hip|opencl)["']""")
    found = []
    for path in CORE.rglob("*.py"):
        rel = path.relative_to(CORE)
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if compare.search(line.split("#")[0]):
                found.append(f"{rel}:{n}: {line.strip()}")
    assert not found, "\n".join(found)
