"""A fresh process whose kernel comes from the disk cache of generated sources does not import
the translator proper (builder, analyses, emitter): the first call of a script run a second time
pays only for what it runs (issue 17, item 4). Kernels run on the device in both processes."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent("""
    import json, sys
    import numpy as np
    from pygpgpu_translate import kernel, stats

    @kernel
    def saxpy(x, y, out, a):
        for i in range(out.shape[0]):
            out[i] = a * x[i] + y[i]

    x = np.arange(64, dtype=np.float32)
    out = np.zeros_like(x)
    saxpy[sys.argv[1]](x, x, out, np.float32(2.0))
    translator = [m for m in ("_builder", "_expressions", "_statements", "_calls", "_access", "_emit", "_entry")
                  if "pygpgpu_translate." + m in sys.modules]
    print(json.dumps({"ok": bool((out == 3 * x).all()), "translations": stats["translations"],
                      "source_cache_hits": stats["source_cache_hits"], "translator": translator}))
""")


def _run(tmp_path, backend):
    script = tmp_path / "cold_script.py"
    script.write_text(SCRIPT)
    env = dict(os.environ, PYGPGPU_CACHE_DIR=str(tmp_path / "cache"))
    r = subprocess.run([sys.executable, str(script), backend], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_a_disk_cache_hit_does_not_import_the_translator(tmp_path, backend):
    first = _run(tmp_path, backend)
    assert first["ok"] and first["translations"] == 1
    assert "_builder" in first["translator"]          # a miss translates: the builder is loaded then
    second = _run(tmp_path, backend)
    assert second["ok"]
    assert second["translations"] == 0 and second["source_cache_hits"] == 1
    assert second["translator"] == [], f"a cache hit imported {second['translator']}"
