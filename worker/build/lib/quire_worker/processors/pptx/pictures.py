"""Pictures of a deck as project assets: byte-identical where Typst can show them, bounded always."""

import hashlib
import io
import warnings

from PIL import Image, UnidentifiedImageError

from quire_worker.processors.child_protocol import ConversionFailure
from quire_worker.processors.pptx.slide_model import ConversionReport, Frame, ImportBounds, PictureBlock

# Formats Typst places as they are (extension as python-pptx names it → asset extension).
TYPST_IMAGE_FORMATS = {"png": "png", "jpg": "jpg", "jpeg": "jpg", "gif": "gif", "webp": "webp"}
# Raster formats Typst cannot read but Pillow can re-encode losslessly as PNG.
CONVERTIBLE_FORMATS = frozenset({"bmp", "tiff", "tif"})

Image.MAX_IMAGE_PIXELS = None  # the import checks pixel counts itself, against its own bound


class AssetStore:
    """Collects asset files, one per distinct content, within the import's byte budget."""

    def __init__(self, bounds: ImportBounds):
        self._bounds = bounds
        self._path_by_digest: dict[str, str] = {}
        self._count_by_prefix: dict[str, int] = {}
        self.files: dict[str, bytes] = {}
        self.total_bytes = 0

    def add(self, data: bytes, *, extension: str, prefix: str = "assets/image") -> str:
        digest = hashlib.sha256(data).hexdigest()
        if digest in self._path_by_digest:
            return self._path_by_digest[digest]
        self.total_bytes += len(data)
        if self.total_bytes > self._bounds.max_total_picture_bytes:
            raise ConversionFailure(
                "resource_limit",
                "pictures_too_large",
                f"The pictures add up to more than {self._bounds.max_total_picture_bytes} bytes.",
            )
        number = self._count_by_prefix[prefix] = self._count_by_prefix.get(prefix, 0) + 1
        path = f"{prefix}-{number:02d}.{extension}"
        self._path_by_digest[digest] = path
        self.files[path] = data
        return path


def picture_block(
    shape, frame: Frame, *, slide: int, bounds: ImportBounds, report: ConversionReport, assets: AssetStore
) -> PictureBlock | None:
    """The picture as a placed asset, or None (reported) when it cannot be shown."""
    try:
        image = shape.image
        blob, extension = image.blob, (image.ext or "").lower()
    except (ValueError, KeyError, AttributeError):
        report.dropped("picture", slide=slide, shape=shape.name, detail="linked or missing image")
        return None
    if len(blob) > bounds.max_picture_bytes:
        raise ConversionFailure(
            "resource_limit",
            "picture_too_large",
            f"A picture on slide {slide} has {len(blob)} bytes; the limit is {bounds.max_picture_bytes}.",
        )
    if extension not in TYPST_IMAGE_FORMATS and extension not in CONVERTIBLE_FORMATS:
        report.dropped("picture", slide=slide, shape=shape.name, detail=f"{extension or 'unknown'} image format")
        return None
    decoded = _decoded(blob, slide=slide, bounds=bounds)
    if decoded is None:
        report.dropped("picture", slide=slide, shape=shape.name, detail="unreadable image data")
        return None
    if extension in CONVERTIBLE_FORMATS:
        report.approximated("picture", slide=slide, shape=shape.name, detail=f"{extension} converted to PNG")
        asset = assets.add(_as_png(decoded), extension="png")
    else:
        asset = assets.add(blob, extension=TYPST_IMAGE_FORMATS[extension])
    return PictureBlock(frame=frame, asset_path=asset, crop=_crop(shape), description=_description(shape))


def _decoded(blob: bytes, *, slide: int, bounds: ImportBounds) -> Image.Image | None:
    """The fully decoded image (so Typst will not meet data it cannot read), after a pixel check."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            image = Image.open(io.BytesIO(blob))
            width, height = image.size
            if width * height > bounds.max_picture_pixels:
                raise ConversionFailure(
                    "resource_limit",
                    "picture_too_many_pixels",
                    f"A picture on slide {slide} is {width} x {height} pixels; the limit is "
                    f"{bounds.max_picture_pixels} pixels.",
                )
            image.load()
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError, EOFError):
        return None
    return image


def _as_png(image: Image.Image) -> bytes:
    output = io.BytesIO()
    image.save(output, format="PNG")
    return output.getvalue()


def _crop(shape) -> tuple[float, float, float, float]:
    try:
        crop = (shape.crop_left, shape.crop_top, shape.crop_right, shape.crop_bottom)
    except (AttributeError, ValueError):
        return (0.0, 0.0, 0.0, 0.0)
    if any(value < 0 or value >= 1 for value in crop) or crop[0] + crop[2] >= 1 or crop[1] + crop[3] >= 1:
        return (0.0, 0.0, 0.0, 0.0)
    return tuple(round(value, 5) for value in crop)


def _description(shape) -> str:
    try:
        return (shape._element.nvPicPr.cNvPr.get("descr") or "")[:500]
    except AttributeError:
        return ""
