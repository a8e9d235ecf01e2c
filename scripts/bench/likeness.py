"""How alike two renderings of a slide are: SSIM (Wang et al., 2004) on grey levels, over 8×8 windows.

Both pictures are scaled to the same size (``WIDTH`` pixels wide) first. The windows do not overlap and are
not Gaussian-weighted, as in the original's fast variant; constants K1 = 0.01, K2 = 0.03 on 8-bit levels.
1.0 is identical; an unrelated page scores near 0.
"""

import io

from PIL import Image

WIDTH = 480
WINDOW = 8
C1 = (0.01 * 255) ** 2
C2 = (0.03 * 255) ** 2


def ssim(first_png: bytes, second_png: bytes) -> float:
    first, second = _grey(first_png), _grey(second_png, size=_grey(first_png).size)
    width, height = first.size
    a, b = list(first.getdata()), list(second.getdata())
    scores = []
    for top in range(0, height - WINDOW + 1, WINDOW):
        for left in range(0, width - WINDOW + 1, WINDOW):
            xs = [a[row * width + column] for row in range(top, top + WINDOW) for column in range(left, left + WINDOW)]
            ys = [b[row * width + column] for row in range(top, top + WINDOW) for column in range(left, left + WINDOW)]
            scores.append(_window(xs, ys))
    return sum(scores) / len(scores) if scores else 1.0


def _grey(png: bytes, size: tuple[int, int] | None = None) -> Image.Image:
    with Image.open(io.BytesIO(png)) as image:
        flat = Image.new("RGB", image.size, (255, 255, 255))
        flat.paste(image.convert("RGBA"), mask=image.convert("RGBA").getchannel("A"))
        size = size or (WIDTH, max(1, round(image.height * WIDTH / image.width)))
        return flat.convert("L").resize(size, Image.Resampling.LANCZOS)


def _window(xs: list[int], ys: list[int]) -> float:
    n = len(xs)
    mean_x, mean_y = sum(xs) / n, sum(ys) / n
    var_x = sum((x - mean_x) ** 2 for x in xs) / (n - 1)
    var_y = sum((y - mean_y) ** 2 for y in ys) / (n - 1)
    covariance = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys, strict=True)) / (n - 1)
    numerator = (2 * mean_x * mean_y + C1) * (2 * covariance + C2)
    return numerator / ((mean_x**2 + mean_y**2 + C1) * (var_x + var_y + C2))
