"""Several devices at once (issue 19, item 4), on two PoCL devices.

``POCL_DEVICES="pthread pthread"`` gives ``opencl:0`` and ``opencl:1``; it is read when PoCL
starts, so each case runs in a fresh interpreter. Checked there, against numpy: the same kernel
running concurrently from two threads, each on its own device with its own device arrays;
``g.to(other_device)`` moving data between them (through the host: PoCL has no peer path);
``k.split`` over both devices; a device array pickled on ``opencl:1`` unpickling there, and onto
the default device in a process that has only one device.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from conftest import skip_no_device
from pygpgpu_core import registry
from pygpgpu_core.errors import GPGPUError

TESTS = Path(__file__).parent


def _pocl_or_skip():
    try:
        devices = registry.backend_devices("opencl")
    except GPGPUError as exc:
        skip_no_device("opencl", f"no OpenCL device here: {exc}")
    if not any("portable computing language" in d.platform.name.lower() for d in devices):
        skip_no_device("opencl", "PoCL is not installed here (POCL_DEVICES makes the two devices)")


def _run(code: str, cwd, pocl_devices: str) -> dict:
    env = dict(os.environ, POCL_DEVICES=pocl_devices, PYTHONPATH=os.pathsep.join(
        [str(TESTS)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    env.pop("PYGPGPU_BACKEND", None)
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=env,
                          cwd=str(cwd), timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


_TWO_DEVICES = """
import json, pickle, threading
import numpy as np
import pygpgpu, pygpgpu.numpy as gnp
import _mp_kernels as mk
from pygpgpu_core import registry

# the two PoCL devices (opencl:0 and opencl:1 here; after the GPUs on a machine with an OpenCL GPU)
D0, D1 = [d.selector for d in registry.backend_devices("opencl")
          if "portable computing language" in d.platform.name.lower()][:2]
report = {"pocl": [D0, D1]}
n = 300_000
data = {d: np.random.default_rng(k).standard_normal(n).astype(np.float32) for k, d in enumerate((D0, D1))}
start = threading.Barrier(2)
results, errors = {}, []

def worker(dev):
    try:
        x = gnp.asarray(data[dev], device=dev)          # this thread's own arrays on its own device
        out = gnp.empty_like(x)
        start.wait(timeout=60)
        for rep in range(12):
            mk.scale[dev](x, out, 0.5 + rep)
            mk.scale[dev](out, x, 1.0)                  # device to device, no host copy
        results[dev] = (x.get(), out.get(), x.device.selector, out.device.selector)
    except BaseException as exc:
        errors.append(repr(exc))

threads = [threading.Thread(target=worker, args=(d,)) for d in (D0, D1)]
for t in threads: t.start()
for t in threads: t.join(timeout=240)
report["errors"] = errors
report["alive"] = [t.is_alive() for t in threads]
for dev, (x, out, xs, os_) in results.items():
    want = data[dev].copy()
    for rep in range(12):
        o = mk.scale_host(want, 0.5 + rep)
        want = mk.scale_host(o, 1.0)
    report[dev] = {"selectors": [xs, os_], "x_err": float(np.max(np.abs(x - want) / (1 + np.abs(want)))),
                   "out_err": float(np.max(np.abs(out - o) / (1 + np.abs(o))))}

gnp.reset_transfer_stats()
g0 = gnp.asarray(data[D0], device=D0)
g1 = g0.to(D1)
stats = gnp.transfer_stats()
r1 = gnp.empty_like(g1)
mk.scale[D1](g1, r1, 3.0)
back = r1.to(D0)
report["to"] = {"devices": [g1.device.selector, back.device.selector], "same": bool(np.array_equal(g1.get(), data[D0])),
                "result_err": float(np.max(np.abs(back.get() - mk.scale_host(data[D0], 3.0)))),
                "stats": {k: v for k, v in stats.items() if isinstance(v, int)}}

x = data[D1]
out = np.zeros_like(x)
split = mk.scale.split([D0, D1])
parts = [(d.selector, lo, hi) for d, lo, hi in split.parts(x, out, 2.0)]
split(x, out, 2.0)
report["split"] = {"parts": parts, "err": float(np.max(np.abs(out - mk.scale_host(x, 2.0))))}
heavy = np.zeros_like(x); mk.heavy.split([D1, D0], weights=[3, 1])(x, heavy, 20)
whole = np.zeros_like(x); mk.heavy[D0](x, whole, 20)
report["split_heavy_equal"] = bool(np.array_equal(heavy, whole))
both = np.arange(1000, dtype=np.float32)
mk.add_one_to_both.split([D0, D1])(both, both)    # one numpy array passed twice: one copy per part
report["split_aliased"] = bool(np.array_equal(both, np.arange(1000, dtype=np.float32) + 2))
try:
    mk.scale.split([D0, D1])(x[1:], x[:-1], 2.0)
    report["split_overlap"] = None
except ValueError as exc:
    report["split_overlap"] = str(exc)
try:
    mk.reverse.split([D0, D1])(x, out)
    report["refused"] = None
except ValueError as exc:
    report["refused"] = str(exc)

g = gnp.asarray(np.arange(7, dtype=np.int64), device=D1)
blob = pickle.dumps(g)
report["pickled_here"] = pickle.loads(blob).device.selector
with open("array-on-opencl1.pkl", "wb") as f:
    f.write(blob)
print(json.dumps(report))
"""

_ONE_DEVICE = """
import json, pickle
import numpy as np
import pygpgpu
with open("array-on-opencl1.pkl", "rb") as f:
    g = pickle.load(f)
print(json.dumps({"devices": pygpgpu.available_devices(), "default": pygpgpu.get_device().selector,
                  "device": g.device.selector, "data": g.get().tolist()}))
"""


def test_two_devices_at_once(tmp_path):
    _pocl_or_skip()
    r = _run(_TWO_DEVICES, tmp_path, "pthread pthread")
    d0, d1 = r["pocl"]
    assert d0 != d1
    assert r["errors"] == [] and r["alive"] == [False, False]
    for dev in (d0, d1):
        assert r[dev]["selectors"] == [dev, dev]
        assert r[dev]["x_err"] < 1e-5 and r[dev]["out_err"] < 1e-5, r[dev]
    assert r["to"]["devices"] == [d1, d0] and r["to"]["same"]
    assert r["to"]["result_err"] < 1e-5
    n_bytes = 300_000 * 4
    stats = r["to"]["stats"]                                   # through the host: one copy each way
    assert stats["d2h_bytes"] >= n_bytes and stats["h2d_bytes"] >= 2 * n_bytes, stats
    assert r["split"]["parts"] == [[d0, 0, 150_000], [d1, 150_000, 300_000]]
    assert r["split"]["err"] < 1e-5
    assert r["split_heavy_equal"]
    assert r["split_aliased"]
    assert r["split_overlap"] and "overlapping memory" in r["split_overlap"]
    assert r["refused"] and "own element" in r["refused"]
    assert r["pickled_here"] == d1

    one = _run(_ONE_DEVICE, tmp_path, "pthread")            # no second PoCL device: the default device
    assert d1 not in one["devices"]
    assert one["device"] == one["default"] and one["data"] == list(range(7))


def test_pocl_4_and_5_builds_name_their_device():
    """PoCL 4.x/5.x share built kernels between identical devices by a hash of the source and the
    options, and abort when one kernel runs on two of them with different grid sizes (fixed in
    PoCL 6.0): every build for such a device carries a define naming it."""
    from pygpgpu_opencl._device import pocl_own_build_options

    assert pocl_own_build_options("OpenCL 3.0 PoCL 5.0+debian  Linux, None+Asserts", 1) == ("-DPYGPGPU_POCL_DEVICE=1",)
    assert pocl_own_build_options("OpenCL 3.0 PoCL 4.0  Linux", 0) == ("-DPYGPGPU_POCL_DEVICE=0",)
    assert pocl_own_build_options("OpenCL 3.0 PoCL 5.0  Linux", 0, 2) == ("-DPYGPGPU_POCL_DEVICE=0",
                                                                          "-DPYGPGPU_POCL_CONTEXT=2")
    for version in ("OpenCL 3.0 PoCL 3.1+debian  Linux", "OpenCL 3.0 PoCL 6.0  Linux", "OpenCL 3.0 CUDA 13.0.98", ""):
        assert pocl_own_build_options(version, 1) == () and pocl_own_build_options(version, 1, 3) == ()


def test_programs_for_a_pocl_5_device_carry_the_defines_of_device_and_context(monkeypatch):
    """Two contexts open on one PoCL 4/5 device at once are two queues too: the second one's
    builds get a define of their own; a closed context gives its slot back."""
    import numpy as np
    from pygpgpu_opencl import Context

    _pocl_or_skip()
    device = next(d for d in registry.backend_devices("opencl") if "portable" in d.platform.name.lower())
    monkeypatch.setattr(device.platform, "version", "OpenCL 3.0 PoCL 5.0  Linux")
    monkeypatch.setattr(device, "_build_slots", set())      # (a shared context made earlier took none)
    define = f"-DPYGPGPU_POCL_DEVICE={device.index}"
    source = "__kernel void set(__global int* x) { x[get_global_id(0)] = PYGPGPU_POCL_DEVICE + 1; }"
    with Context(device) as first, Context(device) as second:
        assert first.own_build_options == (define,)
        assert second.own_build_options == (define, "-DPYGPGPU_POCL_CONTEXT=1")
        program = first.program(source)
        assert program.options.count(define) == 1 and "-DPYGPGPU_POCL_CONTEXT=1" in second.program(source).options
        assert first.program(source, options=[define]).options.count(define) == 1     # not twice
        buf = first.buffer_from_host(np.zeros(4, np.int32))
        program.kernel("set")[(4,)](buf)
        out = np.empty(4, np.int32)
        buf.read(out)
        np.testing.assert_array_equal(out, np.full(4, device.index + 1, np.int32))
    with Context(device) as again:
        assert again.own_build_options == (define,)            # the slots were given back
    assert device._build_slots == set()
