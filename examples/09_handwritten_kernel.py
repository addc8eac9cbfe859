"""A handwritten OpenCL C kernel file, imported like a Python module.

    python examples/09_handwritten_kernel.py [pixels]

`from pygpgpu import climport` turns on the import hook; `import color_ops` then finds
color_ops.cl beside this script. Its kernels become functions, its structs ctypes
structures with the device layout, its #defines integers; a color_ops.pyi stub is written for
editors. Arguments are checked against the C declarations before anything runs.
"""
import numpy as np
from _common import example_size

from pygpgpu import climport  # noqa: F401  (the import hook for .cl files)

import color_ops  # noqa: E402  (color_ops.cl)


def host_adjust(rgba: np.ndarray, gain: float, offset: float) -> "tuple[np.ndarray, np.ndarray]":
    c = np.clip(rgba[:, :3].astype(np.float32) * np.float32(gain) + np.float32(offset), 0, 255)
    out = rgba.copy()
    out[:, :3] = np.rint(c).astype(np.uint8)          # round to nearest even, as convert_uchar_sat_rte
    luma = (np.float32(0.2126) * c[:, 0] + np.float32(0.7152) * c[:, 1] + np.float32(0.0722) * c[:, 2])
    return out, luma.astype(np.float32)


def main(n: int = 1_000_000) -> dict:
    rgba = np.random.default_rng(5).integers(0, 256, (n, 4), dtype=np.uint8)   # (n, 4) uint8 = uchar4 rows
    out = np.empty_like(rgba)
    luma = np.empty(n, np.float32)
    adjust = color_ops.Adjust(gain=1.2, offset=10.0)     # a ctypes struct, passed by value
    color_ops.adjust_rgba(rgba, out, luma, adjust, np.int32(n))   # work size: the first array's length
    print(f"adjusted {n:,} RGBA pixels; kernels in color_ops.cl: {color_ops.__kernels__}; "
          f"GAMMA_TABLE_SIZE = {color_ops.GAMMA_TABLE_SIZE}")
    return {"rgba": rgba, "out": out, "luma": luma, "gain": 1.2, "offset": 10.0}


if __name__ == "__main__":
    main(example_size(1_000_000))
