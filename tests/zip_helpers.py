"""Zips for the bundle tests, honest ones and hostile ones, built byte by byte where zipfile would refuse.

pytest puts this folder on ``sys.path`` (tests/conftest.py), so tests import it as ``zip_helpers``.
"""

from __future__ import annotations

import io
import json
import struct
import zipfile
import zlib
from dataclasses import dataclass
from typing import Any, Optional, Sequence

from sample_manifests import PAGE_BLOCK


def manifest_bytes(document: Optional[dict[str, Any]] = None) -> bytes:
    return json.dumps(PAGE_BLOCK if document is None else document, indent=2).encode("utf-8")


def honest_zip(files: dict[str, bytes], *, manifest: Optional[dict[str, Any]] = None,
               with_manifest: bool = True) -> bytes:
    """A zip as zipfile writes it, with a valid manifest unless asked otherwise."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        if with_manifest:
            archive.writestr("block.manifest.json", manifest_bytes(manifest))
        for name, data in files.items():
            archive.writestr(name, data)
    return buffer.getvalue()


@dataclass
class RawEntry:
    """One entry of a hand-built zip: every header field can lie."""

    name: str
    data: bytes = b""
    deflate: bool = True
    declared_size: Optional[int] = None  # the decompressed size the headers claim (default: the truth)
    mode: Optional[int] = None  # a Unix mode for the external attributes (0o120777: a symbolic link)
    flags: int = 0

    def payload(self) -> tuple[bytes, int, int]:
        if self.deflate:
            compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
            body = compressor.compress(self.data) + compressor.flush()
            method = 8
        else:
            body, method = self.data, 0
        return body, method, zlib.crc32(self.data)


def raw_zip(entries: Sequence[RawEntry], *, declared_count: Optional[int] = None) -> bytes:
    """A zip written field by field: duplicate names, ``../`` names, links and lying sizes included."""
    out = io.BytesIO()
    central = io.BytesIO()
    for entry in entries:
        body, method, crc = entry.payload()
        name = entry.name.encode("utf-8")
        size = len(entry.data) if entry.declared_size is None else entry.declared_size
        offset = out.tell()
        flags = entry.flags | 0x800
        out.write(struct.pack("<4sHHHHHIIIHH", b"PK\x03\x04", 20, flags, method, 0, 0x21, crc, len(body), size,
                              len(name), 0))
        out.write(name)
        out.write(body)
        system = 3 if entry.mode is not None else 0
        attributes = (entry.mode << 16) if entry.mode is not None else 0
        central.write(struct.pack("<4sHHHHHHIIIHHHHHII", b"PK\x01\x02", (system << 8) | 20, 20, flags, method, 0,
                                  0x21, crc, len(body), size, len(name), 0, 0, 0, 0, attributes, offset))
        central.write(name)
    directory = central.getvalue()
    start = out.tell()
    out.write(directory)
    count = len(entries) if declared_count is None else declared_count
    out.write(struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, min(count, 0xFFFF), min(count, 0xFFFF),
                          len(directory), start, 0))
    return out.getvalue()


def manifest_entry(document: Optional[dict[str, Any]] = None) -> RawEntry:
    return RawEntry("block.manifest.json", manifest_bytes(document))
