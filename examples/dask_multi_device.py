"""A Dask cluster with one worker process per device, each pinned to its device by a selector,
running a @kernel over every block of an array larger than one device's memory.

    pip install "dask[array]" distributed        # not needed by pygpgpu itself
    python examples/dask_multi_device.py [--gib 200] [--chunk-mib 512] [--devices cuda:0,cuda:1,...]

Each worker is a process started with ``PYGPGPU_BACKEND=<its selector>`` (``cuda:3``), so its
default device, the one every kernel call and gnp array of the worker uses, is its own GPU; one
thread per worker keeps one block in flight per device. The array is ``--gib`` GiB of float32
(default: twice the smallest device's memory), made block by block on the workers (``da.linspace``:
nothing is ever whole in one place) and reduced as it goes: each block goes through the kernel on
its worker's device and only its sum comes back. The sum is a Riemann sum of ``exp(-rate x^2)``
over [-8, 8], so the answer is known (``sqrt(pi / rate)``) whatever the size.

Without ``--devices`` every device of the default device's backend gets a worker (two PoCL
devices on a CPU-only machine with ``POCL_DEVICES="pthread pthread"``: they share its cores, so
that run shows the set-up works, not speed). Prints the devices the workers report, the blocks
each one ran, the time and the rate in GB/s.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
from pygpgpu import kernel

LO, HI, RATE = -8.0, 8.0, 0.5


@kernel
def gaussian(x, out, rate):
    for i in range(out.shape[0]):
        out[i] = np.exp(-rate * x[i] * x[i])


def block_sum(block: np.ndarray, rate: float) -> np.ndarray:
    """One Dask task: a block through the kernel on this worker's device. Only two numbers come
    back, the block's sum (float64) and the worker's process id (to count the blocks per device),
    so the blocks are never held anywhere but on their worker."""
    out = np.empty_like(block)
    gaussian(np.ascontiguousarray(block), out, np.float32(rate))
    return np.array([out.sum(dtype=np.float64), float(os.getpid())])


def worker_report() -> dict:
    """What a worker says about itself: its default device."""
    import pygpgpu

    dev = pygpgpu.get_device()
    return {"device": dev.selector, "name": dev.name, "memory": int(dev.global_mem_size), "pid": os.getpid()}


def default_devices() -> list:
    """Every device of the default device's backend (``PYGPGPU_BACKEND`` picks the backend)."""
    import pygpgpu
    from pygpgpu_core import registry

    backend = pygpgpu.get_device().selector.split(":")[0]
    return [d.selector for d in registry.backend_devices(backend)]


def cluster_per_device(devices: list):
    """A SpecCluster with one single-threaded worker process per device, started with
    ``PYGPGPU_BACKEND`` set to that device's selector (and this script's folder importable, so the
    kernel and block function travel by reference when the script is imported as a module)."""
    from distributed import Nanny, Scheduler, SpecCluster

    path = os.pathsep.join([str(Path(__file__).resolve().parent)] + [p for p in sys.path if p])
    workers = {f"device-{k}-{sel.replace(':', '-')}": {
        "cls": Nanny,
        "options": {"nthreads": 1, "host": "127.0.0.1", "silence_logs": 40, "dashboard": False,
                    "env": {"PYGPGPU_BACKEND": sel, "PYTHONPATH": path}},
    } for k, sel in enumerate(devices)}
    scheduler = {"cls": Scheduler, "options": {"dashboard_address": None, "host": "127.0.0.1"}}
    return SpecCluster(workers=workers, scheduler=scheduler, silence_logs=40)


def main(devices: "list | None" = None, gib: "float | None" = None, chunk_mib: float = 512.0) -> dict:
    try:
        import dask.array as da
        from distributed import Client
    except ImportError:
        raise SystemExit('this example needs Dask: pip install "dask[array]" distributed') from None
    from pygpgpu_core import registry

    devices = list(devices or default_devices())
    smallest = min(registry.get_device(d).global_mem_size for d in devices)
    nbytes = int(gib * (1 << 30)) if gib else 2 * smallest
    n = max(2, nbytes // 4)
    chunk = max(1, int(chunk_mib * (1 << 20)) // 4)
    arr = da.linspace(LO, HI, n, chunks=chunk, dtype=np.float32)        # made block by block on the workers
    dx = (HI - LO) / (n - 1)
    exact = float(np.sqrt(np.pi / RATE))
    print(f"{n * 4 / (1 << 30):.2f} GiB of float32 in {arr.numblocks[0]} blocks of {chunk * 4 / (1 << 20):.0f} MiB; "
          f"the smallest device has {smallest / (1 << 30):.1f} GiB ({n * 4 / smallest:.2f}x that)")
    with cluster_per_device(devices) as cluster, Client(cluster) as client:
        client.wait_for_workers(len(devices), timeout=300)
        pairs = arr.map_blocks(block_sum, RATE, chunks=(2,), dtype=np.float64)
        t0 = time.perf_counter()
        got = pairs.compute()
        seconds = time.perf_counter() - t0
        integral = float(got[0::2].sum()) * dx
        reports = sorted(client.run(worker_report).values(), key=lambda r: r["device"])
        for r in reports:
            r["blocks"] = int(np.count_nonzero(got[1::2] == r["pid"]))
    error = abs(integral - exact)
    for r in reports:
        print(f"  worker pid {r['pid']} on {r['device']} ({r['name']}): {r['blocks']} blocks")
    print(f"integral of exp(-{RATE} x^2) over [{LO}, {HI}]: {integral:.7f}, exact {exact:.7f} (error {error:.1e}); "
          f"{seconds:.2f} s, {n * 4 / seconds / 1e9:.2f} GB/s through the kernels (the first block of each "
          "worker translates and compiles)")
    # float32 values summed per block in float64: the error is the Riemann sum's, plus rounding
    assert error < 1e-4 + 1e-6 * arr.numblocks[0], (integral, exact)
    return {"devices": [r["device"] for r in reports], "blocks": [r["blocks"] for r in reports], "seconds": seconds,
            "bytes": n * 4, "integral": integral, "smallest_device_bytes": smallest, "numblocks": arr.numblocks[0]}


if __name__ == "__main__":      # the worker processes import this file: run only when executed
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--devices", help="comma-separated selectors, one worker each (default: every device "
                                          "of the default backend)")
    parser.add_argument("--gib", type=float, help="size of the array in GiB (default: twice the smallest "
                                                  "device's memory)")
    parser.add_argument("--chunk-mib", type=float, default=512.0, help="block size in MiB (default 512)")
    args = parser.parse_args()
    main(args.devices.split(",") if args.devices else None, args.gib, args.chunk_mib)
