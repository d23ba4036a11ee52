"""Unpack a bundle the platform would accept into a folder, with every cap the verdict enforces.

``extract_bundle(data, dest)`` judges the zip first (``check_bundle``, without the credential
scan): a bundle with any error of the zip itself (caps, ``..`` or absolute names, duplicates,
links, encrypted or unreadable entries) is refused with :class:`BundleExtractError` and nothing
is written. The entries are then read again through the same capped reader and written under a
fresh folder next to ``dest``, which is renamed into place at the end: a half-written tree is
never left at ``dest``.
"""

from __future__ import annotations

import io
import os
import shutil
import tempfile
import zipfile
from pathlib import Path

from blockkit.bundle.check import _read_entry, _unsafe_name, check_bundle
from blockkit.platform import BUNDLE_LIMITS


class BundleExtractError(ValueError):
    """The bundle cannot be unpacked safely; the message says why, in one line."""


def _first_zip_error(data: bytes) -> str | None:
    report = check_bundle(data, scan_credentials=False)
    for file_report in report.files:
        if file_report is report.manifest_report:
            continue
        for finding in file_report.findings:
            # The request-body findings (BK511/BK512) are about uploading, not unpacking.
            if finding.severity == "error" and finding.layer == "bundle" and finding.code not in {"BK511", "BK512"}:
                where = "" if file_report is report.files[0] else f"{file_report.path}: "
                return f"{where}{finding.message}"
    return None


def extract_bundle(data: bytes, dest: Path) -> list[str]:
    """Unpack ``data`` (a zip) into ``dest``, which must not exist yet; the names written, sorted."""
    problem = _first_zip_error(data)
    if problem is not None:
        raise BundleExtractError(f"the bundle cannot be unpacked: {problem}")
    dest = Path(dest)
    if dest.exists():
        raise BundleExtractError(f"{dest} already exists")
    dest.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".unpack-", dir=dest.parent))
    written: list[str] = []
    try:
        root = staging.resolve()
        total = 0
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            for info in archive.infolist():
                name = info.filename
                if name.endswith("/"):
                    continue
                if _unsafe_name(name) is not None:  # check_bundle refused these already
                    raise BundleExtractError(f"the entry name {name!r} is unsafe")
                outcome = _read_entry(archive, info, BUNDLE_LIMITS.decompressed_bytes_max - total)
                if isinstance(outcome, str):
                    raise BundleExtractError(f"{name}: {outcome.split(':', 1)[1]}")
                content, _digest = outcome
                total += len(content)
                target = (root / name).resolve()
                if root not in target.parents:
                    raise BundleExtractError(f"the entry name {name!r} leaves the folder")
                target.parent.mkdir(parents=True, exist_ok=True)
                # O_EXCL: never follows a link, never writes twice.
                fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
                with os.fdopen(fd, "wb") as handle:
                    handle.write(content)
                written.append(name)
        os.rename(staging, dest)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return sorted(written)
