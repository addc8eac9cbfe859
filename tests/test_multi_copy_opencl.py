"""Copies between two OpenCL devices (issue 36, item 1) on two PoCL devices of one platform.

``POCL_DEVICES="pthread pthread"`` gives two devices, each with a context of its own (OpenCL copies
between contexts only through the host): ``g.to(d1)``, ``gnp.asarray(g, device=d1)`` and
``gnp.array(g, device=d1)`` go through ``Buffer.copy_from_device``, which maps the source and
writes the new buffer from the mapping (one host copy, none on PoCL, whose device memory is the
host's), and logs once per pair that the copy is staged. Checked against numpy: values for several
dtypes, views with offsets and strides, the source untouched, an empty array, the transfer
counter (one download and one upload per staged copy) and buffer copies at offsets. The case runs
in a fresh interpreter: PoCL reads POCL_DEVICES when it starts."""
from __future__ import annotations

from test_multi_device import _pocl_or_skip, _run

_CASE = r"""
import json, logging
import numpy as np
import pygpgpu.numpy as gnp
from pygpgpu_core import registry

records = []
class Keep(logging.Handler):
    def emit(self, record):
        records.append(record.getMessage())
log = logging.getLogger("pygpgpu.transfer")
log.setLevel(logging.DEBUG)
log.addHandler(Keep())

D0, D1 = [d.selector for d in registry.backend_devices("opencl")
          if "portable computing language" in d.platform.name.lower()][:2]
rng = np.random.default_rng(7)
report = {"devices": [D0, D1], "cases": {}}

def check(name, host, make, move):
    g = make(gnp.asarray(host, device=D0))
    want = g.get()
    before = g.get()
    moved = move(g)
    got = moved.get()
    report["cases"][name] = {
        "device": moved.device.selector, "dtype": str(moved.dtype), "want_dtype": str(want.dtype),
        "shape": list(moved.shape), "equal": bool(np.array_equal(got, want.astype(moved.dtype), equal_nan=True)),
        "source_untouched": bool(np.array_equal(g.get(), before, equal_nan=True)) and g.device.selector == D0,
        "contiguous": bool(moved.flags.c_contiguous),
    }

hosts = {
    "float32": rng.standard_normal(10_001).astype(np.float32),
    "float64": rng.standard_normal((37, 41)),
    "int64": rng.integers(-2**62, 2**62, 5000),
    "uint8": rng.integers(0, 256, 4099).astype(np.uint8),
    "bool": rng.random(333) < 0.5,
    "complex128": rng.standard_normal(999) + 1j * rng.standard_normal(999),
    "int16": rng.integers(-30000, 30000, (6, 7, 8)).astype(np.int16),
}
for name, host in hosts.items():
    check(f"to {name}", host, lambda g: g, lambda g: g.to(D1))
check("asarray float64", hosts["float64"], lambda g: g, lambda g: gnp.asarray(g, device=D1))
check("asarray with a dtype", hosts["int64"], lambda g: g, lambda g: gnp.asarray(g, dtype=np.float32, device=D1))
check("array copy", hosts["uint8"], lambda g: g, lambda g: gnp.array(g, device=D1))
check("slice with an offset", hosts["float32"], lambda g: g[123:4567], lambda g: g.to(D1))
check("strided view", hosts["float32"], lambda g: g[5::7], lambda g: g.to(D1))
check("transposed", hosts["float64"], lambda g: g.T, lambda g: g.to(D1))
check("row of a matrix", hosts["float64"], lambda g: g[11], lambda g: g.to(D1))
check("negative strides", hosts["int16"], lambda g: g[::-1, :, ::-2], lambda g: g.to(D1))
check("empty", np.zeros(0, np.float32), lambda g: g, lambda g: g.to(D1))
check("0-d", np.float64(2.5), lambda g: g, lambda g: g.to(D1))

gnp.reset_transfer_stats()
g = gnp.asarray(hosts["float32"], device=D0)
gnp.reset_transfer_stats()
back = g.to(D1).to(D0)
report["stats"] = gnp.transfer_stats()
report["round_trip_equal"] = bool(np.array_equal(back.get(), hosts["float32"]))
report["same_device_is_self"] = g.to(D0) is g

# the buffers themselves: a range at offsets, between the two contexts and within one
a = registry.get_device(D0).context().buffer_from_host(np.arange(64, dtype=np.int32))
b = registry.get_device(D1).context().buffer_from_host(np.full(64, -1, np.int32))
ways = [b.copy_from_device(a, 40, src_offset=16, dst_offset=80)]
c = registry.get_device(D1).context().buffer(256)
ways.append(c.copy_from_device(b))
out = np.empty(64, np.int32)
c.read(out)
report["buffer"] = {"ways": ways, "values": out.tolist()}
report["log"] = records
print(json.dumps(report))
"""


def test_copies_between_two_pocl_devices(tmp_path):
    _pocl_or_skip()
    r = _run(_CASE, tmp_path, "pthread pthread")
    d0, d1 = r["devices"]
    assert d0 != d1
    assert len(r["cases"]) == 17
    for name, case in r["cases"].items():
        assert case["device"] == d1, (name, case)
        assert case["equal"], (name, case)
        assert case["source_untouched"], (name, case)
        assert case["contiguous"], (name, case)
    assert r["cases"]["asarray with a dtype"]["dtype"] == "float32"
    assert r["cases"]["to complex128"]["dtype"] == "complex128"
    assert r["cases"]["transposed"]["shape"] == [41, 37]
    assert r["cases"]["negative strides"]["shape"] == [6, 7, 4]
    assert r["cases"]["0-d"]["shape"] == []

    nbytes = 10_001 * 4                       # two staged copies: one download and one upload each
    assert r["stats"] == {"h2d": 2, "d2h": 2, "h2d_bytes": 2 * nbytes, "d2h_bytes": 2 * nbytes}, r["stats"]
    assert r["round_trip_equal"] and r["same_device_is_self"]

    assert r["buffer"]["ways"] == ["staged", "device"]
    want = [-1] * 64
    want[20:30] = list(range(4, 14))          # 40 bytes from byte 16 of 0..63, at byte 80
    assert r["buffer"]["values"] == want
    staged = [m for m in r["log"] if "staged through host memory" in m]
    assert any(m.startswith(f"{d0} -> {d1}") for m in staged) and any(m.startswith(f"{d1} -> {d0}") for m in staged)
    assert len(staged) == len(set(staged))    # once per pair of contexts
