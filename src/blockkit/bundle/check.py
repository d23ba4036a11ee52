"""``check_bundle``: a submission's zip judged as the platform's ``submitVersion`` judges it.

The zip is read from memory or from its file, never extracted to disk. Every cap is
enforced before memory is spent on what it bounds: the bundle's size before it is read,
the number of entries from the archive's end record before its central directory is
parsed, each entry's declared size before it is decompressed, and the decompressed bytes
again as they are counted, since a header can lie (a zip bomb's does). At most one entry
(itself capped at 10 MiB) is held in memory at a time.
"""

from __future__ import annotations

import copy
import hashlib
import io
import os
import stat
import struct
import zipfile
import zlib
from dataclasses import dataclass, field
from typing import IO, Any, Optional, Union

from blockkit.bundle import rules as R
from blockkit.context import Context
from blockkit.platform import (
    BUNDLE_LIMITS,
    DEFAULT_APP_DOMAIN,
    MANIFEST_FILENAME,
    SCREENSHOT_BYTES_MAX,
    SCREENSHOT_DIR,
    SCREENSHOT_EXTENSIONS,
    SCREENSHOT_NAME_PATTERN,
    SCREENSHOTS_MAX,
    SUBMIT_BODY_KEY,
)
from blockkit.report import FileReport, Finding, Report, new_finding
from blockkit.rules.base import Rule

BundleInput = Union[bytes, bytearray, memoryview, str, "os.PathLike[str]"]

_CHUNK = 64 * 1024
# Bytes looked at to tell a binary file (a NUL among them) from text, as git does.
_BINARY_PROBE = 8192
# Compression methods the platform's zip library (JSZip) reads: stored and deflate.
_READABLE_METHODS = {zipfile.ZIP_STORED: "stored", zipfile.ZIP_DEFLATED: "deflate"}
_EOCD = b"PK\x05\x06"
_EOCD_SIZE = 22
_ZIP64_LOCATOR = b"PK\x06\x07"
_ZIP64_EOCD = b"PK\x06\x06"
_S_IFLNK = stat.S_IFLNK
_UNIX = 3  # ZipInfo.create_system of an archive made on a Unix system


@dataclass(frozen=True)
class FileMeta:
    """One file of the bundle as the platform records it: path, sha256 of its content, size."""

    path: str
    sha256: str
    size: int

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "sha256": self.sha256, "sizeBytes": self.size}


@dataclass
class BundleReport(Report):
    """The verdict on a bundle (a ``Report``), with what the platform computes from it.

    ``files`` holds one FileReport for the bundle itself (first), one for the manifest, and
    one for each file with a finding. ``entries``: every file (path, sha256, size), sorted.
    ``file_summary`` and ``manifest_diff`` are the platform's fileSummary and
    manifestDiffSummary (against ``previous``, or as a first version); None when the bundle
    could not be read that far.
    """

    label: str = "<bundle>"
    bundle_sha256: Optional[str] = None
    compressed_bytes: int = 0
    decompressed_bytes: Optional[int] = None
    base64_chars: int = 0
    request_body_bytes: int = 0
    entries: list[FileMeta] = field(default_factory=list)
    manifest: Optional[dict[str, Any]] = field(default=None, repr=False)  # as stored: iframe.src stamped
    file_summary: Optional[dict[str, Any]] = None
    manifest_diff: Optional[dict[str, Any]] = None
    # The manifest's bytes as found in the bundle: what a later bundle is compared with.
    manifest_bytes: Optional[bytes] = field(default=None, repr=False)
    # The manifest's own verdict (one of ``files``), once the bundle was read that far.
    manifest_report: Optional[FileReport] = field(default=None, repr=False)

    def sizes(self) -> dict[str, Any]:
        return {
            "compressed": self.compressed_bytes,
            "decompressed": self.decompressed_bytes,
            "base64": self.base64_chars,
            "request_body": self.request_body_bytes,
            "limits": {
                "bundle": BUNDLE_LIMITS.bundle_bytes_max,
                "decompressed": BUNDLE_LIMITS.decompressed_bytes_max,
                "file": BUNDLE_LIMITS.file_bytes_max,
                "files": BUNDLE_LIMITS.files_max,
                "route_body": BUNDLE_LIMITS.route_body_bytes_max,
                "proxy_body": BUNDLE_LIMITS.proxy_body_bytes_max,
            },
        }

    def to_json(self) -> dict[str, Any]:
        document = super().to_json()
        document["bundle"] = {
            "path": self.label,
            "sha256": self.bundle_sha256,
            "sizes": self.sizes(),
            "files": len(self.entries),
            "file_summary": self.file_summary,
            "manifest_diff": self.manifest_diff,
        }
        return document


class _Verdict:
    """Findings as they are made: the bundle's own, and each entry's under its path."""

    def __init__(self, label: str, prefix: str) -> None:
        self.label = label
        self.prefix = prefix
        self.bundle: list[Finding] = []
        self.by_entry: dict[str, list[Finding]] = {}

    def add(self, rule: Rule, message: str, hint: Optional[str] = None, entry: Optional[str] = None,
            line: int = 1, column: int = 1, end_column: int = 1) -> None:
        finding = new_finding(rule.code, rule.severity, rule.layer, message, "", line, column, line,
                              max(end_column, column), hint)
        if entry is None:
            self.bundle.append(finding)
        else:
            self.by_entry.setdefault(entry, []).append(finding)

    def entry_reports(self) -> list[FileReport]:
        return [FileReport(path=self.prefix + name, findings=sorted(found, key=lambda f: (f.line, f.column, f.code)))
                for name, found in sorted(self.by_entry.items())]


def _mib(size: int) -> str:
    return f"{size / (1024 * 1024):.1f} MiB"


def check_bundle(data: BundleInput, context: Optional[Context] = None, *,
                 previous: "BundleInput | BundleReport | None" = None, label: Optional[str] = None,
                 prefix: str = "", scan_credentials: bool = True) -> BundleReport:
    """Judge the zip ``data`` (its bytes, or the path of the file) as the platform's submitVersion does.

    ``context``: the platform's state for the manifest's verdict (as ``blockkit.validate``).
    ``previous``: the bundle of the last approved version (bytes, a path, or its BundleReport),
    for the file summary, the manifest diff and the version guard (BK401...). ``label``: what
    the bundle is called in the report (default: its path, or ``<bundle>``); ``prefix``: put
    before an entry's name to make the path its findings are reported at (``blockkit package``
    passes the block's folder, so that a finding names the file on disk).

    Raises ``blockkit.UnreadableFile`` when ``data`` is a path that cannot be opened. A bundle
    that is not a zip, or is hostile, is a finding, never an exception.
    """
    from blockkit.engine import UnreadableFile

    context = context or Context()
    handle: IO[bytes]
    if isinstance(data, (bytes, bytearray, memoryview)):
        raw = data if isinstance(data, bytes) else bytes(data)
        size = len(raw)
        handle = io.BytesIO(raw)
        label = label or "<bundle>"
    else:
        path = os.fspath(data)
        label = label or str(path)
        try:
            handle = open(path, "rb")
            size = os.fstat(handle.fileno()).st_size
        except OSError as exc:
            raise UnreadableFile(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        report = _check(handle, size, context, label, prefix, scan_credentials)
    finally:
        handle.close()
    if report.manifest is not None or previous is not None:
        _compare_with_previous(report, previous, context)
    return report


def _check(handle: IO[bytes], size: int, context: Context, label: str, prefix: str,
           scan_credentials: bool) -> BundleReport:
    verdict = _Verdict(label, prefix)
    base64_chars = 4 * ((size + 2) // 3)
    report = BundleReport(label=label, compressed_bytes=size, base64_chars=base64_chars,
                          request_body_bytes=len(f'{{"{SUBMIT_BODY_KEY}":""}}') + base64_chars)
    try:
        _check_sizes(report, verdict)
        if size == 0 or size > BUNDLE_LIMITS.bundle_bytes_max:
            return report
        report.bundle_sha256 = _sha256_of(handle)
        _read_archive(handle, size, report, verdict, context, scan_credentials)
    finally:
        entries = verdict.entry_reports()
        manifest_file = report.manifest_report
        if manifest_file is not None:
            for entry in [e for e in entries if e.path == manifest_file.path]:
                manifest_file.findings.extend(entry.findings)  # a credential in the manifest itself
                manifest_file.sort()
                entries.remove(entry)
        report.files = [FileReport(path=label, findings=verdict.bundle),
                        *([manifest_file] if manifest_file is not None else []), *entries]
    return report


def _check_sizes(report: BundleReport, verdict: _Verdict) -> None:
    size = report.compressed_bytes
    if size == 0:
        verdict.add(R.BUNDLE_EMPTY, "the bundle is empty (0 bytes)")
        return
    if size > BUNDLE_LIMITS.bundle_bytes_max:
        verdict.add(R.BUNDLE_TOO_LARGE, f"the bundle is {size} bytes ({_mib(size)}); the platform accepts at most "
                                        f"{BUNDLE_LIMITS.bundle_bytes_max} ({_mib(BUNDLE_LIMITS.bundle_bytes_max)})",
                    hint="leave media, build output and dependencies out of the bundle")
    body = report.request_body_bytes
    if body > BUNDLE_LIMITS.route_body_bytes_max or report.base64_chars > BUNDLE_LIMITS.base64_chars_max:
        verdict.add(R.BODY_OVER_ROUTE_LIMIT, f"the submit request's body would be {body} bytes ({_mib(body)}) once "
                                             f"base64-encoded; the submit route accepts at most "
                                             f"{BUNDLE_LIMITS.route_body_bytes_max} "
                                             f"({_mib(BUNDLE_LIMITS.route_body_bytes_max)})")
    elif body > BUNDLE_LIMITS.proxy_body_bytes_max:
        verdict.add(R.BODY_OVER_PROXY_LIMIT, f"the submit request's body would be {body} bytes ({_mib(body)}) once "
                                             f"base64-encoded; the platform's proxy lets through at most "
                                             f"{BUNDLE_LIMITS.proxy_body_bytes_max} "
                                             f"({_mib(BUNDLE_LIMITS.proxy_body_bytes_max)}), and answers a larger "
                                             "one with \"400: Invalid JSON\"",
                    hint=f"keep the zip under {BUNDLE_LIMITS.proxy_body_bytes_max * 3 // 4 - 64} bytes")


def _sha256_of(handle: IO[bytes]) -> str:
    digest = hashlib.sha256()
    handle.seek(0)
    while chunk := handle.read(1024 * 1024):
        digest.update(chunk)
    handle.seek(0)
    return digest.hexdigest()


def declared_entry_count(handle: IO[bytes], size: int, stop_after: int) -> Optional[int]:
    """How many entries the archive's central directory holds, from its end record (zip64
    included) and by walking the records' fixed headers (46 bytes each, nothing kept), which
    stops after ``stop_after``: an end record can understate the count, and the zip reader
    parses every record the directory's size covers. None when there is no end record."""
    tail_size = min(size, _EOCD_SIZE + 0xFFFF)
    handle.seek(size - tail_size)
    tail = handle.read(tail_size)
    at = tail.rfind(_EOCD)
    while at >= 0 and len(tail) - at < _EOCD_SIZE:
        at = tail.rfind(_EOCD, 0, at)
    if at < 0:
        return None
    count, directory_size = struct.unpack_from("<HI", tail, at + 10)
    directory_end = size - tail_size + at  # the directory ends where the end record starts
    if at >= 20 and tail[at - 20:at - 16] == _ZIP64_LOCATOR:
        (record_offset,) = struct.unpack_from("<Q", tail, at - 20 + 8)
        if record_offset + 56 <= size:
            handle.seek(record_offset)
            record = handle.read(56)
            if record[:4] == _ZIP64_EOCD:
                count, directory_size = struct.unpack_from("<QQ", record, 32)
                directory_end = size - tail_size + at - 20 - 56
    start = directory_end - directory_size
    walked = 0
    if 0 <= start <= directory_end:
        handle.seek(start)
        position = start
        while position + 46 <= directory_end and walked <= stop_after:
            header = handle.read(46)
            if len(header) < 46 or header[:4] != b"PK\x01\x02":
                break
            name, extra, comment = struct.unpack_from("<HHH", header, 28)
            position += 46 + name + extra + comment
            handle.seek(position)
            walked += 1
    return max(count, walked)


def _unsafe_name(name: str) -> Optional[str]:
    if "\x00" in name:
        return "holds a NUL character"
    if "\\" in name:
        return "holds a backslash"
    if name.startswith("/"):
        return "is an absolute path"
    if len(name) >= 2 and name[1] == ":" and name[0].isalpha():
        return "starts with a drive letter"
    if ".." in name.split("/"):
        return "holds a '..' segment"
    return None


def _read_archive(handle: IO[bytes], size: int, report: BundleReport, verdict: _Verdict, context: Context,
                  scan_credentials: bool) -> None:
    declared = declared_entry_count(handle, size, BUNDLE_LIMITS.entries_max)
    if declared is None:
        verdict.add(R.BUNDLE_UNREADABLE, "the bundle is not a zip archive (no end of central directory record)")
        return
    if declared > BUNDLE_LIMITS.entries_max:
        verdict.add(R.TOO_MANY_FILES, f"the bundle's central directory holds at least {declared} entries; the "
                                      f"platform accepts at most {BUNDLE_LIMITS.files_max} files (refused before its "
                                      "entries were read)")
        return
    handle.seek(0)
    try:
        archive = zipfile.ZipFile(handle)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError, struct.error,
            NotImplementedError, RuntimeError) as exc:
        verdict.add(R.BUNDLE_UNREADABLE, f"the bundle is not a readable zip archive: {exc}")
        return
    with archive:
        _read_entries(archive, report, verdict, context, scan_credentials)


def _read_entries(archive: zipfile.ZipFile, report: BundleReport, verdict: _Verdict, context: Context,
                  scan_credentials: bool) -> None:
    infos = archive.infolist()
    files = [info for info in infos if not info.filename.endswith("/")]
    if not files:
        verdict.add(R.BUNDLE_EMPTY, "the bundle holds no file (only directories)" if infos
                    else "the bundle holds no file")
        return
    if len(files) > BUNDLE_LIMITS.files_max:
        verdict.add(R.TOO_MANY_FILES, f"the bundle holds {len(files)} files; the platform accepts at most "
                                      f"{BUNDLE_LIMITS.files_max}",
                    hint="leave node_modules, build output and caches out")
        return
    seen: dict[str, int] = {}
    for info in files:
        seen[info.filename] = seen.get(info.filename, 0) + 1
    for name, count in sorted(seen.items()):
        if count > 1:
            verdict.add(R.DUPLICATE_ENTRY, f"the entry {name!r} appears {count} times; readers disagree on which "
                                           "copy counts", hint="build the zip anew instead of appending to it")
    declared_total = sum(info.file_size for info in files)
    if declared_total > BUNDLE_LIMITS.decompressed_bytes_max:
        verdict.add(R.DECOMPRESSED_TOO_LARGE, f"the bundle's entries declare {declared_total} bytes decompressed; "
                                              f"the platform accepts at most {BUNDLE_LIMITS.decompressed_bytes_max} "
                                              f"({_mib(BUNDLE_LIMITS.decompressed_bytes_max)}): a zip bomb, or too "
                                              "much content (nothing was decompressed)")
        return
    screenshots = [info.filename for info in files if info.filename.startswith(SCREENSHOT_DIR)]
    if len(screenshots) > SCREENSHOTS_MAX:
        verdict.add(R.SCREENSHOT_INVALID, f"the bundle has {len(screenshots)} files under {SCREENSHOT_DIR}; the "
                                          f"platform accepts at most {SCREENSHOTS_MAX} screenshots")
    metas: list[FileMeta] = []
    manifest_bytes: Optional[bytes] = None
    total = 0
    reported_names: set[str] = set()
    for info in files:
        name = info.filename
        problem = _unsafe_name(name)
        if problem is not None:
            if name not in reported_names:
                verdict.add(R.UNSAFE_PATH, f"the entry name {name!r} {problem}: extracting it may write outside "
                                           "the block's folder")
                reported_names.add(name)
            entry_key: Optional[str] = None  # never used as a path
        else:
            entry_key = name
        if info.create_system == _UNIX and stat.S_IFMT(info.external_attr >> 16) == _S_IFLNK:
            verdict.add(R.SYMLINK_ENTRY, f"the entry {name!r} is a symbolic link", entry=entry_key,
                        hint="replace the link by the file it points at, or leave it out")
            continue
        if info.flag_bits & 0x1:
            verdict.add(R.BUNDLE_UNREADABLE, f"the entry {name!r} is encrypted", entry=entry_key)
            continue
        if info.compress_type not in _READABLE_METHODS:
            verdict.add(R.BUNDLE_UNREADABLE, f"the entry {name!r} uses compression method {info.compress_type}; "
                                             "the platform reads only stored and deflate", entry=entry_key)
            continue
        if info.file_size > BUNDLE_LIMITS.file_bytes_max:
            verdict.add(R.FILE_TOO_LARGE, f"{name} is {info.file_size} bytes ({_mib(info.file_size)}) "
                                          f"decompressed; the platform accepts at most "
                                          f"{BUNDLE_LIMITS.file_bytes_max} ({_mib(BUNDLE_LIMITS.file_bytes_max)}) "
                                          "per file", entry=entry_key)
            continue
        outcome = _read_entry(archive, info, BUNDLE_LIMITS.decompressed_bytes_max - total)
        if isinstance(outcome, str):
            rule = R.DECOMPRESSED_TOO_LARGE if outcome.startswith("total:") else (
                R.FILE_TOO_LARGE if outcome.startswith("file:") else R.BUNDLE_UNREADABLE)
            message = outcome.split(":", 1)[1]
            verdict.add(rule, f"{name}: {message}", entry=entry_key if rule is not R.DECOMPRESSED_TOO_LARGE else None)
            if rule is R.DECOMPRESSED_TOO_LARGE:
                return
            continue
        content, digest = outcome
        total += len(content)
        metas.append(FileMeta(name, digest, len(content)))
        if name == MANIFEST_FILENAME:
            manifest_bytes = content
        if name.startswith(SCREENSHOT_DIR):
            problem = _screenshot_problem(name[len(SCREENSHOT_DIR):], content)
            if problem is not None:
                verdict.add(R.SCREENSHOT_INVALID, f"{name} {problem}", entry=entry_key)
        if scan_credentials and entry_key is not None:
            _scan(content, entry_key, verdict)
    metas.sort(key=lambda meta: meta.path)
    report.entries = metas
    report.decompressed_bytes = total
    if manifest_bytes is None:
        if MANIFEST_FILENAME not in seen:
            verdict.add(R.MANIFEST_MISSING, f"the bundle has no {MANIFEST_FILENAME} at its root",
                        hint="zip the block's folder itself, so that the manifest is at the root")
        return
    _judge_manifest(manifest_bytes, report, verdict, context)


def _read_entry(archive: zipfile.ZipFile, info: zipfile.ZipInfo, remaining_total: int) -> "tuple[bytes, str] | str":
    """The entry's content and sha256, or why not: "file:...", "total:..." or "bad:..."."""
    digest = hashlib.sha256()
    chunks: list[bytes] = []
    count = 0
    try:
        with archive.open(info) as stream:
            while True:
                chunk = stream.read(_CHUNK)
                if not chunk:
                    break
                count += len(chunk)
                if count > BUNDLE_LIMITS.file_bytes_max:
                    return (f"file:decompresses to more than {BUNDLE_LIMITS.file_bytes_max} bytes "
                            f"({_mib(BUNDLE_LIMITS.file_bytes_max)}), the platform's cap per file, although its "
                            f"header declares {info.file_size}")
                if count > remaining_total:
                    return (f"total:the bundle decompresses to more than {BUNDLE_LIMITS.decompressed_bytes_max} "
                            f"bytes ({_mib(BUNDLE_LIMITS.decompressed_bytes_max)}): a zip bomb, or too much content")
                digest.update(chunk)
                chunks.append(chunk)
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError, NotImplementedError, RuntimeError,
            struct.error) as exc:
        return f"bad:its data cannot be read ({exc})"
    if count != info.file_size:
        return f"bad:its header declares {info.file_size} bytes but it holds {count}"
    return b"".join(chunks), digest.hexdigest()


def _screenshot_problem(filename: str, content: bytes) -> Optional[str]:
    """Why ``screenshots/<filename>`` is not a screenshot the platform accepts, or None."""
    import re

    if "/" in filename or "\\" in filename or not re.match(SCREENSHOT_NAME_PATTERN, filename):
        return "is not a flat screenshot name like screenshots/shot-1.png (no folder, no leading dot)"
    dot = filename.rfind(".")
    extension = filename[dot + 1:].lower() if dot > 0 else ""
    if extension not in SCREENSHOT_EXTENSIONS:
        return f"must be one of: {', '.join(SCREENSHOT_EXTENSIONS)}"
    if len(content) > SCREENSHOT_BYTES_MAX:
        return (f"is {len(content)} bytes; a screenshot may be at most {SCREENSHOT_BYTES_MAX} "
                f"({_mib(SCREENSHOT_BYTES_MAX)})")
    if extension == "png":
        matches = content[:8] == b"\x89PNG\r\n\x1a\n"
    elif extension == "webp":
        matches = len(content) >= 12 and content[:4] == b"RIFF" and content[8:12] == b"WEBP"
    else:
        matches = content[:3] == b"\xff\xd8\xff"
    if not matches:
        return f"is not a valid {extension.upper()} image (its bytes do not match the image signature)"
    return None


def _scan(content: bytes, name: str, verdict: _Verdict) -> None:
    from blockkit.bundle.secrets import scan_bytes

    if b"\x00" in content[:_BINARY_PROBE]:
        return
    for found in scan_bytes(content):
        verdict.add(R.CREDENTIAL, f"this line looks like it holds a credential: {found.name} (the value is "
                                  "not shown)", entry=name, line=found.line, column=found.column,
                    end_column=found.end_column,
                    hint="remove it, revoke it, and keep secrets in a file that is not packaged (.env.local)")


def _judge_manifest(raw: bytes, report: BundleReport, verdict: _Verdict, context: Context) -> None:
    from blockkit.api import validate

    report.manifest_bytes = raw
    manifest_report = validate(raw, context, path=verdict.prefix + MANIFEST_FILENAME)
    manifest_file = manifest_report.files[0]
    document = manifest_file.data
    manifest_file.data = None
    report.manifest_report = manifest_file
    if isinstance(document, dict):
        report.manifest = stamp_iframe_src(document, context.app_domain or DEFAULT_APP_DOMAIN)


def stamp_iframe_src(manifest: dict[str, Any], app_domain: str) -> dict[str, Any]:
    """A copy of ``manifest`` as the platform stores it: ``iframe.src`` is the app's own
    origin root, ``https://<blockId>.<app domain>/``, whatever the bundle said (the platform's
    stampCanonicalIframeSrc)."""
    stored = copy.deepcopy(manifest)
    block_id = stored.get("blockId")
    if isinstance(block_id, str):
        iframe = stored.get("iframe")
        iframe = dict(iframe) if isinstance(iframe, dict) else {}
        iframe["src"] = f"https://{block_id}.{app_domain}/"
        stored["iframe"] = iframe
    return stored


def _compare_with_previous(report: BundleReport, previous: "BundleInput | BundleReport | None",
                           context: Context) -> None:
    from blockkit.bundle.summary import file_summary, manifest_diff

    before: Optional[BundleReport] = None
    if previous is not None:
        if isinstance(previous, BundleReport):
            before = previous
        else:
            before = check_bundle(previous, context, label="<previous bundle>", scan_credentials=False)
        if before.manifest is None:
            report.files[0].findings.append(new_finding(
                R.PREVIOUS_UNREADABLE.code, R.PREVIOUS_UNREADABLE.severity, R.PREVIOUS_UNREADABLE.layer,
                f"the previous bundle {before.label} has no readable manifest object; the summary and the diff "
                "are those of a first version", "", 1, 1, 1, 1))
            before = None
    if report.manifest is None:
        return
    report.file_summary = file_summary(report.entries, before.entries if before else None)
    report.manifest_diff = manifest_diff(report.manifest, before.manifest if before else None)
    if before is not None and before.manifest_bytes is not None and report.manifest_bytes is not None:
        _version_guard(report, before)


def _version_guard(report: BundleReport, before: BundleReport) -> None:
    """The diff rules (BK401 the version must rise, BK409 the same blockId, ...) on the manifest."""
    from blockkit.diff import compare
    from blockkit.engine import source_for

    manifest_file = report.manifest_report
    assert manifest_file is not None and before.manifest_bytes is not None and report.manifest_bytes is not None
    old = source_for(before.manifest_bytes, before.label)
    new = source_for(report.manifest_bytes, manifest_file.path)
    manifest_file.findings.extend(compare(old, new))
    manifest_file.sort()
