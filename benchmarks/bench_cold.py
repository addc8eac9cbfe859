"""Cold first call in a fresh process (issue 17, item 4): where the time goes, beside CuPy's
RawKernel (CUDA) and PyOpenCL (OpenCL) doing the same saxpy from a fresh process.

    python benchmarks/bench_cold.py [OUT.json] [--backend cuda|opencl|hip|...] [--repeats N]

Every measurement is a new Python process (``--child``), timed from before ``import numpy`` to
the result back in a numpy array; the parent also records the process's wall time (interpreter
start and exit included). Cache states, each in fresh processes:

* ``cold``: empty pygpgpu cache (PYGPGPU_CACHE_DIR), empty CuPy kernel cache (CUPY_CACHE_DIR),
  empty PoCL kernel cache (POCL_CACHE_DIR) and PyOpenCL cache (XDG_CACHE_HOME);
* ``warm``: the caches a cold run of the same library filled (a script run a second time);
* OpenCL only: ``driver cache only``: empty pygpgpu cache over the driver's cache a cold run
  filled (PoCL's kernel cache, POCL_CACHE_DIR; NVIDIA's JIT cache, CUDA_CACHE_PATH: what the
  driver's own cache saves), and ``no driver cache``: POCL_KERNEL_CACHE=0, CUDA_CACHE_DISABLE=1.

Our first call is broken down by timing wrappers installed on a few functions as their modules
are imported (an import hook, so nothing is imported earlier than a real first call would):
import, device discovery (driver load and enumeration), context, translation (the translator's
import included), program build (compiler and module load), launch plan, the launch with its
copies. Each row prints ours / peer in the same run; the best of ``--repeats`` processes
(default 3) is kept. Python's bytecode is compiled once by an untimed warm-up process (into a
temporary PYTHONPYCACHEPREFIX, also where PYTHONDONTWRITEBYTECODE is set), as for an installed
package. Runs well under 2 minutes.
"""
from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
N = 1024

CUDA_SAXPY = r"""
extern "C" __global__ void saxpy(const float* x, const float* y, float* out, float a, long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a * x[i] + y[i];
}
"""
OPENCL_SAXPY = r"""
__kernel void saxpy(__global const float* x, __global const float* y, __global float* out, float a, long n) {
    long i = get_global_id(0);
    if (i < n) out[i] = a * x[i] + y[i];
}
"""


# ---------------------------------------------------------------------------------------------
# Child side: one measurement per process, one JSON line on stdout.
TIMES: dict = {}


def _timed(fn, label):
    from time import perf_counter

    def wrapper(*args, **kwargs):
        t = perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            TIMES[label] = TIMES.get(label, 0.0) + perf_counter() - t
    wrapper.__wrapped__ = fn
    return wrapper


# (module, attribute path, label): wrapped when the module is imported (or at once if it is)
WRAPS = [
    ("pygpgpu_translate._kernel", "KernelFunction._translation", "translation (translator import included)"),
    ("pygpgpu_translate._kernel", "KernelFunction._build_plan", "plan build (program + launch plan)"),
    ("pygpgpu_core.backend.driver.context", "DriverContext.program", "program (compile + load)"),
    ("pygpgpu_opencl._context", "Context.program", "program (compile + load)"),
    ("pygpgpu_cuda._program", "compile_with_log", "compiler: NVRTC (library load included)"),
    ("pygpgpu_hip._program", "compile_program", "compiler: hiprtc"),
    ("pygpgpu_opencl._program", "Program._build", "compiler: clBuildProgram"),
    ("pygpgpu_core.backend.driver.module", "DriverProgram._load", "module load"),
    ("pygpgpu_translate._launch", "CallPlan.__init__", "call plan (gnp import, launcher, memo)"),
    ("pygpgpu_translate._launch", "CallPlan._run", "launch (copies, launch, read back)"),
]


def _wrap(module) -> None:
    for name, path, label in WRAPS:
        if name != module.__name__:
            continue
        owner = module
        *parents, attr = path.split(".")
        for p in parents:
            owner = getattr(owner, p, None)
        if owner is not None and hasattr(owner, attr):
            setattr(owner, attr, _timed(getattr(owner, attr), label))


def _install_hook() -> None:
    import importlib.abc

    wanted = {name for name, _p, _l in WRAPS}

    class Hook(importlib.abc.MetaPathFinder):
        def find_spec(self, fullname, path, target=None):
            if fullname not in wanted:
                return None
            for finder in sys.meta_path:
                if finder is self or not hasattr(finder, "find_spec"):
                    continue
                spec = finder.find_spec(fullname, path, target)
                if spec is not None:
                    break
            else:
                return None
            loader = spec.loader
            run = loader.exec_module

            def exec_module(module):
                run(module)
                _wrap(module)
            loader.exec_module = exec_module
            return spec

    sys.meta_path.insert(0, Hook())
    for name in wanted & set(sys.modules):
        _wrap(sys.modules[name])


def child_pygpgpu(backend: str) -> dict:
    from time import perf_counter
    t0 = perf_counter()
    import numpy as np
    steps = {"import numpy": perf_counter() - t0}
    _install_hook()
    t = perf_counter()
    import pygpgpu                                    # noqa: F401
    from pygpgpu import kernel
    steps["import pygpgpu"] = perf_counter() - t

    t = perf_counter()

    @kernel
    def saxpy(x, y, out, a):
        for i in range(out.shape[0]):
            out[i] = a * x[i] + y[i]
    steps["@kernel decoration"] = perf_counter() - t
    x = np.arange(N, dtype=np.float32)
    y = np.ones(N, np.float32)
    out = np.zeros(N, np.float32)
    t = perf_counter()
    from pygpgpu_core import registry
    dev = registry.get_device(backend)
    steps["device discovery (driver load, enumeration)"] = perf_counter() - t
    t = perf_counter()
    dev.context()
    steps["context"] = perf_counter() - t
    t = perf_counter()
    saxpy[backend](x, y, out, np.float32(2.0))
    first = perf_counter() - t
    steps["first call"] = first
    total = perf_counter() - t0
    ok = bool(np.array_equal(out, 2 * x + y))
    return {"total": total, "steps": steps, "inside first call": dict(TIMES), "ok": ok,
            "device": f"{dev.selector} {dev.name}"}


def child_cupy() -> dict:
    from time import perf_counter
    t0 = perf_counter()
    import numpy as np
    steps = {"import numpy": perf_counter() - t0}
    t = perf_counter()
    import cupy
    steps["import cupy"] = perf_counter() - t
    t = perf_counter()
    cupy.cuda.runtime.getDeviceCount()
    cupy.cuda.Device(0).use()
    steps["device discovery (cuInit)"] = perf_counter() - t
    t = perf_counter()
    cupy.empty(1, cupy.float32)
    cupy.cuda.Device(0).synchronize()
    steps["context + memory pool"] = perf_counter() - t
    t = perf_counter()
    k = cupy.RawKernel(CUDA_SAXPY, "saxpy")
    if hasattr(k, "compile"):
        k.compile()
    steps["RawKernel compile + load"] = perf_counter() - t
    x = np.arange(N, dtype=np.float32)
    y = np.ones(N, np.float32)
    t = perf_counter()
    dx, dy = cupy.asarray(x), cupy.asarray(y)
    do = cupy.empty_like(dx)
    k(((N + 255) // 256,), (256,), (dx, dy, do, np.float32(2.0), np.int64(N)))
    out = cupy.asnumpy(do)
    steps["first launch (copies, launch, read back)"] = perf_counter() - t
    return {"total": perf_counter() - t0, "steps": steps, "ok": bool(np.array_equal(out, 2 * x + y)),
            "device": cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()}


def child_pyopencl(selector: str) -> dict:
    """PyOpenCL on the device ``selector`` names (found by its name among PyOpenCL's devices)."""
    from time import perf_counter
    t0 = perf_counter()
    import numpy as np
    steps = {"import numpy": perf_counter() - t0}
    t = perf_counter()
    import pyopencl as cl
    steps["import pyopencl"] = perf_counter() - t
    want = os.environ.get("BENCH_COLD_DEVICE_NAME", "")
    t = perf_counter()
    devices = [d for p in cl.get_platforms() for d in p.get_devices()]
    dev = next((d for d in devices if d.name == want), devices[0])
    steps["device discovery (ICD load, enumeration)"] = perf_counter() - t
    t = perf_counter()
    ctx = cl.Context([dev])
    queue = cl.CommandQueue(ctx)
    steps["context + queue"] = perf_counter() - t
    t = perf_counter()
    prg = cl.Program(ctx, OPENCL_SAXPY).build()
    knl = prg.saxpy
    steps["program build"] = perf_counter() - t
    x = np.arange(N, dtype=np.float32)
    y = np.ones(N, np.float32)
    out = np.empty_like(x)
    t = perf_counter()
    mf = cl.mem_flags
    dx = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=x)
    dy = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=y)
    do = cl.Buffer(ctx, mf.WRITE_ONLY, x.nbytes)
    knl(queue, (N,), None, dx, dy, do, np.float32(2.0), np.int64(N))
    cl.enqueue_copy(queue, out, do)
    queue.finish()
    steps["first launch (copies, launch, read back)"] = perf_counter() - t
    return {"total": perf_counter() - t0, "steps": steps, "ok": bool(np.array_equal(out, 2 * x + y)),
            "device": dev.name}


def child_main(argv) -> None:
    what = argv[0]
    if what == "pygpgpu":
        result = child_pygpgpu(argv[1])
    elif what == "cupy":
        result = child_cupy()
    elif what == "pyopencl":
        result = child_pyopencl(argv[1])
    else:
        raise SystemExit(f"unknown child {what!r}")
    print("RESULT " + json.dumps(result), flush=True)


# ---------------------------------------------------------------------------------------------
# Parent side
def run_child(what: str, backend: str, env: dict, timeout: float = 60.0) -> dict:
    cmd = [sys.executable, os.path.abspath(__file__), "--child", what, backend]
    t = time.perf_counter()
    try:
        r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return {"error": f"no result after {timeout:.0f} s"}
    wall = time.perf_counter() - t
    line = next((ln for ln in r.stdout.splitlines() if ln.startswith("RESULT ")), None)
    if r.returncode or line is None:
        tail = (r.stderr or r.stdout).strip().splitlines()[-1:] or [f"exit {r.returncode}"]
        return {"error": tail[0][:300]}
    result = json.loads(line[len("RESULT "):])
    result["process wall"] = wall
    return result


# every cache a first call may hit: ours, CuPy's, PoCL's, PyOpenCL's (under XDG_CACHE_HOME) and the
# NVIDIA driver's JIT cache (NVIDIA's OpenCL compiles through PTX)
CACHE_DIRS = ("PYGPGPU_CACHE_DIR", "CUPY_CACHE_DIR", "POCL_CACHE_DIR", "XDG_CACHE_HOME", "CUDA_CACHE_PATH")
DRIVER_CACHE_OFF = {"POCL_KERNEL_CACHE": "0", "CUDA_CACHE_DISABLE": "1"}
PYCACHE: "str | None" = None       # compiled bytecode for the children, as an installed package has


def _env(**dirs) -> dict:
    env = dict(os.environ)
    if PYCACHE:                       # kept out of the source tree; a warm-up child writes it
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = PYCACHE
    for key in CACHE_DIRS:
        env[key] = dirs[key]
    for key in DRIVER_CACHE_OFF:
        env.pop(key, None)
    env.update({k: v for k, v in dirs.items() if k in DRIVER_CACHE_OFF})
    return env


def available(backend: str) -> "tuple[bool, str]":
    code = ("from pygpgpu_core import registry; d = registry.get_device(%r); print(d.backend.name, '|', d.name, "
            "'|', getattr(d.backend, 'dialect', d.backend.name))" % backend)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    if r.returncode:
        return False, (r.stderr.strip().splitlines() or ["?"])[-1]
    return True, r.stdout.strip()


def peer_of(backend_line: str) -> "str | None":
    name = backend_line.split("|")[0].strip()
    if name == "cuda":
        return "cupy"
    if name == "opencl":
        return "pyopencl"
    return None


def peer_importable(peer: str) -> bool:
    r = subprocess.run([sys.executable, "-c", f"import {peer}"], capture_output=True, timeout=60, check=False)
    return r.returncode == 0


def best(results: list) -> dict:
    good = [r for r in results if "error" not in r]
    if not good:
        return results[-1] if results else {"error": "not run"}
    return min(good, key=lambda r: r["total"])


def main(argv) -> int:
    args = [a for a in argv if not a.startswith("--")]
    opts = {a.split("=")[0]: a.split("=", 1)[1] if "=" in a else True for a in argv if a.startswith("--")}
    for i, a in enumerate(argv):                        # --backend cuda / --repeats 3
        if a in ("--backend", "--repeats") and i + 1 < len(argv):
            opts[a] = argv[i + 1]
            if argv[i + 1] in args:
                args.remove(argv[i + 1])
    json_path = args[0] if args else None
    repeats = int(opts.get("--repeats", 3))
    backends = [opts["--backend"]] if isinstance(opts.get("--backend"), str) else ["cuda", "hip", "opencl"]
    started = time.perf_counter()
    print(f"bench_cold.py: python {platform.python_version()}, {repeats} fresh processes per row (best kept)",
          flush=True)
    report: dict = {"meta": {"date": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()), "python":
                             platform.python_version(), "machine": platform.node(), "n": N}, "rows": []}
    root = tempfile.mkdtemp(prefix="bench-cold-")
    global PYCACHE
    PYCACHE = os.path.join(root, "pycache")
    try:
        for backend in backends:
            ok, line = available(backend)
            if not ok:
                print(f"[{backend}] unavailable: {line}", flush=True)
                continue
            device_name = line.split("|")[1].strip()
            peer = peer_of(line)
            if peer and not peer_importable(peer):
                print(f"[{backend}] peer {peer} not installed: ours only", flush=True)
                peer = None
            print(f"\n[{backend}] {line}; peer: {peer or '-'}", flush=True)
            is_opencl = line.split("|")[0].strip() == "opencl"
            for who in ("pygpgpu", peer):      # not timed: compiles every module's bytecode once
                if who is not None:
                    warm_dirs = {k: os.path.join(root, "warm-up", k.lower()) for k in CACHE_DIRS}
                    run_child(who, backend, {**_env(**warm_dirs), "BENCH_COLD_DEVICE_NAME": device_name})
            states = ["cold", "warm"] + (["driver cache only", "no driver cache"] if is_opencl else [])
            for state in states:
                ours, theirs = [], []
                for rep in range(repeats):
                    for who, out in (("pygpgpu", ours), (peer, theirs)):
                        if who is None:
                            continue
                        base = os.path.join(root, f"{backend}-{who}-{rep}")
                        dirs = {k: os.path.join(base, k.lower()) for k in CACHE_DIRS}
                        if state == "cold" or state == "no driver cache":
                            shutil.rmtree(base, ignore_errors=True)
                        if state == "driver cache only":
                            shutil.rmtree(dirs["PYGPGPU_CACHE_DIR"], ignore_errors=True)
                            shutil.rmtree(dirs["XDG_CACHE_HOME"], ignore_errors=True)
                        if state == "no driver cache":
                            dirs.update(DRIVER_CACHE_OFF)
                        for d in dirs.values():
                            if os.path.isabs(d):
                                os.makedirs(d, exist_ok=True)
                        env = _env(**dirs)
                        env["BENCH_COLD_DEVICE_NAME"] = device_name
                        out.append(run_child(who, backend, env))
                mine, peer_best = best(ours), (best(theirs) if peer else None)
                row = {"backend": backend, "state": state, "pygpgpu": mine, "peer": peer, "peer result": peer_best}
                report["rows"].append(row)
                print_row(backend, state, mine, peer, peer_best)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(f"\ntotal {time.perf_counter() - started:.1f} s", flush=True)
    if json_path:
        with open(json_path, "w") as f:
            json.dump(report, f, indent=1)
        print(f"wrote {json_path}")
    return 0


def _ms(s) -> str:
    return f"{s * 1e3:8.1f} ms"


def print_row(backend, state, mine, peer, theirs) -> None:
    if "error" in mine:
        print(f"  {state:<18} pygpgpu FAILED: {mine['error']}", flush=True)
        return
    ratio = ""
    if theirs and "error" not in theirs:
        ratio = f"   {peer} {_ms(theirs['total'])}   ours/{peer} {mine['total'] / theirs['total']:.2f}x"
    elif theirs:
        ratio = f"   {peer} FAILED: {theirs['error']}"
    print(f"  {state:<18} pygpgpu {_ms(mine['total'])}{ratio}   (process wall {_ms(mine['process wall'])}"
          f"{'' if mine.get('ok') else '  WRONG RESULT'})", flush=True)
    for name, s in mine["steps"].items():
        print(f"      {name:<52}{_ms(s)}", flush=True)
        if name == "first call":
            inner = mine.get("inside first call", {})
            for label, v in sorted(inner.items(), key=lambda kv: -kv[1]):
                print(f"        {label:<50}{_ms(v)}", flush=True)
    if theirs and "error" not in theirs:
        for name, s in theirs["steps"].items():
            print(f"      {peer}: {name:<{50 - len(peer)}}{_ms(s)}", flush=True)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child_main(sys.argv[2:])
    else:
        sys.exit(main(sys.argv[1:]))
