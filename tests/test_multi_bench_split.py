"""benchmarks/bench_split.py's kernels split over two PoCL devices (issue 36, item 2), small: n-body
(all positions to every part), the 5-point stencil (a 4-row halo per part) and saxpy give numpy's
answer and the one-device answer; the measuring function reports a time and an efficiency per
device count and the copy rows say which way the copy took. In a fresh interpreter with
``POCL_DEVICES="pthread pthread"`` (PoCL reads it when it starts)."""
from __future__ import annotations

from pathlib import Path

from test_multi_device import _pocl_or_skip, _run

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"

_CASE = r"""
import json, sys
import numpy as np
sys.path.insert(0, BENCH)
import bench_split as bs
from pygpgpu_core import registry

D0, D1 = [d.selector for d in registry.backend_devices("opencl")
          if "portable computing language" in d.platform.name.lower()][:2]
rng = np.random.default_rng(3)
f32 = np.float32
report = {}

n = 300
pos = [rng.standard_normal(n).astype(f32) for _ in range(3)]
mass = (rng.random(n) + 0.5).astype(f32)
acc = [np.full(n, np.nan, f32) for _ in range(3)]
bs.nbody.split([D0, D1])(*pos, *acc, *[p.copy() for p in pos], mass, f32(0.01))
d = [p[None, :] - p[:, None] for p in pos]
inv = 1.0 / np.sqrt(d[0] ** 2 + d[1] ** 2 + d[2] ** 2 + 0.01)
want = [(mass[None, :] * inv ** 3 * dk).sum(axis=1) for dk in d]
report["nbody_err"] = max(float(np.max(np.abs(a - w) / (1 + np.abs(w)))) for a, w in zip(acc, want))

u = rng.standard_normal(10_004).astype(f32)
out = np.full(10_000, np.nan, f32)
bs.stencil.split([D0, D1])(u, out)
want = 0.1 * u[:-4] + 0.2 * u[1:-3] + 0.4 * u[2:-2] + 0.2 * u[3:-1] + 0.1 * u[4:]
report["stencil_err"] = float(np.max(np.abs(out - want)))

x, y = rng.standard_normal(10_001).astype(f32), rng.standard_normal(10_001).astype(f32)
z = np.full_like(x, np.nan)
bs.saxpy.split([D0, D1])(x, y, z, f32(2.0))
report["saxpy_err"] = float(np.max(np.abs(z - (2 * x + y))))

bs._sizes = lambda gpus: {"nbody": 256, "stencil": 4096, "saxpy": 4096, "heavy": 512}
bs.QUICK = True
rows = bs.measure([D0, D1], False)
report["rows"] = [{"case": r["case"], "counts": sorted(r["times"]), "eff": r["eff"][2],
                   "positive": all(t > 0 for t in r["times"].values())} for r in rows]
copies = bs.measure_copies([D0, D1], False)
report["copies"] = [(c["way"], c["equal"]) for c in copies]
report["table"] = "\n".join(bs.table("t", {"devices": [D0, D1], "names": ["a", "b"], "threads": 2, "rows": rows,
                                           "copies": copies}))
print(json.dumps(report))
"""


def test_bench_split_kernels_over_two_pocl_devices(tmp_path):
    _pocl_or_skip()
    r = _run(_CASE.replace("BENCH", repr(str(BENCH))), tmp_path, "pthread pthread")
    assert r["nbody_err"] < 1e-3, r["nbody_err"]
    assert r["stencil_err"] < 1e-5 and r["saxpy_err"] < 1e-5, r
    assert [row["counts"] for row in r["rows"]] == [[1, 2]] * 4
    assert [row["case"].split()[0] for row in r["rows"]] == ["nbody", "stencil", "saxpy", "heavy"]
    assert all(row["positive"] and 0 < row["eff"] for row in r["rows"]), r["rows"]
    assert r["copies"] == [["staged", True]]          # two OpenCL contexts: through the host
    assert "| efficiency on 2 |" in r["table"] and "| default | staged | 32 |" in r["table"]


def test_gpu_runs_and_pocl_runs_keep_sections_of_their_own(tmp_path, monkeypatch):
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_split_sections", BENCH / "bench_split.py")
    assert spec is not None and spec.loader is not None
    bs = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bs)
    results = tmp_path / "RESULTS.md"
    results.write_text("# Benchmark results\n\nother section\n")
    monkeypatch.setattr(bs, "RESULTS", results)
    bs.write_section("pocl rows 1")
    bs.write_section("gpu rows 1", bs.GIVEN_START, bs.GIVEN_END)
    bs.write_section("pocl rows 2")                  # replaces only the PoCL section
    text = results.read_text()
    assert "other section" in text and "gpu rows 1" in text and "pocl rows 2" in text and "pocl rows 1" not in text
    bs.write_section("gpu rows 2", bs.GIVEN_START, bs.GIVEN_END)
    text = results.read_text()
    assert "gpu rows 1" not in text and "gpu rows 2" in text and "pocl rows 2" in text
