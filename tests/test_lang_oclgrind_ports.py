"""The kernel-language additions under oclgrind: local memory sized at launch and the OpenCL
emulation of subgroup operations make no invalid access and no data race (oclgrind exits 0
whatever it finds: the log is read)."""
from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from conftest import run_under_oclgrind

HERE = Path(__file__).parent

SCRIPT = textwrap.dedent('''
    import sys
    sys.path.insert(0, {here!r})
    import numpy as np
    from pygpgpu_core import mempool
    mempool.size_class = lambda n: max(int(n), 4)      # exact-size buffers
    import test_lang_launch_local as launch_local
    import test_lang_subgroups as subgroups
    x = np.random.default_rng(0).random(128)
    out = np.zeros_like(x)
    launch_local.reverse_groups["opencl"][(128, {group})](x, out, {size})
    print("REVERSED", bool((out == x.reshape(-1, {group})[:, ::-1].ravel()).all()), flush=True)
    xt = np.arange(128, dtype=np.int32)
    tiles = np.zeros((128, 3), np.int64)
    launch_local.three_tiles["opencl"][(128, {group})](xt, tiles, {group}, {group}, {size})
    print("TILES", bool((tiles == launch_local._three_tiles_model(xt, {group})).all()), flush=True)
    xf = np.arange(128, dtype=np.float32)
    rot = np.zeros_like(xf)
    launch_local.group_rotate["opencl"][(128, {group})](xf, rot)
    print("ROTATED", bool((rot == launch_local._rotated(xf, {group})).all()), flush=True)
    xx = np.arange(256, dtype=np.float64).reshape(16, 16)
    tr = np.zeros_like(xx)
    launch_local.group_transpose["opencl"][((16, 16), (8, 8))](xx, tr)
    expect = xx.reshape(2, 8, 2, 8).transpose(0, 3, 2, 1).reshape(16, 16)
    print("TRANSPOSED", bool((tr == expect).all()), flush=True)
    xi = np.arange(100, dtype=np.int32)
    res = np.zeros((100, 12))
    subgroups.every_op["opencl"][(128, 64)](xi, res)
    print("SUBGROUPS", bool((res == subgroups._model(xi)[:, :]).all()) if {group} == 16 else "skipped", flush=True)
    xh = np.arange(100, dtype=np.int32) % 8
    helped = np.zeros((100, 2), np.int64)
    subgroups.via_helpers["opencl"][(256, 64)](xh, helped)
    print("HELPERS", bool((helped == subgroups._via_helpers_model(xh)).all()), flush=True)
''')


def _run(tmp_path, group, size):
    return run_under_oclgrind(tmp_path, SCRIPT.format(here=str(HERE), group=group, size=size))


needs_oclgrind = pytest.mark.usefixtures("oclgrind_icd")


@needs_oclgrind
def test_launch_sized_local_memory_and_subgroups_are_clean_under_oclgrind(tmp_path):
    out, text, bad = _run(tmp_path, 16, 16)
    assert "REVERSED True" in out and "TILES True" in out and "SUBGROUPS True" in out
    assert "HELPERS True" in out and "ROTATED True" in out and "TRANSPOSED True" in out, out
    assert not bad, text[:4000]


@needs_oclgrind
def test_oclgrind_sees_a_launch_sized_array_smaller_than_its_use(tmp_path):
    """The control: 8 elements of local memory for groups of 16 is caught, so the test above can fail."""
    out, text, bad = _run(tmp_path, 16, 8)
    assert any("Invalid" in ln for ln in bad), text[:2000]


TILES_ONLY = textwrap.dedent('''
    import sys
    sys.path.insert(0, {here!r})
    import numpy as np
    from pygpgpu_core import mempool
    mempool.size_class = lambda n: max(int(n), 4)
    import test_lang_launch_local as launch_local
    xt = np.arange(64, dtype=np.int32)
    tiles = np.zeros((64, 3), np.int64)
    launch_local.three_tiles["opencl"][(64, 16)](xt, tiles, 16, 16, {flags})
    print("RAN", flush=True)
''')


@needs_oclgrind
def test_oclgrind_sees_one_of_several_launch_sized_arrays_too_small(tmp_path):
    """The control of the several-arrays case: only the int8 array is short, and its 1-byte
    accesses are what oclgrind reports."""
    out, text, bad = run_under_oclgrind(tmp_path, TILES_ONLY.format(here=str(HERE), flags=8))
    assert "RAN" in out and any("Invalid" in ln for ln in bad), text[:2000]
    assert "of size 1 " in text and "of size 8 " not in text and "of size 4 " not in text, text[:3000]
    out, text, bad = run_under_oclgrind(tmp_path, TILES_ONLY.format(here=str(HERE), flags=16))
    assert "RAN" in out and not bad, text[:3000]
