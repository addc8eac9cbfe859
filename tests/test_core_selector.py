import pytest

from pygpgpu_core.selector import Selector, canonical_backend, parse_selector


@pytest.mark.parametrize(
    "text, expected",
    [
        ("cuda", Selector(backend="cuda")),
        ("CUDA", Selector(backend="cuda")),
        ("cu", Selector(backend="cuda")),
        ("opencl:0", Selector(backend="opencl", index=0)),
        ("ocl:1", Selector(backend="opencl", index=1)),
        ("hip:gfx1036", Selector(backend="hip", match="gfx1036")),
        ("rocm:gfx90a", Selector(backend="hip", match="gfx90a")),
        ("amd", Selector(backend="hip")),
        ("opencl:gfx1036", Selector(backend="opencl", match="gfx1036")),
        ("geforce:1", Selector(match="geforce", nth=1)),
        ("GeForce", Selector(match="geforce")),
        ("0", Selector(index=0)),
        ("cuda:h200:0", Selector(backend="cuda", match="h200", nth=0)),
        (" opencl : 2 ", Selector(backend="opencl", index=2)),
    ],
)
def test_selector_table(text, expected):
    assert parse_selector(text) == expected


@pytest.mark.parametrize(
    "text, message",
    [
        ("", "empty device selector"),
        ("cuda::1", "malformed"),
        ("a:b:c:d", "malformed"),
        ("geforce:x", "must be a number"),
        ("opencl:0:1", "cannot be followed"),
    ],
)
def test_selector_errors(text, message):
    with pytest.raises(ValueError, match=message):
        parse_selector(text)


def test_selector_type_error():
    with pytest.raises(TypeError, match="must be a str"):
        parse_selector(3)


def test_third_party_backend_names_are_recognised():
    assert parse_selector("acme:1", {"acme"}) == Selector(backend="acme", index=1)
    assert parse_selector("acme:1") == Selector(match="acme", nth=1)


def test_aliases():
    assert [canonical_backend(a) for a in ("ocl", "cu", "rocm", "amd", "OpenCL")] == [
        "opencl", "cuda", "hip", "hip", "opencl"]
