"""The dev host's answers to block requests, from the local platform (the emulator, in-process).

Every request of the bridge inventory (PLATFORM.md §8) is answered the way the platform's
host answers it, by the emulator's services, with the claims of the block token the host
handed this block instance (an OAuth-kind token is refused: the procedures take a block JWT
only). A request whose scope the manifest does not declare gets an error reply. A message
the surface's host does not handle ("not bridged" on model slots) gets no answer, as on the
platform, and an :class:`Outcome` note saying why. Requests that need the developer
(buying Buzz or a good, the pickers, an image upload) become a host dialog: the reply is
sent when the developer confirms or cancels (:meth:`Bridge.finish_dialog`).
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import secrets
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

# CONSENT_REQUIRED: the trace's code for a call refused for a scope the viewer has not granted yet.
from blockkit.dev.platform import CONSENT_REQUIRED
from blockkit.dev.protocol import BLOCK_TO_HOST, BlockMessage, scopes_satisfied

if TYPE_CHECKING:
    from blockkit.dev.platform import DevPlatform

# The platform's app storage caps (the emulator's appstorage enforces them).
STORAGE_VALUE_LIMIT_BYTES = 64 * 1024
STORAGE_QUOTA_BYTES = 50 * 1024 * 1024

SCOPE_ERROR = "SCOPE_NOT_DECLARED"
BLOCK_TOKEN_ERROR = "BLOCK_TOKEN_REQUIRED"
SIGN_IN_ERROR = "SIGN_IN_REQUIRED"
CANCELED = "CANCELED"
# REQUEST_TOKEN from a page load this run did not register (a tab left open across a restart).
UNKNOWN_PAGE_ERROR = "UNKNOWN_BLOCK_INSTANCE"
# The local platform refused to mint (the viewer's account, the install).
TOKEN_REFUSED = "TOKEN_REFUSED"
# The platform's notice when a block asks for a permission no consent can add (PageBlockHost.tsx:1321-1325).
PERMISSION_UNAVAILABLE = "This app requested a permission that isn\u2019t available in this preview."
# Requests whose handler does not look at the token's scopes: the bridge refuses them, as the platform's
# procedures do, when a signed-in viewer's token lacks the scope (withheld for want of consent).
_TOKEN_SCOPED = frozenset({"GET_BUZZ_ACCOUNTS", "GET_BUZZ_TRANSACTIONS", "GET_DAILY_COMPENSATION",
                           "GET_ENTITLEMENTS"})
# GET_VIEWER needs no declared scope to be asked, but its procedure needs this one in the token.
_VIEWER_SCOPE = frozenset({"user:read:self"})
# A handler failed where the platform would answer 500.
PLATFORM_ERROR = "PLATFORM_ERROR"
# Workflow statuses that end without outputs through no choice of the block's (the client OpenAPI's).
FAILED_WORKFLOW_STATUSES = frozenset({"failed", "expired"})
# Keys a handler may add to its answer for the trace; they never reach the block.
_CODE, _STATUS = "__traceCode", "__traceStatus"
# GET_VIEWER's answer for a signed-out viewer (docs/platform-shapes.md, the VIEWER_RESULT row).
SIGNED_OUT_VIEWER_ERROR = "viewer read requires an authenticated viewer"
# OPEN_BUZZ_PURCHASE: the amounts the host's dialog offers (our choice).
BUZZ_PACKS = (1000, 5000, 25000)
PICKER_LIMIT = 50
IMAGES_BY_IDS_LIMIT = 100
SAVED_DIR = Path(".blockkit") / "saved-images"
# PUBLISH_GENERATION_OUTPUTS: the published images (GET_IMAGES_BY_IDS reads them back), and the platform's caps.
PUBLISHED_FILE = "dev-published-images.json"
PUBLISH_MAX_IMAGES = 20
# QUERY_APP_WORKFLOWS: the platform's page size (params.limit, 1-50, 20 when absent or out of range).
APP_WORKFLOWS_LIMIT_MAX, APP_WORKFLOWS_LIMIT_DEFAULT = 50, 20
PUBLISH_MAX_INDEXES = 50
_PUBLISH_LOCK = threading.Lock()
# GET_WILDCARD_PACK: blockkit's built-in packs (the platform's packs are not public).
WILDCARD_PACKS: dict[str, list[str]] = {
    "colors": ["crimson", "teal", "amber", "violet", "ivory", "charcoal", "cobalt", "sage"],
    "animals": ["fox", "owl", "otter", "heron", "lynx", "koi", "moth", "stag"],
    "styles": ["watercolor", "ink sketch", "oil painting", "pixel art", "low poly", "cel shaded"],
    "lighting": ["golden hour", "overcast", "neon", "candlelight", "moonlight", "studio softbox"],
}
# Requests that open a dialog in the host page.
DIALOG_TYPES = frozenset({"OPEN_BUZZ_PURCHASE", "PURCHASE_GOOD", "OPEN_CHECKPOINT_PICKER",
                          "OPEN_RESOURCE_PICKER", "OPEN_IMAGE_UPLOAD"})

Reply = dict[str, Any]


@dataclass
class Outcome:
    """What the host does with one block message."""

    reply: Reply | None = None
    # A dialog the host page shows; its reply comes from finish_dialog.
    dialog: dict[str, Any] | None = None
    # Why no answer comes (not bridged on this surface), for the panel and the terminal.
    note: str | None = None
    # The brokered call, for the trace: {type, ok, error?}.
    call: dict[str, Any] | None = None
    # REQUEST_CONSENT: the consent step the host page opens once ready ({appName, missingScopes}).
    consent: dict[str, Any] | None = None
    # A passive notice the host page shows (the platform's toast), e.g. a permission no consent can add.
    notice: str | None = None


class BridgeRefusal(Exception):
    def __init__(self, code: str, message: str = "") -> None:
        super().__init__(message or code)
        self.code = code


@dataclass
class Bridge:
    """Host-side request handling for one dev session."""

    declared_scopes: frozenset[str]
    # The token the host holds for an instance (REQUEST_TOKEN answers it; it is not minted afresh).
    mint_token: Callable[[str | None], dict[str, Any]]
    platform: DevPlatform
    surface_kind: str = "page"
    goods: list[dict[str, Any]] = field(default_factory=list)
    # dialogId (the host's own, never the block's requestId) -> (instance, type, payload, what was shown)
    # for dialogs still open: a second request reusing a requestId opens a second dialog, and
    # cannot change what the first one's confirmation buys.
    dialogs: dict[str, tuple[str | None, str, dict[str, Any], dict[str, Any]]] = field(default_factory=dict)

    def reply_to(self, data: Any, instance_id: str | None = None) -> Reply | None:
        """The immediate reply to ``data``, or None (the compatible form of :meth:`handle`)."""
        return self.handle(data, instance_id).reply

    def handle(self, data: Any, instance_id: str | None = None) -> Outcome:
        if not isinstance(data, dict) or not isinstance(data.get("type"), str):
            return Outcome()
        type_ = data["type"]
        spec = BLOCK_TO_HOST.get(type_)
        if spec is None:
            return Outcome()
        if self.surface_kind == "slot" and not spec.slot_bridged:
            return Outcome(note=f"{type_} is not bridged on model slots: the platform's model-slot host registers "
                                "no handler for it, so the block gets no answer (PLATFORM.md §8)")
        if type_ == "REQUEST_CONSENT":
            return self.consent_request(data.get("payload"), instance_id)
        if spec.reply is None:
            return Outcome()
        raw_payload = data.get("payload")
        payload: dict[str, Any] = raw_payload if isinstance(raw_payload, dict) else {}
        request_id = payload.get("requestId")
        if type_ in DIALOG_TYPES and scopes_satisfied(spec, self.declared_scopes):
            try:
                dialog = self._dialog(type_, payload, instance_id)
            except BridgeRefusal as exc:
                return self._wrap(spec, payload, {"ok": False, "error": exc.code, "message": str(exc)}, type_)
            except Exception as exc:  # noqa: BLE001 - the platform answers a 500; the block gets an error reply
                return self._wrap(spec, payload, _platform_error(exc), type_)
            dialog_id = secrets.token_urlsafe(12)
            self.dialogs[dialog_id] = (instance_id, type_, payload, dialog)
            return Outcome(dialog={"type": type_, "requestId": request_id, "dialogId": dialog_id, **dialog})
        if type_ == "REQUEST_TOKEN" and not isinstance(request_id, str):
            # PLATFORM.md §8: without a requestId the host pushes TOKEN_REFRESH instead.
            answer = self._answer(type_, spec, payload, instance_id)
            if "token" in answer:
                return Outcome(reply={"type": "TOKEN_REFRESH", "payload": answer})
            return self._wrap(spec, payload, answer, type_)
        answer = self._answer(type_, spec, payload, instance_id)
        return self._consent_tagged(self._wrap(spec, payload, answer, type_), spec, instance_id)

    def finish_dialog(self, dialog_id: str, choice: dict[str, Any] | None) -> Outcome:
        """The reply once the developer confirmed (``choice``) or canceled (None) a dialog.

        ``dialog_id`` is the id :meth:`handle` gave the dialog; a requestId is taken too when
        exactly one open dialog carries it (two with the same requestId: neither is finished).
        """
        opened = self.dialogs.pop(dialog_id, None)
        if opened is None:
            named = [key for key, (_i, _t, payload, _s) in self.dialogs.items() if payload.get("requestId") == dialog_id]
            if len(named) != 1:
                return Outcome()
            opened = self.dialogs.pop(named[0])
        instance_id, type_, payload, shown = opened
        spec = BLOCK_TO_HOST[type_]
        try:
            answer = self._confirm(type_, payload, instance_id, choice, shown)
        except BridgeRefusal as exc:
            answer = {"ok": False, "error": exc.code, "message": str(exc)}
        except Exception as exc:  # noqa: BLE001 - the platform answers a 500; the block gets an error reply
            answer = _platform_error(exc)
        return self._consent_tagged(self._wrap(spec, payload, answer, type_), spec, instance_id)

    def _wrap(self, spec: BlockMessage, payload: dict[str, Any], answer: dict[str, Any], type_: str) -> Outcome:
        # A failed snapshot's code and status travel beside the answer for the trace only.
        code, status = answer.pop(_CODE, None), answer.pop(_STATUS, None)
        request_id = payload.get("requestId")
        if isinstance(request_id, str):
            answer = {"requestId": request_id, **answer}
        reply = {"type": spec.reply, "payload": answer}
        failed = answer.get("ok") is False or "error" in answer
        if type_ == "REQUEST_TOKEN" and not failed:  # the host's own answer, not a call brokered to the platform
            return Outcome(reply=reply)
        call: dict[str, Any] = {"type": type_, "ok": not failed}
        if failed:
            call["error"] = code or answer.get("error")
            if code and isinstance(answer.get("error"), str):
                call["message"] = answer["error"]
        snapshot = answer.get("snapshot")
        if isinstance(snapshot, dict) and snapshot.get("status") in FAILED_WORKFLOW_STATUSES:
            if snapshot.get("workflowId") == "failed":
                # A refusal answered as the platform does, as a failed snapshot.
                call.update(ok=False, error=code or "workflow_refused", message=snapshot.get("error"))
                if status is not None:
                    call["status"] = status
            else:
                # A reply that went through, about a workflow that ended without outputs.
                call.update(ok=False, error=f"workflow_{snapshot['status']}",
                            message=f"workflow {snapshot.get('workflowId')} is {snapshot['status']}")
        return Outcome(reply=reply, call=call)

    def _answer(self, type_: str, spec: BlockMessage, payload: dict[str, Any], instance_id: str | None) -> dict[str, Any]:
        if type_ == "REQUEST_TOKEN":
            return self._token(instance_id)
        if not scopes_satisfied(spec, self.declared_scopes):
            needed = " or ".join(sorted(spec.scopes))
            return {"ok": False, "error": f"{SCOPE_ERROR}: {type_} needs {needed}"}
        from blockkit.emulator.services.errors import ServiceError

        try:
            claims = self._claims(instance_id)
            withheld = _withheld_scope(type_, spec, claims)
            if withheld is not None:
                # The platform's procedure refuses a token without its scope (blocks.router.ts:381).
                return {"error": f"block lacks {withheld} scope"}
            return _HANDLERS[type_](self, claims, payload)
        except BridgeRefusal as exc:
            return {"ok": False, "error": exc.code, "message": str(exc)}
        except ServiceError as exc:
            return {"ok": False, "error": _service_code(exc), "status": exc.status, "message": str(exc)}
        except Exception as exc:  # noqa: BLE001 - the platform answers a 500; the block gets an error reply
            return _platform_error(exc)

    def _token(self, instance_id: str | None) -> dict[str, Any]:
        """The emulator's RS256 block token for the instance the page load registered; never another kind."""
        from blockkit.dev.errors import DevError

        if instance_id is None:
            return {"ok": False, "error": UNKNOWN_PAGE_ERROR,
                    "message": "this host page was loaded by another blockkit dev run (or names no page): "
                               "reload it for a block instance and token of this run"}
        try:
            return {"token": self.mint_token(instance_id)}
        except DevError as exc:
            return {"ok": False, "error": TOKEN_REFUSED, "message": str(exc)}

    # --- consent ----------------------------------------------------------------------------------
    def consent_request(self, raw_payload: Any, instance_id: str | None) -> Outcome:
        """REQUEST_CONSENT (fire-and-forget, no reply; PageBlockHost.tsx:1229-1342). The host grants what the
        mint withheld, never what the block names: with something withheld, the consent step opens (the host
        page opens it only once the block is ready); with nothing withheld, a ``scopes`` hint naming a scope
        the token neither holds nor could gain gets the platform's notice; otherwise nothing happens."""
        missing = self.platform.missing_scopes(instance_id)
        if missing:
            return Outcome(consent={"appName": self.platform.manifest.name, "missingScopes": missing})
        hint = raw_payload.get("scopes") if isinstance(raw_payload, dict) else None
        if not isinstance(hint, list):
            return Outcome()
        held = set((self.platform.held.get(instance_id or "") or {}).get("scopes") or ())
        ungrantable = sorted({s for s in hint if isinstance(s, str) and s} - held - set(missing))
        if ungrantable:
            return Outcome(notice=PERMISSION_UNAVAILABLE)
        return Outcome()

    def _consent_tagged(self, outcome: Outcome, spec: BlockMessage, instance_id: str | None) -> Outcome:
        """A call refused because the token lacks a scope the viewer has not granted is marked so in the trace
        (``--check`` fails a block that never asks for it); the block's reply is unchanged."""
        call = outcome.call
        needed = spec.scopes or (_VIEWER_SCOPE if call is not None and call.get("type") == "GET_VIEWER" else frozenset())
        if call is None or call.get("ok") is not False or not needed:
            return outcome
        withheld = [s for s in self.platform.missing_scopes(instance_id) if s in needed]
        held = set((self.platform.held.get(instance_id or "") or {}).get("scopes") or ())
        if withheld and not (needed & held):
            said = call.get("message") or call.get("error")
            call["consentScopes"] = withheld
            call["error"] = CONSENT_REQUIRED
            call["message"] = (f"{said}: " if said else "") + \
                f"the viewer has not granted {', '.join(withheld)}"
        return outcome

    def _claims(self, instance_id: str | None) -> dict[str, Any]:
        claims = self.platform.claims(instance_id)
        if claims is None:
            raise BridgeRefusal(BLOCK_TOKEN_ERROR, "the host's procedures take a block token (JWT) only")
        return claims

    # --- dialogs -----------------------------------------------------------------------------
    def _dialog(self, type_: str, payload: dict[str, Any], instance_id: str | None) -> dict[str, Any]:
        claims = self._claims(instance_id)
        if type_ == "OPEN_BUZZ_PURCHASE":
            user = _user(claims)
            from blockkit.emulator.services import buzz

            return {"title": "Buy Buzz", "packs": list(BUZZ_PACKS),
                    "balance": buzz.balance(self.platform.store, self.platform.clock, user)}
        if type_ == "PURCHASE_GOOD":
            _user(claims)
            good = next((g for g in self.goods if g.get("id") == payload.get("goodId")), None)
            if good is None:
                raise BridgeRefusal("UNKNOWN_GOOD", f"no good {payload.get('goodId')!r} in the manifest's catalogue")
            return {"title": "Confirm purchase", "good": {k: good.get(k) for k in ("id", "title", "priceBuzz",
                                                                                    "description", "kind")}}
        if type_ in ("OPEN_CHECKPOINT_PICKER", "OPEN_RESOURCE_PICKER"):
            checkpoints = type_ == "OPEN_CHECKPOINT_PICKER"
            return {"title": "Pick a checkpoint" if checkpoints else "Pick a resource",
                    "items": self._catalogue(claims, checkpoints_only=checkpoints)}
        return {"title": "Upload an image"}  # OPEN_IMAGE_UPLOAD

    def _confirm(self, type_: str, payload: dict[str, Any], instance_id: str | None,
                 choice: dict[str, Any] | None, shown: dict[str, Any]) -> dict[str, Any]:
        if choice is None:
            # The platform's BUZZ_PURCHASE_RESULT says only whether Buzz was bought.
            return {"purchased": False} if type_ == "OPEN_BUZZ_PURCHASE" else {"ok": False, "error": CANCELED}
        claims = self._claims(instance_id)
        platform = self.platform
        from blockkit.emulator.services.errors import ServiceError

        try:
            if type_ == "OPEN_BUZZ_PURCHASE":
                from blockkit.emulator.services import buzz

                amount = choice.get("amount")
                if amount not in BUZZ_PACKS:
                    raise BridgeRefusal("BAD_AMOUNT", f"choose one of {BUZZ_PACKS}")
                balance = buzz.purchase(platform.store, platform.clock, _user(claims), amount)
                # {purchased} is the platform's reply; amount and balance are blockkit dev's additions.
                return {"purchased": True, "amount": amount, "balance": balance}
            if type_ == "PURCHASE_GOOD":
                from blockkit.emulator.services import goods

                # What the developer confirmed is what is charged: the Buy names the good and the price
                # the dialog showed, and the purchase is refused if the catalogue's price moved since.
                good = shown.get("good") or {}
                if (choice.get("goodId"), choice.get("priceBuzz")) != (good.get("id"), good.get("priceBuzz")):
                    raise BridgeRefusal("CONFIRMATION_MISMATCH",
                                        f"the Buy confirmed {choice.get('goodId')!r} at {choice.get('priceBuzz')!r}"
                                        f" Buzz, but this dialog showed {good.get('id')!r} at"
                                        f" {good.get('priceBuzz')!r} Buzz")
                bought = goods.purchase_good(platform.store, platform.clock, goods.GoodsCaller.from_claims(claims),
                                             self.goods, good.get("id"), expected_price=good.get("priceBuzz"))
                return {"ok": True, **bought}
            if type_ in ("OPEN_CHECKPOINT_PICKER", "OPEN_RESOURCE_PICKER"):
                items = self._catalogue(claims, checkpoints_only=type_ == "OPEN_CHECKPOINT_PICKER")
                picked = next((i for i in items if i["modelVersionId"] == choice.get("modelVersionId")), None)
                if picked is None:
                    raise BridgeRefusal("NOT_FOUND", "the picked version is not in the catalogue")
                key = "checkpoint" if type_ == "OPEN_CHECKPOINT_PICKER" else "resource"
                return {"ok": True, key: picked}
            # OPEN_IMAGE_UPLOAD: the file as a data URL (nothing leaves this machine).
            data_url = choice.get("dataUrl")
            if not isinstance(data_url, str) or not data_url.startswith("data:image/"):
                raise BridgeRefusal("BAD_IMAGE", "expected an image file")
            return {"ok": True, "image": {"url": data_url, "name": str(choice.get("name") or "upload"),
                                          "width": choice.get("width"), "height": choice.get("height")}}
        except ServiceError as exc:
            return {"ok": False, "error": _service_code(exc), "status": exc.status, "message": str(exc)}

    def _catalogue(self, claims: dict[str, Any], *, checkpoints_only: bool) -> list[dict[str, Any]]:
        level = claims.get("maxBrowsingLevel")
        ceiling = level if isinstance(level, int) else 1
        sql = ("SELECT m.id, m.name, m.type, v.id, v.name, v.base_model FROM models m JOIN model_versions v"
               " ON v.model_id = m.id WHERE m.status = 'Published' AND (m.nsfw_level & ?) = m.nsfw_level"
               + (" AND m.type = 'Checkpoint'" if checkpoints_only else "") + " ORDER BY m.id, v.id LIMIT ?")
        with self.platform.store.read() as db:
            rows = db.execute(sql, (ceiling, PICKER_LIMIT)).fetchall()
        return [{"modelId": r[0], "modelName": r[1], "modelType": r[2], "modelVersionId": r[3],
                 "versionName": r[4], "baseModel": r[5]} for r in rows]


# --- handlers: (bridge, claims, payload) -> reply payload ------------------------------------------

def _user(claims: dict[str, Any]) -> int:
    sub = str(claims.get("sub", ""))
    if not sub.startswith("user:"):
        raise BridgeRefusal(SIGN_IN_ERROR, "this needs a signed-in viewer")
    return int(sub.split(":", 1)[1])


def _viewer(claims: dict[str, Any]) -> int | None:
    sub = str(claims.get("sub", ""))
    return int(sub.split(":", 1)[1]) if sub.startswith("user:") else None


def _withheld_scope(type_: str, spec: BlockMessage, claims: dict[str, Any]) -> str | None:
    """The scope a signed-in viewer's token lacks for a token-scoped request, or None."""
    if type_ not in _TOKEN_SCOPED or not spec.scopes or claims.get("sub") == "anon":
        return None
    if spec.scopes & set(claims.get("scopes") or ()):
        return None
    return sorted(spec.scopes)[0]


def _platform_error(exc: Exception) -> dict[str, Any]:
    return {"ok": False, "error": PLATFORM_ERROR, "status": 500, "message": f"{type(exc).__name__}: {exc}"}


def _service_code(exc: Exception) -> str:
    return str(getattr(exc, "code", None) or getattr(exc, "error", None) or type(exc).__name__)


def _get_viewer(b: Bridge, claims: dict[str, Any], payload: dict[str, Any]) -> dict[str, Any]:
    # The platform's blocks.getMyViewer: {id, username, status, buzzBudget}; it needs user:read:self, and
    # a signed-out viewer is an error.
    if claims.get("sub") == "anon" and "user:read:self" in b.declared_scopes:
        # Signed out, of a block that declares the scope: the viewer's state, not a missing scope
        # (the anonymous token holds no :self scope, but the block asked for it correctly).
        return {"error": SIGNED_OUT_VIEWER_ERROR, _CODE: "sign_in_required"}
    if "user:read:self" not in (claims.get("scopes") or ()):
        return {"error": "block lacks user:read:self scope"}
    user = b.platform.user(b.platform.viewer_id) if claims.get("sub") != "anon" else None
    if user is None:
        return {"error": SIGNED_OUT_VIEWER_ERROR}
    if user.status == "banned":
        return {"error": "banned"}
    return {"viewer": {"id": user.id, "username": user.username,
                       "status": "muted" if user.status == "muted" else "active",
                       "buzzBudget": claims.get("buzzBudget")}}


def _buzz_balance(b: Bridge, claims: dict[str, Any], payload: dict[str, Any]) -> dict[str, Any]:
    from blockkit.emulator.services import buzz

    # The platform's BUZZ_BALANCE_RESULT: {balance: {blue, green, yellow}}.
    return {"balance": buzz.balance(b.platform.store, b.platform.clock, _user(claims))}


def _buzz_accounts(b: Bridge, claims: dict[str, Any], payload: dict[str, Any]) -> dict[str, Any]:
    balance = _buzz_balance(b, claims, payload)["balance"]
    # The platform's BUZZ_ACCOUNTS_RESULT: {result: {accounts: [{accountType, balance}]}}.
    return {"result": {"accounts": [{"accountType": pool, "balance": amount} for pool, amount in balance.items()]}}


def _buzz_transactions(b: Bridge, claims: dict[str, Any], payload: dict[str, Any]) -> dict[str, Any]:
    from blockkit.emulator.services import buzz

    # The platform's request carries {params: {limit?, cursor?, ...}} and its reply {result: {cursor,
    # transactions}}; the transaction rows are ours (buzz.transactions), not the platform's ledger rows.
    params = payload.get("params") if isinstance(payload.get("params"), dict) else payload
    limit = params.get("limit")
    cursor = params.get("cursor")
    page = buzz.transactions(b.platform.store, b.platform.clock, _user(claims),
                             limit if isinstance(limit, int) and not isinstance(limit, bool) else 50,
                             cursor if isinstance(cursor, int) and not isinstance(cursor, bool) else None)
    return {"result": {"cursor": page["nextCursor"], "transactions": page["items"]}}


def _daily_compensation(b: Bridge, claims: dict[str, Any], payload: dict[str, Any]) -> dict[str, Any]:
    from blockkit.emulator.services import buzz

    # The platform's DAILY_COMPENSATION_RESULT: {result: {resources, hasPublishedResources}}, its per-model-version
    # generation earnings (always empty here), plus blockkit's `goodsSales` (see buzz.daily_compensation).
    return {"result": buzz.daily_compensation(b.platform.store, b.platform.clock, _user(claims))}


def _workflow_caller(claims: dict[str, Any]) -> Any:
    from blockkit.emulator.services.orchestration.workflows import WorkflowCaller

    return WorkflowCaller.from_claims(claims)


def _snapshot_reply(run: Callable[[], dict[str, Any]], *, quote: bool = False) -> dict[str, Any]:
    # The platform's WORKFLOW_SUBMITTED / ESTIMATE_RESULT / WORKFLOW_STATUS / WORKFLOW_CANCELED:
    # {snapshot}; every refusal is a failed snapshot, never an error field beside it.
    from blockkit.emulator.services.orchestration import workflows
    from blockkit.emulator.services.errors import ServiceError

    try:
        result = run()
    except (ServiceError, BridgeRefusal) as exc:
        return {"snapshot": workflows.failure_snapshot(exc), _CODE: exc.code, _STATUS: getattr(exc, "status", None)}
    return {"snapshot": workflows.estimate_snapshot(result) if quote else workflows.snapshot(result)}


def _submit(b: Bridge, claims: dict[str, Any], payload: dict[str, Any]) -> dict[str, Any]:
    from blockkit.emulator.services.orchestration import workflows

    p = b.platform
    # The platform's host passes a non-empty string idempotencyKey on to the submission (IframeHost.tsx).
    key = payload.get("idempotencyKey") if isinstance(payload.get("idempotencyKey"), str) else None
    return _snapshot_reply(lambda: workflows.submit(p.store, p.clock, p.urls, _workflow_caller(claims), workflows.keyed(
        workflows.template_of(_workflow_body(payload), p.store), claims.get("appBlockId"), key or None)))


def _estimate(b: Bridge, claims: dict[str, Any], payload: dict[str, Any]) -> dict[str, Any]:
    from blockkit.emulator.services.orchestration import workflows

    p = b.platform
    return _snapshot_reply(lambda: workflows.estimate(p.store, p.clock, p.urls, _workflow_caller(claims),
                                                      workflows.template_of(_workflow_body(payload), p.store)), quote=True)


def _poll(b: Bridge, claims: dict[str, Any], payload: dict[str, Any]) -> dict[str, Any]:
    from blockkit.emulator.services.orchestration import workflows

    p = b.platform
    return _snapshot_reply(lambda: workflows.poll(p.store, p.clock, p.urls, _workflow_caller(claims),
                                                  str(payload.get("workflowId"))))


def _cancel(b: Bridge, claims: dict[str, Any], payload: dict[str, Any]) -> dict[str, Any]:
    from blockkit.emulator.services.orchestration import workflows

    p = b.platform
    return _snapshot_reply(lambda: workflows.cancel(p.store, p.clock, p.urls, _workflow_caller(claims),
                                                    str(payload.get("workflowId"))))


def _cancel_app_workflow(b: Bridge, claims: dict[str, Any], payload: dict[str, Any]) -> dict[str, Any]:
    from blockkit.emulator.services.orchestration import workflows

    # The platform's CANCEL_APP_WORKFLOW_RESULT: {result: {workflow: AppWorkflow}}, the canceled workflow re-read.
    p = b.platform
    canceled = workflows.cancel(p.store, p.clock, p.urls, _workflow_caller(claims), str(payload.get("workflowId")))
    return {"result": {"workflow": workflows.app_workflow(canceled)}}


def _query(b: Bridge, claims: dict[str, Any], payload: dict[str, Any]) -> dict[str, Any]:
    from blockkit.emulator.services.orchestration import workflows

    # The platform's APP_WORKFLOWS_RESULT: {result: {workflows: [AppWorkflow], cursor}}. Its request carries
    # {params: {limit? (1-50, default 20), cursor?}}; the emulator gives one page, so `cursor` is null.
    p = b.platform
    params = payload.get("params") if isinstance(payload.get("params"), dict) else payload
    limit = params.get("limit")
    size = (limit if isinstance(limit, int) and not isinstance(limit, bool) and 0 < limit <= APP_WORKFLOWS_LIMIT_MAX
            else APP_WORKFLOWS_LIMIT_DEFAULT)
    page = workflows.query(p.store, p.clock, p.urls, _workflow_caller(claims), size)
    return {"result": {"workflows": [workflows.app_workflow(w) for w in page["items"]], "cursor": None}}


def _workflow_body(payload: dict[str, Any]) -> Any:
    # The platform's SUBMIT_WORKFLOW carries its body as `body`; `workflow` and a bare template work too.
    for name in ("body", "workflow"):
        if isinstance(payload.get(name), dict):
            return payload[name]
    return {k: v for k, v in payload.items() if k not in ("requestId", "idempotencyKey")}


def _publish(b: Bridge, claims: dict[str, Any], payload: dict[str, Any]) -> dict[str, Any]:
    # The platform's PUBLISH_RESULT: {result: {imageIds}}. It turns the workflow's available outputs (all of them,
    # or those at `imageIndexes`, in AppWorkflow order; deduplicated, at most 20) into bare images with no post.
    # blockkit dev keeps them in PUBLISHED_FILE, per block, for GET_IMAGES_BY_IDS; their rating is the output's
    # own (the platform scans them again). The platform's host asks the viewer first; blockkit dev does not.
    from blockkit.emulator.services.orchestration import workflows

    p = b.platform
    user = _user(claims)
    workflow = workflows.poll(p.store, p.clock, p.urls, _workflow_caller(claims), str(payload.get("workflowId")))
    outputs = workflows.app_workflow(workflow)["images"]
    if not outputs:
        raise BridgeRefusal("NO_OUTPUTS", "workflow has no available outputs to publish")
    raw = payload.get("imageIndexes")
    if raw is None:
        indexes: list[Any] = list(range(len(outputs)))
    elif isinstance(raw, list) and len(raw) <= PUBLISH_MAX_INDEXES and all(
            isinstance(i, int) and not isinstance(i, bool) and i >= 0 for i in raw):
        indexes = raw
    else:
        raise BridgeRefusal("BAD_REQUEST", f"imageIndexes must be at most {PUBLISH_MAX_INDEXES} whole numbers >= 0")
    chosen = [i for i in dict.fromkeys(indexes) if i < len(outputs)][:PUBLISH_MAX_IMAGES]
    if not chosen:
        raise BridgeRefusal("BAD_REQUEST", "no valid output indexes to publish")
    with _PUBLISH_LOCK:
        saved = _published(b)
        ids: list[int] = []
        for index in chosen:
            image_id = saved["nextId"]
            saved["nextId"] += 1
            saved["images"][str(image_id)] = {**outputs[index], "blockId": claims.get("blockId"), "userId": user,
                                              "workflowId": workflow.get("id"), "publishedAt": p.clock.iso()}
            ids.append(image_id)
        path = b.platform.data_dir / PUBLISHED_FILE
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(saved, indent=1), encoding="utf-8")
        tmp.replace(path)
    return {"result": {"imageIds": ids}}


def _published(b: Bridge) -> dict[str, Any]:
    try:
        saved = json.loads((b.platform.data_dir / PUBLISHED_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        saved = None
    if not (isinstance(saved, dict) and isinstance(saved.get("nextId"), int) and isinstance(saved.get("images"), dict)):
        saved = {"nextId": 1, "images": {}}
    return saved


# The minimal off-site content rating covering an NSFW level's highest bit (level 0: "g"), as the platform rates.
_CONTENT_RATING = ((1, "g"), (2, "pg13"), (4, "r"), (8, "x"))


def _content_rating(level: int) -> str:
    top = 1 << (level.bit_length() - 1) if level > 0 else 0
    return next((name for bit, name in _CONTENT_RATING if top <= bit), "x")


def _images_by_ids(b: Bridge, claims: dict[str, Any], payload: dict[str, Any]) -> dict[str, Any]:
    # The platform's IMAGES_RESULT: {result: {images}}, in request order, over the images this block published
    # (PUBLISH_GENERATION_OUTPUTS). One within the token's maxBrowsingLevel is {imageId, status: "visible",
    # nsfwLevel, contentRating, url, width, height}; one above it or unrated is {imageId, status: "hidden"} (no
    # url); an id that is not this block's is left out. The platform takes `imageIds` (`ids` is still read).
    raw = payload.get("imageIds") if payload.get("imageIds") is not None else payload.get("ids")
    ids = list(dict.fromkeys(i for i in raw or [] if isinstance(i, int) and not isinstance(i, bool) and i > 0))
    ids = ids[:IMAGES_BY_IDS_LIMIT]
    if not ids:
        return {"result": {"images": []}}
    _user(claims)
    level = claims.get("maxBrowsingLevel")
    ceiling = level if isinstance(level, int) and level > 0 else 1
    with _PUBLISH_LOCK:
        published = _published(b)["images"]
    images: list[dict[str, Any]] = []
    for image_id in ids:
        row = published.get(str(image_id))
        if not isinstance(row, dict) or row.get("blockId") != claims.get("blockId"):
            continue
        nsfw = row.get("nsfwLevel")
        if not isinstance(nsfw, int) or nsfw <= 0 or (nsfw & ceiling) != nsfw:
            images.append({"imageId": image_id, "status": "hidden"})
            continue
        images.append({"imageId": image_id, "status": "visible", "nsfwLevel": nsfw, "contentRating": _content_rating(nsfw),
                       "url": row.get("url"), "width": row.get("width"), "height": row.get("height")})
    return {"result": {"images": images}}


def _save_image(b: Bridge, claims: dict[str, Any], payload: dict[str, Any]) -> dict[str, Any]:
    # The platform saves to the viewer's device; blockkit dev writes the file under .blockkit/saved-images/.
    url = payload.get("url") or payload.get("dataUrl")
    match = re.fullmatch(r"data:image/(png|jpeg|webp);base64,([A-Za-z0-9+/=]+)", url) if isinstance(url, str) else None
    if match is None:
        raise BridgeRefusal("BAD_IMAGE", "SAVE_IMAGE takes {url: data:image/png|jpeg|webp;base64,...}")
    try:
        data = base64.b64decode(match.group(2), validate=True)
    except binascii.Error:
        raise BridgeRefusal("BAD_IMAGE", "the data URL is not base64") from None
    folder = b.platform.manifest.block_dir / SAVED_DIR
    folder.mkdir(parents=True, exist_ok=True)
    stem = re.sub(r"[^A-Za-z0-9_.-]", "_", str(payload.get("filename") or "image"))[:64].rsplit(".", 1)[0]
    path = folder / f"{stem}-{datetime.now(timezone.utc).strftime('%Y%m%dT%H%M%S%f')}.{match.group(1)}"
    path.write_bytes(data)
    return {"ok": True, "savedTo": str(path), "bytes": len(data)}


def _wildcard_pack(b: Bridge, claims: dict[str, Any], payload: dict[str, Any]) -> dict[str, Any]:
    name = payload.get("name")
    if name not in WILDCARD_PACKS:
        raise BridgeRefusal("NOT_FOUND", f"packs: {', '.join(sorted(WILDCARD_PACKS))}")
    return {"ok": True, "name": name, "entries": list(WILDCARD_PACKS[name])}


def _set_user_checkpoint(b: Bridge, claims: dict[str, Any], payload: dict[str, Any]) -> dict[str, Any]:
    from blockkit.emulator.services import usersettings

    user = _user(claims)
    version = payload.get("modelVersionId")
    if not isinstance(version, int) or isinstance(version, bool):
        raise BridgeRefusal("BAD_REQUEST", "modelVersionId must be a whole number")
    usersettings.set_checkpoint(b.platform.data_dir, b.platform.clock, str(claims.get("blockId")), user, version)
    return {"ok": True, "modelVersionId": version}


def _entitlements(b: Bridge, claims: dict[str, Any], payload: dict[str, Any]) -> dict[str, Any]:
    from blockkit.emulator.services import goods

    return goods.entitlements(b.platform.store, b.platform.clock, _user(claims), str(claims.get("appId")))


def _storage(name: str, *keys: str) -> Callable[[Bridge, dict[str, Any], dict[str, Any]], dict[str, Any]]:
    def handler(b: Bridge, claims: dict[str, Any], payload: dict[str, Any]) -> dict[str, Any]:
        from blockkit.emulator.services import appstorage

        args = [payload.get(k) for k in keys]
        function = getattr(appstorage, name)
        # A signed-out viewer reads nothing and may not write (the service answers as the platform does).
        return function(b.platform.store, b.platform.clock, str(claims.get("blockId")), _viewer(claims), *args)  # type: ignore[no-any-return]

    return handler


def _shared(name: str, *keys: str) -> Callable[[Bridge, dict[str, Any], dict[str, Any]], dict[str, Any]]:
    def handler(b: Bridge, claims: dict[str, Any], payload: dict[str, Any]) -> dict[str, Any]:
        from blockkit.emulator.services import appstorage

        args = [payload.get(k) for k in keys]
        function = getattr(appstorage, name)
        # Readable signed out; a signed-out write is refused by the service, in the platform's words.
        return function(b.platform.store, b.platform.clock, str(claims.get("blockId")), _viewer(claims), *args)  # type: ignore[no-any-return]

    return handler


_HANDLERS: dict[str, Callable[[Bridge, dict[str, Any], dict[str, Any]], dict[str, Any]]] = {
    "GET_VIEWER": _get_viewer,
    "GET_BUZZ_BALANCE": _buzz_balance,
    "GET_BUZZ_ACCOUNTS": _buzz_accounts,
    "GET_BUZZ_TRANSACTIONS": _buzz_transactions,
    "GET_DAILY_COMPENSATION": _daily_compensation,
    "SUBMIT_WORKFLOW": _submit,
    "ESTIMATE_WORKFLOW": _estimate,
    "POLL_WORKFLOW": _poll,
    "CANCEL_WORKFLOW": _cancel,
    "QUERY_APP_WORKFLOWS": _query,
    "CANCEL_APP_WORKFLOW": _cancel_app_workflow,
    "PUBLISH_GENERATION_OUTPUTS": _publish,
    "GET_IMAGES_BY_IDS": _images_by_ids,
    "SAVE_IMAGE": _save_image,
    "GET_WILDCARD_PACK": _wildcard_pack,
    "SET_USER_CHECKPOINT": _set_user_checkpoint,
    "GET_ENTITLEMENTS": _entitlements,
    "APP_STORAGE_GET": _storage("storage_get", "key"),
    "APP_STORAGE_SET": _storage("storage_set", "key", "value"),
    "APP_STORAGE_DELETE": _storage("storage_delete", "key"),
    "APP_STORAGE_LIST": _storage("storage_list", "prefix", "cursor", "limit"),
    "APP_STORAGE_QUOTA": _storage("storage_quota"),
    # The platform's request fields (PageBlockHost.tsx): entries are named by the server's `key`.
    "SHARED_LIST": _shared("shared_list", "prefix", "cursor", "limit"),
    "SHARED_GET": _shared("shared_get", "key"),
    "SHARED_GET_COUNT": _shared("shared_count", "key"),
    "SHARED_GET_COUNTS": _shared("shared_counts", "keys"),
    "SHARED_APPEND": _shared("shared_append", "value"),
    "SHARED_UPDATE": _shared("shared_update", "key", "value"),
    "SHARED_VOTE": _shared("shared_vote", "key"),
    "SHARED_UNVOTE": _shared("shared_unvote", "key"),
    "SHARED_WITHDRAW": _shared("shared_withdraw", "key"),
    "SHARED_REPORT": _shared("shared_report", "key", "reason"),
}
