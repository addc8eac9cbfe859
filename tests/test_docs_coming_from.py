"""Every PyGPGPU code block of docs/coming-from.md runs as written, its assertions included (the
page's spellings are the ones that work: issue 30 item 4). The other frameworks' blocks are
there for comparison and are not run (their packages are not dependencies)."""
from __future__ import annotations

import re
import runpy
import warnings
from pathlib import Path

import pytest

from pygpgpu_core.errors import PyGPGPUWarning

PAGE = Path(__file__).resolve().parents[1] / "docs" / "coming-from.md"


def _blocks():
    text = PAGE.read_text()
    blocks = re.findall(r"^```python\n(.*?)^```", text, re.S | re.M)
    return [b for b in blocks if re.search(r"^(from pygpgpu|import pygpgpu)", b, re.M)]


def test_the_page_has_runnable_blocks_for_each_topic():
    text = "\n".join(_blocks())
    for needle in ("[(blocks * threads, threads)]", "[((64, 32), None)]", "gpu.local_array", "gpu.atomic_add",
                   "gnp.asarray", "@pygpgpu.reduce"):
        assert needle in text, needle


@pytest.mark.parametrize("index", range(len(_blocks())))
def test_every_pygpgpu_block_runs(tmp_path, monkeypatch, index):
    monkeypatch.setenv("PYGPGPU_BACKEND", "opencl")
    path = tmp_path / f"coming_from_{index}.py"
    path.write_text(_blocks()[index])
    with warnings.catch_warnings():
        warnings.simplefilter("error", PyGPGPUWarning)      # no spelling on the page launches a fraction
        runpy.run_path(str(path), run_name="__main__")


def test_warps_dim_as_a_bracket_raises_as_the_page_says(tmp_path):
    block = next(b for b in _blocks() if "def scale(a, s)" in b)
    setup = block.split("a = np.ones")[0]
    path = tmp_path / "warp_dim.py"
    path.write_text(setup + "a = np.ones((64, 32), np.float32)\nscale['opencl'][(64, 32)](a, 2.0)\n")
    with pytest.raises(ValueError, match=r"gpu.get_global_id\(1\)"):
        runpy.run_path(str(path), run_name="__main__")
