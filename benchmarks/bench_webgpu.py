"""The WebGPU backend against CUDA (or, without CUDA, OpenCL) in one process (issue 35, item 5):
saxpy, a 5-point stencil, mandelbrot and n-body in float32, each one @kernel function run on
both devices on device arrays, plus gnp's ``g.sum()``; the results are checked against each other
before timing.

    python benchmarks/bench_webgpu.py [--quick | --scale N] [--json OUT.json] [--md OUT.md]
                                      [--webgpu SELECTOR] [--peer SELECTOR ...]

It first prints what it found: every WebGPU adapter wgpu sees (API, type, driver), the Vulkan
driver files the loader was pointed at (VK_ICD_FILENAMES / VK_DRIVER_FILES), and the peers. On
the GPU machine WebGPU should run on NVIDIA's Vulkan driver (benchmarks/run_gpu.sh finds it);
where it only finds lavapipe (Vulkan on the CPU) the table says so, and the numbers only say
that the kernels run. Times: the median over ``--repeats`` batches after ``--warmup`` calls
(which include compiling), in ms per call; ``ratio`` is webgpu / peer (below 1: WebGPU faster).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import platform
import sys

import numpy as np
import pygpgpu
import pygpgpu.numpy as gnp


# --- the kernels: benchmarks/_bench_kernels.py, one source for every device (also bench_cpu.py) --
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))   # also when a test imports this file
from _bench_kernels import mandelbrot, nbody, saxpy, stencil  # noqa: E402
from _timing import timed_ms_and_repeats  # noqa: E402



# --- what is here ----------------------------------------------------------------------------
def adapters() -> list:
    """Every adapter wgpu enumerates (also those pygpgpu would order after others)."""
    try:
        import wgpu
    except ImportError as exc:
        return [{"error": f"wgpu-py does not import: {exc}"}]
    found = []
    for a in wgpu.gpu.enumerate_adapters_sync():
        info = a.info
        found.append({k: str(info.get(k, "")) for k in ("device", "adapter_type", "backend_type", "vendor",
                                                         "architecture", "description")})
    return found


def report_environment() -> dict:
    env = {k: os.environ[k] for k in ("VK_ICD_FILENAMES", "VK_DRIVER_FILES", "VK_LOADER_DEBUG")
           if k in os.environ}
    try:
        import wgpu
        print(f"wgpu-py {wgpu.__version__} from {os.path.dirname(wgpu.__file__)}")
    except ImportError:
        pass
    found = adapters()
    print("Vulkan loader environment:", env or "(none set: the loader's default search)")
    print(f"WebGPU adapters wgpu sees ({len(found)}):")
    for a in found:
        print("   ", "  ".join(f"{k}={v}" for k, v in a.items() if v))
    if not found:
        print("    none: no Vulkan/Metal/D3D12 driver found (Linux: libvulkan1 and an ICD json, e.g. "
              "nvidia_icd.json or mesa-vulkan-drivers' lvp_icd)")
    return {"vulkan_env": env, "adapters": found}


def pick_peers(asked: list) -> list:
    if asked:
        return [pygpgpu.get_device(s) for s in asked]
    devices = pygpgpu.available_devices()
    for backend in ("cuda", "opencl"):
        hits = [d for d in devices if d.startswith(backend + ":")]
        if hits:
            return [pygpgpu.get_device(hits[0])]
    raise SystemExit(f"no CUDA or OpenCL device to compare with (devices: {devices})")


# --- timing: _timing.timed_ms_and_repeats ----------------------------------------------------
median_ms = timed_ms_and_repeats


def cases(scale: int) -> list:
    """(row, size, how to run it on a device: args -> None, batch, check)."""
    rng = np.random.default_rng(0)
    n = (1 << 24) // scale
    side = max(64, 2048 // int(math.sqrt(scale)))
    mside = max(64, 1024 // int(math.sqrt(scale)))
    bodies = max(256, 4096 // scale)
    x, y = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    grid = rng.random((side, side), dtype=np.float32)
    pos = rng.random((bodies, 4), dtype=np.float32)
    s = rng.random(n, dtype=np.float32)

    def k_case(k, make):
        def prepare(dev):
            args = make(lambda a: gnp.asarray(a, device=dev), lambda shape, t: gnp.zeros(shape, t, device=dev))
            run = k[dev.selector]
            out = [a for a in args if isinstance(a, gnp.ndarray)][-1]
            return (lambda: run(*args)), (lambda: out.get())
        return prepare

    def sum_case(dev):
        g = gnp.asarray(s, device=dev)
        return g.sum, (lambda: np.asarray(g.sum()))

    return [
        ("saxpy", f"{n:,} float32", k_case(saxpy, lambda put, z: (np.float32(2.0), put(x), put(y), z((n,), np.float32))),
         10, "close"),
        ("stencil 5-point", f"{side}x{side} float32", k_case(stencil, lambda put, z: (put(grid), z((side, side), np.float32))),
         10, "close"),
        ("mandelbrot", f"{mside}x{mside}, 200 iterations", k_case(mandelbrot, lambda put, z: (z((mside, mside), np.int32), 200)),
         3, "pixels"),
        ("n-body", f"{bodies} bodies float32", k_case(nbody, lambda put, z: (put(pos), z((bodies, 3), np.float32))),
         2, "close"),
        ("gnp g.sum()", f"{n:,} float32", sum_case, 10, "sum"),
    ]


def check(kind: str, row: str, ours: np.ndarray, theirs: np.ndarray) -> None:
    if kind == "pixels":
        # chaotic near the set's boundary: float32 rounding (contraction, division) moves ~0.1% of
        # the pixels between any two devices
        assert np.mean(ours != theirs) < 5e-3, row
    elif kind == "sum":
        np.testing.assert_allclose(ours, theirs, rtol=1e-4, err_msg=row)
    else:
        np.testing.assert_allclose(ours, theirs, rtol=1e-3, atol=1e-3, err_msg=row)


def markdown(report: dict) -> str:
    wg = report["webgpu"]
    lines = [f"WebGPU: `{wg['selector']}` {wg['name']} ({wg['api']}, {wg['adapter_type']}, {wg['driver']})"]
    for p in report["peers"]:
        lines.append(f"peer: `{p['selector']}` {p['name']}")
    lines += [f"Python {report['python']}, {report['machine']}; median of {report['repeats']} batches after "
              f"{report['warmup']} warm-up calls, ms per call", ""]
    head = "| kernel | size | webgpu ms |" + "".join(f" {p['selector']} ms | webgpu / {p['selector']} |"
                                                    for p in report["peers"])
    lines += [head, "|" + " --- |" * (3 + 2 * len(report["peers"]))]
    for r in report["rows"]:
        cells = [r["row"], r["size"], f"{r['webgpu_ms']:.3f}"]
        for p in report["peers"]:
            cells += [f"{r['peer_ms'][p['selector']]:.3f}", f"{r['ratio'][p['selector']]:.2f}"]
        lines.append("| " + " | ".join(cells) + " |")
    if not wg["adapter_type"].endswith("GPU"):
        lines += ["", f"The WebGPU adapter is a {wg['adapter_type'] or 'non-GPU'} adapter ({wg['name']}): "
                      "these numbers say that the kernels run, not how fast WebGPU is on a GPU."]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--scale", type=int, default=1, help="divide the sizes by this (default 1)")
    p.add_argument("--quick", action="store_true", help="--scale 16: a run on a CPU (lavapipe)")
    p.add_argument("--webgpu", default="webgpu", help="the WebGPU device (default: the first adapter, GPUs first)")
    p.add_argument("--peer", action="append", default=[], help="a device to compare with (repeatable; default: "
                   "the first CUDA device, else the first OpenCL device)")
    p.add_argument("--repeats", type=int, default=7)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--json", help="write the report here")
    p.add_argument("--md", help="write the markdown table here")
    args = p.parse_args(argv)
    scale = 16 if args.quick else args.scale

    found = report_environment()
    webgpu = pygpgpu.get_device(args.webgpu)
    peers = pick_peers(args.peer)
    wg = {"selector": webgpu.selector, "name": webgpu.name, "api": webgpu.arch.split(":")[0],
          "adapter_type": str(getattr(webgpu, "adapter_type", "")), "driver": str(getattr(webgpu, "driver", ""))}
    print(f"webgpu: {wg['selector']} {wg['name']} ({wg['api']}, {wg['adapter_type']}, {wg['driver']})")
    for peer in peers:
        print(f"peer: {peer.selector} {peer.name}")
    if not wg["adapter_type"].endswith("GPU"):
        print(f"NOTE: the WebGPU adapter is not a GPU ({wg['adapter_type']}): on a GPU machine this means the GPU's "
              "Vulkan driver was not found (see the adapters above; run_gpu.sh sets VK_ICD_FILENAMES when it finds "
              "nvidia_icd.json or libGLX_nvidia.so.0)", flush=True)

    rows = []
    for name, size, prepare, batch, kind in cases(scale):
        times, results = {}, {}
        for dev in (webgpu, *peers):
            run, result = prepare(dev)
            run()
            results[dev.selector] = result()
            ctx = dev.context()
            times[dev.selector] = median_ms(run, ctx.synchronize, batch, args.repeats, args.warmup)
        for peer in peers:
            check(kind, name, results[webgpu.selector], results[peer.selector])
        row = {"row": name, "size": size, "webgpu_ms": round(times[webgpu.selector][0], 4),
               "webgpu_repeats_ms": [round(t, 4) for t in times[webgpu.selector][1]],
               "peer_ms": {pd.selector: round(times[pd.selector][0], 4) for pd in peers},
               "peer_repeats_ms": {pd.selector: [round(t, 4) for t in times[pd.selector][1]] for pd in peers},
               "ratio": {pd.selector: round(times[webgpu.selector][0] / times[pd.selector][0], 3) for pd in peers}}
        rows.append(row)
        print(json.dumps({k: row[k] for k in ("row", "size", "webgpu_ms", "peer_ms", "ratio")}), flush=True)

    report = {"webgpu": wg, "peers": [{"selector": d.selector, "name": d.name} for d in peers],
              "python": platform.python_version(), "machine": f"{platform.system()} {platform.machine()}",
              "scale": scale, "repeats": args.repeats, "warmup": args.warmup, **found, "rows": rows}
    table = markdown(report)
    print()
    print(table)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)
    if args.md:
        with open(args.md, "w") as f:
            f.write(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
