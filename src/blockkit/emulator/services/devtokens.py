"""``POST /api/v1/blocks/dev-token``: a short-lived, self-bound page token for a developer's own app
(the platform's ``dev-token.ts`` and ``dev-scoped-mint.service.ts``, facts only).

``mint_dev_token(state, submitter, body) -> dict`` applies, in the platform's order: the token-type
gate (an OAuth token needs the Apps-submit bit), the author gate (a moderator, never banned), the
body's shape, the rate limit (30 a minute per user), then resolves the block (the caller's approved
version, else the caller's pending request, else, for a slug no approved version holds, the body's
own scopes), clamps the scopes, caps the Buzz budget, forces the SFW ceiling and mints with the
emulator's block-token machinery (``blocktokens.mint_block_token(..., dev=True)``: 4 hours, a
``dev`` claim). Every refusal is a :class:`~blockkit.emulator.services.publish_requests.SubmissionError`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from blockkit.emulator import facts
from blockkit.emulator.services import blocktokens
from blockkit.emulator.services.publish_requests import SLUG_REGEX, SubmissionError, Submitter, APPS_SUBMIT_SCOPE

if TYPE_CHECKING:
    from blockkit.emulator.state import EmulatorState

AI_SERVICES_WRITE = 1 << 15            # TokenScope.AIServicesWrite: the spend gate
DEV_BUZZ_BUDGET_CAP = 250
DEV_BUZZ_BUDGET_DEFAULT = 50
FORCED_SFW_CEILING = facts.SFW_BROWSING_LEVEL   # domainBrowsingCeiling(null): PG | PG13
DEV_TOKEN_SCOPE_ALLOWLIST = frozenset({
    "models:read:self", "user:read:self", "ai:write:budgeted", "apps:storage:read", "apps:storage:write",
    "collections:read:self", "collections:write:self", "collections:read:private", "buzz:read:self",
})
PAGE_FORBIDDEN_SCOPES: frozenset[str] = frozenset()   # slot-registry.ts: empty at ebed661
RATE_BUCKET = "blocks-dev-token"
RATE_LIMIT = 30
RATE_WINDOW_SECONDS = 60
BODY_LIMIT_BYTES = 8 * 1024
PAGE_SLOT_ID = "app.page"
APPROVED_APP_PREFIX = "appblk-"
PENDING_APP_PREFIX = "pending-"
LOCAL_APP_PREFIX = "local-"

NOT_FOUND = "App not found"
NO_PAGE = "dev-token mints page tokens; this app declares no page block"
OAUTH_WORDS = ("dev-token needs a personal API key (full scope, create at civitai.com/user/account) OR an OAuth"
               " login whose token carries the Apps submit scope; real Buzz spend additionally needs AI Services"
               " scope")


def authorize(submitter: Submitter) -> None:
    if submitter.credential == "oauth" and not submitter.scope & APPS_SUBMIT_SCOPE:
        raise SubmissionError(403, OAUTH_WORDS)
    if submitter.status == "banned" or not submitter.is_moderator:
        raise SubmissionError(403, "Apps are restricted to the Civitai team")


def parse_body(body: Any) -> dict[str, Any]:
    """The request schema; 400 ``Invalid request body`` with ``details`` naming the fields."""
    errors: dict[str, list[str]] = {}
    form: list[str] = []

    def bad(field: str, words: str) -> None:
        errors.setdefault(field, []).append(words)

    if not isinstance(body, dict):
        raise SubmissionError(400, "Invalid request body",
                              extra={"details": {"formErrors": ["Expected object"], "fieldErrors": {}}})
    app_block_id, slug = body.get("appBlockId"), body.get("slug")
    scopes, budget, spend = body.get("scopes"), body.get("buzzBudget"), body.get("requestBudgetedSpend")
    if app_block_id is not None and not (isinstance(app_block_id, str) and 1 <= len(app_block_id) <= 128):
        bad("appBlockId", "a string of 1 to 128 characters")
    if slug is not None and not (isinstance(slug, str) and 3 <= len(slug) <= 40 and SLUG_REGEX.fullmatch(slug)):
        bad("slug", "3-40 characters, lowercase a-z, 0-9 and hyphens, starting with a letter")
    if scopes is not None and not (isinstance(scopes, list) and len(scopes) <= 32 and all(
            isinstance(s, str) and 1 <= len(s) <= 64 for s in scopes)):
        bad("scopes", "at most 32 strings of 1 to 64 characters")
    if budget is not None and not (type(budget) is int and budget > 0):
        bad("buzzBudget", "a positive integer")
    if spend is not None and not isinstance(spend, bool):
        bad("requestBudgetedSpend", "a boolean")
    if not errors and not app_block_id and not slug:
        form.append("one of appBlockId or slug is required")
    if errors or form:
        raise SubmissionError(400, "Invalid request body", extra={"details": {"formErrors": form,
                                                                              "fieldErrors": errors}})
    return {"appBlockId": app_block_id, "slug": slug, "scopes": scopes, "buzzBudget": budget,
            "requestBudgetedSpend": spend}


def rate_limit(state: EmulatorState, submitter: Submitter) -> None:
    from blockkit.emulator.store import oauth as oauth_store

    with state.store.write() as db:
        count, left = oauth_store.hit(db, RATE_BUCKET, f"u:{submitter.user_id}", now=state.clock.timestamp(),
                                      window=RATE_WINDOW_SECONDS)
    if count > RATE_LIMIT:
        retry = max(left, 1)
        raise SubmissionError(429, "Rate limit exceeded", headers={"Retry-After": str(retry)},
                              extra={"retryAfterSeconds": retry, "limit": RATE_LIMIT,
                                     "windowSeconds": RATE_WINDOW_SECONDS})


def approved_app_block_id(slug: str) -> str:
    """An approved app's ``appBlockId`` in the emulator: the token's ``<appId>/<blockId>`` form with
    the platform's provisioned app id ``appblk-<slug>``."""
    return blocktokens.app_block_id(APPROVED_APP_PREFIX + slug, slug)


def _page_manifest(manifest: Any) -> dict[str, Any]:
    page = manifest.get("page") if isinstance(manifest, dict) else None
    if not isinstance(page, dict):
        raise SubmissionError(422, NO_PAGE)
    return page


def _strings(value: Any) -> list[str]:
    return [s for s in value if isinstance(s, str)] if isinstance(value, list) else []


def _manifest_budget(page: dict[str, Any]) -> int | None:
    raw = page.get("buzzBudgetPerGen")
    return raw if type(raw) is int and raw > 0 else None


def _resolve(state: EmulatorState, submitter: Submitter, parsed: dict[str, Any]) -> dict[str, Any]:
    """What to mint for: scope source, app id, instance id, the manifest's budget default."""
    from blockkit.emulator.store import publish_requests as store_requests

    slug: str | None = parsed["slug"]
    app_block_id: str | None = parsed["appBlockId"]
    if app_block_id is not None and slug is None:
        app_id, _, named = app_block_id.partition("/")
        slug = named if app_id == APPROVED_APP_PREFIX + named and SLUG_REGEX.fullmatch(named or "-") else None
        if slug is None:
            raise SubmissionError(404, NOT_FOUND)
        by_id_only = True
    else:
        by_id_only = False
    assert slug is not None
    with state.store.read() as db:
        approved = store_requests.latest_approved(db, slug)
        pending = store_requests.pending_for_slug(db, slug)
    if approved is not None and approved.submitted_by_user_id == submitter.user_id:
        page = _page_manifest(approved.manifest)
        return {"source": _strings(approved.manifest.get("scopes")), "slug": slug,
                "app_id": APPROVED_APP_PREFIX + slug, "instance": f"page_{APPROVED_APP_PREFIX}{slug}",
                "budget_default": _manifest_budget(page), "mode": "approved"}
    if by_id_only:
        raise SubmissionError(404, NOT_FOUND)
    if pending is not None and pending.submitted_by_user_id == submitter.user_id:
        page = _page_manifest(pending.manifest)
        return {"source": _strings(pending.manifest.get("scopes")), "slug": slug,
                "app_id": PENDING_APP_PREFIX + pending.id, "instance": f"page_{pending.id}",
                "budget_default": _manifest_budget(page), "mode": "pending"}
    if approved is None:
        return {"source": list(parsed["scopes"] or []), "slug": slug, "app_id": LOCAL_APP_PREFIX + slug,
                "instance": f"page_local_{slug}", "budget_default": None, "mode": "local"}
    raise SubmissionError(404, NOT_FOUND)  # another author's approved app: no shadowing, no oracle


def clamp_scopes(source: list[str], requested: list[str] | None, *, spend_entitled: bool,
                 spend_requested: bool) -> list[str]:
    granted = [s for s in source if s in blocktokens.KNOWN_SCOPES and s in DEV_TOKEN_SCOPE_ALLOWLIST
               and s not in PAGE_FORBIDDEN_SCOPES]
    if requested:
        wanted = set(requested)
        granted = [s for s in granted if s in wanted]
    if not (spend_entitled and spend_requested):
        granted = [s for s in granted if s != blocktokens.BUDGET_SCOPE]
    granted.append("user:read:self")
    return sorted(set(granted))


def mint_dev_token(state: EmulatorState, submitter: Submitter, body: Any) -> dict[str, Any]:
    authorize(submitter)
    parsed = parse_body(body)
    rate_limit(state, submitter)
    resolved = _resolve(state, submitter, parsed)
    # A personal key is the platform's full-scope key; an OAuth token spends only with AIServicesWrite.
    entitled = submitter.credential == "apiKey" or bool(submitter.scope & AI_SERVICES_WRITE)
    requested_spend = parsed["requestBudgetedSpend"]
    granted = clamp_scopes(resolved["source"], parsed["scopes"], spend_entitled=entitled,
                           spend_requested=True if requested_spend is None else requested_spend)
    budget = None
    if blocktokens.BUDGET_SCOPE in granted:
        wanted = parsed["buzzBudget"] or resolved["budget_default"] or DEV_BUZZ_BUDGET_DEFAULT
        budget = min(wanted, DEV_BUZZ_BUDGET_CAP)
    blocktokens.register_block_instance(
        state.store, state.clock.iso(), instance_id=resolved["instance"], block_id=resolved["slug"],
        app_id=resolved["app_id"], scopes=granted, slot_id=PAGE_SLOT_ID, buzz_budget_per_gen=budget,
        installed_by=submitter.user_id)
    try:
        minted = blocktokens.mint_block_token(state, instance_id=resolved["instance"], user_id=submitter.user_id,
                                              max_browsing_level=FORCED_SFW_CEILING, dev=True)
    except blocktokens.MintRefused as exc:
        raise SubmissionError(exc.status, str(exc)) from None
    answer: dict[str, Any] = {"token": minted.token, "expiresAt": minted.expires_at, "scopes": granted}
    if budget is not None:
        answer["buzzBudget"] = budget
    answer.update({"maxBrowsingLevel": FORCED_SFW_CEILING, "blockInstanceId": resolved["instance"]})
    return answer
