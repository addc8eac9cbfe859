"""A 3x3 box blur of an RGB image stored as uint8: integer arithmetic, clamped edges, and a
(h, w, 3) array indexed with three subscripts.

    python examples/07_blur_rgb.py [width]

The sum of nine uint8 values does not fit in uint8, so each pixel's three channel sums live in
a private int32 array, `np.zeros(3, np.int32)` (one per work item), and are divided with // as
in Python. The helper `neighbour` returns a tuple, the clamped coordinates, unpacked at the call.
"""
import numpy as np
from _common import example_size, save_png

from pygpgpu import kernel


CHANNELS = 3


def clamp(v, lo, hi):
    return lo if v < lo else (hi if v > hi else v)


def neighbour(y, x, dy, dx, h, w):
    """The pixel at (y + dy, x + dx), its coordinates clamped to the image (a repeated edge)."""
    return clamp(y + dy, 0, h - 1), clamp(x + dx, 0, w - 1)


@kernel
def blur(img, out):
    for y, x in np.ndindex(out.shape[0], out.shape[1]):
        h, w = out.shape[0], out.shape[1]
        total = np.zeros(CHANNELS, np.int32)            # private: this pixel's sums
        for dy in range(-1, 2):
            for dx in range(-1, 2):
                yy, xx = neighbour(y, x, dy, dx, h, w)
                for c in range(CHANNELS):
                    total[c] += img[yy, xx, c]
        for c in range(CHANNELS):
            out[y, x, c] = total[c] // 9


def test_image(height: int, width: int) -> np.ndarray:
    """Stripes, a gradient and noise: something a blur visibly changes."""
    y, x = np.mgrid[0:height, 0:width]
    rng = np.random.default_rng(4)
    img = np.zeros((height, width, 3), np.uint8)
    img[..., 0] = np.where((x // 8) % 2 == 0, 230, 20)
    img[..., 1] = (255 * y / max(height - 1, 1)).astype(np.uint8)
    img[..., 2] = rng.integers(0, 256, (height, width), dtype=np.uint8)
    return img


def host_blur(img: np.ndarray) -> np.ndarray:
    padded = np.pad(img.astype(np.int32), ((1, 1), (1, 1), (0, 0)), mode="edge")
    h, w = img.shape[:2]
    total = sum(padded[1 + dy: 1 + dy + h, 1 + dx: 1 + dx + w] for dy in (-1, 0, 1) for dx in (-1, 0, 1))
    return (total // 9).astype(np.uint8)


def main(width: int = 960) -> dict:
    img = test_image(width * 9 // 16, width)
    out = np.empty_like(img)
    blur(img, out)
    print(f"blurred a {img.shape[1]}x{img.shape[0]} RGB image")
    save_png(np.concatenate([img, out], axis=1), "blur_rgb.png")     # before | after
    return {"img": img, "out": out}


if __name__ == "__main__":
    main(example_size(960))
