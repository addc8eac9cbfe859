"""Host side of a warm CUDA/HIP launch without a GPU: the generated launcher (unpack the
arguments, geometry cache, one ``struct.pack_into``, the two driver calls) with the driver
calls replaced by a C function that returns 0 at once (libm's ``feclearexcept``).

    python benchmarks/bench_driver_launch.py [--write-results]

What it measures is the Python the launch path adds on top of the driver: the part a
refactoring of the launcher can make better or worse. ``--write-results`` replaces this
script's section of benchmarks/RESULTS.md.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
import platform
import re
import sys
import time
from types import SimpleNamespace

import numpy as np

from pygpgpu_core.vec_types import float4

HERE = os.path.dirname(os.path.abspath(__file__))
MARK_START, MARK_END = "<!-- bench_driver_launch:host:start -->", "<!-- bench_driver_launch:host:end -->"
REPS, ROUNDS = 2000, 60


class _Buffer:
    __slots__ = ("ptr",)

    def __init__(self, ptr: int):
        self.ptr = ptr


def _stub() -> object:
    """A C function that ignores its arguments and returns 0 (a driver call that succeeds at once)."""
    fn = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6").feclearexcept
    fn.restype = ctypes.c_int
    return fn


CASES = {
    "saxpy: 3 buffers, float32, int64": (["buffer", "buffer", "buffer", np.float32, np.int64],
                                        lambda b: [b, b, b, np.float32(2.0), np.int64(1 << 20)]),
    "one buffer": (["buffer"], lambda b: [b]),
    "8 arguments incl. float4 by value": (
        ["buffer", "buffer", np.int32, np.int32, np.float32, np.float64, float4, np.uint8],
        lambda b: [b, b, np.int32(1), np.int32(2), np.float32(3), np.float64(4), float4(1, 2, 3, 4), np.uint8(5)]),
}


def _launchers() -> dict:
    """backend -> {case: (launcher, args)} built by the driver kit's launcher generator, for a
    kernel as the CUDA and the HIP backend make it (the same code since the kit). CUDA drivers
    from 12.0 launch through cuLaunchKernelEx (4 arguments); older ones, and HIP, through
    cuLaunchKernel / hipModuleLaunchKernel (11 arguments)."""
    from pygpgpu_core.backend.launcher import build_launcher

    stub = _stub()
    out = {}
    for backend, float16, ex in (("cuda", True, True), ("cuda < 12.0", True, False), ("hip", False, False)):
        calls = SimpleNamespace(set_current_unchecked=stub, launch_unchecked=stub, backend=backend.split()[0])
        if ex:
            calls.launch_ex_unchecked = stub
        token = ctypes.c_void_p(1) if backend.startswith("cuda") else ctypes.c_int(0)
        ctx = SimpleNamespace(queue=SimpleNamespace(handle=ctypes.c_void_p(1)), current_token=token, calls=calls)
        built = {}
        for case, (kinds, make_args) in CASES.items():
            kernel = SimpleNamespace(
                name="k", context=ctx, handle=ctypes.c_void_p(1), _geometry_cache={}, float16_arguments=float16,
                ensure_shared=lambda n: None, shared_default_limit=48 << 10, launch_failed=lambda rc: None,
                geometry=lambda g, l: (-(-g // l), 1, 1, l, 1, 1),
            )
            kernel.param_sizes = tuple(k.size for k in _kinds(kinds) if k.tag != "local")
            kernel._geometry_cache[1 << 20, 256] = kernel.geometry(1 << 20, 256)
            built[case] = (build_launcher(kernel, kinds), make_args(_Buffer(0x7F0000000000)))
        out[backend] = built
    return out


def _kinds(kinds: list) -> list:
    from pygpgpu_core.backend.args import normalize_kind

    return [normalize_kind(k) for k in kinds]


def measure() -> dict:
    """µs per warm launch, best of ROUNDS rounds of REPS calls, per backend and case."""
    built = _launchers()
    result: dict = {}
    for backend, cases in built.items():
        for case, (launcher, args) in cases.items():
            # and launch.again: the memo's repeat of one args object, packed once
            for label, launch in ((case, launcher), (f"{case}, again()", launcher.again)):
                _time(result, backend, label, launch, args)
    return result


def _time(result: dict, backend: str, case: str, launch, args) -> None:
    """Time ``launch`` into ``result[backend, case]`` (µs, best of ROUNDS rounds of REPS calls)."""
    g = 1 << 20
    try:
        launch(g, 256, args)
    except Exception as exc:  # a case a backend cannot pack (reported, not timed)
        print(f"{backend} {case}: {type(exc).__name__}: {exc}", file=sys.stderr)
        result[backend, case] = None
        return
    best = float("inf")
    for _ in range(ROUNDS):
        t0 = time.perf_counter()
        for _ in range(REPS):
            launch(g, 256, args)
        best = min(best, (time.perf_counter() - t0) / REPS)
    result[backend, case] = best * 1e6


def main() -> None:
    result = measure()
    for (backend, case), us in result.items():
        print(f"{backend:11s} {case:40s} " + ("fails" if us is None else f"{us:6.3f} us"))
    if "--write-results" in sys.argv:
        _write(result)


def _write(result: dict) -> None:
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    lines = [
        MARK_START,
        "## Host side of a warm CUDA/HIP launch, no GPU (bench_driver_launch.py)",
        "",
        f"Measured {when} on {platform.processor() or platform.machine()}, Python {platform.python_version()}, "
        f"numpy {np.__version__}; µs per launch, best of {ROUNDS} rounds of {REPS} calls. The generated launcher "
        "with both driver calls replaced by a C function that returns 0 (libm's feclearexcept): the Python a "
        "launch adds on top of the driver.",
        "",
        "| backend | arguments | µs per launch |",
        "|---|---|---:|",
    ]
    lines += [f"| {backend} | {case} | " + ("fails" if us is None else f"{us:.3f}") + " |"
              for (backend, case), us in result.items()]
    lines.append(MARK_END)
    path = os.path.join(HERE, "RESULTS.md")
    text = open(path).read()
    section = "\n".join(lines)
    if MARK_START in text:
        text = re.sub(re.escape(MARK_START) + ".*?" + re.escape(MARK_END), lambda m: section, text, flags=re.S)
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    open(path, "w").write(text)


if __name__ == "__main__":
    main()
