"""Record kernels and the kernel-file struct probe compile with every NVRTC found on the machine,
not only the default one: NVRTC 13.0 (the H200's system CUDA) rejected ``__builtin_offsetof``
("type name is not allowed") that newer wheels accept, so the layout checks spell offsetof in
each dialect's own words (``Dialect.offsetof``). Each library is loaded in a child process
(``PYGPGPU_NVRTC_LIB``), since a process binds one NVRTC for good. Libraries looked at: the
default one, CUDA toolkits under /usr/local and the system library folder, and the files named in
``PYGPGPU_TEST_NVRTC_LIBS`` (os.pathsep-separated, e.g. a ``nvidia-cuda-nvrtc==13.0.*`` wheel's
``nvidia/cu13/lib/libnvrtc.so.13``)."""
from __future__ import annotations

import glob
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import skip_no_compiler
from test_kernel_file_structs import _cuda_structs, _layouts, _probe_source
from test_lang_records import _COMPILE, UNALIGNED, step

_NVRTC_FILE = re.compile(r"libnvrtc\.so\.\d+(\.\d+)*$")     # not the builtins, not the .alt variant


def _found_libraries() -> list[str]:
    named = [p for p in os.environ.get("PYGPGPU_TEST_NVRTC_LIBS", "").split(os.pathsep) if p]
    for p in named:
        if not os.path.isfile(p):
            raise pytest.UsageError(f"PYGPGPU_TEST_NVRTC_LIBS names {p!r}, which is not a file")
    found = (glob.glob("/usr/local/cuda*/lib64/libnvrtc.so.*") + glob.glob("/usr/local/cuda*/targets/*/lib/libnvrtc.so.*")
             + glob.glob("/usr/lib/*-linux-gnu/libnvrtc.so.*"))
    out, seen = [], set()
    for p in named + sorted(found):
        real = os.path.realpath(p)
        if _NVRTC_FILE.search(os.path.basename(p)) and real not in seen:
            seen.add(real)
            out.append(p)
    return out


# The child compiles each source and says whether NVRTC accepted it, or that it cannot use the library.
_CHILD = r"""
import json, sys
from pygpgpu_core.errors import CompileError
from pygpgpu_cuda._nvrtc import compile_cuda, nvrtc_version
jobs = json.load(sys.stdin)
try:
    version = nvrtc_version()
except Exception as exc:
    print(json.dumps({"unusable": f"{type(exc).__name__}: {exc}"}))
    sys.exit(0)
results = {}
for name, source in jobs.items():
    try:
        compile_cuda(source, "sm_90")
        results[name] = None
    except CompileError as exc:
        results[name] = str(exc)
print(json.dumps({"version": list(version), "results": results}))
"""


def _sources(tmp_path: Path) -> dict[str, str]:
    jobs = {}
    for name, (k, args) in sorted(_COMPILE.items()):
        jobs[f"record kernel {name}"] = k.inspect(*args(), backend="cuda").source
    src = tmp_path / "structs.cu"
    src.write_text(_cuda_structs())
    _, layouts = _layouts(src)
    jobs["kernel-file struct probe"] = _cuda_structs() + _probe_source(layouts, "cuda")[0]
    # the checks have teeth with this NVRTC too: a record whose offset numpy and C disagree on fails
    right = step.inspect(np.zeros(4, UNALIGNED), np.zeros(4, np.float32), 0.5, backend="cuda").source
    wrong, n = re.subn(r"(_at_f_mass\[\(.*) == 12\)", r"\1 == 8)", right)
    assert n == 1, "the record kernel checks field mass's offset (12)"
    jobs["WRONG offset"] = wrong
    return jobs


@pytest.mark.parametrize("library", [None, *_found_libraries()], ids=lambda p: p or "default")
def test_record_layout_checks_compile_with_every_nvrtc(library, tmp_path, nvrtc_compile):
    env = dict(os.environ)
    if library is not None:
        env["PYGPGPU_NVRTC_LIB"] = library
    jobs = _sources(tmp_path)
    run = subprocess.run([sys.executable, "-c", _CHILD], input=json.dumps(jobs), env=env, capture_output=True,
                         text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    answer = json.loads(run.stdout.strip().splitlines()[-1])
    if "unusable" in answer:
        skip_no_compiler(f"NVRTC at {library}", answer["unusable"])
    version = "NVRTC {}.{}".format(*answer["version"])
    results = answer["results"]
    assert results.pop("WRONG offset") is not None, f"{version} accepted a wrong record offset"
    failed = {name: err for name, err in results.items() if err is not None}
    assert not failed, f"{version} ({library or 'default'}) rejected:\n" + "\n\n".join(
        f"{name}: {err}" for name, err in failed.items())
