"""``np.i0``, the modified Bessel function of the first kind, order 0, as numpy computes it: the
Chebyshev series of Cephes (numpy's own coefficient tables, read from numpy at first use) for
``|x| <= 8`` and for ``|x| > 8``, unrolled into one elementwise kernel evaluated in float64."""
from __future__ import annotations

from typing import Any

import numpy as np
from pygpgpu_core.gnp import DeviceArray

from ._codegen import DEFAULT_CONFIG, kernel_from_source, launch, np_type
from ._operands import check_dtype, check_same_device

__all__ = ["bessel_i0"]


def _tables() -> "tuple[Any, Any]":
    try:
        from numpy.lib import _function_base_impl as impl
        return impl._i0A, impl._i0B  # type: ignore[attr-defined]  # (numpy private tables, no stubs)
    except (ImportError, AttributeError):     # pragma: no cover - a numpy without the tables
        raise NotImplementedError("gnp.i0 reads numpy's Chebyshev tables (numpy.lib._function_base_impl._i0A/_i0B), "
                                  "which this numpy does not have; compute np.i0(g.get()) on the host") from None


def _series(name: str, coefs: Any, indent: str) -> list[str]:
    """Clenshaw's recurrence of numpy's ``_chbevl`` with the coefficients as literals."""
    lines = [f"{indent}{name}0 = {float(coefs[0])!r}", f"{indent}{name}1 = 0.0", f"{indent}{name}2 = 0.0"]
    for c in coefs[1:]:
        lines += [f"{indent}{name}2 = {name}1", f"{indent}{name}1 = {name}0",
                  f"{indent}{name}0 = y * {name}1 - {name}2 + {float(c)!r}"]
    return lines


def _source(kname: str, out: np.dtype) -> str:
    a, b = _tables()
    body = [f"def {kname}(out, x):", "    for k in range(out.shape[0]):", "        v = abs(np.float64(x[k]))",
            "        if v <= 8.0:", "            y = v / 2.0 - 2.0"]
    body += _series("p", a, "            ")
    body += ["            r = math.exp(v) * (0.5 * (p0 - p2))", "        else:", "            y = 32.0 / v - 2.0"]
    body += _series("q", b, "            ")
    body += ["            r = math.exp(v) * (0.5 * (q0 - q2)) / math.sqrt(v)", f"        out[k] = {np_type(out)}(r)"]
    return "\n".join(body) + "\n"


def bessel_i0(x: DeviceArray) -> DeviceArray:
    """numpy's ``i0``: float inputs keep their type, integers and bools give float64; complex is refused."""
    if x.dtype.kind == "c":
        raise TypeError("i0 not supported for complex values")
    out_dt = x.dtype if x.dtype.kind == "f" else np.dtype(np.float64)
    device = check_same_device([x], "i0")
    check_dtype(out_dt, "i0", "result", device)
    out = DeviceArray(x.shape, out_dt, device.context())
    if x.size:
        src = x if type(x) is DeviceArray else x.copy()
        kname = f"gnp_i0_{out_dt.name}"
        launch(kernel_from_source(kname, _source(kname, out_dt), contract=False), device, DEFAULT_CONFIG,
               (out.reshape(-1), src.reshape(-1)))
    return out
