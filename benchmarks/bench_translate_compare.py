"""Translation time (AST -> source, in-process, no disk cache) of this tree against another
checkout of the translator, for refactors of the translator (issue 14: inference without
provisional side effects, the dialect object, the builtin registry).

    python benchmarks/bench_translate_compare.py --baseline DIR [--write-results]

``DIR`` holds the ``packages/*/src`` folders of the baseline, e.g. ``git archive <commit>
packages | tar -x -C DIR``. Each side runs in its own process, alternating; best of repeats per
kernel and dialect. Also the warm-call host time of an ``@kernel`` on PoCL (numpy arrays in and
out, and resident device arrays), which a translator refactor must not slow down.
``--write-results`` replaces this script's section of benchmarks/RESULTS.md.
"""
from __future__ import annotations

import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import textwrap
import time

from bench_translate import KERNEL_IMPORTS, SHARED_KERNELS   # the kernels both benchmarks time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
MARK_START, MARK_END = "<!-- bench_translate_compare:start -->", "<!-- bench_translate_compare:end -->"

KERNELS = KERNEL_IMPORTS + SHARED_KERNELS + textwrap.dedent('''
    def h1(v):
        return v // 2 + 1

    def h2(v):
        return h1(v) % 7

    def h3(v):
        return h2(v) * 3

    def h4(v):
        return h3(v) - h1(v)

    @kernel
    def widening_helpers(x, out):
        for i in range(x.shape[0]):
            acc = 0
            acc = h4(acc + i)
            acc = acc + x[i] * 0.5
            out[i] = acc

    @kernel
    def math_mix(x, out):
        for i in range(x.shape[0]):
            v = x[i]
            out[i] = math.sqrt(abs(v)) + math.exp(-v) * np.sin(v) + max(v, 0.0) + gpu.native_exp(v) + round(v)
''')

CHILD = textwrap.dedent('''
    import json, sys, time
    sys.path.insert(0, {folder!r})
    import numpy as np
    import kernels as ks
    from pygpgpu_translate import _translate
    x = np.zeros(64, np.float32)
    cases = {{"saxpy": (ks.saxpy, (x, x, x, 2.0)), "apply_all (3 helpers)": (ks.apply_all, (x, x)),
             "histogram": (ks.histogram, (np.zeros(4, np.int32),) * 2),
             "normalize_all": (ks.normalize_all, (np.zeros((4, 4), np.float32),) * 2),
             "widening_helpers (4 helpers)": (ks.widening_helpers, (x, x)), "math_mix": (ks.math_mix, (x, x))}}
    rows = {{}}
    for name, (k, a) in cases.items():
        for dialect in ("opencl", "cuda"):
            best = 1e9
            for _ in range({reps}):
                t = time.perf_counter()
                tok, bits = k._signature(list(a))
                _translate.translate(k.py_func, k._specs(tok), (tok, bits), dialect, k.default_float, bits, use_disk=False)
                best = min(best, time.perf_counter() - t)
            rows[name + " / " + dialect] = best * 1e3
    launch = {{}}
    try:
        from pygpgpu_core import gnp, registry
        dev = registry.get_device("opencl")
    except Exception:
        dev = None
    if dev is not None:
        x = np.random.rand(1024).astype(np.float32)
        out = np.zeros_like(x)
        k = ks.saxpy["opencl"]
        k(x, x, out, 2.0)
        gx, gout = gnp.asarray(x, device=dev), gnp.zeros(1024, np.float32, device=dev)
        k(gx, gx, gout, 2.0)
        dev.context().synchronize()
        for label, args in (("warm call, numpy in/out (n=1024)", (x, x, out, 2.0)),
                            ("warm call, resident arrays (n=1024)", (gx, gx, gout, 2.0))):
            best = 1e9
            for _ in range(30):
                t = time.perf_counter()
                for _ in range(100):
                    k(*args)
                dev.context().synchronize()
                best = min(best, (time.perf_counter() - t) / 100)
            launch[label] = best * 1e6
    print(json.dumps({{"translate": rows, "launch": launch}}))
''')


def run(folder: str, src_paths: list[str], reps: int) -> dict:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(src_paths), PYGPGPU_CACHE_DIR=tempfile.mkdtemp())
    out = subprocess.run([sys.executable, "-c", CHILD.format(folder=folder, reps=reps)], env=env,
                         capture_output=True, text=True, timeout=600)
    if out.returncode:
        raise RuntimeError(out.stderr)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    if "--baseline" not in sys.argv:
        raise SystemExit(__doc__)
    base = os.path.abspath(sys.argv[sys.argv.index("--baseline") + 1])
    folder = tempfile.mkdtemp(prefix="bench-translate-compare-")
    with open(os.path.join(folder, "kernels.py"), "w") as f:
        f.write(KERNELS)
    def paths(root):
        return sorted(os.path.join(root, "packages", p, "src") for p in os.listdir(os.path.join(root, "packages")))
    label = subprocess.run(["git", "-C", ROOT, "log", "-1", "--format=%h"], capture_output=True, text=True).stdout.strip()
    # alternate the two sides so that load on the shared machine hits both alike
    before: dict = {}
    after: dict = {}
    launch_before: dict = {}
    launch_after: dict = {}
    for _ in range(3):
        for side, launch, root in ((before, launch_before, base), (after, launch_after, ROOT)):
            got = run(folder, paths(root), 15)
            for k, v in got["translate"].items():
                side[k] = min(v, side.get(k, 1e9))
            for k, v in got["launch"].items():
                launch[k] = min(v, launch.get(k, 1e9))
    lines = [MARK_START, "## Translation time before/after a translator refactor (bench_translate_compare.py)", "",
             f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, Python {platform.python_version()}; "
             f"AST -> source in-process, no disk cache, best of 45 per row, ms (2 shared cores: expect noise). "
             f"*before*: {os.path.basename(base.rstrip('/'))}; *after*: the working tree at {label}.", "",
             "| kernel / dialect | before | after | after/before |", "|---|---|---|---|"]
    for k in after:
        b, a = before.get(k), after[k]
        lines.append(f"| {k} | {b:.2f} | {a:.2f} | {a / b:.2f} |" if b else f"| {k} | - | {a:.2f} | - |")
    if launch_after:
        lines += ["", "Warm call of saxpy on PoCL (host time per call, µs, best of 30 rounds of 100 calls):", "",
                  "| call | before | after | after/before |", "|---|---|---|---|"]
        for k, a in launch_after.items():
            b = launch_before.get(k)
            lines.append(f"| {k} | {b:.1f} | {a:.1f} | {a / b:.2f} |" if b else f"| {k} | - | {a:.1f} | - |")
    lines.append(MARK_END)
    text = "\n".join(lines)
    print(text)
    if "--write-results" in sys.argv:
        path = os.path.join(HERE, "RESULTS.md")
        old = open(path).read()
        if MARK_START in old:
            new = re.sub(re.escape(MARK_START) + ".*?" + re.escape(MARK_END), lambda m: text, old, flags=re.S)
        else:
            new = old.rstrip() + "\n\n" + text + "\n"
        with open(path, "w") as f:
            f.write(new)


if __name__ == "__main__":
    main()
