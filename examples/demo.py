"""saxpy on the best available device: prints the device, checks the result, times the calls."""
import time

import numpy as np

import pygpgpu
from pygpgpu import kernel


@kernel
def saxpy(x, y, out, alpha):
    for i in range(out.shape[0]):
        out[i] = x[i] * alpha + y[i]


def main() -> None:
    devices = pygpgpu.available_devices()
    if not devices:
        status = {name: b["status"] for name, b in pygpgpu.diagnostics()["backends"].items()}
        raise SystemExit(
            f"No GPU or OpenCL device found. Backend status: {status}\n"
            "For OpenCL on the CPU: apt-get install pocl-opencl-icd ocl-icd-libopencl1 "
            "(`python -m pygpgpu info` shows the full report)"
        )
    device = pygpgpu.get_device()
    print(f"devices: {devices}")
    print(f"running on: {device.selector} — {device.name} ({device.vendor})")

    n = 1_000_000
    x = np.arange(n, dtype=np.float32)
    y = np.full(n, 3.0, dtype=np.float32)
    out = np.zeros_like(x)

    t0 = time.perf_counter()
    saxpy(x, y, out, 2.0)
    first = time.perf_counter() - t0

    expected = x * np.float32(2.0) + y
    ok = np.allclose(out, expected)
    print(f"result check: {'OK' if ok else 'MISMATCH'} (out[:4] = {out[:4]})")

    reps = 20
    t0 = time.perf_counter()
    for _ in range(reps):
        saxpy(x, y, out, 2.0)
    warm = (time.perf_counter() - t0) / reps
    print(f"first call (translate + compile + run): {first * 1e3:.1f} ms")
    print(f"warm call, {n:,} elements, numpy in/out:  {warm * 1e3:.2f} ms")
    if not ok:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
