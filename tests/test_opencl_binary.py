"""Program.binary and Context.program_from_binary: round trips, rejected binaries, argument checks."""
from __future__ import annotations

import uuid

import numpy as np
import pytest

from pygpgpu_core.errors import ClosedError, DriverError
from pygpgpu_opencl import Context
from conftest import first_device


@pytest.fixture(scope="module")
def ctx() -> Context:
    context = Context(first_device("opencl"))     # a private context: closed after the module
    yield context
    context.close()


def _source() -> str:
    # A fresh token per test keeps PoCL's own kernel cache and ours from answering.
    return f"""// {uuid.uuid4().hex}
__kernel void affine(__global float* x, const float a, const int n) {{
    int i = get_global_id(0);
    if (i < n) x[i] = a * x[i] + OFFSET;
}}
"""


OPTIONS = ["-DOFFSET=3.0f"]


def _run(prog, a: float = 2.0) -> np.ndarray:
    x = np.arange(40, dtype=np.float32)
    prog.kernel("affine")[(40, None)](x, np.float32(a), np.int32(40))
    return x


def _expected(a: float = 2.0) -> np.ndarray:
    return np.float32(a) * np.arange(40, dtype=np.float32) + np.float32(3.0)


def test_binary_round_trip(ctx):
    built = ctx.program(_source(), OPTIONS)
    binary = built.binary
    assert isinstance(binary, bytes) and len(binary) > 0
    assert built.binary is binary  # read once from the driver, then kept
    loaded = ctx.program_from_binary(binary, options=OPTIONS, name="affine.bin")
    assert loaded.from_binary and not loaded.from_cache
    assert loaded.name == "affine.bin" and loaded.kernel_names == ["affine"]
    assert loaded.binary == binary
    np.testing.assert_array_equal(_run(loaded), _expected())
    np.testing.assert_array_equal(_run(loaded, 0.5), _run(built, 0.5))


def test_binary_loads_in_another_context_of_the_same_device(ctx):
    binary = ctx.program(_source(), OPTIONS).binary
    with Context(ctx.device) as other:
        prog = other.program_from_binary(bytearray(binary), options=OPTIONS)
        assert prog.from_binary
        np.testing.assert_array_equal(_run(prog), _expected())
    assert prog.closed  # closed with its context


def test_a_program_loaded_from_a_binary_reports_that_binary(ctx, monkeypatch):
    """NVIDIA's OpenCL hands back other bytes (different NULs after the PTX) for a program
    created from a binary: program.binary is the binary it was loaded from, so a stored binary
    stays the same through any number of loads."""
    from pygpgpu_opencl._program import Program

    binary = ctx.program(_source(), OPTIONS).binary
    monkeypatch.setattr(Program, "_binary", lambda self: b"bytes the driver rewrote")
    loaded = ctx.program_from_binary(binary, options=OPTIONS)
    assert loaded.from_binary and loaded.binary == binary
    assert ctx.program_from_binary(loaded.binary, options=OPTIONS).binary == binary
    np.testing.assert_array_equal(_run(loaded), _expected())


def test_loading_a_binary_does_not_compile(ctx, monkeypatch):
    from pygpgpu_opencl._program import Program

    built = ctx.program(_source(), OPTIONS)  # a fresh source: a real compile
    assert not built.from_cache and built.cache_key

    def no_compile(self):
        raise AssertionError("program_from_binary compiled the source")

    monkeypatch.setattr(Program, "_create_from_source", no_compile)
    loaded = ctx.program_from_binary(built.binary, source=built.source, options=OPTIONS)
    assert loaded.from_binary and not loaded.from_cache and not loaded.cache_key
    np.testing.assert_array_equal(_run(loaded), _expected())


def test_a_rejected_binary_without_source_is_a_clear_error(ctx):
    with pytest.raises(DriverError) as info:
        ctx.program_from_binary(b"not an OpenCL program binary" * 8, name="junk.bin")
    message = str(info.value)
    assert "rejected the program binary of junk.bin" in message and "pass source=" in message
    assert info.value.call == "clCreateProgramWithBinary"


def test_a_rejected_binary_with_source_is_rebuilt(ctx):
    source = _source()
    prog = ctx.program_from_binary(b"not an OpenCL program binary" * 8, source=source, options=OPTIONS)
    assert not prog.from_binary
    np.testing.assert_array_equal(_run(prog), _expected())
    # Its binary is the real one now, and it round-trips.
    again = ctx.program_from_binary(prog.binary, source=source, options=OPTIONS)
    assert again.from_binary
    np.testing.assert_array_equal(_run(again), _expected())


def test_binary_arguments_are_checked(ctx):
    with pytest.raises(TypeError, match="program binary is bytes"):
        ctx.program_from_binary("__kernel void f() {}")
    with pytest.raises(ValueError, match="binary is empty"):
        ctx.program_from_binary(b"")
    with pytest.raises(TypeError, match="source must be a str"):
        ctx.program_from_binary(b"x", source=b"__kernel void f() {}")


def test_a_kernel_named_binary_does_not_hide_the_property(ctx):
    source = f"// {uuid.uuid4().hex}\n__kernel void binary(__global int* x) {{ x[get_global_id(0)] += 7; }}\n"
    prog = ctx.program(source)
    assert isinstance(prog.binary, bytes)
    x = np.arange(5, dtype=np.int32)
    prog.kernel("binary")[5](x)
    np.testing.assert_array_equal(x, np.arange(5) + 7)


def test_binary_of_a_closed_program_raises(ctx):
    prog = ctx.program(_source(), OPTIONS)
    prog.close()
    with pytest.raises(ClosedError):
        prog.binary


def test_truncated_or_damaged_binaries_are_refused_not_crashed_on(ctx):
    source = _source()
    good = ctx.program(source, OPTIONS).binary
    damaged = []
    ptx = b".version" in good[:512] and b".target" in good[:512]
    # truncated files (a partial write); PTX minus its last byte (a newline or NUL) is still whole
    for cut in (100, len(good) // 2) + (() if ptx else (len(good) - 1,)):
        damaged.append(good[:cut])
    if good.startswith(b"poclbin\0"):
        # Size fields PoCL trusts: the kernel count and the program section's lengths. Each of
        # these aborted or crashed the process before the bounds check.
        for pos in (20, 80, 100):
            blob = bytearray(good)
            blob[pos] ^= 0xFF
            damaged.append(bytes(blob))
    for blob in damaged:
        with pytest.raises(DriverError, match="rejected the program binary"):
            ctx.program_from_binary(blob, options=OPTIONS)
        rebuilt = ctx.program_from_binary(blob, source=source, options=OPTIONS)
        assert not rebuilt.from_binary
        np.testing.assert_array_equal(_run(rebuilt), _expected())


def test_raw_driver_binaries_are_checked_by_format(ctx):
    """Bytes that did not come from program.binary (no checksum) are checked as far as their
    format is known: PoCL's own layout, and PTX text from NVIDIA's OpenCL."""
    from pygpgpu_opencl._binary_check import checked_binary

    raw = ctx.program(_source(), OPTIONS)._binary()
    if raw.startswith(b"poclbin\0"):
        version = int.from_bytes(raw[16:20], "little")
        problem = checked_binary(raw)[1]
        if version == 9:
            assert problem is None
            for cut in (100, len(raw) // 2, len(raw) - 1):
                assert "truncated" in checked_binary(raw[:cut])[1] or "ends" in checked_binary(raw[:cut])[1]
        else:
            assert f"format version {version}" in problem
    ptx = b"//\n.version 8.0\n.target sm_90\n.entry k(\n)\n{\n ret;\n}\n"
    data, problem = checked_binary(ptx)
    assert problem is None and data.endswith(b"}\n\0")
    assert "incomplete" in checked_binary(ptx[:48])[1]
