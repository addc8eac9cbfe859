"""The optional native launcher (backend/_native_launch.c, built by ``pygpgpu build-native``).

Built here with the system's C compiler into a temporary folder, then run on the simulated
driver (sim_driver.py) through C function pointers, as it calls the real driver: every value it
packs must be what the Python launcher packs, every call off its happy path must end as the
Python launcher ends it (the same exception), and the launch must be recorded on the context.
The real driver is exercised on the GPU machine, where benchmarks/run_gpu.sh builds the module.
"""
from __future__ import annotations

import ctypes
import sys
import threading
from ctypes import CFUNCTYPE, POINTER, Structure, c_int, c_size_t, c_uint, c_ulonglong, c_void_p

import numpy as np
import pytest

from pygpgpu_core.backend import native
from pygpgpu_core.backend.launcher import LaunchConfig, build_launcher
from pygpgpu_core.errors import ClosedError
from sim_driver import SimBackend, SimKernel, array_at, check_failed_launch_and_closed_program, \
    check_vecadd_geometries


SCALARS = "b B h H i I q Q e f d ?"


def _vecadd(gid, a, b, out, n):
    i = gid[0]
    if i < n:
        array_at(out, np.float32, n)[i] = array_at(a, np.float32, n)[i] + array_at(b, np.float32, n)[i]


KERNELS = {"vecadd": SimKernel("Q Q Q i", _vecadd),
           "scalars": SimKernel("Q " + SCALARS, lambda gid, *values: None),
           "uses_shared": SimKernel("Q", lambda gid, out: None, max_threads=64),
           "many": SimKernel(" ".join(["i"] * 65), lambda gid, *values: None)}
SCALAR_KINDS = ["buffer", np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64,
                np.float16, np.float32, np.float64, np.bool_]


@pytest.fixture
def module(native_module):
    return native_module


LAUNCH_EX = CFUNCTYPE(c_int, c_void_p, c_void_p, c_void_p, c_void_p)
LAUNCH = CFUNCTYPE(c_int, c_void_p, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, c_void_p, c_void_p,
                   c_void_p)
SET_CURRENT = CFUNCTYPE(c_int, c_int)


class NodeParams(Structure):
    """CUDA_KERNEL_NODE_PARAMS_v2 of cuda.h."""

    _fields_ = [("func", c_void_p), ("gridDimX", c_uint), ("gridDimY", c_uint), ("gridDimZ", c_uint),
                ("blockDimX", c_uint), ("blockDimY", c_uint), ("blockDimZ", c_uint), ("sharedMemBytes", c_uint),
                ("kernelParams", c_void_p), ("extra", c_void_p), ("kern", c_void_p), ("ctx", c_void_p)]


GRAPH_TYPES = {"graph_create": CFUNCTYPE(c_int, c_void_p, c_uint),
               "graph_add_kernel_node": CFUNCTYPE(c_int, c_void_p, c_void_p, c_void_p, c_size_t, c_void_p),
               "graph_instantiate": CFUNCTYPE(c_int, c_void_p, c_void_p, c_ulonglong),
               "graph_exec_kernel_node_set_params": CFUNCTYPE(c_int, c_void_p, c_void_p, c_void_p),
               "graph_launch": CFUNCTYPE(c_int, c_void_p, c_void_p),
               "graph_exec_destroy": CFUNCTYPE(c_int, c_void_p),
               "graph_destroy": CFUNCTYPE(c_int, c_void_p)}


class SimGraphs:
    """One-kernel graphs on the simulated driver, as CUDA keeps them: a node holds a copy of its
    arguments (taken when the node is added or updated), and a replay launches that copy."""

    def __init__(self, driver):
        self.driver = driver
        self.ids = iter(range(0x9000, 0x10000))
        self.nodes: dict = {}          # node -> (func, grid, block, [argument bytes])
        self.execs: dict = {}          # exec -> node
        self.graphs: set = set()
        self.log: list = []
        self.refuse = False            # graph_create fails (a driver without room for graphs)
        self.refuse_updates = False

    def snapshot(self, address):
        p = NodeParams.from_address(address)
        kernel = self.driver.kernels[self.driver.functions[p.func]]
        pointers = ctypes.cast(p.kernelParams, POINTER(c_void_p))
        if self.refuse_updates:
            return None                # as the driver refuses a node update it cannot take
        return (p.func, (p.gridDimX, p.gridDimY, p.gridDimZ), (p.blockDimX, p.blockDimY, p.blockDimZ),
                [ctypes.string_at(pointers[i], size) for i, size in enumerate(kernel.sizes)])

    def graph_create(self, out, flags):
        if self.refuse:
            return 2
        graph = next(self.ids)
        self.graphs.add(graph)
        c_void_p.from_address(out).value = graph
        self.log.append("create")
        return 0

    def graph_add_kernel_node(self, out, graph, deps, ndeps, params):
        snap = self.snapshot(params)
        if snap is None:
            return 1
        node = next(self.ids)
        self.nodes[node] = snap
        c_void_p.from_address(out).value = node
        return 0

    def graph_instantiate(self, out, graph, flags):
        exec_ = next(self.ids)
        self.execs[exec_] = next(n for n in self.nodes)
        c_void_p.from_address(out).value = exec_
        return 0

    def graph_exec_kernel_node_set_params(self, exec_, node, params):
        snap = self.snapshot(params)
        if snap is None:
            return 1
        self.nodes[node] = snap
        self.log.append("update")
        return 0

    def graph_launch(self, exec_, stream):
        func, grid, block, values = self.nodes[self.execs[exec_]]
        kept = [ctypes.create_string_buffer(v, len(v)) for v in values]
        pointers = (c_void_p * len(kept))(*[ctypes.addressof(b) for b in kept])
        self.log.append("launch")
        return self.driver.launch(c_void_p(func), *grid, *block, 0, c_void_p(stream), pointers, None)

    def graph_exec_destroy(self, exec_):
        self.log.append("exec_destroy")
        return 0 if self.execs.pop(exec_, None) is not None else 1

    def graph_destroy(self, graph):
        self.log.append("destroy")
        self.graphs.discard(graph)
        return 0


@pytest.fixture(params=["cuLaunchKernelEx", "graphs", "cuLaunchKernel"])
def sim(request, module, monkeypatch):
    """The simulated driver behind C function pointers; the native module is the one built here."""
    monkeypatch.delenv("PYGPGPU_GRAPH_LAUNCH", raising=False)
    monkeypatch.delenv("CUDA_LAUNCH_BLOCKING", raising=False)
    backend = SimBackend(KERNELS)
    driver = backend.sim
    driver.tokens = []

    def params_of(address):
        return ctypes.cast(address, POINTER(c_void_p))

    def launch_ex(config, func, params, extra):
        c = LaunchConfig.from_address(config)
        return driver.launch(c_void_p(func), c.gridDimX, c.gridDimY, c.gridDimZ, c.blockDimX, c.blockDimY,
                             c.blockDimZ, c.sharedMemBytes, c_void_p(c.hStream), params_of(params), extra)

    def launch(func, gx, gy, gz, bx, by, bz, shared, stream, params, extra):
        return driver.launch(c_void_p(func), gx, gy, gz, bx, by, bz, shared, c_void_p(stream), params_of(params),
                             extra)

    def set_current(token):
        driver.tokens.append(token)
        return 0

    calls = backend.driver.calls
    keep = [SET_CURRENT(set_current), LAUNCH_EX(launch_ex), LAUNCH(launch)]
    calls.set_current_unchecked = keep[0]
    if request.param != "cuLaunchKernel":
        calls.launch_ex = calls.launch_ex_unchecked = keep[1]
    calls.launch_unchecked = keep[2]
    driver.graphs = SimGraphs(driver)
    if request.param == "graphs":
        for role, ftype in GRAPH_TYPES.items():
            fn = ftype(getattr(driver.graphs, role))
            keep.append(fn)
            setattr(calls, role, fn)
    monkeypatch.setattr(native, "_loaded", [module])
    backend.mode = request.param
    yield backend
    for dev in backend.devices():
        if dev._context is not None:
            dev._context.close()
    if request.param == "graphs":
        assert not driver.graphs.execs, "a graph outlived its program"


def _is_native(launch) -> bool:
    return type(launch).__name__ == "Launcher"


VECADD = ["buffer", "buffer", "buffer", np.int32]


def _vecadd(sim):
    """The context, the vecadd kernel, its launcher and a 64-byte buffer."""
    ctx = sim.devices()[0].context()
    k = ctx.program("vecadd").kernel("vecadd")
    return ctx, k, k.launcher(VECADD), ctx.buffer(64)


def test_it_packs_every_scalar_as_the_python_launcher_does(sim):
    ctx = sim.devices()[0].context()
    k = ctx.program("scalars").kernel("scalars")
    launch, python = k.launcher(SCALAR_KINDS), build_launcher(k, SCALAR_KINDS, native=False)
    assert _is_native(launch) and not _is_native(python)
    buf = ctx.buffer(16)
    cases = [(-128, 255, -32768, 65535, -2**31, 2**32 - 1, -2**63, 2**64 - 1, 0.1, 1.5e-3, 1 / 3, True),
             (127, 0, 32767, 0, 2**31 - 1, 0, 2**63 - 1, 0, -65504.0, -3.4e38, -1e300, False),
             (np.int8(-1), np.uint8(7), np.int16(3), True, np.int64(5), np.uint32(9), 7, np.uint64(2**63), 2, 3, 4,
              0),
             (0, 0, 0, 0, 0, 0, 0, 0, float("inf"), float("-inf"), float("nan"), [1])]
    for values in cases:
        launch(1, 1, (buf, *values))
        got = sim.sim.launches[-1][3]
        python(1, 1, (buf, *values))
        want = sim.sim.launches[-1][3]
        assert got[0] == want[0] == buf.ptr
        np.testing.assert_array_equal(np.array(got[1:], dtype=object).astype(float),
                                      np.array(want[1:], dtype=object).astype(float))
    assert ctx._last_launch == ("scalars", (buf, *cases[-1]))


def test_it_runs_the_kernel_and_skips_the_python_packing(sim):
    ctx = sim.devices()[0].context()
    k = ctx.program("vecadd").kernel("vecadd")
    launch = k.launcher(VECADD)
    assert _is_native(launch) and launch.again is launch and launch.arg_kinds == launch.python.arg_kinds
    packed: list = []
    native_launches = []

    def storage_untouched(cached: bool) -> None:        # the native path packs on its own stack
        if cached and packed:
            assert bytes(launch.layout.storage) == packed[-1]
            native_launches.append(cached)
        packed.append(bytes(launch.layout.storage))

    check_vecadd_geometries(sim, k, launch, storage_untouched)
    assert native_launches
    assert sim.sim.tokens and set(sim.sim.tokens) == {ctx.current_token.value}


def _raised(fn, *args) -> BaseException:
    with pytest.raises(Exception) as caught:
        fn(*args)
    return caught.value


@pytest.mark.parametrize("args", [(1, 2), ("buffer", None, None, 4), None, (0, 0, 0, 2**31), (0, 0, 0, 1.5),
                                  (0, 0, 0, "4"), (0, 0, 0, None), (0, 0, 0, 4, 5), (0, "x", 0, 4)])
def test_what_it_refuses_ends_as_the_python_launcher_ends_it(sim, args):
    ctx = sim.devices()[0].context()
    k = ctx.program("vecadd").kernel("vecadd")
    launch = k.launcher(VECADD)
    buf = ctx.buffer(16)
    if args is not None:
        args = tuple(buf if a == 0 and i < 3 else a for i, a in enumerate(args))
    launch(4, None, (buf, buf, buf, 4))      # the geometry is cached: the next calls reach the packing
    before = len(sim.sim.launches)
    native_error, python_error = _raised(launch, 4, None, args), _raised(launch.python, 4, None, args)
    assert type(native_error) is type(python_error) and str(native_error) == str(python_error)
    assert "vecadd" in str(native_error)
    assert len(sim.sim.launches) == before


@pytest.mark.filterwarnings("ignore:overflow encountered in cast")
def test_a_float32_past_its_range_is_cast_as_c_casts_it(sim):
    ctx = sim.devices()[0].context()
    k = ctx.program("scalars").kernel("scalars")
    launch = k.launcher(SCALAR_KINDS)
    buf = ctx.buffer(16)
    values = (0, 0, 0, 0, 0, 0, 0, 0, 1e6, 1e39, 0.0, False)
    launch(1, 1, (buf, *values))
    launch(1, 1, (buf, *values))
    assert sim.sim.launches[-1][3][10] == float("inf") and sim.sim.launches[-1][3][9] == float("inf")


def test_closed_buffers_programs_and_failed_launches(sim):
    ctx = sim.devices()[0].context()
    prog = ctx.program("vecadd")
    launch = prog.vecadd.launcher(VECADD)
    buf, gone = ctx.buffer(16), ctx.buffer(16)
    launch(4, None, (buf, buf, buf, 4))
    gone.close()
    with pytest.raises(ClosedError):
        launch(4, None, (buf, gone, buf, 4))
    check_failed_launch_and_closed_program(sim, launch, prog, buf)


def test_threads_launch_at_once(sim):
    ctx = sim.devices()[0].context()
    k = ctx.program("scalars").kernel("scalars")
    launch = k.launcher(SCALAR_KINDS)
    buf = ctx.buffer(16)
    launch(1, 1, (buf, *([0] * 12)))
    errors: list = []

    def worker(t: int) -> None:
        try:
            for i in range(200):
                launch(1, 1, (buf, 0, 0, 0, 0, t, i, 0, 0, 0, 0, 0, 0))
        except BaseException as exc:        # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    seen = {(v[5], v[6]) for _g, _b, _s, v in sim.sim.launches[1:]}
    assert seen == {(t, i) for t in range(4) for i in range(200)}


def test_kinds_it_does_not_pack_keep_the_python_launcher(sim):
    ctx = sim.devices()[0].context()
    assert not _is_native(ctx.program("uses_shared").uses_shared.launcher(["buffer", "local"]))
    assert not _is_native(ctx.program("vecadd").vecadd.launcher(["buffer", "buffer", "buffer", ctypes.c_int]))
    many = ctx.program("many").many.launcher([np.int32] * 65)     # past the native launcher's 64
    assert not _is_native(many)
    many(1, 1, tuple(range(65)))
    assert sim.sim.launches[-1][3] == list(range(65))


def test_off_and_not_built(module, monkeypatch):
    monkeypatch.setattr(native, "_loaded", [module])
    monkeypatch.setenv("PYGPGPU_NATIVE", "0")
    assert native.load() is None and native.status().startswith("off")
    monkeypatch.delenv("PYGPGPU_NATIVE")
    assert native.load() is module
    monkeypatch.setattr(native, "_loaded", [None])
    monkeypatch.delitem(sys.modules, native.MODULE, raising=False)
    assert native.status().startswith("not built")
    monkeypatch.setitem(sys.modules, native.MODULE, module)       # imported, but not used (as if stale)
    assert native.status().startswith("stale") and "build-native again" in native.status()


def test_a_module_built_from_another_source_is_not_used(module, monkeypatch):
    """pip leaves a built module in place when it upgrades PyGPGPU (it is not in the install's
    record): a module is used only if it carries the hash of the source beside it."""
    assert module.SOURCE_HASH == native.source_hash() and len(module.SOURCE_HASH) == 16
    monkeypatch.delenv("PYGPGPU_NATIVE", raising=False)
    monkeypatch.setitem(sys.modules, native.MODULE, module)
    monkeypatch.setattr(native, "_loaded", [])
    assert native.load() is module
    monkeypatch.setattr(native, "_loaded", [])
    monkeypatch.setattr(native, "source_hash", lambda: "0" * 16)     # the source changed since it was built
    assert native.load() is None and native.status().startswith("stale")
    monkeypatch.setattr(native, "_loaded", [])
    monkeypatch.setattr(native, "source_hash", lambda: None)        # no source beside it: not trusted either
    assert native.load() is None


def test_build_says_what_is_missing(module, tmp_path):
    with pytest.raises(OSError, match="no C compiler"):
        native.build(tmp_path, compiler="/nonexistent/cc")
    with pytest.raises(OSError, match="compiling _native_launch.c failed"):
        native.build(tmp_path, compiler="cc -DPyInit__native_launch=(")


def test_the_command_line_builds_it(module, tmp_path, monkeypatch, capsys):
    from pygpgpu.cli import main

    target = tmp_path / "_native_launch.so"     # not beside the package's source, for this test
    monkeypatch.setattr(native, "target_path", lambda folder=None: target)
    monkeypatch.setattr(native, "_loaded", [])
    assert main(["build-native"]) == 0
    assert target.is_file() and str(target) in capsys.readouterr().out


def test_a_list_changed_while_it_is_packed_and_an_empty_launch(sim):
    ctx = sim.devices()[0].context()
    k = ctx.program("vecadd").kernel("vecadd")
    launch = k.launcher(VECADD)
    buf = ctx.buffer(16)

    class Shrinking:
        """A buffer whose .ptr empties the list being launched (a property runs Python code)."""

        def __init__(self, values: list):
            self.values = values

        @property
        def ptr(self) -> int:
            self.values.clear()
            self.values.extend([0] * 1000)
            return buf.ptr

    values: list = [buf, buf, buf, 4]
    launch(4, None, values)
    values[1] = Shrinking(values)
    launch(4, None, values)         # packed from a copy of the list: the launch sees the four arguments
    assert sim.sim.launches[-1][3] == [buf.ptr, buf.ptr, buf.ptr, 4]
    before = len(sim.sim.launches)
    launch(0, None, (buf, buf, buf, 4))     # no work items: no launch, as the Python launcher
    launch(0, None, (buf, buf, buf, 4))
    assert len(sim.sim.launches) == before


graphs_only = pytest.mark.parametrize("sim", ["graphs"], indirect=True)


@graphs_only
def test_launches_replay_one_graph_whose_arguments_each_launch_sets(sim):
    ctx = sim.devices()[0].context()
    k = ctx.program("vecadd").kernel("vecadd")
    launch = k.launcher(VECADD)
    graphs = sim.sim.graphs
    assert launch.graph_state() == "unmade"
    n = 100
    a = np.arange(n, dtype=np.float32)
    da, dout = ctx.buffer_from_host(a), ctx.buffer(a.nbytes)
    out = np.empty_like(a)
    launch(n, (32,), (da, da, dout, n))         # the geometry's first call: the Python launcher
    assert launch.graph_state() == "unmade"
    for count in (n, 50, 7):
        dout.fill(np.float32(0).tobytes())
        launch(n, (32,), (da, da, dout, count))
        dout.read(out)
        want = np.zeros(n, np.float32)
        want[:count] = 2 * a[:count]
        np.testing.assert_array_equal(out, want)
    launch(n, (64,), (da, da, dout, n))         # another geometry, once through Python ...
    launch(n, (64,), (da, da, dout, n))         # ... then the same graph with the new geometry
    assert sim.sim.launches[-1][:2] == ((2, 1, 1), (64, 1, 1))
    assert launch.graph_state() == "made"
    assert graphs.log == ["create", "launch"] + ["update", "launch"] * 3
    k.program.close()
    assert graphs.log[-2:] == ["exec_destroy", "destroy"] and not graphs.execs
    assert launch.graph_state() == "off"


@graphs_only
def test_graphs_the_driver_refuses_leave_direct_launches(sim):
    ctx, k, launch, buf = _vecadd(sim)
    graphs = sim.sim.graphs
    graphs.refuse = True
    for _ in range(5):
        launch(4, None, (buf, buf, buf, 4))
    assert launch.graph_state() == "off" and graphs.log == [] and len(sim.sim.launches) == 5


@graphs_only
def test_a_node_update_the_driver_refuses_is_a_direct_launch(sim):
    ctx, k, launch, buf = _vecadd(sim)
    launch(4, None, (buf, buf, buf, 4))
    launch(4, None, (buf, buf, buf, 3))
    graphs = sim.sim.graphs
    graphs.refuse_updates = True
    launch(4, None, (buf, buf, buf, 2))
    assert graphs.log == ["create", "launch"] and sim.sim.launches[-1][3][3] == 2
    assert launch.graph_state() == "made"


@graphs_only
@pytest.mark.parametrize("setting", [("PYGPGPU_GRAPH_LAUNCH", "0"), ("CUDA_LAUNCH_BLOCKING", "1")])
def test_graphs_off(sim, monkeypatch, setting):
    monkeypatch.setenv(*setting)
    ctx, k, launch, buf = _vecadd(sim)
    launch(4, None, (buf, buf, buf, 4))
    launch(4, None, (buf, buf, buf, 4))
    assert launch.graph_state() == "none" and sim.sim.graphs.log == []


REFUSED = [(1, 2), ("buffer", None, None, 4), (0, 0, 0, 2**31), (0, 0, 0, 1.5), (0, 0, 0, "4"), (0, 0, 0, None),
           (0, 0, 0, 4, 5), (0, "x", 0, 4)]


def test_refusals_and_launches_are_the_same_on_the_first_and_hundredth_call(sim):
    """Warm as cold: each refused argument tuple raises the Python launcher's exception on the
    first call and on the hundredth, with valid launches in between (which the native launcher
    repeats from its cached geometry and packing), and no refused call launches anything."""
    ctx = sim.devices()[0].context()
    k = ctx.program("vecadd").kernel("vecadd")
    launch = k.launcher(VECADD)
    buf = ctx.buffer(16)
    cases = [tuple(buf if a == 0 and i < 3 else a for i, a in enumerate(args)) for args in REFUSED]
    first = {}
    for call in range(100):
        for n, args in enumerate(cases):
            before = len(sim.sim.launches)
            native_error, python_error = _raised(launch, 4, None, args), _raised(launch.python, 4, None, args)
            got = (type(native_error), str(native_error))
            assert got == (type(python_error), str(python_error)), (call, args)
            assert first.setdefault(n, got) == got, (call, args)
            assert len(sim.sim.launches) == before, (call, args)
            launch(4, None, (buf, buf, buf, 4))
            assert len(sim.sim.launches) == before + 1 and sim.sim.launches[-1][3][3] == 4, (call, args)
