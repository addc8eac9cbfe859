"""examples/dask_multi_device.py (issue 36, item 3), small: a Dask cluster with one worker process per
device, each started with ``PYGPGPU_BACKEND`` set to its own device's selector, runs the kernel over
every block of a chunked array and returns the known integral; each worker reports the device it
was pinned to, and both ran blocks. Here the devices are two PoCL devices
(``POCL_DEVICES="pthread pthread"``, set before PoCL starts, so the case runs in a fresh
interpreter whose worker processes inherit it). Skips when dask or distributed is not installed
(they are test-only dependencies: ``make test-setup`` installs them)."""
from __future__ import annotations

from pathlib import Path

import pytest
from test_multi_device import _pocl_or_skip, _run

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"

_CASE = r"""
import json, sys
sys.path.insert(0, EXAMPLES)
import dask_multi_device
from pygpgpu_core import registry

devices = [d.selector for d in registry.backend_devices("opencl")
           if "portable computing language" in d.platform.name.lower()][:2]
result = dask_multi_device.main(devices, gib=0.02, chunk_mib=1)
result["asked"] = devices
print(json.dumps(result))
"""


def test_one_dask_worker_per_device_runs_the_blocks(tmp_path):
    pytest.importorskip("dask.array", reason="dask is not installed (pip install 'dask[array]' distributed)")
    pytest.importorskip("distributed", reason="distributed is not installed (pip install distributed)")
    _pocl_or_skip()
    r = _run(_CASE.replace("EXAMPLES", repr(str(EXAMPLES))), tmp_path, "pthread pthread")
    assert r["devices"] == sorted(r["asked"]) and len(set(r["devices"])) == 2      # each worker on its own device
    assert sum(r["blocks"]) == r["numblocks"] == 21 and all(b > 0 for b in r["blocks"]), r
    assert abs(r["integral"] - 2.5066282746310002) < 1e-5
    assert r["bytes"] == int(0.02 * (1 << 30)) // 4 * 4
