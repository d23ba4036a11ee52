"""Publish requests: submit a block's bundle for review, list your submissions, withdraw one, and
the moderator's approve and reject (the platform's ``publish-request.service.ts``, facts only).

- ``submit_version(store, clock, submitter, bundle) -> {publishRequestId, slug, version, status}``;
- ``submissions(store, submitter, request_id=None, block_id=None) -> list of Submission dicts``;
- ``withdraw(store, clock, submitter, request_id)``;
- ``approve(store, clock, request_id, notes=None)`` and ``reject(store, clock, request_id, reason)``
  (the emulator's moderator controls: its CLI and ``/__emulator/submissions``);
- ``authorize(submitter, action)``: the gates every route applies after the bearer token is read
  (an OAuth token needs the Apps-submit bit; the caller must be an author and not banned).

The bundle's verdict is the library's (``blockkit.check_bundle``), read in one function,
:func:`judge_bundle`, as the submit route reads it. Every refusal is a :class:`SubmissionError` with the platform's status and
its ``{"message"}`` body.
"""

from __future__ import annotations

import re
import secrets
import sqlite3
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from blockkit.emulator.errors import ApiError, message_body
from blockkit.platform import BUNDLE_LIMITS, DEFAULT_APP_DOMAIN, MANIFEST_FILENAME
from blockkit.emulator.store import publish_requests as store_requests

if TYPE_CHECKING:
    from blockkit.emulator.store import Store
    from blockkit.emulator.store.clock import Clock

# --- the platform's facts (publish-request.schema.ts, the v1 blocks routes) -----------------------

APPS_SUBMIT_SCOPE = 1 << 25            # TokenScope.AppBlocksSubmit: opt-in, outside Full
SUBMIT_BODY_LIMIT_BYTES = BUNDLE_LIMITS.route_body_bytes_max   # the route's bodyParser sizeLimit '72mb'
SMALL_BODY_LIMIT_BYTES = 8 * 1024                              # withdraw and submissions: '8kb'
MAX_BUNDLE_BASE64_CHARS = BUNDLE_LIMITS.base64_chars_max
MANIFEST_PATH = MANIFEST_FILENAME
SLUG_REGEX = re.compile(r"[a-z][a-z0-9-]*[a-z0-9]", re.ASCII)
SEMVER_REGEX = re.compile(r"(\d+)\.(\d+)\.(\d+)(-[0-9A-Za-z.-]+)?", re.ASCII)
REJECTION_REASON_MIN = 3
REJECTION_REASON_MAX = 2000
APPROVAL_NOTES_MAX = 2000
MAX_ROWS = 100
APPS_DOMAIN = DEFAULT_APP_DOMAIN

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
        from blockkit.emulator import journal
        from blockkit.emulator.services.oauth import scopes

        journal.note_reason(f"{_SCOPE_WORDS[action]} needs the AppBlocksSubmit scope ({APPS_SUBMIT_SCOPE}) on an OAuth"
                            f" token; the access token holds scope {submitter.scope}"
                            f" ({journal.described([bit.name for bit in scopes.bits_of(submitter.scope)])})."
                            " A personal API key needs no scope")
        raise SubmissionError(403, f"{_SCOPE_WORDS[action]} requires a personal API key or an OAuth token with"
                                   " the Apps submit scope")
    if submitter.status == "banned" or not submitter.is_moderator:
        from blockkit.emulator import journal

        journal.note_reason(f"user {submitter.user_id} is banned" if submitter.status == "banned" else
                            f"user {submitter.user_id} is not in the app-blocks author cohort (the emulator's"
                            " cohort is its moderators)")
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


# --- the bundle's verdict: the library's check_bundle, read as the submit route reads it ------------

# Findings about the request rather than the zip: the route measures its own body (72 MB), and the
# local platform has no proxy in front of it.
_REQUEST_CODES = frozenset({"BK511", "BK512"})


@dataclass
class BundleVerdict:
    manifest: dict[str, Any] | None           # as stored: iframe.src stamped
    report: Any = None                        # the library's BundleReport
    error: str | None = None                  # the first refusal, in words


def judge_bundle(bundle: bytes, previous: bytes | None = None) -> BundleVerdict:
    """The submit-time verdict on a zip (``blockkit.check_bundle``): the caps and the zip's own
    errors, then the manifest's shape checks and, against the approved bundle, the version guard.

    The manifest's deeper findings (schema, server rules, credentials) are the report's, and do not
    refuse a submission: the platform leaves them to review, as it does.
    """
    from blockkit.bundle import check_bundle

    report = check_bundle(bundle, previous=previous, scan_credentials=False)
    for finding in report.files[0].findings if report.files else ():
        if finding.severity == "error" and finding.code not in _REQUEST_CODES:
            return BundleVerdict(None, report, finding.message)
    for file_report in report.files[1:]:
        if file_report is report.manifest_report:
            continue
        for finding in file_report.findings:
            if finding.severity == "error" and finding.layer == "bundle":
                return BundleVerdict(None, report, f"{file_report.path}: {finding.message}")
    manifest_file = report.manifest_report
    if report.manifest is None:
        parse = [f for f in manifest_file.findings if f.layer == "parse"] if manifest_file else []
        if parse:
            return BundleVerdict(None, report, f"{MANIFEST_PATH}: {parse[0].message}")
        return BundleVerdict(None, report, f"{MANIFEST_PATH} must contain a JSON object")
    problem = _manifest_error(report.manifest)
    if problem is not None:
        return BundleVerdict(None, report, problem)
    guard = [f for f in manifest_file.findings if f.layer == "diff" and f.severity == "error"] if manifest_file else []
    if guard:
        return BundleVerdict(None, report, f"{guard[0].code}: {guard[0].message}")
    return BundleVerdict(report.manifest, report)


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


# --- the calls ----------------------------------------------------------------------------------

def new_request_id() -> str:
    """``pubreq_`` and 26 Crockford base-32 characters (the platform's ULID form)."""
    alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
    return "pubreq_" + "".join(secrets.choice(alphabet) for _ in range(26))


def submit_version(store: Store, clock: Clock, submitter: Submitter, bundle: bytes) -> dict[str, Any]:
    """Judge the bundle and record a pending request; SubmissionError 400 with the first refusal."""
    first = judge_bundle(bundle)
    if first.error is not None or first.manifest is None:
        raise SubmissionError(400, first.error or "bundle refused")
    slug = first.manifest["blockId"]
    served = approved_bundle(store, slug)
    if served is not None and served[0].submitted_by_user_id != submitter.user_id:
        raise SubmissionError(400, f"slug {slug} belongs to another author; choose a different blockId")
    verdict = judge_bundle(bundle, served[1]) if served is not None else first
    if verdict.error is not None or verdict.manifest is None:
        raise SubmissionError(400, verdict.error or "bundle refused")
    manifest, report = verdict.manifest, verdict.report
    version = manifest["version"]
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
        try:
            store_requests.insert(
                db, id=request_id, slug=slug, version=version, name=manifest["name"], user_id=submitter.user_id,
                manifest=manifest, bundle=bundle, bundle_sha256=report.bundle_sha256,
                file_summary=report.file_summary, manifest_diff_summary=report.manifest_diff, now=clock.iso())
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
        # Read and moved in one write transaction: a pending row read here is still pending.
        if row.status != "pending" or not store_requests.set_status(db, request_id, "withdrawn", now=clock.iso()):
            raise SubmissionError(409, f"cannot withdraw a request in status {row.status}")


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
