"""Translation time against kernel size (issue 34): kernels of 20, 80 and 320 locals in dependent chains.

    python benchmarks/translate_time.py [--sizes 20,80,320] [--repeats 3] [--label TEXT] [--write-results]
                                        [--baseline DIR --commit TEXT]

Two chain shapes per size, AST -> source in-process (no disk cache, OpenCL C), best of repeats:

- *backward*: every local starts as an int (``v0 = 0`` ... ``vN = 0``), then ``v0 = v1 + 1``,
  ``v1 = v2 + 1`` ... and last ``vN = x[i]`` (float32). Each local's type depends on the next one's,
  assigned later in the source, so a translator that re-runs the whole body until types settle
  learns one local per pass: N passes of N statements each.
- *forward*: ``v0 = x[i]``, ``v1 = v0 + 1`` ... (each local read after its assignment): types settle
  in one pass whatever the translator; the control row.

It prints the milliseconds and the builder passes per kernel (passes: ``FunctionBuilder.reset_pass``
calls) and, with ``--write-results``, appends one row per run to this script's table in
benchmarks/RESULTS.md (date, machine, commit, label). Linear growth: ms per local roughly
constant from 20 to 320. ``--baseline DIR`` times another tree's translator (``DIR`` holds its
``packages/*/src``, e.g. ``git archive <commit> packages | tar -x -C DIR``), named ``--commit``
in the row: run it back to back with this tree's, as the machine's load moves timings a lot.
"""
from __future__ import annotations

import importlib.util
import os
import platform
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
MARK_START, MARK_END = "<!-- translate_time:start -->", "<!-- translate_time:end -->"


def backward_chain(n: int) -> str:
    lines = ["@kernel", f"def backward_{n}(x, out):", "    for i in range(x.shape[0]):"]
    lines += [f"        v{k} = 0" for k in range(n)]
    lines += [f"        v{k} = v{k + 1} + 1" for k in range(n - 1)]
    lines += [f"        v{n - 1} = x[i]", "        out[i] = v0"]
    return "\n".join(lines) + "\n"


def forward_chain(n: int) -> str:
    lines = ["@kernel", f"def forward_{n}(x, out):", "    for i in range(x.shape[0]):", "        v0 = x[i]"]
    lines += [f"        v{k} = v{k - 1} + 1" for k in range(1, n)]
    lines += [f"        out[i] = v{n - 1}"]
    return "\n".join(lines) + "\n"


def load_kernels(sizes: list[int]):
    """The kernels, written to a module file (the translator reads a kernel's source from its file)."""
    folder = tempfile.mkdtemp(prefix="translate-time-")
    path = os.path.join(folder, "chains.py")
    with open(path, "w") as f:
        f.write("from pygpgpu_translate import kernel\n\n\n")
        for n in sizes:
            f.write(backward_chain(n) + "\n\n" + forward_chain(n) + "\n\n")
    spec = importlib.util.spec_from_file_location("chains", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def time_translation(k, repeats: int) -> tuple[float, int]:
    """Best milliseconds of ``repeats`` translations of kernel ``k`` and the builder passes one takes."""
    from pygpgpu_translate import _builder, _translate
    x = np.zeros(16, np.float32)
    passes = [0]
    reset = _builder.FunctionBuilder.reset_pass

    def counting_reset(self):
        passes[0] += 1
        return reset(self)

    best = 1e9
    _builder.FunctionBuilder.reset_pass = counting_reset     # type: ignore[method-assign]
    try:
        for _ in range(repeats):
            passes[0] = 0
            t = time.perf_counter()
            tok, bits = k._signature([x, x])
            _translate.translate(k.py_func, k._specs(tok), (tok, bits), "opencl", k.default_float, bits, use_disk=False)
            best = min(best, time.perf_counter() - t)
    finally:
        _builder.FunctionBuilder.reset_pass = reset       # type: ignore[method-assign]
    return best * 1e3, passes[0]


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return f"{cpu}, {os.cpu_count()} CPUs, Python {platform.python_version()}"


def write_row(row: str) -> None:
    path = os.path.join(HERE, "RESULTS.md")
    text = open(path).read()
    if MARK_START not in text:
        header = [MARK_START, "## Translation time against kernel size (translate_time.py, issue 34)", "",
                  "AST -> OpenCL C in-process, no disk cache, best of the repeats, ms (passes: builder passes over "
                  "the kernel body). *backward*: N locals whose types settle last to first (`v0 = v1 + 1` ... "
                  "`vN = x[i]`); *forward*: the same chain in source order. 2 shared cores: expect noise.", "",
                  "| date | machine | commit | label | backward 20 | backward 80 | backward 320 | "
                  "forward 20 | forward 80 | forward 320 |", "|---|---|---|---|---|---|---|---|---|---|", MARK_END]
        text = text.rstrip() + "\n\n" + "\n".join(header) + "\n"
    text = text.replace(MARK_END, row + "\n" + MARK_END)
    with open(path, "w") as f:
        f.write(text)


def main() -> None:
    argv = sys.argv[1:]
    sizes = [int(s) for s in argv[argv.index("--sizes") + 1].split(",")] if "--sizes" in argv else [20, 80, 320]
    repeats = int(argv[argv.index("--repeats") + 1]) if "--repeats" in argv else 3
    label = argv[argv.index("--label") + 1] if "--label" in argv else ""
    if "--baseline" in argv:
        base = os.path.join(argv[argv.index("--baseline") + 1], "packages")
        sys.path[:0] = sorted(os.path.join(base, p, "src") for p in os.listdir(base))
    module = load_kernels(sizes)
    import pygpgpu_translate
    print("translator:", os.path.dirname(pygpgpu_translate.__file__))
    cells = {}
    for shape in ("backward", "forward"):
        for n in sizes:
            ms, passes = time_translation(getattr(module, f"{shape}_{n}"), repeats)
            cells[(shape, n)] = f"{ms:.0f} ms ({passes} passes)" if ms >= 10 else f"{ms:.1f} ms ({passes} passes)"
            print(f"{shape:8} {n:4} locals: {ms:9.1f} ms  {passes:4} passes  {ms / n:.3f} ms/local", flush=True)
    commit = (argv[argv.index("--commit") + 1] if "--commit" in argv else
              subprocess.run(["git", "-C", ROOT, "log", "-1", "--format=%h"], capture_output=True, text=True).stdout.strip())
    row = (f"| {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} | {machine()} | {commit} | {label} | "
           + " | ".join(cells[(s, n)] for s in ("backward", "forward") for n in sizes) + " |")
    print(row)
    if "--write-results" in argv:
        if sizes != [20, 80, 320]:
            raise SystemExit("--write-results needs the table's sizes, 20,80,320")
        write_row(row)


if __name__ == "__main__":
    main()
