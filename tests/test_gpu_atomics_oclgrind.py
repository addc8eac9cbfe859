"""The prelude's atomics under oclgrind with data-race detection: every atomic of every type,
on __global and __local memory, is race-free (the compare-exchange loops never read the
location with a plain load) and gives the exact result."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

OCLGRIND_ICD_LIB = Path("/usr/lib/oclgrind/liboclgrind-rt-icd.so")

_SCRIPT = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    import pygpgpu_opencl
    from pygpgpu_translate.prelude import prelude_source
    dev = pygpgpu_opencl.devices()[0]
    print("DEVICE", dev.name)
    OPS = ["add", "sub", "min", "max", "and", "or", "xor", "xchg", "cmpxchg", "inc", "dec"]
    TYPES = ["int", "uint", "long", "ulong", "float"]
    pieces, lines = set(), []
    for t in TYPES:
        for op in OPS:
            if t == "float" and op in ("and", "or", "xor"):
                continue
            for local in (False, True):
                pieces.add(f"atomic_{op}{'.local' if local else ''}:{t}")
                fn = f"pg_atomic_{op}_{'local_' if local else ''}{t}"
                p = f"l_{t} + {OPS.index(op)}" if local else f"g_{t} + {OPS.index(op)}"
                args = {"cmpxchg": f"{p}, ({t})0, ({t})1", "inc": p, "dec": p}.get(op, f"{p}, ({t})(i % 5)")
                lines.append(f"  {fn}({args});")
    decl = "".join(f"  __local {t} l_{t}[11];\\n" for t in TYPES)
    init = "".join(f"  if (get_local_id(0) < 11) l_{t}[get_local_id(0)] = 0;\\n" for t in TYPES)
    out = "".join(f"  if (get_local_id(0) < 11) lo_{t}[get_group_id(0) * 11 + get_local_id(0)] = l_{t}[get_local_id(0)];\\n"
                  for t in TYPES)
    params = ", ".join(f"__global {t}* g_{t}, __global {t}* lo_{t}" for t in TYPES)
    src = prelude_source("opencl", pieces) + (
        f"__kernel void all_atomics({params}) {{\\n  int i = get_global_id(0);\\n{decl}{init}"
        f"  barrier(CLK_LOCAL_MEM_FENCE);\\n" + "\\n".join(lines) + f"\\n  barrier(CLK_LOCAL_MEM_FENCE);\\n{out}}}\\n"
    )
    prog = dev.context().program(src)
    dt = {"int": np.int32, "uint": np.uint32, "long": np.int64, "ulong": np.uint64, "float": np.float32}
    args = []
    for t in TYPES:
        args += [np.zeros(11, dt[t]), np.zeros(22, dt[t])]
    prog.kernel("all_atomics")[(32, 16)](*args)
    print("RESULT", json.dumps({t: [args[2 * k].tolist(), args[2 * k + 1].tolist()] for k, t in enumerate(TYPES)}))
    """
)


@pytest.mark.usefixtures("oclgrind_icd")   # skips without oclgrind; fails under PYGPGPU_REQUIRE_COMPILERS=1
def test_all_atomics_race_free_and_exact_under_oclgrind(tmp_path):
    vendors = tmp_path / "vendors"
    vendors.mkdir()
    (vendors / "oclgrind.icd").write_text(f"{OCLGRIND_ICD_LIB}\n")
    log = tmp_path / "oclgrind.log"
    env = dict(os.environ, OCL_ICD_VENDORS=str(vendors), OCLGRIND_LOG=str(log), OCLGRIND_DATA_RACES="1",
               PYGPGPU_CACHE_DIR=str(tmp_path / "cache"))
    env.pop("PYGPGPU_OPENCL_LIB", None)
    proc = subprocess.run([sys.executable, "-c", _SCRIPT], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "DEVICE Oclgrind" in proc.stdout, proc.stdout
    text = log.read_text() if log.exists() else ""
    problems = [line for line in text.splitlines() if "Invalid" in line or "data race" in line.lower()]
    assert problems == [], text[:4000]
    result = json.loads(proc.stdout.split("RESULT ", 1)[1])
    # 32 items (2 groups of 16) on the global counters, 16 per group on the local ones.
    for t, (glob, loc) in result.items():
        for counters, items in ((glob, range(32)), (loc[:11], range(16)), (loc[11:], range(16, 32))):
            n = len(items)
            vals = [i % 5 for i in items]
            expect = {
                "add": sum(vals), "sub": -sum(vals), "min": min(0, *vals), "max": max(vals),
                "or": 1 | 2 | 3 | 4, "xor": 0, "inc": n, "dec": -n, "cmpxchg": 1,
            }
            ops = ["add", "sub", "min", "max", "and", "or", "xor", "xchg", "cmpxchg", "inc", "dec"]
            xor = 0
            for v in vals:
                xor ^= v
            expect["xor"] = xor
            expect["and"] = 0
            for k, op in enumerate(ops):
                if t == "float" and op in ("and", "or", "xor"):
                    continue
                got = counters[k]
                if op == "xchg":
                    assert got in vals, (t, op, got)
                    continue
                want = expect[op]
                if t in ("uint", "ulong") and want < 0:
                    want += 2 ** (32 if t == "uint" else 64)
                if t in ("uint", "ulong") and op == "min":
                    want = 0
                assert got == want, (t, op, got, want)
