"""benchmarks/bench_webgpu.py runs (issue 35, item 5): the four float32 kernels and g.sum() on
webgpu (lavapipe here) and on a peer device, checked against each other, written as JSON and as
a markdown table naming both devices. Tiny sizes: this checks that it runs, not the times."""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pygpgpu
import pytest

from conftest import skip_no_device
from webgpu_support import webgpu_device

BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_webgpu.py"


def test_the_benchmark_runs_checks_and_writes_its_tables(tmp_path):
    dev = webgpu_device()
    peers = [d for d in pygpgpu.available_devices() if d.split(":")[0] in ("cuda", "opencl")]
    if not peers:
        skip_no_device("any", "no CUDA or OpenCL device to compare with")
    spec = importlib.util.spec_from_file_location("bench_webgpu", BENCH)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    out_json, out_md = tmp_path / "b.json", tmp_path / "b.md"
    assert bench.main(["--scale", "256", "--repeats", "1", "--warmup", "1", "--peer", peers[0],
                       "--json", str(out_json), "--md", str(out_md)]) == 0
    report = json.loads(out_json.read_text())
    assert [r["row"] for r in report["rows"]] == ["saxpy", "stencil 5-point", "mandelbrot", "n-body", "gnp g.sum()"]
    for r in report["rows"]:
        assert r["webgpu_ms"] > 0 and r["peer_ms"][peers[0]] > 0
        assert r["ratio"][peers[0]] == pytest.approx(r["webgpu_ms"] / r["peer_ms"][peers[0]], rel=0.01)
    assert report["webgpu"]["name"] == dev.name and any(a.get("device") == dev.name for a in report["adapters"])
    table = out_md.read_text()
    assert dev.name in table and pygpgpu.get_device(peers[0]).name in table
    assert table.count("\n| ") == 2 + len(report["rows"])          # header, rule, one line per row
