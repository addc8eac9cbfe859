"""Draws docs/images/performance.svg from the numbers in benchmarks/RESULTS.md.

The chart is the table under ``### Kernels (bench_cuda.py at 713ced3)`` (the H200 run of
2026-12-01, evening): for each workload, the time of CuPy's RawKernel, Numba-CUDA and
``@kernel`` relative to the same kernel handwritten in CUDA C++ and launched through PyGPGPU's
low-level API (1.0; lower is faster). Rows measured in GB/s are turned into times (the inverse).
Plain SVG written by hand: no plotting library is needed. ``tests/test_docs.py`` fails when the
committed picture differs from what this script draws.

    .venv/bin/python benchmarks/plot_results.py      # rewrite docs/images/performance.svg
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "RESULTS.md"
SVG = ROOT / "docs" / "images" / "performance.svg"
TABLE = "### Kernels (bench_cuda.py at 713ced3)"
SERIES = [("CuPy RawKernel (same source)", "CuPy RawKernel", "#9e9e9e"),
          ("Numba-CUDA", "Numba-CUDA", "#f0a030"),
          ("@kernel", "@kernel", "#2b6cb0")]
BASE = "handwritten (ours)"


def _value(cell: str) -> tuple[float, str] | None:
    m = re.match(r"\s*([\d.]+)\s*(GB/s|ms)", cell)
    return (float(m.group(1)), m.group(2)) if m else None


def read_table(text: str) -> list[tuple[str, dict[str, float]]]:
    """[(workload, {series column: time relative to the handwritten kernel})] from RESULTS.md."""
    after = text[text.index(TABLE):].splitlines()[1:]
    first = next(k for k, ln in enumerate(after) if ln.startswith("|"))
    lines = []
    for ln in after[first:]:
        if not ln.startswith("|"):
            break                                  # the table ends at its first other line
        lines.append(ln)
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    rows = []
    for line in lines[2:]:
        cells = dict(zip(header, (c.strip() for c in line.strip("|").split("|"))))
        base = _value(cells[BASE])
        if base is None:
            continue
        ratios = {}
        for column, _, _ in SERIES:
            v = _value(cells.get(column, ""))
            if v is not None:
                ratios[column] = base[0] / v[0] if v[1] == "GB/s" else v[0] / base[0]
        rows.append((cells["workload"].replace("`", ""), ratios))
    return rows


def render() -> str:
    rows = read_table(RESULTS.read_text(encoding="utf-8"))
    top = 4.5                                     # the axis: 0 to 4.5x the handwritten time
    left, width, bar_h, gap = 230, 420, 11, 12
    group_h = bar_h * len(SERIES) + gap
    plot_top = 70
    height = plot_top + group_h * len(rows) + 50

    def x(v: float) -> float:
        return left + width * min(v, top) / top

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + width + 70}" height="{height}" '
           f'viewBox="0 0 {left + width + 70} {height}" font-family="sans-serif" font-size="12">',
           '<title>Kernel time relative to handwritten CUDA on an NVIDIA H200 (lower is faster)</title>',
           f'<rect width="{left + width + 70}" height="{height}" fill="white"/>',
           '<text x="10" y="20" font-size="14" font-weight="bold">Time relative to handwritten CUDA C++ '
           '(H200, lower is faster)</text>',
           '<text x="10" y="38" fill="#555">from benchmarks/RESULTS.md, bench_cuda.py at 713ced3, 2026-12-01</text>']
    for k, (_, label, color) in enumerate(SERIES):
        out.append(f'<rect x="{left + 150 * k}" y="48" width="10" height="10" fill="{color}"/>'
                   f'<text x="{left + 150 * k + 14}" y="57">{label}</text>')
    for tick in (0, 1, 2, 3, 4):
        out.append(f'<line x1="{x(tick):.1f}" y1="{plot_top - 4}" x2="{x(tick):.1f}" '
                   f'y2="{height - 40}" stroke="{"#333" if tick == 1 else "#ddd"}"/>'
                   f'<text x="{x(tick):.1f}" y="{height - 25}" text-anchor="middle">{tick}×</text>')
    for g, (workload, ratios) in enumerate(rows):
        y0 = plot_top + g * group_h
        out.append(f'<text x="{left - 8}" y="{y0 + bar_h * len(SERIES) / 2 + 4:.1f}" '
                   f'text-anchor="end">{workload}</text>')
        for k, (column, _, color) in enumerate(SERIES):
            if column not in ratios:
                continue
            v = ratios[column]
            y = y0 + k * bar_h
            out.append(f'<rect x="{left}" y="{y}" width="{x(v) - left:.1f}" height="{bar_h - 2}" fill="{color}"/>'
                       f'<text x="{x(v) + 4:.1f}" y="{y + bar_h - 3}" font-size="10">{v:.2f}×</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    SVG.write_text(render(), encoding="utf-8")
    sys.exit(0)
