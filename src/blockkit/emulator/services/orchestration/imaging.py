"""Images, for real: decode an input, upscale it with Pillow (Lanczos), draw procedural media.

Nothing here runs a model. An upscale resamples the real pixels; a "generated" image or a
seeded media file is a deterministic procedural picture (a four-corner gradient with
diagonal bands, colours from sha256 of its key), so a URL always resolves to the same bytes.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import io
import math
import re
from collections.abc import Callable

from PIL import Image, ImageDraw, UnidentifiedImageError

from blockkit.emulator import journal
from blockkit.emulator.services.errors import bad_request

MAX_INPUT_SIDE = 2048          # input cap: 2048 x 2048
MAX_OUTPUT_SIDE = 8192         # output cap: 8192 x 8192
MAX_INPUT_BYTES = 32 * 1024 * 1024
MAX_REPEATS = 3
# Price of an upscale (our decision): 4 Buzz per output megapixel, rounded up, at least 1.
UPSCALE_BUZZ_PER_MEGAPIXEL = 4
# Price of a procedural text-to-image output (our decision): the same rate per output image.
GENERATION_BUZZ_PER_MEGAPIXEL = 4

FORMATS = {"jpeg": ("JPEG", "image/jpeg"), "jpg": ("JPEG", "image/jpeg"), "png": ("PNG", "image/png"),
           "webp": ("WEBP", "image/webp")}
_DATA_URL = re.compile(r"data:(image/[a-z0-9.+-]+)?(;[^,]*)?;base64,(.*)", re.DOTALL | re.IGNORECASE)


def price(width: int, height: int, per_megapixel: int = UPSCALE_BUZZ_PER_MEGAPIXEL) -> int:
    """Buzz for an output of width x height: ceil(megapixels * rate), at least 1."""
    return max(1, math.ceil(width * height * per_megapixel / 1_000_000))


def upscaled_size(width: int, height: int, repeats: int) -> tuple[int, int]:
    factor = 2 ** repeats
    return width * factor, height * factor


def check_repeats(value: object) -> int:
    if value is None:
        return 1
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_REPEATS:
        journal.note_reason(f"numberOfRepeats is {journal.kind_of(value)}; an upscale repeats 1 to {MAX_REPEATS}"
                            " times (each doubles the sides)")
        raise bad_request("bad_repeats", f"numberOfRepeats must be an integer from 1 to {MAX_REPEATS}")
    return value


def decode_image(source: object, fetch: Callable[[str], bytes | None]) -> Image.Image:
    """The image of an input: a URL (``fetch`` resolves it, emulator origins only), a data URL or base64."""
    if not isinstance(source, str) or not source.strip():
        raise bad_request("bad_image", "image must be a URL, a data URL or a base64 string")
    source = source.strip()
    if source.lower().startswith(("http://", "https://")):
        data = fetch(source)
        if data is None:
            raise bad_request("bad_image", "image URL must point at this emulator's media or blobs"
                                           " (the emulator makes no network requests)")
    else:
        match = _DATA_URL.fullmatch(source)
        encoded = match.group(3) if match else source
        if len(encoded) > MAX_INPUT_BYTES * 4 // 3 + 4:
            raise bad_request("image_too_large", "the image is larger than 32 MB")
        try:
            data = base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError):
            raise bad_request("bad_image", "image is neither a URL, a data URL nor valid base64") from None
    try:
        image = Image.open(io.BytesIO(data))
    except (UnidentifiedImageError, OSError, Image.DecompressionBombError):
        raise bad_request("bad_image", "the image data is not a readable image (PNG, JPEG, WebP, GIF, ...)") from None
    width, height = image.size
    if width > MAX_INPUT_SIDE or height > MAX_INPUT_SIDE:  # checked from the header, before decoding pixels
        raise bad_request("image_too_large", f"the input is {width}x{height}; at most"
                                             f" {MAX_INPUT_SIDE}x{MAX_INPUT_SIDE} is accepted")
    try:
        image.load()
    except (OSError, Image.DecompressionBombError):
        raise bad_request("bad_image", "the image data is truncated or corrupt") from None
    return image


def check_output(width: int, height: int, repeats: int) -> tuple[int, int]:
    out = upscaled_size(width, height, repeats)
    if out[0] > MAX_OUTPUT_SIDE or out[1] > MAX_OUTPUT_SIDE:
        raise bad_request("output_too_large", f"{width}x{height} upscaled {repeats} time(s) is {out[0]}x{out[1]};"
                                              f" the output may be at most {MAX_OUTPUT_SIDE}x{MAX_OUTPUT_SIDE}")
    return out


def upscale(image: Image.Image, repeats: int) -> Image.Image:
    """The image at 2**repeats times its size, resampled with Lanczos in one pass."""
    mode = "RGBA" if image.mode in ("RGBA", "LA", "PA") or "transparency" in image.info else "RGB"
    source = image.convert(mode)
    return source.resize(upscaled_size(*source.size, repeats), Image.Resampling.LANCZOS)


def encode(image: Image.Image, fmt: str = "png") -> bytes:
    pil_format, _media = FORMATS[fmt]
    if pil_format == "JPEG" and image.mode != "RGB":
        image = image.convert("RGB")
    out = io.BytesIO()
    options = {"quality": 90} if pil_format in ("JPEG", "WEBP") else {"compress_level": 1}
    image.save(out, pil_format, **options)
    return out.getvalue()


def procedural(key: str, width: int, height: int) -> Image.Image:
    """A deterministic picture for ``key``: a gradient between four corner colours with diagonal bands."""
    digest = hashlib.sha256(key.encode("utf-8")).digest()
    corners = Image.new("RGB", (2, 2))
    corners.putdata([tuple(digest[i:i + 3]) for i in (0, 3, 6, 9)])  # type: ignore[misc]
    image = corners.resize((max(1, width), max(1, height)), Image.Resampling.BILINEAR)
    draw = ImageDraw.Draw(image)
    step = max(8, (min(width, height) // 6) or 8)
    band = tuple(digest[12:15])
    offset = digest[15] % step
    for x in range(-height + offset, width, step * 2):
        draw.polygon([(x, 0), (x + step // 2, 0), (x + step // 2 + height, height), (x + height, height)],
                     fill=band)  # type: ignore[arg-type]
    return image
