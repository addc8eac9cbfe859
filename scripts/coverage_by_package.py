#!/usr/bin/env python3
"""Line coverage per package from a coverage data file (``make coverage`` writes it).

    python scripts/coverage_by_package.py [DATA_FILE]      (default: $COVERAGE_FILE or .coverage)

Files are grouped by the package folder they live in (packages/<name>/src/...); files of a
measured package that no test imported count as wholly missed.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

import coverage

REPO = Path(__file__).resolve().parent.parent


def main(argv: "list[str]") -> int:
    data_file = argv[1] if len(argv) > 1 else os.environ.get("COVERAGE_FILE", ".coverage")
    if not Path(data_file).exists():
        print(f"no coverage data at {data_file}: run make coverage")
        return 2
    cov = coverage.Coverage(data_file=data_file)
    cov.load()
    totals: dict = {}
    for name in cov.get_data().measured_files():
        path = Path(name).resolve()
        try:
            rel = path.relative_to(REPO / "packages")
        except ValueError:
            continue
        _, statements, _, missing, _ = cov.analysis2(name)
        t = totals.setdefault(rel.parts[0], [0, 0, 0])
        t[0] += len(statements)
        t[1] += len(missing)
        t[2] += 1
    print(f"{'package':20s} {'files':>6s} {'statements':>11s} {'missed':>8s} {'covered':>8s}")
    for pkg in sorted(p.name for p in (REPO / "packages").iterdir() if p.is_dir()):
        stmts, missed, files = totals.get(pkg, (0, 0, 0))
        pct = f"{100.0 * (stmts - missed) / stmts:7.1f}%" if stmts else "     -  "
        print(f"{pkg:20s} {files:6d} {stmts:11d} {missed:8d} {pct}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
