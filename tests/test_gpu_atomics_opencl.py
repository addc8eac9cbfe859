"""Prelude atomics executed on an OpenCL device under heavy contention: exact final values and
old-value semantics, checked against gpu.atomic_* run sequentially on the host."""
from __future__ import annotations

import numpy as np
import pytest

from pygpgpu_core import gpu
from pygpgpu_translate.prelude import prelude_source
from test_vec_helpers import opencl_runner

N = 2048
LOCAL = 64
DTYPES = {"int": np.int32, "uint": np.uint32, "long": np.int64, "ulong": np.uint64, "float": np.float32}
SLOTS = 4  # every work item hits one of 4 counters: N / 4 contenders per address


def _values(t: str) -> np.ndarray:
    dt = DTYPES[t]
    rng = np.random.default_rng(3)
    if t == "float":
        return rng.integers(-8, 9, N).astype(dt)  # small integers: float sums stay exact
    if t in ("int", "long"):
        v = rng.integers(-1000, 1000, N).astype(dt)
        if t == "long":
            v[::7] *= 2**33  # beyond 32 bits
        return v
    v = rng.integers(0, 2000, N).astype(dt)
    if t == "ulong":
        v[::5] += np.uint64(2**40)
    return v


def _bits(t: str) -> np.ndarray:
    """One bit per work item for and/or/xor (spread over the type's width)."""
    width = 64 if t in ("long", "ulong") else 32
    one = np.uint64(1) if width == 64 else np.uint32(1)
    shifts = (np.arange(N) % width).astype(np.uint64 if width == 64 else np.uint32)
    return (one << shifts).astype(DTYPES[t] if t != "long" else np.uint64).view(DTYPES[t]) if t in ("long", "ulong") \
        else (one << shifts).view(DTYPES[t])


def _wrap(values: list, dt) -> np.ndarray:
    """Python numbers -> dt with C wrap-around for integers."""
    if np.issubdtype(dt, np.floating):
        return np.asarray(values, dt)
    size = np.dtype(dt).itemsize
    return np.asarray([v & ((1 << (8 * size)) - 1) for v in values], f"u{size}").view(dt)


OPS = ["add", "sub", "min", "max", "and", "or", "xor", "xchg", "inc", "dec"]


def _initial(op: str, t: str) -> np.ndarray:
    dt = DTYPES[t]
    if op == "and":
        return np.full(SLOTS, -1 if np.issubdtype(dt, np.signedinteger) else np.iinfo(dt).max, dt)
    if op in ("min", "max"):
        return np.full(SLOTS, 17, dt)
    return np.arange(SLOTS).astype(dt) * 3


@pytest.mark.parametrize("local", [False, True], ids=["global", "local"])
@pytest.mark.parametrize("t", list(DTYPES))
def test_atomics_under_contention(t, local):
    run = opencl_runner()
    dt = DTYPES[t]
    ops = [op for op in OPS if not (t == "float" and op in ("and", "or", "xor"))]
    values = _values(t)
    bits = _bits(t) if t != "float" else values
    cname = {"int": "int", "uint": "uint", "long": "long", "ulong": "ulong", "float": "float"}[t]
    pieces = {f"atomic_{op}{'.local' if local else ''}:{t}" for op in ops}
    kernels = []
    for op in ops:
        fn = f"pg_atomic_{op}_{'local_' if local else ''}{t}"
        v = "bits[i]" if op in ("and", "or", "xor") else "vals[i]"
        call = f"{fn}(p, {v})" if op not in ("inc", "dec") else f"{fn}(p)"
        if local:
            # Each group works on its own __local copy of the counter, then item 0 publishes it.
            body = (
                f"  __local {cname} slot[1];\n"
                f"  if (get_local_id(0) == 0) slot[0] = init[get_group_id(0)];\n"
                f"  barrier(CLK_LOCAL_MEM_FENCE);\n"
                f"  volatile __local {cname}* p = slot;\n  old[i] = {call};\n"
                f"  barrier(CLK_LOCAL_MEM_FENCE);\n"
                f"  if (get_local_id(0) == 0) counters[get_group_id(0)] = slot[0];\n"
            )
        else:
            body = f"  volatile __global {cname}* p = counters + (i % {SLOTS});\n  old[i] = {call};\n"
        kernels.append(
            f"__kernel void k_{op}(__global {cname}* counters, __global const {cname}* vals, "
            f"__global const {cname}* bits, __global {cname}* old, __global const {cname}* init) {{\n"
            f"  int i = get_global_id(0);\n{body}}}\n"
        )
    src = prelude_source("opencl", pieces) + "".join(kernels)
    groups = N // LOCAL
    for op in ops:
        if local:
            init = (_initial(op, t).tolist() * groups)[:groups]
            init = np.asarray(init, dt)
        else:
            init = _initial(op, t)
        counters = init.copy()
        old = np.zeros(N, dt)
        run(src, f"k_{op}", (N,), (LOCAL,), [counters, values, bits, old, init])
        # Host reference: the same operations, sequentially, with gpu.atomic_*.
        expect = init.copy()
        slot_of = (np.arange(N) // LOCAL) if local else (np.arange(N) % SLOTS)
        host_fn = getattr(gpu, f"atomic_{op}")
        for i in range(N):
            if op in ("inc", "dec"):
                host_fn(expect, slot_of[i])
            else:
                host_fn(expect, slot_of[i], (bits if op in ("and", "or", "xor") else values)[i])
        if op == "xchg":
            # Final value: some item's value; olds + final = initial + every value (each seen once).
            for s in range(len(init)):
                mine = slot_of == s
                seen = np.sort(np.concatenate([old[mine], counters[s:s + 1]]))
                np.testing.assert_array_equal(seen, np.sort(np.concatenate([values[mine], init[s:s + 1]])))
            continue
        np.testing.assert_array_equal(counters, expect, err_msg=f"atomic_{op}:{t}")
        if op in ("inc", "dec"):
            # Old values: the items of one counter saw every state it went through, each once.
            step = 1 if op == "inc" else -1
            for s in range(min(len(init), 4)):
                mine = slot_of == s
                states = _wrap([init[s].item() + k * step for k in range(mine.sum())], dt)
                np.testing.assert_array_equal(np.sort(old[mine]), np.sort(states),
                                              err_msg=f"atomic_{op}:{t} old values")


@pytest.mark.parametrize("t", list(DTYPES))
def test_cmpxchg_counter_and_failed_exchange(t):
    """A compare-exchange loop counter: every item increments once, retrying on conflict; the
    final count is exact and the successful old values are 0 .. N-1, each exactly once."""
    run = opencl_runner()
    dt = DTYPES[t]
    fn = f"pg_atomic_cmpxchg_{t}"
    src = prelude_source("opencl", {f"atomic_cmpxchg:{t}"}) + (
        f"__kernel void count(__global {t}* c, __global {t}* got, __global {t}* failed) {{\n"
        f"  int i = get_global_id(0);\n"
        f"  {t} seen = c[0], prev;\n"
        f"  while ((prev = {fn}(c, seen, seen + ({t})1)) != seen) seen = prev;\n"
        f"  got[i] = seen;\n"
        f"  failed[i] = {fn}(c + 1, ({t})(-5), ({t})99);\n"  # never equal: no store, returns old
        f"}}\n"
    )
    n = 1024 if t == "float" else N
    c = np.array([0, 7], dt)
    got, failed = np.zeros(n, dt), np.zeros(n, dt)
    run(src, "count", (n,), (LOCAL,), [c, got, failed])
    assert c[0] == n and c[1] == 7
    np.testing.assert_array_equal(np.sort(got), np.arange(n).astype(dt))
    assert (failed == 7).all()


def test_float_min_max_cas_loops_keep_extremes():
    run = opencl_runner()
    src = prelude_source("opencl", {"atomic_min:float", "atomic_max:float"}) + (
        "__kernel void mm(__global float* lo, __global float* hi, __global const float* v) {\n"
        "  int i = get_global_id(0);\n  pg_atomic_min_float(lo, v[i]);\n  pg_atomic_max_float(hi, v[i]);\n}\n"
    )
    v = np.random.default_rng(9).standard_normal(N).astype(np.float32)
    lo, hi = np.array([np.inf], np.float32), np.array([-np.inf], np.float32)
    run(src, "mm", (N,), (LOCAL,), [lo, hi, v])
    assert lo[0] == v.min() and hi[0] == v.max()
