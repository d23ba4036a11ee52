"""Model files' bytes and hashes: what a download serves, and what the catalogue lists for it.

A file's bytes are a pure function of its :class:`Recipe`: the seed, the file's id, name,
format, precision and length in bytes. The seed plans each length (:func:`planned_length`),
makes the bytes once to hash them (:func:`file_hashes`) and stores ``sizeKB = length / 1024``;
a download makes the same bytes again from the stored row. So every hash the catalogue lists
is true for the bytes a client downloads, and ``sizeKB`` is exact.

Files are small (a few KiB; a large one, for AutoV1, a little over 2 MiB), whatever size
the platform's file would have: ``--scale large`` never writes gigabytes.

What the bytes are, by format (``kind_of``):

- ``safetensors``: a valid safetensors file: 8-byte little-endian header length, a JSON
  header (tensors sorted by offset, ``__metadata__`` of strings, padded with spaces to a
  multiple of 8), then the tensors' data (F16, BF16, F32 or F8_E4M3 from the file's ``fp``;
  small finite values), contiguous, covering the rest of the file.
- ``pickle`` (``.ckpt``, ``.pt``, PickleTensor): the zip layout PyTorch writes
  (``archive/data.pkl``, ``archive/byteorder``, ``archive/version``, ``archive/data/0``);
  the pickle is a plain dict of training facts (protocol 2, no globals).
- ``zip`` (training data, archives): tiny PNG images with captions, and a README.
- ``text`` (``.yaml``, ``.json``, ``.txt``): text lines.
- anything else: bytes from the recipe's random stream.

Zip and PNG are written here (stored entries, stored deflate blocks) rather than by
``zipfile``/``zlib.compress`` at a level: their output may change between Python or zlib
versions, and a changed byte changes every hash.

Hashes, as the platform lists them (upper-case hex; sources in docs/platform-shapes.md):

- SHA256: of the whole file. AutoV2: its first 10 digits.
- AutoV1: SHA256 of the 64 KiB at offset 1 MiB, first 8 digits; only for files of at least
  2 MiB (civitai/model-scanner leaves it out for smaller ones).
- AutoV3: SHA256 of a safetensors file's data after the header (the kohya/sd-webui
  "addnet" hash), first 12 digits; safetensors files only.
- CRC32: the CRC-32 (zlib polynomial) as .NET's ``Crc32.GetCurrentHash`` writes it: its
  four bytes little-endian ("hello world" gives ``85114A0D``).
- BLAKE3: 32-byte digest of the whole file (the ``blake3`` package).
"""

from __future__ import annotations

import hashlib
import math
import pickle
import struct
import zlib
from dataclasses import dataclass
from random import Random

import blake3
import orjson

AUTOV1_OFFSET = 0x100000          # 1 MiB
AUTOV1_SPAN = 0x10000             # 64 KiB
AUTOV1_MIN_BYTES = 2 * 0x100000   # civitai/model-scanner computes AutoV1 from 2 MiB on
AUTOV2_DIGITS = 10
AUTOV3_DIGITS = 12                # the platform's truncate_autov3_hash trigger keeps 12
LARGE_BYTES = AUTOV1_MIN_BYTES + 64 * 1024  # the one file per seed that has an AutoV1
MAX_FILE_BYTES = 16 * 1024 * 1024  # more than any planned length: a download never makes more

# Bytes of one element, by safetensors dtype; the dtype of a file follows its ``fp``.
DTYPE_BYTES = {"F32": 4, "F16": 2, "BF16": 2, "F8_E4M3": 1}
FP_DTYPES = {"fp32": "F32", "fp16": "F16", "bf16": "BF16", "fp8": "F8_E4M3"}
DEFAULT_DTYPE = "F32"
PICKLE_EXTENSIONS = frozenset({"ckpt", "pt", "pth", "bin"})
TEXT_EXTENSIONS = frozenset({"yaml", "yml", "json", "txt"})
# Smallest length each kind is made at: room for its fixed parts.
MIN_BYTES = {"safetensors": 512, "pickle": 1024, "zip": 1536, "text": 64, "blob": 16}
ZIP_DATE = (0x0021, 0x0000)        # DOS date 1980-01-01, time 00:00 (what a fixed-date zip carries)
PNG_SIDE = 8


@dataclass(frozen=True)
class Recipe:
    """Everything a file's bytes are made from (all of it stored in the file's row, or the seed)."""

    seed: int
    file_id: int
    name: str
    format: str | None
    fp: str | None
    length: int

    @property
    def kind(self) -> str:
        return kind_of(self.name, self.format)

    def stream(self) -> Random:
        # A str seed is hashed with SHA-512 by Random: the same sequence on every platform.
        return Random(f"blockkit-file:{self.seed}:{self.file_id}")


def kind_of(name: str, fmt: str | None) -> str:
    ext = name.rsplit(".", 1)[-1].lower() if "." in name else ""
    if fmt == "SafeTensor" or ext == "safetensors":
        return "safetensors"
    if fmt == "PickleTensor" or ext in PICKLE_EXTENSIONS:
        return "pickle"
    if ext == "zip":
        return "zip"
    if ext in TEXT_EXTENSIONS:
        return "text"
    return "blob"


def planned_length(seed: int, file_id: int, name: str, fmt: str | None, declared_kb: float, *,
                   large: bool = False) -> int:
    """The length the seed gives a file: a few KiB, growing with the log of the platform-like size
    ``declared_kb`` (a checkpoint stays larger than an embedding), a multiple of 8.

    ``large``: just over 2 MiB, so that the file has an AutoV1.
    """
    jitter = Random(f"blockkit-length:{seed}:{file_id}").randrange(0, 512)
    if large:
        length = LARGE_BYTES + jitter
    else:
        length = int(512 * (1 + math.log2(max(declared_kb, 0.0) + 1))) + jitter
    length = max(length, MIN_BYTES[kind_of(name, fmt)])
    return length - length % 8


# --- hashes -------------------------------------------------------------------------------------------

def recipe_hashes(recipe: Recipe, data: bytes) -> dict[str, str]:
    """The hashes of ``data``, the bytes of ``recipe``."""
    return file_hashes(data, safetensors=recipe.kind == "safetensors" and len(data) >= MIN_BYTES["safetensors"])


def file_hashes(data: bytes, *, safetensors: bool) -> dict[str, str]:
    """Every hash the platform computes for ``data`` (AutoV1 and AutoV3 only where they are defined)."""
    sha256 = hashlib.sha256(data).hexdigest().upper()
    out: dict[str, str] = {}
    if len(data) >= AUTOV1_MIN_BYTES:
        window = data[AUTOV1_OFFSET:AUTOV1_OFFSET + AUTOV1_SPAN]
        out["AutoV1"] = hashlib.sha256(window).hexdigest()[:8].upper()
    out["AutoV2"] = sha256[:AUTOV2_DIGITS]
    if safetensors:
        header_length = struct.unpack_from("<Q", data)[0]
        body = memoryview(data)[8 + header_length:]
        out["AutoV3"] = hashlib.sha256(body).hexdigest()[:AUTOV3_DIGITS].upper()
    out["SHA256"] = sha256
    out["CRC32"] = struct.pack("<I", zlib.crc32(data)).hex().upper()
    out["BLAKE3"] = blake3.blake3(data).hexdigest().upper()
    return out


# --- bytes ----------------------------------------------------------------------------------------------

def file_bytes(recipe: Recipe) -> bytes:
    """The file's bytes, exactly ``recipe.length`` of them."""
    kind = recipe.kind
    length = max(recipe.length, 0)
    if length < MIN_BYTES[kind]:
        kind = "blob"  # too short for its format's fixed parts: plain bytes, still the right length
    data = _MAKERS[kind](recipe, length)
    assert len(data) == length, (kind, len(data), length)
    return data


def _blob(recipe: Recipe, length: int) -> bytes:
    return recipe.stream().randbytes(length)


# Byte maps that turn random bytes into the high byte of small, finite floats.
def _table(fn: object) -> bytes:
    return bytes(fn(b) for b in range(256))  # type: ignore[operator]


# F16: sign, exponent 7..13 (2**-8 .. 2**-2), two mantissa bits kept.
_F16_HIGH = _table(lambda b: (b & 0x80) | ((7 + ((b >> 2) & 0x1F) % 7) << 2) | (b & 0x03))
# F32 and BF16: sign, then the top 7 exponent bits 59..62 (2**-10 .. 2**-2 with the low bit).
_F32_HIGH = _table(lambda b: (b & 0x80) | (59 + (b & 0x7F) % 4))
# F8_E4M3: sign, exponent 1..6, three mantissa bits kept (never the NaN pattern).
_F8 = _table(lambda b: (b & 0x80) | ((1 + ((b >> 3) & 0x0F) % 6) << 3) | (b & 0x07))


def _tensor_data(rng: Random, dtype: str, size: int) -> bytes:
    raw = bytearray(rng.randbytes(size))
    step = DTYPE_BYTES[dtype]
    if dtype == "F8_E4M3":
        return bytes(raw.translate(_F8))
    table = _F16_HIGH if dtype == "F16" else _F32_HIGH
    raw[step - 1::step] = raw[step - 1::step].translate(table)
    return bytes(raw)


def _tensor_names(recipe: Recipe, count: int) -> list[str]:
    stem = recipe.name.rsplit(".", 1)[0].lower()
    if "vae" in stem:
        return [f"decoder.up.{i}.block.0.conv1.weight" for i in range(count)]
    if "t5" in stem or "txt" in stem or "encoder" in stem:
        return [f"encoder.block.{i}.layer.0.SelfAttention.q.weight" for i in range(count)]
    if "neg" in stem or recipe.length < 8192:
        return ["emb_params"] + [f"emb_params.{i}" for i in range(1, count)]
    return [f"model.diffusion_model.input_blocks.{i}.0.weight" for i in range(count)]


def _shape(elements: int) -> list[int]:
    for columns in (64, 32, 16, 8, 4, 2):
        if elements % columns == 0:
            return [elements // columns, columns]
    return [1, elements]


def _safetensors_header(recipe: Recipe, dtype: str, data_bytes: int, count: int) -> bytes:
    step = DTYPE_BYTES[dtype]
    elements = data_bytes // step
    header: dict[str, object] = {"__metadata__": {"format": "pt", "modelspec.title": recipe.name.rsplit(".", 1)[0],
                                                  "blockkit.file_id": str(recipe.file_id)}}
    start = 0
    for index, name in enumerate(_tensor_names(recipe, count)):
        part = elements // count + (elements % count if index == count - 1 else 0)
        header[name] = {"dtype": dtype, "shape": _shape(part), "data_offsets": [start, start + part * step]}
        start += part * step
    return orjson.dumps(header)


def _safetensors(recipe: Recipe, length: int) -> bytes:
    dtype = FP_DTYPES.get(recipe.fp or "", DEFAULT_DTYPE)
    count = 4 if length >= 8192 else 2 if length >= 4096 else 1
    # Whole elements in equal tensors, and the header a multiple of 8 (for a length that is one).
    quantum = max(8, DTYPE_BYTES[dtype] * count)
    room = 0
    while True:  # twice at most: a smaller data part never lengthens the header
        data_bytes = length - 8 - room
        data_bytes -= data_bytes % quantum
        header = _safetensors_header(recipe, dtype, data_bytes, count)
        room = length - 8 - data_bytes
        if len(header) <= room:
            break
        room = len(header) + (-len(header)) % 8
    header += b" " * (room - len(header))  # the format allows trailing spaces in the header
    return struct.pack("<Q", room) + header + _tensor_data(recipe.stream(), dtype, data_bytes)


def _zip(members: list[tuple[str, bytes]]) -> bytes:
    """A zip of stored (uncompressed) members with a fixed date."""
    out = bytearray()
    central = bytearray()
    for name, data in members:
        encoded = name.encode()
        crc = zlib.crc32(data)
        offset = len(out)
        out += struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, 0, ZIP_DATE[1], ZIP_DATE[0], crc, len(data),
                           len(data), len(encoded), 0) + encoded + data
        central += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 0x031E, 20, 0, 0, ZIP_DATE[1], ZIP_DATE[0], crc,
                               len(data), len(data), len(encoded), 0, 0, 0, 0, 0o100644 << 16, offset) + encoded
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(members), len(members), len(central), len(out), 0)
    return bytes(out + central + end)


def _zip_to_length(fixed: list[tuple[str, bytes]], last_name: str, fill: object, length: int) -> bytes:
    """``fixed`` members (the last ones dropped while they do not fit) then ``last_name``, whose
    content (``fill(n)``) takes the rest of ``length``."""
    overhead = len(_zip([*fixed, (last_name, b"")]))
    while overhead > length and fixed:
        fixed = fixed[:-1]
        overhead = len(_zip([*fixed, (last_name, b"")]))
    return _zip([*fixed, (last_name, fill(length - overhead))])  # type: ignore[operator]


_CAPTION_WORDS = ("detailed", "soft light", "portrait", "landscape", "cinematic", "masterpiece", "sharp focus",
                  "pastel", "night", "forest", "city", "watercolor", "studio", "close-up", "wide angle")
# Filler text: lines of caption words, cut at a random place of this corpus (fixed by the word list).
_FILLER = "".join("# " + ", ".join(_CAPTION_WORDS[(i * 7 + j * 3) % len(_CAPTION_WORDS)] for j in range(8)) + "\n"
                  for i in range(64))


def _text(rng: Random, size: int, lines: list[str]) -> bytes:
    """``lines`` then filler lines, cut to exactly ``size`` bytes, ending in a newline."""
    head = "".join(f"{line}\n" for line in lines)
    start = rng.randrange(len(_FILLER))
    need = max(0, size - len(head))
    filler = (_FILLER[start:] + _FILLER * (need // len(_FILLER) + 1))[:need]
    text = (head + filler)[:size]
    return (text[:-1] + "\n").encode() if size else b""


def _png(rng: Random) -> bytes:
    """A tiny valid PNG (8x8 RGB); its image data in a stored deflate block."""
    rows = b"".join(b"\x00" + rng.randbytes(PNG_SIDE * 3) for _ in range(PNG_SIDE))
    stored = b"\x78\x01" + b"\x01" + struct.pack("<HH", len(rows), len(rows) ^ 0xFFFF) + rows \
        + struct.pack(">I", zlib.adler32(rows))

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    header = struct.pack(">IIBBBBB", PNG_SIDE, PNG_SIDE, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", stored) + chunk(b"IEND", b"")


def _archive(recipe: Recipe, length: int) -> bytes:
    rng = recipe.stream()
    stem = recipe.name.rsplit(".", 1)[0]
    members: list[tuple[str, bytes]] = []
    budget = length - 1024
    index = 1
    while budget > 400 and index <= 4:
        image = _png(rng)
        caption = _text(rng, 48 + rng.randrange(48), [])
        members += [(f"{stem}/{index:04d}.png", image), (f"{stem}/{index:04d}.txt", caption)]
        budget -= len(image) + len(caption) + 2 * (46 + 30 + 2 * len(stem) + 20)
        index += 1
    return _zip_to_length(members, f"{stem}/README.txt",
                          lambda n: _text(rng, n, [f"{recipe.name}: {index - 1} images with captions"]), length)


def _pickle(recipe: Recipe, length: int) -> bytes:
    rng = recipe.stream()
    facts = {"epoch": rng.randrange(1, 40), "global_step": rng.randrange(1000, 90000),
             "state_dict_keys": [f"model.diffusion_model.input_blocks.{i}.0.weight" for i in range(4)]}
    fixed = [("archive/data.pkl", pickle.dumps(facts, protocol=2)), ("archive/byteorder", b"little"),
             ("archive/version", b"3\n")]
    return _zip_to_length(fixed, "archive/data/0", lambda n: _tensor_data(rng, "F16", n - n % 2) + b"\0" * (n % 2),
                          length)


def _config(recipe: Recipe, length: int) -> bytes:
    lines = ["model:", "  target: ldm.models.diffusion.ddpm.LatentDiffusion", "  params:",
             "    linear_start: 0.00085", "    linear_end: 0.012", "    timesteps: 1000", "    scale_factor: 0.18215"]
    return _text(recipe.stream(), length, lines)


_MAKERS = {"safetensors": _safetensors, "pickle": _pickle, "zip": _archive, "text": _config, "blob": _blob}
