"""``k.split(devices)``: one launch on one device vs the same launch divided among n devices.

    python benchmarks/bench_split.py [--quick] [--no-write] [--devices cuda:0,cuda:1]

Efficiency = t1 / (n * tn): 1.0 is perfect scaling, 1/n means no gain at all. Without
``--devices`` it measures two PoCL devices (``POCL_DEVICES="pthread pthread"``, each run in a
fresh interpreter since PoCL reads the variable at start). PoCL's pthread devices in one process
share one pool of worker threads (one per core, or ``POCL_MAX_PTHREAD_COUNT``): a second PoCL
device adds no hardware, so these runs measure what the split costs and how well two concurrent
launches fill the pool, not scaling. Two set-ups:

- PoCL's default pool (one thread per core of this machine);
- ``POCL_MAX_PTHREAD_COUNT=1``: a pool of one thread, so the two parts can only take turns
  (efficiency about 1/n: the control that shows the pool is shared).

Scaling over devices with their own hardware (several GPUs) is measured with ``--devices``.

Two kernels: ``heavy`` (compute-bound, 200 dependent multiply-adds and a sine per element) and
``scale`` (memory-bound: one multiply-add per element; numpy arrays in and out, so the copies
count). With ``--devices`` (e.g. two GPUs of the GPU machine) it measures those devices as they
are. Writes its section of benchmarks/RESULTS.md unless ``--no-write``. Times are the best of
several repeats after a warm-up that also compiles on every device.
"""
from __future__ import annotations

import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
from pygpgpu import kernel

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"
START, END = "<!-- bench_split:start -->", "<!-- bench_split:end -->"
QUICK = "--quick" in sys.argv


@kernel
def heavy(x, out, iters):
    for i in range(out.shape[0]):
        v = x[i]
        for _k in range(iters):
            v = v * 0.999 + 0.001 * np.sin(v)
        out[i] = v


@kernel
def scale(x, out, alpha):
    for i in range(out.shape[0]):
        out[i] = x[i] * alpha + 1.0


def best_s(repeats: int, fn, *args) -> float:
    fn(*args)                                     # warm-up: compiles on every device
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        fn(*args)
        best = min(best, time.perf_counter() - t)
    return best


def measure(devices: list) -> list:
    """Rows of (case, n, t1, tn, efficiency) for one device vs all of ``devices``."""
    rows = []
    cases = [("heavy (compute-bound, 200 iterations)", heavy, 1 << (16 if QUICK else 18), (200,)),
             ("scale (memory-bound, numpy in/out)", scale, 1 << (22 if QUICK else 24), (2.0,))]
    for name, k, n, scalars in cases:
        x = np.random.default_rng(0).standard_normal(n).astype(np.float32)
        out = np.empty_like(x)
        repeats = 3 if QUICK else 5
        one = k[devices[0]]
        split = k.split(devices)
        t1 = best_s(repeats, one, x, out, *scalars)
        ref = out.copy()
        tn = best_s(repeats, split, x, out, *scalars)
        assert np.array_equal(out, ref), f"{name}: split result differs from the one-device result"
        rows.append({"case": name, "n": n, "t1": t1, "tn": tn, "eff": t1 / (len(devices) * tn)})
    return rows


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        lscpu = subprocess.run(["lscpu"], capture_output=True, text=True, timeout=10, check=False).stdout
        model = re.search(r"Model name:\s*(.+)", lscpu)
        cpus = re.search(r"^CPU\(s\):\s*(\d+)", lscpu, re.MULTILINE)
        if model:
            cpu = f"{model.group(1).strip()}, {cpus.group(1) if cpus else '?'} CPUs"
    except (OSError, subprocess.SubprocessError):
        pass
    return f"{cpu}; {platform.platform()}; Python {platform.python_version()}; numpy {np.__version__}"


def _threads() -> int:
    try:
        return len(os.listdir("/proc/self/task"))      # Linux: threads of this process
    except OSError:
        return -1


def child() -> None:
    devices = sys.argv[sys.argv.index("--child") + 1].split(",")
    before = _threads()                               # nothing of OpenCL started yet
    from pygpgpu_core import registry
    names = [registry.get_device(d).name for d in devices]
    x = np.ones(1024, np.float32)
    for d in devices:
        scale[d](x, np.empty_like(x), 1.0)
    started = _threads() - before                     # PoCL's worker pool (and the driver's threads)
    print(json.dumps({"devices": devices, "names": names, "threads": started, "rows": measure(devices)}))


def run_child(devices: str, env: dict) -> dict:
    args = [sys.executable, __file__, "--child", devices] + (["--quick"] if QUICK else [])
    proc = subprocess.run(args, capture_output=True, text=True, env={**os.environ, **env}, timeout=1800, check=False)
    if proc.returncode:
        raise SystemExit(f"the measuring process failed:\n{proc.stdout}\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def table(title: str, result: dict) -> list:
    n = len(result["devices"])
    lines = [f"### {title}", "", (f"Devices: {', '.join(f'{d} ({nm})' for d, nm in zip(result['devices'], result['names']))}. "
             f"Threads started in the process once all {n} devices ran a kernel: {result['threads']}."),
             "", f"| kernel | elements | 1 device (ms) | {n} devices (ms) | speed-up | efficiency t1/({n}·t{n}) |",
             "|---|---:|---:|---:|---:|---:|"]
    for r in result["rows"]:
        lines.append(f"| {r['case']} | {r['n']:,} | {r['t1'] * 1e3:.1f} | {r['tn'] * 1e3:.1f} | "
                     f"{r['t1'] / r['tn']:.2f}x | {r['eff']:.2f} |")
    return lines + [""]


def write_section(text: str) -> None:
    """Replace this script's section of RESULTS.md (between its markers); others are kept."""
    current = RESULTS.read_text() if RESULTS.exists() else "# Benchmark results\n"
    block = f"{START}\n{text.strip()}\n{END}"
    if START in current and END in current:
        head, rest = current.split(START, 1)
        updated = head + block + rest.split(END, 1)[1]
    else:
        updated = current.rstrip("\n") + "\n\n" + block + "\n"
    fd, tmp = tempfile.mkstemp(dir=RESULTS.parent, prefix=".RESULTS-")
    with os.fdopen(fd, "w") as f:
        f.write(updated)
    os.replace(tmp, RESULTS)


def main() -> None:
    if "--child" in sys.argv:
        child()
        return
    when = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")  # noqa: UP017 - Python 3.10 has no datetime.UTC
    load = ", ".join(f"{v:.1f}" for v in os.getloadavg())
    if "--devices" in sys.argv:
        devices = sys.argv[sys.argv.index("--devices") + 1]
        sections = [("Given devices", run_child(devices, {}))]
        reading = "Reading: the devices given run their parts concurrently, each on its own hardware."
    else:
        two = {"POCL_DEVICES": "pthread pthread"}
        sections = [("Two PoCL devices, PoCL's default worker pool (one thread per core, shared by both)",
                     run_child("opencl:0,opencl:1", two)),
                    ("Control: two PoCL devices sharing a pool of one thread (POCL_MAX_PTHREAD_COUNT=1)",
                     run_child("opencl:0,opencl:1", {**two, "POCL_MAX_PTHREAD_COUNT": "1"}))]
        reading = ("Reading: PoCL's pthread devices in one process share one pool of worker threads (the "
                   "threads started for two devices are as many as one pool has: one per core, or one in the "
                   "control), so a second PoCL device adds no cores. On PoCL these rows show what splitting "
                   "costs, not scaling: expect an efficiency near 1/n, as the one-thread control must take "
                   "turns. On this shared 2-core machine single runs vary by up to 2x with other work (the "
                   "load average above), which is why some rows land above or below that; only the thread "
                   "counts are exact. Devices with their own hardware (two GPUs) are measured with --devices "
                   "on a machine that has them.")
    lines = ["## Several devices: k.split on 1 vs n devices (bench_split.py)", "",
             (f"Measured {when} on {machine()}; load average before the run {load} (the machine is shared); "
              f"best of {3 if QUICK else 5} after a warm-up. Efficiency = t1 / (n · tn): 1.0 is perfect "
              "scaling, 1/n no gain."), ""]
    for title, result in sections:
        lines += table(title, result)
    lines.append(reading)
    text = "\n".join(lines)
    print(text)
    if "--no-write" not in sys.argv:
        write_section(text)


if __name__ == "__main__":
    main()
