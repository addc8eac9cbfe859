"""``k.split(devices)``: one launch on one device vs the same launch divided among n devices, and
copies between two devices.

    python benchmarks/bench_split.py [--quick] [--no-write] [--devices cuda:0,cuda:1,...]

Efficiency = t1 / (n * tn): 1.0 is perfect scaling, 1/n means no gain at all. Without
``--devices`` it measures two PoCL devices (``POCL_DEVICES="pthread pthread"``, each run in a
fresh interpreter since PoCL reads the variable at start). PoCL's pthread devices in one process
share one pool of worker threads (one per core, or ``POCL_MAX_PTHREAD_COUNT``): a second PoCL
device adds no hardware, so these runs measure what the split costs and how well two concurrent
launches fill the pool, not scaling. Two set-ups:

- PoCL's default pool (one thread per core of this machine);
- ``POCL_MAX_PTHREAD_COUNT=1``: a pool of one thread, so the two parts can only take turns
  (efficiency about 1/n: the control that shows the pool is shared).

With ``--devices`` (e.g. the eight GPUs of a multi-GPU machine) it measures those devices as
they are, over 1, 2, 4, ... of them (powers of two up to all), with GPU-sized problems.

Kernels (numpy arrays in and out, so the host copies count, as they do for any split call):

- ``nbody``: one step's accelerations of n bodies in 3-D; each device computes its slice of
  the bodies and reads all positions (passed whole to every part). O(n^2) work per O(n) data:
  the case that can scale;
- ``stencil``: a 5-point forward stencil; each part gets its slice plus a 4-row halo;
- ``saxpy``: ``a * x + y``, one multiply-add per 12 bytes moved: bounded by the host copies;
- ``heavy``: 200 dependent multiply-adds and a sine per element (compute-bound, no halo).

Then copies between the first two devices: ``g.to(other)`` of a device array, peer to peer
where the driver allows it and staged otherwise (``PYGPGPU_PEER_COPIES=0`` forces staging, for
the comparison), in GB/s. Writes its section of benchmarks/RESULTS.md unless ``--no-write``.
Times are the best of several repeats after a warm-up that also compiles on every device.
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
# --devices runs (GPUs) have a section of their own, so that they and the PoCL one replace only themselves
GIVEN_START, GIVEN_END = "<!-- bench_split:devices:start -->", "<!-- bench_split:devices:end -->"
QUICK = "--quick" in sys.argv


@kernel
def heavy(x, out, iters):
    for i in range(out.shape[0]):
        v = x[i]
        for _k in range(iters):
            v = v * 0.999 + 0.001 * np.sin(v)
        out[i] = v


@kernel
def saxpy(x, y, out, a):
    for i in range(out.shape[0]):
        out[i] = a * x[i] + y[i]


@kernel
def stencil(u, out):                    # out[i] is the smoothed u[i + 2]: u has 4 more rows than out
    for i in range(out.shape[0]):
        out[i] = 0.1 * u[i] + 0.2 * u[i + 1] + 0.4 * u[i + 2] + 0.2 * u[i + 3] + 0.1 * u[i + 4]


@kernel
def nbody(px, py, pz, ax, ay, az, all_x, all_y, all_z, mass, eps2):
    for i in range(ax.shape[0]):
        fx = 0.0
        fy = 0.0
        fz = 0.0
        for j in range(all_x.shape[0]):
            dx = all_x[j] - px[i]
            dy = all_y[j] - py[i]
            dz = all_z[j] - pz[i]
            r2 = dx * dx + dy * dy + dz * dz + eps2
            inv = 1.0 / np.sqrt(r2)
            s = mass[j] * inv * inv * inv
            fx += s * dx
            fy += s * dy
            fz += s * dz
        ax[i] = fx
        ay[i] = fy
        az[i] = fz


def best_s(repeats: int, fn, *args) -> float:
    fn(*args)                                     # warm-up: compiles on every device
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        fn(*args)
        best = min(best, time.perf_counter() - t)
    return best


def _sizes(gpus: bool) -> dict:
    """Elements (bodies for n-body) per case: GPU-sized with --devices, small on PoCL's 2 shared cores."""
    if gpus:
        return {"nbody": 1 << (15 if QUICK else 17), "stencil": 1 << (24 if QUICK else 26),
                "saxpy": 1 << (24 if QUICK else 26), "heavy": 1 << (20 if QUICK else 22)}
    return {"nbody": 1 << (11 if QUICK else 13), "stencil": 1 << (20 if QUICK else 22),
            "saxpy": 1 << (20 if QUICK else 22), "heavy": 1 << (14 if QUICK else 16)}


def _cases(sizes: dict) -> list:
    """``(name, kernel, arguments, outputs)``: the outputs are compared between device counts."""
    rng = np.random.default_rng(0)
    f32 = np.float32
    n = sizes["nbody"]
    pos = [rng.standard_normal(n).astype(f32) for _ in range(3)]
    acc = [np.zeros(n, f32) for _ in range(3)]
    mass = (rng.random(n) + 0.5).astype(f32)
    m = sizes["stencil"]
    u, smooth = rng.standard_normal(m + 4).astype(f32), np.zeros(m, f32)
    k = sizes["saxpy"]
    x, y, z = rng.standard_normal(k).astype(f32), rng.standard_normal(k).astype(f32), np.zeros(k, f32)
    h = sizes["heavy"]
    hx, hout = rng.standard_normal(h).astype(f32), np.zeros(h, f32)
    every = [p.copy() for p in pos]      # not the same arrays as the own positions: one launch would
    return [                             # see them aliased (one buffer) and the parts not, a different build
        (f"nbody (bodies; all positions to every part, {n * n / 1e6:.0f}M interactions)", nbody,
         (*pos, *acc, *every, mass, f32(0.01)), acc, n),
        ("stencil (5-point, 4-row halo per part)", stencil, (u, smooth), [smooth], m),
        ("saxpy (memory-bound)", saxpy, (x, y, z, f32(2.0)), [z], k),
        ("heavy (compute-bound, 200 iterations)", heavy, (hx, hout, 200), [hout], h),
    ]


def _counts(total: int) -> list:
    counts, k = [], 1
    while k <= total:
        counts.append(k)
        k *= 2
    if counts[-1] != total:
        counts.append(total)
    return counts


def measure(devices: list, gpus: bool) -> list:
    """Rows ``{case, n, times: {count: seconds}, eff: {count: efficiency}}`` over 1, 2, 4, ... devices."""
    rows = []
    repeats = 3 if QUICK else 5
    for name, k, args, outputs, n in _cases(_sizes(gpus)):
        times, ref = {}, None
        for count in _counts(len(devices)):
            run = k[devices[0]] if count == 1 else k.split(devices[:count])
            times[count] = best_s(repeats, run, *args)
            got = [o.copy() for o in outputs]
            if ref is None:
                ref = got
            else:
                for a, b in zip(got, ref):
                    assert np.array_equal(a, b), f"{name}: the split over {count} devices differs from one device"
        rows.append({"case": name, "n": n, "times": times,
                     "eff": {c: times[1] / (c * t) for c, t in times.items()}})
    return rows


def measure_copies(devices: list, gpus: bool) -> list:
    """``g.to(devices[1])`` of a device array on ``devices[0]``: GB/s per way the copy can take."""
    import pygpgpu.numpy as gnp

    nbytes = (256 if gpus else 32) << 20
    src = gnp.asarray(np.arange(nbytes // 4, dtype=np.float32), device=devices[0])
    rows = []
    for label, env in (("default", None), ("PYGPGPU_PEER_COPIES=0 (staged)", "0")):
        if env is not None:
            os.environ["PYGPGPU_PEER_COPIES"] = env
        try:
            probe = gnp.empty(16, np.float32, device=devices[1])
            way = probe.buffer.copy_from_device(src.buffer, 64)    # which way this pair takes

            def copy():
                out = src.to(devices[1])
                out.synchronize()
                return out

            seconds = best_s(3 if QUICK else 5, copy)
            same = bool(np.array_equal(copy().get(), src.get()))
        finally:
            os.environ.pop("PYGPGPU_PEER_COPIES", None)
        rows.append({"label": label, "way": way, "bytes": nbytes, "s": seconds, "equal": same})
        if way == "staged" and env is None:
            break                                 # staged already: the forced row would repeat it
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
    gpus = "--gpus" in sys.argv
    before = _threads()                               # nothing of OpenCL started yet
    from pygpgpu_core import registry
    names = [registry.get_device(d).name for d in devices]
    x = np.ones(1024, np.float32)
    for d in devices:
        saxpy[d](x, x, np.empty_like(x), np.float32(1.0))
    started = _threads() - before                     # PoCL's worker pool (and the driver's threads)
    print(json.dumps({"devices": devices, "names": names, "threads": started, "rows": measure(devices, gpus),
                      "copies": measure_copies(devices, gpus) if len(devices) > 1 else []}))


def run_child(devices: str, env: dict, gpus: bool = False) -> dict:
    args = [sys.executable, __file__, "--child", devices] + (["--quick"] if QUICK else []) + (["--gpus"] if gpus else [])
    proc = subprocess.run(args, capture_output=True, text=True, env={**os.environ, **env}, timeout=1800, check=False)
    if proc.returncode:
        raise SystemExit(f"the measuring process failed:\n{proc.stdout}\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def table(title: str, result: dict) -> list:
    n = len(result["devices"])
    counts = sorted(int(c) for c in result["rows"][0]["times"])
    lines = [f"### {title}", "", (f"Devices: {', '.join(f'{d} ({nm})' for d, nm in zip(result['devices'], result['names']))}. "
             f"Threads started in the process once all {n} devices ran a kernel: {result['threads']}."), "",
             "| kernel | elements | " + " | ".join(f"{c} device{'s' if c > 1 else ''} (ms)" for c in counts) + " | "
             + " | ".join(f"efficiency on {c}" for c in counts[1:]) + " |",
             "|---|---:|" + "---:|" * (2 * len(counts) - 1)]
    for r in result["rows"]:
        times = {int(c): t for c, t in r["times"].items()}
        eff = {int(c): e for c, e in r["eff"].items()}
        lines.append(f"| {r['case']} | {r['n']:,} | " + " | ".join(f"{times[c] * 1e3:.1f}" for c in counts) + " | "
                     + " | ".join(f"{eff[c]:.2f}" for c in counts[1:]) + " |")
    if result.get("copies"):
        a, b = result["devices"][:2]
        lines += ["", f"Copies `g.to(\"{b}\")` of a device array on {a}:", "",
                  "| setting | way taken | MiB | ms | GB/s | values equal |", "|---|---|---:|---:|---:|---|"]
        for c in result["copies"]:
            lines.append(f"| {c['label']} | {c['way']} | {c['bytes'] >> 20} | {c['s'] * 1e3:.1f} | "
                         f"{c['bytes'] / c['s'] / 1e9:.1f} | {c['equal']} |")
    return lines + [""]


def write_section(text: str, start: str = START, end: str = END) -> None:
    """Replace this script's section of RESULTS.md (between its markers); others are kept."""
    current = RESULTS.read_text() if RESULTS.exists() else "# Benchmark results\n"
    block = f"{start}\n{text.strip()}\n{end}"
    if start in current and end in current:
        head, rest = current.split(start, 1)
        updated = head + block + rest.split(end, 1)[1]
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
        sections = [("Given devices", run_child(devices, {}, gpus=True))]
        reading = ("Reading: the devices given run their parts concurrently, each on its own hardware. n-body has "
                   "O(n^2) work for O(n) bytes copied and should scale; saxpy and the stencil move every byte "
                   "through the host (numpy in and out), so the host copies bound them.")
    else:
        two = {"POCL_DEVICES": "pthread pthread"}
        sections = [("Two PoCL devices, PoCL's default worker pool (one thread per core, shared by both)",
                     run_child("opencl:0,opencl:1", two)),
                    ("Control: two PoCL devices sharing a pool of one thread (POCL_MAX_PTHREAD_COUNT=1)",
                     run_child("opencl:0,opencl:1", {**two, "POCL_MAX_PTHREAD_COUNT": "1"}))]
        reading = ("Reading: PoCL's pthread devices in one process share one pool of worker threads (the "
                   "threads started for two devices are as many as one pool has: one per core, or one in the "
                   "control), so a second PoCL device adds no cores. On PoCL these rows show what splitting "
                   "costs (the halo and the whole-array copies included), not scaling: expect an efficiency "
                   "near 1/n, as the one-thread control must take turns. On this shared 2-core machine single "
                   "runs vary by up to 2x with other work (the load average above), which is why some rows land "
                   "above or below that; only the thread counts are exact. The copies between the two PoCL "
                   "devices are staged (each OpenCL device has a context of its own: the source is mapped and "
                   "written into the target). Devices with their own hardware (several GPUs) are measured "
                   "with --devices on a machine that has them.")
    where = "given devices" if "--devices" in sys.argv else "two PoCL devices"
    lines = [f"## Several devices: k.split on 1 vs n devices, {where} (bench_split.py)", "",
             (f"Measured {when} on {machine()}; load average before the run {load}"
              f"{'' if '--devices' in sys.argv else ' (the machine is shared)'}; "
              f"best of {3 if QUICK else 5} after a warm-up. Efficiency = t1 / (n · tn): 1.0 is perfect "
              "scaling, 1/n no gain."), ""]
    for title, result in sections:
        lines += table(title, result)
    lines.append(reading)
    text = "\n".join(lines)
    print(text)
    if "--no-write" not in sys.argv:
        write_section(text, *((GIVEN_START, GIVEN_END) if "--devices" in sys.argv else (START, END)))


if __name__ == "__main__":
    main()
