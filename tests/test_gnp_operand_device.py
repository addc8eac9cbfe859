"""gnp functions and array methods run on their operands' device, also where they turn Python
scalars, lists or numpy arrays into temporaries: with two devices present and the operands on the
second (not the default) one, each call must give numpy's answer on that second device.

Found on the GPU machine (CUDA the default, NVIDIA's OpenCL second): gradient, trapezoid,
fill_diagonal, dot with a scalar and dot into ``out`` uploaded their temporaries to the default
device and failed. Here two PoCL devices stand in (``POCL_DEVICES="pthread pthread"``, read when
PoCL starts, so the cases run in a fresh interpreter)."""
from __future__ import annotations

from test_multi_device import _pocl_or_skip, _run

_CASES = r"""
import json, warnings
import numpy as np
import pygpgpu.numpy as gnp
from pygpgpu_core import registry

# the operands live on a PoCL device that is not the default one (CUDA or an OpenCL GPU may come first)
DEFAULT = gnp.empty(1).device.selector
D1 = [d.selector for d in registry.backend_devices("opencl")
      if "portable computing language" in d.platform.name.lower() and d.selector != DEFAULT][-1]
rng = np.random.default_rng(5)
h = rng.random(7)
x = np.cumsum(rng.random(7))
m = rng.random((3, 3)) + 3 * np.eye(3)     # well conditioned: linalg.solve below
ints = np.arange(10) % 4

def on(a):
    return gnp.asarray(a, device=D1)

def filled_diagonal(mod, a):
    mod.fill_diagonal(a, [1, 2], True)
    return a

CASES = {
    "gradient with coordinates": (lambda mod, a: mod.gradient(a, x.tolist()), h),
    "trapezoid with x": (lambda mod, a: mod.trapezoid(a, x=x.tolist()), h),
    "fill_diagonal with a list": (lambda mod, a: filled_diagonal(mod, a), np.zeros((5, 3))),
    "dot with a scalar": (lambda mod, a: mod.dot(a, 2), m),
    "method dot with a scalar": (lambda mod, a: a.dot(2.0), m),
    "method round": (lambda mod, a: a.round(2), m),
    "matmul with a list": (lambda mod, a: mod.matmul(a, [1.0, 2.0, 3.0]), m),
    "interp with lists": (lambda mod, a: mod.interp(a, [0.0, 0.5, 1.0], [1.0, 3.0, 2.0]), h),
    "polyval with a list": (lambda mod, a: mod.polyval([1.0, -2.0, 0.5], a), h),
    "convolve with a list": (lambda mod, a: mod.convolve(a, [1.0, 2.0, 1.0]), h),
    "isin with a list": (lambda mod, a: mod.isin(a, [1, 3]), ints),
    "searchsorted with a list": (lambda mod, a: mod.searchsorted(a, [0.2, 0.7]), np.sort(h)),
    "digitize with bins": (lambda mod, a: mod.digitize(a, [0.25, 0.5, 0.75]), h),
    "histogram with bins": (lambda mod, a: mod.histogram(a, [0.0, 0.5, 1.0])[0], h),
    "average with weights": (lambda mod, a: mod.average(a, weights=list(range(1, 8))), h),
    "where with lists": (lambda mod, a: mod.where(a > 0.5, [1.0] * 7, 0.0), h),
    "clip with arrays": (lambda mod, a: mod.clip(a, [0.2] * 7, 0.8), h),
    "concatenate with a list": (lambda mod, a: mod.concatenate([a, [1.0, 1.0]]), h),
    "append a list": (lambda mod, a: mod.append(a, [1.0, 2.0]), h),
    "setdiff1d with a list": (lambda mod, a: mod.setdiff1d(a, [1, 2]), ints),
    "kron with a list": (lambda mod, a: mod.kron(a, [1.0, -1.0]), h),
    "outer with a list": (lambda mod, a: mod.outer(a, [1.0, 2.0]), h),
    "cross with a list": (lambda mod, a: mod.cross(a, [1.0, 0.0, 0.0]), m),
    "maximum with a list": (lambda mod, a: mod.maximum(a, [0.5] * 3), m),
    "fill_diagonal then take": (lambda mod, a: mod.take(filled_diagonal(mod, a), [0, 4]), np.zeros((3, 3))),
    "linalg.solve with a list": (lambda mod, a: mod.linalg.solve(a, [1.0, 2.0, 3.0]), m),
    "linalg.norm": (lambda mod, a: mod.linalg.norm(a, ord=2), m),
    "linalg.det": (lambda mod, a: mod.linalg.det(a), m),
    "fft.fft padded": (lambda mod, a: mod.fft.fft(a, n=12), h),
    "fft.irfft": (lambda mod, a: mod.fft.irfft(a, n=10), h),
    "corrcoef with a second operand": (lambda mod, a: mod.corrcoef(a, h[::-1].tolist()), h),
}
report = {}
for name, (call, host) in CASES.items():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = np.asarray(call(np, np.array(host, copy=True)))
        try:
            got = call(gnp, on(host))
        except Exception as exc:              # noqa: BLE001  (reported by name below)
            report[name] = f"{type(exc).__name__}: {exc}"[:300]
            continue
    if got.device.selector != D1:
        report[name] = f"result on {got.device.selector}, not {D1}"
    elif got.shape != want.shape or not np.allclose(got.get(), want, equal_nan=True):
        report[name] = f"wrong value: {got.get()!r} != {want!r}"[:300]
print(json.dumps({"failures": report, "count": len(CASES)}))
"""


def test_gnp_calls_with_host_operands_run_on_the_operands_device(tmp_path):
    _pocl_or_skip()
    result = _run(_CASES, tmp_path, "pthread pthread")
    assert result["count"] >= 29
    assert result["failures"] == {}


_SCOPE = r"""
import json
import numpy as np
import pygpgpu, pygpgpu.numpy as gnp
from pygpgpu_core import registry

D0, D1 = [d.selector for d in registry.backend_devices("opencl")
          if "portable computing language" in d.platform.name.lower()][:2]
DEFAULT = gnp.empty(1).device.selector
g = gnp.asarray(np.arange(5.0), device=D1)
with pygpgpu.device(D0):                       # a scope never moves an operand's work off its device
    inside = gnp.gradient(g, [0.0, 1.0, 3.0, 4.0, 7.0])
    created = gnp.zeros(3)                     # creation without an operand still follows the scope
after = gnp.zeros(2)                           # and the scope the call entered is left again
print(json.dumps([D0, D1, DEFAULT, inside.device.selector, created.device.selector, after.device.selector,
                  np.allclose(inside.get(), np.gradient(np.arange(5.0), [0.0, 1.0, 3.0, 4.0, 7.0]))]))
"""


def test_an_operand_outranks_a_scoped_device_and_the_scope_is_restored(tmp_path):
    _pocl_or_skip()
    d0, d1, default, inside, created, after, right = _run(_SCOPE, tmp_path, "pthread pthread")
    assert right is True
    assert (inside, created) == (d1, d0)
    assert after == default
