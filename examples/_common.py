"""Shared by the example programs: the problem size from the command line or the environment,
where pictures go, and writing them as PNG through Pillow (``pip install pillow``, or the
``examples`` extra of pygpgpu). Without Pillow every example still runs and says it skipped
its picture."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np

SIZE_ENV = "PYGPGPU_EXAMPLE_SIZE"
OUT_ENV = "PYGPGPU_EXAMPLE_OUT"


def example_size(default: int) -> int:
    """For a script's ``__main__`` block: ``python example.py 256`` or ``PYGPGPU_EXAMPLE_SIZE=256``,
    else ``default``."""
    text = sys.argv[1] if len(sys.argv) > 1 else os.environ.get(SIZE_ENV, "")
    if not text:
        return default
    size = int(text)
    if size <= 0:
        raise SystemExit(f"the size must be a positive integer, got {text!r}")
    return size


def size_for(device, gpu: int, cpu: int) -> int:
    """The default problem size on ``device``: ``cpu`` on a CPU device (PoCL runs OpenCL on two cores
    in seconds, not at GPU sizes), ``gpu`` elsewhere."""
    return cpu if getattr(device, "is_cpu", False) else gpu


def output_dir() -> Path:
    """``$PYGPGPU_EXAMPLE_OUT`` or ``examples/output/``."""
    folder = Path(os.environ.get(OUT_ENV) or Path(__file__).parent / "output")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _pillow():
    try:
        from PIL import Image, ImageDraw
    except ImportError:
        return None
    return Image, ImageDraw


def colorize(values: np.ndarray) -> np.ndarray:
    """A (h, w) array scaled to 0..1 -> (h, w, 3) uint8, dark blue through red to pale yellow."""
    anchors = np.array([[0, 0, 4], [40, 11, 84], [136, 34, 106], [212, 72, 66], [249, 142, 9], [252, 255, 164]],
                       dtype=np.float64)
    t = np.clip(np.nan_to_num(values.astype(np.float64)), 0.0, 1.0) * (len(anchors) - 1)
    lo = np.minimum(t.astype(int), len(anchors) - 2)
    frac = (t - lo)[..., None]
    return (anchors[lo] * (1 - frac) + anchors[lo + 1] * frac).astype(np.uint8)


def save_png(rgb: np.ndarray, name: str) -> "Path | None":
    """Write an (h, w, 3) uint8 image; None (and a note) without Pillow."""
    pil = _pillow()
    path = output_dir() / name
    if pil is None:
        print(f"skipped the picture {name}: Pillow is not installed (pip install pillow)")
        return None
    pil[0].fromarray(np.ascontiguousarray(rgb, dtype=np.uint8), "RGB").save(path)
    print(f"wrote {path}")
    return path


def save_bar_chart(labels: "list[str]", values: "list[float]", unit: str, name: str, title: str) -> "Path | None":
    """A horizontal bar chart as PNG (Pillow only, no plotting library); None without Pillow."""
    pil = _pillow()
    path = output_dir() / name
    if pil is None:
        print(f"skipped the chart {name}: Pillow is not installed (pip install pillow)")
        return None
    image_mod, draw_mod = pil
    row, left, width = 28, 260, 360
    image = image_mod.new("RGB", (left + width + 110, 40 + row * len(labels)), "white")
    draw = draw_mod.Draw(image)
    draw.text((10, 10), title, fill="black")
    top = max(values) or 1.0
    for k, (label, value) in enumerate(zip(labels, values)):
        y = 36 + k * row
        draw.text((10, y + 5), label[:40], fill="black")
        draw.rectangle([left, y, left + max(1, int(width * value / top)), y + row - 8], fill=(212, 72, 66))
        draw.text((left + int(width * value / top) + 6, y + 5), f"{value:.3g} {unit}", fill="black")
    image.save(path)
    print(f"wrote {path}")
    return path
