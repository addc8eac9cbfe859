"""Small conventions: the OpenCL queue says what it is; `hatch run test ARGS` runs only what
ARGS select (the script has no fixed test path of its own)."""
from __future__ import annotations

import tomllib
from pathlib import Path

from conftest import first_device

ROOT = Path(__file__).resolve().parents[1]


def test_opencl_queue_repr_names_device_and_state():
    import numpy as np
    from pygpgpu_opencl import Context

    device = first_device("opencl")
    ctx = Context(device)                       # a private context: closing it touches nothing shared
    queue = ctx.queue
    buf = ctx.buffer_from_host(np.arange(4, dtype=np.float32))   # the queue works
    out = np.zeros(4, np.float32)
    buf.read(out)
    np.testing.assert_array_equal(out, np.arange(4, dtype=np.float32))
    assert repr(queue) == f"<OpenCL Queue (in-order) on {device.selector} {device.name!r} (open)>"
    ctx.close()
    assert repr(queue).endswith("(closed)>")


def test_hatch_test_script_takes_its_paths_from_the_arguments():
    script = tomllib.loads((ROOT / "hatch.toml").read_text())["envs"]["default"]["scripts"]["test"]
    words = script.split()
    assert words[0] == "pytest" and words[-1] == "{args:tests}"
    assert not [w for w in words[1:-1] if not w.startswith("-")], script   # no path outside {args}
