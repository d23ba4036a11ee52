"""Publish requests: submit a block's bundle for review, list your submissions, withdraw one, and
the moderator's approve and reject (the platform's ``publish-request.service.ts``, facts only).

- ``submit_version(store, clock, submitter, bundle) -> {publishRequestId, slug, version, status}``;
- ``submissions(store, submitter, request_id=None, block_id=None) -> list of Submission dicts``;
- ``withdraw(store, clock, submitter, request_id)``;
- ``approve(store, clock, request_id, notes=None)`` and ``reject(store, clock, request_id, reason)``
  (the emulator's moderator controls: its CLI and ``/__emulator/submissions``);
- ``authorize(submitter, action)``: the gates every route applies after the bearer token is read
  (an OAuth token needs the Apps-submit bit; the caller must be an author and not banned).

The bundle's verdict comes from one function, :func:`judge_bundle`, so the zip reading (caps,
manifest) has one home. Every refusal is a :class:`SubmissionError` with the platform's status and
its ``{"message"}`` body.
"""

from __future__ import annotations

import hashlib
import io
import re
import secrets
import sqlite3
import zipfile
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import orjson

from blockkit.emulator.errors import ApiError, message_body
from blockkit.emulator.store import publish_requests as store_requests

if TYPE_CHECKING:
    from blockkit.emulator.store import Store
    from blockkit.emulator.store.clock import Clock

# --- the platform's facts (publish-request.schema.ts, the v1 blocks routes) -----------------------

APPS_SUBMIT_SCOPE = 1 << 25            # TokenScope.AppBlocksSubmit: opt-in, outside Full
MAX_BUNDLE_SIZE_BYTES = 50 * 1024 * 1024
MAX_FILES_IN_BUNDLE = 2000
MAX_FILE_SIZE_BYTES = 10 * 1024 * 1024
MAX_TOTAL_DECOMPRESSED_BYTES = 200 * 1024 * 1024
SUBMIT_BODY_LIMIT_BYTES = 72 * 1024 * 1024      # the route's bodyParser sizeLimit '72mb'
SMALL_BODY_LIMIT_BYTES = 8 * 1024               # withdraw and submissions: '8kb'
MAX_BUNDLE_BASE64_CHARS = -(-MAX_BUNDLE_SIZE_BYTES * 4 // 3) + 16
MANIFEST_PATH = "block.manifest.json"
SLUG_REGEX = re.compile(r"[a-z][a-z0-9-]*[a-z0-9]", re.ASCII)
SEMVER_REGEX = re.compile(r"(\d+)\.(\d+)\.(\d+)(-[0-9A-Za-z.-]+)?", re.ASCII)
REJECTION_REASON_MIN = 3
REJECTION_REASON_MAX = 2000
APPROVAL_NOTES_MAX = 2000
MAX_ROWS = 100
APPS_DOMAIN = "civit.ai"

# Fixed windows of 60 s: (requests allowed, what the window is counted per).
RATE_LIMITS: dict[str, int] = {"blocks-submit": 10, "blocks-submissions": 60, "blocks-withdraw": 30}
RATE_WINDOW_SECONDS = 60

Action = Literal["submit", "read", "withdraw"]
_SCOPE_WORDS = {"submit": "Submitting an App", "read": "App status", "withdraw": "Withdrawing an App"}
_RATE_BUCKETS = {"submit": "blocks-submit", "read": "blocks-submissions", "withdraw": "blocks-withdraw"}


class SubmissionError(ApiError):
    """A refused submission call: the platform's status and ``{"message": ...}`` body."""

    def __init__(self, status: int, message: str, *, headers: dict[str, str] | None = None,
                 extra: dict[str, Any] | None = None) -> None:
        body = message_body(message)
        if extra:
            body.update(extra)
        super().__init__(status, body, headers)
        self.message = message

    def __str__(self) -> str:
        return self.message


@dataclass(frozen=True)
class Submitter:
    """Who calls, as the bearer token resolved: a personal API key or an OAuth access token."""

    user_id: int
    username: str
    status: str                 # active | muted | banned
    is_moderator: bool
    credential: Literal["apiKey", "oauth"]
    credential_id: str          # the key's or the token's id: the submit route's rate-limit subject
    scope: int = 0              # the OAuth token's bitmask (0 for a personal key)


def authorize(submitter: Submitter, action: Action) -> None:
    """The token-type and author gates, in the platform's order (403 ``{message}`` when refused).

    The emulator's author cohort is the moderators (the platform's static fallback for its
    ``app-blocks-author`` flag); a banned account is refused whatever it is.
    """
    if submitter.credential == "oauth" and not submitter.scope & APPS_SUBMIT_SCOPE:
        raise SubmissionError(403, f"{_SCOPE_WORDS[action]} requires a personal API key or an OAuth token with"
                                   " the Apps submit scope")
    if submitter.status == "banned" or not submitter.is_moderator:
        raise SubmissionError(403, "Apps are restricted to the Civitai team")


def rate_limit(store: Store, clock: Clock, submitter: Submitter, action: Action) -> None:
    """Count this call in its fixed window; 429 with Retry-After past the limit.

    Submit counts per credential (the platform's per-API-key bucket), the others per user.
    """
    from blockkit.emulator.store import oauth as oauth_store

    bucket = _RATE_BUCKETS[action]
    subject = f"key:{submitter.credential_id}" if action == "submit" else f"u:{submitter.user_id}"
    with store.write() as db:
        count, left = oauth_store.hit(db, bucket, subject, now=clock.timestamp(), window=RATE_WINDOW_SECONDS)
    if count > RATE_LIMITS[bucket]:
        retry = max(left, 1)
        raise SubmissionError(429, "Rate limit exceeded", headers={"Retry-After": str(retry)},
                              extra={"retryAfterSeconds": retry, "limit": RATE_LIMITS[bucket],
                                     "windowSeconds": RATE_WINDOW_SECONDS})


# --- the bundle's verdict (one function: the library's check_bundle replaces its inside) -----------

@dataclass
class BundleVerdict:
    manifest: dict[str, Any] | None
    files: list[dict[str, Any]] = field(default_factory=list)   # [{path, size, sha256}]
    error: str | None = None                                      # the first refusal, in words


def judge_bundle(bundle: bytes) -> BundleVerdict:
    """The submit-time verdict on a zip: the caps, every file hashed, the manifest read.

    Reads the archive in memory only; an entry is read in chunks and given up as soon as it
    passes the per-file or the running total cap, whatever its header claims.
    """
    if len(bundle) > MAX_BUNDLE_SIZE_BYTES:
        return BundleVerdict(None, error=f"bundle is {len(bundle)} bytes (max {MAX_BUNDLE_SIZE_BYTES})")
    if not bundle:
        return BundleVerdict(None, error="bundle is empty")
    try:
        archive = zipfile.ZipFile(io.BytesIO(bundle))
        entries = [info for info in archive.infolist() if not info.is_dir()]
    except (zipfile.BadZipFile, ValueError, EOFError, OSError) as exc:
        return BundleVerdict(None, error=f"bundle is not a valid zip archive: {exc}")
    if not entries:
        return BundleVerdict(None, error="bundle is empty (no files)")
    if len(entries) > MAX_FILES_IN_BUNDLE:
        return BundleVerdict(None, error=f"bundle contains {len(entries)} files (max {MAX_FILES_IN_BUNDLE})")
    files: list[dict[str, Any]] = []
    seen: set[str] = set()
    total = 0
    manifest_bytes: bytes | None = None
    for info in entries:
        name = info.filename
        if name.startswith("/") or "\\" in name or ".." in name.split("/"):
            return BundleVerdict(None, error=f"bundle entry {name!r} has an unsafe path")
        if name in seen:
            return BundleVerdict(None, error=f"bundle has two entries named {name!r}")
        seen.add(name)
        digest = hashlib.sha256()
        size = 0
        keep = name == MANIFEST_PATH
        kept: list[bytes] = []
        try:
            with archive.open(info) as handle:
                while chunk := handle.read(1 << 16):
                    size += len(chunk)
                    total += len(chunk)
                    if size > MAX_FILE_SIZE_BYTES:
                        return BundleVerdict(None, error=f"{name} is over {MAX_FILE_SIZE_BYTES} bytes (max per file)")
                    if total > MAX_TOTAL_DECOMPRESSED_BYTES:
                        return BundleVerdict(None, error=f"bundle decompresses to more than"
                                                         f" {MAX_TOTAL_DECOMPRESSED_BYTES} bytes")
                    digest.update(chunk)
                    if keep:
                        kept.append(chunk)
        except (zipfile.BadZipFile, NotImplementedError, RuntimeError, EOFError, OSError, ValueError) as exc:
            return BundleVerdict(None, error=f"bundle entry {name} cannot be read: {exc}")
        if keep:
            manifest_bytes = b"".join(kept)
        files.append({"path": name, "size": size, "sha256": digest.hexdigest()})
    if manifest_bytes is None:
        return BundleVerdict(None, files, f"bundle is missing required file: {MANIFEST_PATH}")
    try:
        manifest = orjson.loads(manifest_bytes)
    except orjson.JSONDecodeError as exc:
        return BundleVerdict(None, files, f"{MANIFEST_PATH} is not valid JSON: {exc}")
    if not isinstance(manifest, dict):
        return BundleVerdict(None, files, f"{MANIFEST_PATH} must contain a JSON object")
    return BundleVerdict(manifest, files)


def _manifest_error(manifest: dict[str, Any]) -> str | None:
    """The platform's submit-time manifest checks: blockId, version, name."""
    block_id = manifest.get("blockId")
    if not isinstance(block_id, str):
        return "manifest.blockId must be a string"
    if not 3 <= len(block_id) <= 40 or not SLUG_REGEX.fullmatch(block_id):
        return (f'manifest.blockId "{block_id}" must be 3-40 chars, lowercase a-z/0-9/hyphens, start with a letter,'
                " end with a letter or digit")
    version = manifest.get("version")
    if not isinstance(version, str) or not SEMVER_REGEX.fullmatch(version):
        shown = version if isinstance(version, str) else ""
        return f'manifest.version "{shown}" must be semver (e.g. 0.1.0)'
    name = manifest.get("name")
    if not isinstance(name, str) or not name:
        return "manifest.name must be a non-empty string"
    return None


def semver_key(version: str) -> tuple[Any, ...]:
    """A sort key in semver precedence (a pre-release before its release; identifiers compared per spec)."""
    match = SEMVER_REGEX.fullmatch(version)
    assert match is not None
    release = tuple(int(part) for part in match.group(1, 2, 3))
    pre = match.group(4)
    if pre is None:
        return (release, 1, ())
    idents = tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in pre[1:].split("."))
    return (release, 0, idents)


def file_summary(files: list[dict[str, Any]], previous: list[dict[str, Any]] | None) -> dict[str, Any]:
    if previous is None:
        return {"files": files, "added": sorted(f["path"] for f in files), "removed": [], "changed": []}
    before = {f["path"]: f["sha256"] for f in previous}
    now = {f["path"]: f["sha256"] for f in files}
    return {"files": files, "added": sorted(set(now) - set(before)), "removed": sorted(set(before) - set(now)),
            "changed": sorted(p for p in now if p in before and before[p] != now[p])}


def manifest_diff(manifest: dict[str, Any], previous: dict[str, Any] | None) -> dict[str, Any]:
    if previous is None:
        return {"kind": "first-version", "fields": sorted(manifest)}
    changed = [{"field": k, "from": previous[k], "to": manifest[k]}
               for k in sorted(set(manifest) & set(previous)) if manifest[k] != previous[k]]
    return {"kind": "update", "added": sorted(set(manifest) - set(previous)),
            "removed": sorted(set(previous) - set(manifest)), "changed": changed}


# --- the calls ----------------------------------------------------------------------------------

def new_request_id() -> str:
    """``pubreq_`` and 26 Crockford base-32 characters (the platform's ULID form)."""
    alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
    return "pubreq_" + "".join(secrets.choice(alphabet) for _ in range(26))


def submit_version(store: Store, clock: Clock, submitter: Submitter, bundle: bytes) -> dict[str, Any]:
    """Judge the bundle and record a pending request; SubmissionError 400 with the first refusal."""
    verdict = judge_bundle(bundle)
    if verdict.error is not None or verdict.manifest is None:
        raise SubmissionError(400, verdict.error or "bundle refused")
    manifest = verdict.manifest
    problem = _manifest_error(manifest)
    if problem is not None:
        raise SubmissionError(400, problem)
    slug, version = manifest["blockId"], manifest["version"]
    request_id = new_request_id()
    with store.write() as db:
        pending = store_requests.pending_for_slug(db, slug)
        if pending is not None:
            if pending.submitted_by_user_id == submitter.user_id:
                raise SubmissionError(400, f"you already have a pending submission for slug {slug} ({pending.id});"
                                           f" withdraw it first with `blockkit withdraw {pending.id}` before"
                                           " resubmitting")
            raise SubmissionError(400, f"slug {slug} already has a pending submission from another user; wait for it"
                                       " to be reviewed before submitting a different bundle")
        approved = store_requests.latest_approved(db, slug)
        if approved is not None and approved.submitted_by_user_id != submitter.user_id:
            raise SubmissionError(400, f"slug {slug} belongs to another author; choose a different blockId")
        if approved is not None and semver_key(version) <= semver_key(approved.version):
            raise SubmissionError(400, f'manifest.version "{version}" must be greater than the approved version'
                                       f' "{approved.version}"')
        previous_files = approved.file_summary.get("files") if approved is not None else None
        try:
            store_requests.insert(
                db, id=request_id, slug=slug, version=version, name=manifest["name"], user_id=submitter.user_id,
                manifest=manifest, bundle=bundle, bundle_sha256=hashlib.sha256(bundle).hexdigest(),
                file_summary=file_summary(verdict.files, previous_files),
                manifest_diff_summary=manifest_diff(manifest, approved.manifest if approved else None),
                now=clock.iso())
        except sqlite3.IntegrityError:
            raise SubmissionError(400, f"slug {slug} already has a pending publish request (race window); withdraw"
                                       " the other or retry") from None
    return {"publishRequestId": request_id, "slug": slug, "version": version, "status": "pending"}


def shape(request: store_requests.PublishRequest) -> dict[str, Any]:
    """The submissions route's row: no bundle, no hashes, no submitter id."""
    live = request.status == "approved"
    return {
        "id": request.id, "blockId": request.slug, "appBlockId": None, "version": request.version,
        "status": request.status, "rejectionReason": request.rejection_reason,
        "approvalNotes": request.approval_notes, "deployState": "live" if live else None, "deployDetail": None,
        "deployUpdatedAt": request.reviewed_at if live else None, "submittedAt": request.submitted_at,
        "reviewedAt": request.reviewed_at, "updatedAt": request.updated_at, "createdAt": request.submitted_at,
        "liveUrl": f"https://{request.slug}.{APPS_DOMAIN}/" if live else None,
    }


def submissions(store: Store, submitter: Submitter, *, request_id: str | None = None,
                block_id: str | None = None) -> list[dict[str, Any]]:
    """The caller's own requests, newest first (narrowed by id or blockId, never widened)."""
    with store.read() as db:
        rows = store_requests.list_requests(db, user_id=submitter.user_id, request_id=request_id, slug=block_id,
                                            limit=MAX_ROWS)
    return [shape(row) for row in rows]


def withdraw(store: Store, clock: Clock, submitter: Submitter, request_id: str) -> None:
    """Withdraw the caller's own pending request (a no-op when already withdrawn).

    404 when it does not exist or is another user's (the same answer: no ownership oracle);
    409 when it is no longer pending.
    """
    with store.write() as db:
        row = store_requests.get(db, request_id)
        if row is None or row.submitted_by_user_id != submitter.user_id:
            raise SubmissionError(404, "Publish request not found")
        if row.status == "withdrawn":
            return
        if row.status != "pending" or not store_requests.set_status(db, request_id, "withdrawn", now=clock.iso()):
            status = row.status if row.status != "pending" else "changed"
            raise SubmissionError(409, f"cannot withdraw a request in status {status}")


def list_all(store: Store, *, status: str | None = None) -> list[dict[str, Any]]:
    """Every request (the moderator's queue), newest first, with its submitter's id."""
    with store.read() as db:
        rows = store_requests.list_requests(db, status=status, limit=10_000)
    return [{**shape(row), "name": row.name, "submittedByUserId": row.submitted_by_user_id} for row in rows]


def approve(store: Store, clock: Clock, request_id: str, notes: str | None = None) -> dict[str, Any]:
    """A moderator's approval: the request becomes the slug's served version."""
    if notes is not None and len(notes) > APPROVAL_NOTES_MAX:
        raise SubmissionError(400, f"approval notes must be at most {APPROVAL_NOTES_MAX} characters")
    return _review(store, clock, request_id, "approved", approval_notes=notes)


def reject(store: Store, clock: Clock, request_id: str, reason: str) -> dict[str, Any]:
    """A moderator's rejection, with the reason the submitter reads in ``submissions``."""
    reason = (reason or "").strip()
    if len(reason) < REJECTION_REASON_MIN:
        raise SubmissionError(400, f"rejection reason must be at least {REJECTION_REASON_MIN} characters")
    if len(reason) > REJECTION_REASON_MAX:
        raise SubmissionError(400, f"rejection reason must be at most {REJECTION_REASON_MAX} characters")
    return _review(store, clock, request_id, "rejected", rejection_reason=reason)


def _review(store: Store, clock: Clock, request_id: str, status: str, **fields: Any) -> dict[str, Any]:
    verb = "approve" if status == "approved" else "reject"
    with store.write() as db:
        row = store_requests.get(db, request_id)
        if row is None:
            raise SubmissionError(404, f"publish request {request_id} not found")
        if row.status != "pending" or not store_requests.set_status(db, request_id, status, now=clock.iso(),
                                                                     reviewed=True, **fields):
            raise SubmissionError(409, f"cannot {verb} a request in status {row.status}")
        updated = store_requests.get(db, request_id)
    assert updated is not None
    return shape(updated)


def approved_bundle(store: Store, slug: str) -> tuple[store_requests.PublishRequest, bytes] | None:
    """The slug's approved request and its bundle (what the platform serves), or None."""
    with store.read() as db:
        row = store_requests.latest_approved(db, slug)
        bundle = store_requests.bundle_of(db, row.id) if row is not None else None
    return None if row is None or bundle is None else (row, bundle)
