import pytest

from pygpgpu_core.backend.worksize import block_geometry, work_dims

LIMITS = dict(max_threads=1024, max_block_dims=(1024, 1024, 64), max_grid_dims=(2**31 - 1, 65535, 65535),
              device_name="TestGPU", kernel_name="k")


@pytest.mark.parametrize("value, dims", [(5, (5,)), ((4, 3), (4, 3)), ([1, 2, 3], (1, 2, 3)), (0, (0,))])
def test_work_dims(value, dims):
    assert work_dims(value, "global_size") == dims


@pytest.mark.parametrize("value, error", [("8", TypeError), ((), ValueError), ((1, 2, 3, 4), ValueError), (-1, ValueError)])
def test_work_dims_errors(value, error):
    with pytest.raises(error, match="global_size"):
        work_dims(value, "global_size")


@pytest.mark.parametrize("global_size, local_size, geom", [
    (1000, 256, (4, 1, 1, 256, 1, 1)),             # rounded up: total-work semantics
    (1024, 256, (4, 1, 1, 256, 1, 1)),
    (1000, None, (4, 1, 1, 256, 1, 1)),            # the default local size
    (10, None, (1, 1, 1, 10, 1, 1)),               # clipped to the work
    ((100, 30), (16, 16), (7, 2, 1, 16, 16, 1)),
    ((64, 64, 64), None, (8, 8, 16, 8, 8, 4)),
    (0, 128, None),                                # no work: no launch
])
def test_block_geometry(global_size, local_size, geom):
    default = {1: (256,), 2: (32, 8), 3: (8, 8, 4)}[len(work_dims(global_size, "g"))]
    assert block_geometry(global_size, local_size, default_local=default, **LIMITS) == geom


def test_default_local_size_is_halved_to_fit():
    assert block_geometry((64, 64), None, default_local=(64, 64), **LIMITS) == (2, 2, 1, 32, 32, 1)


@pytest.mark.parametrize("global_size, local_size, message", [
    (1000, 2048, "2048 threads a block"),
    ((8, 8), (8,), "as many dimensions"),
    ((8, 8), (0, 8), "positive"),
    ((1, 1, 128), (1, 1, 128), "dimension 2 exceeds TestGPU's limit 64"),
    ((1, 65536 * 2), (1, 1), "needs 131072 blocks in dimension 1"),
])
def test_block_geometry_errors(global_size, local_size, message):
    with pytest.raises(ValueError, match=message):
        block_geometry(global_size, local_size, default_local=(256,), **LIMITS)
