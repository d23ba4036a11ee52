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
import io
import json
import re
import secrets
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

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
# PUBLISH_GENERATION_OUTPUTS: the published images (GET_IMAGES_BY_IDS reads them back), and the platform's caps.
PUBLISHED_FILE = "dev-published-images.json"
PUBLISH_MAX_IMAGES = 20
# QUERY_APP_WORKFLOWS: the platform's page size (params.limit, 1-50, 20 when absent or out of range).
APP_WORKFLOWS_LIMIT_MAX, APP_WORKFLOWS_LIMIT_DEFAULT = 50, 20
PUBLISH_MAX_INDEXES = 50
_PUBLISH_LOCK = threading.Lock()
# GET_WILDCARD_PACK: the lists a Wildcards version's pack holds here (the emulator's archives hold pictures,
# not lists; docs/platform-shapes.md, "Pickers, uploads, saves and packs").
WILDCARD_PACKS: dict[str, list[str]] = {
    "colors": ["crimson", "teal", "amber", "violet", "ivory", "charcoal", "cobalt", "sage"],
    "animals": ["fox", "owl", "otter", "heron", "lynx", "koi", "moth", "stag"],
    "styles": ["watercolor", "ink sketch", "oil painting", "pixel art", "low poly", "cel shaded"],
    "lighting": ["golden hour", "overcast", "neon", "candlelight", "moonlight", "studio softbox"],
}
# Requests that open a dialog in the host page (SAVE_IMAGE: the host page's download, no dialog to see).
DIALOG_TYPES = frozenset({"OPEN_BUZZ_PURCHASE", "PURCHASE_GOOD", "OPEN_CHECKPOINT_PICKER",
                          "OPEN_RESOURCE_PICKER", "OPEN_IMAGE_UPLOAD", "PUBLISH_GENERATION_OUTPUTS", "SAVE_IMAGE"})
# The page resource picker's types (pageBlockHostLogic.ts PAGE_RESOURCE_PICKER_TYPES), matched case-insensitively.
RESOURCE_PICKER_TYPES = ("Checkpoint", "LORA")
# The platform's recommended-setting defaults for a picked resource (generation-resource-projection.ts).
RESOURCE_DEFAULTS = {"strength": 1, "minStrength": -1, "maxStrength": 2}
# SAVE_IMAGE: the platform's image hosts (saveImageDownload.ts CIVITAI_IMAGE_HOSTS; the configured CDN is
# image.civitai.com too), and how many saves the host runs at once (SAVE_IMAGE_MAX_CONCURRENT).
SAVE_IMAGE_HOSTS = ("image.civitai.com", "orchestration.civitai.com")
SAVE_IMAGE_MAX_CONCURRENT = 3
# PUBLISH_GENERATION_OUTPUTS: what the viewer's Cancel answers (PageBlockHost).
PUBLISH_CANCELED = "publish canceled"
# The rating an upload gets here: the emulator runs no scan, so every upload reads as PG (our choice).
UPLOAD_NSFW_LEVEL = 1
# Replies whose refusal carries ok: false beside the error, and members a refusal keeps (PageBlockHost).
_OK_REPLIES = frozenset({"SAVE_IMAGE_RESULT", "USER_CHECKPOINT_SET", "APP_STORAGE_SET_RESULT",
                         "APP_STORAGE_DELETE_RESULT", "SHARED_UPDATE_RESULT", "SHARED_REPORT_RESULT"})
_ERROR_MEMBERS: dict[str, dict[str, Any]] = {"APP_STORAGE_GET_RESULT": {"value": None},
                                             "APP_STORAGE_DELETE_RESULT": {"deleted": False},
                                             "SHARED_GET_RESULT": {"item": None}}
_SNAPSHOT_REPLIES = frozenset({"WORKFLOW_SUBMITTED", "ESTIMATE_RESULT", "WORKFLOW_STATUS", "WORKFLOW_CANCELED"})
# Answered in blockkit dev's own shapes: the goods messages (the purchase route's), Buy Buzz ({purchased}), the token.
_OWN_SHAPES = frozenset({"PURCHASE_GOOD", "GET_ENTITLEMENTS", "OPEN_BUZZ_PURCHASE", "REQUEST_TOKEN"})
# The platform's words for a signed-out viewer, by message (blocks.router); others get SIGNED_OUT_DEFAULT.
SIGNED_OUT_SENTENCES = {
    "GET_BUZZ_BALANCE": "buzz balance requires an authenticated viewer",
    "GET_BUZZ_ACCOUNTS": "buzz read requires an authenticated viewer",
    "GET_BUZZ_TRANSACTIONS": "buzz read requires an authenticated viewer",
    "GET_DAILY_COMPENSATION": "buzz read requires an authenticated viewer",
    "QUERY_APP_WORKFLOWS": "workflow query requires authenticated viewer",
    "CANCEL_APP_WORKFLOW": "workflow cancel requires authenticated viewer",
    "PUBLISH_GENERATION_OUTPUTS": "publishing requires an authenticated viewer",
    "GET_IMAGES_BY_IDS": "gated image read requires an authenticated viewer",
    "SAVE_IMAGE": "gated image read requires an authenticated viewer",
}
SIGNED_OUT_DEFAULT = "this needs an authenticated viewer"
# The platform's answer to a request that carries no block token (blocks.router).
NO_BLOCK_TOKEN = "invalid block token"

Reply = dict[str, Any]


@dataclass
class Outcome:
    """What the host does with one block message."""

    reply: Reply | None = None
    # A dialog the host page shows; its reply comes from finish_dialog.
    dialog: dict[str, Any] | None = None
    # Why no answer comes (not bridged on this surface, or dropped as the platform drops it), for the panel,
    # the terminal and --check; `note_event` names it in the trace.
    note: str | None = None
    note_event: str = "not-bridged"
    # The brokered call, for the trace: {type, ok, error?}.
    call: dict[str, Any] | None = None
    # REQUEST_CONSENT: the consent step the host page opens once ready ({appName, missingScopes}).
    consent: dict[str, Any] | None = None
    # A passive notice the host page shows (the platform's toast), e.g. a permission no consent can add.
    notice: str | None = None
    # Host -> block pushes that follow the reply (IMAGE_SCAN_RESOLVED after an asyncScan upload).
    pushes: list[Reply] = field(default_factory=list)
    # A refusal's HTTP status on the platform, when the code that refused named one (the request journal's).
    status: int | None = None


class BridgeRefusal(Exception):
    def __init__(self, code: str, message: str = "") -> None:
        super().__init__(message or code)
        self.code = code


class Dropped(Exception):
    """A request the platform's host drops without a reply (the message says why)."""


def refusal(reply_type: str | None, code: str, sentence: str, status: int | None = None) -> dict[str, Any]:
    """A refusal in the platform's form for ``reply_type``: ``{error: sentence}`` (with ``ok: false`` or the
    members the platform keeps beside it; a failed snapshot for a workflow reply). The code and status go to
    the trace only."""
    if reply_type in _SNAPSHOT_REPLIES:
        from blockkit.emulator.services.orchestration import workflows

        answer: dict[str, Any] = {"snapshot": workflows.failure_snapshot(BridgeRefusal(code, sentence))}
    else:
        answer = {"ok": False} if reply_type in _OK_REPLIES else {}
        answer.update(_ERROR_MEMBERS.get(reply_type or "", {}))
        answer["error"] = sentence
    answer[_CODE] = code
    answer[_STATUS] = status
    return answer


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
                                "no handler for it, so the block gets no answer (PLATFORM.md §8; civitai "
                                "hostHandlerParity.ts)")
        if type_ == "REQUEST_CONSENT":
            return self.consent_request(data.get("payload"), instance_id)
        if spec.reply is None:
            return Outcome()
        raw_payload = data.get("payload")
        payload: dict[str, Any] = raw_payload if isinstance(raw_payload, dict) else {}
        request_id = payload.get("requestId")
        try:
            _check_drop(type_, payload, self.surface_kind)
        except Dropped as exc:
            return Outcome(note=f"{type_} dropped: {exc}; the platform's host drops it without a reply",
                           note_event="dropped")
        if type_ == "SET_USER_CHECKPOINT" and self.surface_kind == "page":
            # PageBlockHost: a page has no model binding, so it always refuses (versionId is not read).
            return self._wrap(spec, payload, refusal(spec.reply, "page_checkpoint", PAGE_CHECKPOINT_REFUSAL), type_)
        dialog_scoped = type_ == "PUBLISH_GENERATION_OUTPUTS" or scopes_satisfied(spec, self.declared_scopes)
        if type_ in DIALOG_TYPES and dialog_scoped:
            try:
                dialog = self._dialog(type_, payload, instance_id)
            except BridgeRefusal as exc:
                return self._wrap(spec, payload, self._refused(type_, spec, exc), type_)
            except Exception as exc:  # noqa: BLE001 - the platform answers a 500; the block gets an error reply
                return self._wrap(spec, payload, self._refused(type_, spec, exc), type_)
            if "answer" in dialog:  # decided at once, no dialog (SAVE_IMAGE busy)
                return self._wrap(spec, payload, dialog["answer"], type_)
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
        except Exception as exc:  # noqa: BLE001 - a refusal, or a 500 on the platform: the block gets an error reply
            answer = self._refused(type_, spec, exc)
        pushes = answer.pop(_PUSHES, [])
        outcome = self._consent_tagged(self._wrap(spec, payload, answer, type_), spec, instance_id)
        outcome.pushes = pushes
        return outcome

    def saves_in_flight(self) -> int:
        return sum(1 for (_i, type_, _p, _s) in self.dialogs.values() if type_ == "SAVE_IMAGE")

    def download(self, dialog_id: str) -> tuple[bytes, str] | None:
        """The bytes of an open SAVE_IMAGE's image on the emulator's own origins (the host page saves them)."""
        opened = self.dialogs.get(dialog_id)
        if opened is None or opened[1] != "SAVE_IMAGE":
            return None
        from blockkit.emulator.services.orchestration import media

        url = str(opened[3].get("url"))
        data = media.resolve_local(self.platform.urls, self.platform.store, url)
        if data is None:
            return None
        return data, _image_media_type(data)

    def _wrap(self, spec: BlockMessage, payload: dict[str, Any], answer: dict[str, Any], type_: str) -> Outcome:
        # A refusal's code and status travel beside the answer for the trace only.
        code, status = answer.pop(_CODE, None), answer.pop(_STATUS, None)
        request_id = payload.get("requestId")
        if isinstance(request_id, str):
            answer = {"requestId": request_id, **answer}
        reply = {"type": spec.reply, "payload": answer}
        # A dismissal (a bare reply on the platform) is traced as CANCELED: no failure, but not a pick either.
        failed = answer.get("ok") is False or "error" in answer or code == CANCELED
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
        return Outcome(reply=reply, call=call, status=status if failed and isinstance(status, int) else None)

    def _refused(self, type_: str, spec: BlockMessage, exc: BaseException) -> dict[str, Any]:
        """A refusal raised while answering ``type_``, in the platform's form for its reply."""
        from blockkit.emulator.services.errors import ServiceError

        if isinstance(exc, BridgeRefusal):
            code, sentence, status = exc.code, str(exc), None
            if code == SIGN_IN_ERROR:
                sentence = SIGNED_OUT_SENTENCES.get(type_, SIGNED_OUT_DEFAULT)
            elif code == BLOCK_TOKEN_ERROR:
                sentence = NO_BLOCK_TOKEN
        elif isinstance(exc, ServiceError):
            code, sentence, status = _service_code(exc), str(exc), exc.status
        else:
            code, sentence, status = PLATFORM_ERROR, f"{type(exc).__name__}: {exc}", 500
        if type_ in _OWN_SHAPES:
            answer: dict[str, Any] = {"ok": False, "error": code, "message": sentence}
            if status is not None:
                answer["status"] = status
            return answer
        return refusal(spec.reply, code, sentence, status)

    def _answer(self, type_: str, spec: BlockMessage, payload: dict[str, Any], instance_id: str | None) -> dict[str, Any]:
        if type_ == "REQUEST_TOKEN":
            return self._token(instance_id)
        if not scopes_satisfied(spec, self.declared_scopes):
            # The platform's procedures: "block lacks <scope> scope" (the token cannot hold an undeclared scope).
            needed = sorted(spec.scopes)[0]
            return self._refused(type_, spec, BridgeRefusal(SCOPE_ERROR, f"block lacks {needed} scope"))
        try:
            claims = self._claims(instance_id)
            withheld = _withheld_scope(type_, spec, claims)
            if withheld is not None:
                # The platform's procedure refuses a token without its scope (blocks.router.ts:381).
                return {"error": f"block lacks {withheld} scope"}
            return _HANDLERS[type_](self, claims, payload)
        except Exception as exc:  # noqa: BLE001 - a refusal, or a 500 on the platform: the block gets an error reply
            return self._refused(type_, spec, exc)

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
        if type_ == "OPEN_CHECKPOINT_PICKER":
            # No token needed: the platform's picker is host chrome over its own catalogue.
            return {"title": "Choose a checkpoint",
                    "items": self._catalogue(self.platform.claims(instance_id), ("Checkpoint",),
                                             payload.get("baseModelGroup"), empty_group_lists_none=True)}
        if type_ == "OPEN_RESOURCE_PICKER":
            kind = _resource_type(payload.get("resourceType"))
            return {"title": "Choose a checkpoint" if kind == "Checkpoint" else "Choose a resource",
                    "items": self._catalogue(self.platform.claims(instance_id), (str(kind),),
                                             payload.get("baseModelGroup"), empty_group_lists_none=False)}
        if type_ == "OPEN_IMAGE_UPLOAD":
            purpose = "generationSource" if payload.get("purpose") == "generationSource" else "display"
            return {"title": "Upload an image", "purpose": purpose,
                    "asyncScan": purpose == "display" and payload.get("asyncScan") is True}
        if type_ == "PUBLISH_GENERATION_OUTPUTS":
            indexes = _publish_indexes(payload.get("imageIndexes"))
            noun = "these results" if indexes is None else f"{len(indexes)} result{'' if len(indexes) == 1 else 's'}"
            return {"title": "Publish to the shared grid?", "indexes": indexes,
                    "message": f"Publish {noun} to {self.platform.manifest.name or 'this app'}'s shared grid? "
                               "Published images are scanned and become visible to other viewers of this app."}
        if type_ == "SAVE_IMAGE":
            return self._save_dialog(payload, instance_id)
        claims = self._claims(instance_id)
        if type_ == "OPEN_BUZZ_PURCHASE":
            user = _user(claims)
            from blockkit.emulator.services import buzz

            return {"title": "Buy Buzz", "packs": list(BUZZ_PACKS),
                    "balance": buzz.balance(self.platform.store, self.platform.clock, user)}
        # PURCHASE_GOOD
        _user(claims)
        good = next((g for g in self.goods if g.get("id") == payload.get("goodId")), None)
        if good is None:
            raise BridgeRefusal("UNKNOWN_GOOD", f"no good {payload.get('goodId')!r} in the manifest's catalogue")
        return {"title": "Confirm purchase", "good": {k: good.get(k) for k in ("id", "title", "priceBuzz",
                                                                                "description", "kind")}}

    def _save_dialog(self, payload: dict[str, Any], instance_id: str | None) -> dict[str, Any]:
        # saveImageDownload.ts resolveSaveImageRequest: exactly one of a non-empty url or a positive whole imageId.
        url, image_id = payload.get("url"), payload.get("imageId")
        has_url = isinstance(url, str) and url != ""
        has_id = isinstance(image_id, int) and not isinstance(image_id, bool) and image_id > 0
        spec = BLOCK_TO_HOST["SAVE_IMAGE"]
        if has_url == has_id:
            return {"answer": refusal(spec.reply, "invalid_request", "invalid save-image request")}
        if self.saves_in_flight() >= SAVE_IMAGE_MAX_CONCURRENT:
            return {"answer": refusal(spec.reply, "busy", "busy")}
        if has_id:
            claims = self._claims(instance_id)
            found = _images_by_ids(self, claims, {"imageIds": [image_id]})["result"]["images"]
            image = next((i for i in found if i.get("imageId") == image_id), None)
            if image is None or image.get("status") != "visible":
                return {"answer": refusal(spec.reply, "image_unavailable", "image is not available")}
            url = image["url"]
        if not self._save_allowed(str(url)):
            return {"answer": refusal(spec.reply, "url_not_allowed", "image url is not allowed")}
        filename = payload.get("filename") if isinstance(payload.get("filename"), str) else None
        local = self._is_local_media(str(url))
        return {"title": "Save image", "url": url, "filename": _download_name(filename, str(url)), "local": local}

    def _save_allowed(self, url: str) -> bool:
        """https on the platform's image hosts; locally also the emulator's media and blob URLs, which stand for them."""
        try:
            parts = urlsplit(url)
        except ValueError:
            return False
        if parts.scheme == "https" and parts.hostname in SAVE_IMAGE_HOSTS:
            return True
        return self._is_local_media(url)

    def _is_local_media(self, url: str) -> bool:
        from blockkit.emulator.services.orchestration.media import BLOB_PREFIX, MEDIA_PREFIX

        try:
            parts = urlsplit(url)
        except ValueError:
            return False
        origin = f"{parts.scheme}://{parts.netloc}"
        urls = self.platform.urls
        return ((origin == str(urls.base_url) and parts.path.startswith(MEDIA_PREFIX))
                or (origin == str(urls.orchestration_url) and parts.path.startswith(BLOB_PREFIX)))

    def _confirm(self, type_: str, payload: dict[str, Any], instance_id: str | None,
                 choice: dict[str, Any] | None, shown: dict[str, Any]) -> dict[str, Any]:
        if type_ == "SAVE_IMAGE":
            # The host page's download finished ({ok: true}) or failed ({error}); None: it never ran.
            if choice is not None and choice.get("ok") is True:
                return {"ok": True}
            sentence = choice.get("error") if choice is not None and isinstance(choice.get("error"), str) else None
            return refusal(BLOCK_TO_HOST[type_].reply, "download_failed", (sentence or "download failed")[:200])
        if choice is None:
            if type_ == "OPEN_BUZZ_PURCHASE":
                # The platform's BUZZ_PURCHASE_RESULT says only whether Buzz was bought.
                return {"purchased": False}
            if type_ == "PUBLISH_GENERATION_OUTPUTS":
                return {"error": PUBLISH_CANCELED, _CODE: CANCELED}
            if type_ == "PURCHASE_GOOD":
                return {"ok": False, "error": CANCELED}
            # A dismissed picker or upload: the platform's bare {requestId}.
            return {_CODE: CANCELED}
        platform = self.platform
        if type_ in ("OPEN_CHECKPOINT_PICKER", "OPEN_RESOURCE_PICKER"):
            # Only what this dialog listed can be picked, and only that one comes back.
            picked = next((i for i in shown.get("items", []) if i["versionId"] == choice.get("versionId")), None)
            if picked is None:
                raise BridgeRefusal("NOT_FOUND", "the picked version is not one this picker listed")
            if type_ == "OPEN_CHECKPOINT_PICKER":
                return {"selected": {k: picked[k] for k in ("versionId", "modelId", "modelName", "versionName",
                                                             "baseModel")}}
            return {"selected": dict(picked)}
        if type_ == "OPEN_IMAGE_UPLOAD":
            return self._uploaded(payload, instance_id, choice, shown)
        if type_ == "PUBLISH_GENERATION_OUTPUTS":
            claims = self._claims(instance_id)
            return _publish(self, claims, payload)
        claims = self._claims(instance_id)
        if type_ == "OPEN_BUZZ_PURCHASE":
            from blockkit.emulator.services import buzz

            amount = choice.get("amount")
            if amount not in BUZZ_PACKS:
                raise BridgeRefusal("BAD_AMOUNT", f"choose one of {BUZZ_PACKS}")
            balance = buzz.purchase(platform.store, platform.clock, _user(claims), amount)
            # {purchased} is the platform's reply; amount and balance are blockkit dev's additions.
            return {"purchased": True, "amount": amount, "balance": balance}
        from blockkit.emulator.services import goods

        # PURCHASE_GOOD. What the developer confirmed is what is charged: the Buy names the good and the price
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

    def _uploaded(self, payload: dict[str, Any], instance_id: str | None, choice: dict[str, Any],
                  shown: dict[str, Any]) -> dict[str, Any]:
        """The viewer's file, stored on the local platform as the platform stores an upload: the block gets a
        URL on the emulator's own origin (never a local path or the file's bytes)."""
        from blockkit.emulator.services.orchestration import media

        data_url = choice.get("dataUrl")
        match = re.fullmatch(r"data:image/[a-z0-9.+-]+;base64,([A-Za-z0-9+/=]+)", data_url) if isinstance(
            data_url, str) else None
        if match is None:
            raise BridgeRefusal("BAD_IMAGE", "the file is not an image")
        picture = _decode_image(match.group(1))
        claims = self.platform.claims(instance_id) or {}
        platform = self.platform
        # Kept as PNG (lossless): the platform stores the upload as given; the emulator's blobs are PNG, JPEG or WebP.
        row = media.save_blob(platform.store, platform.clock.iso(), _viewer(claims), picture, "png")
        url = media.blob_url(platform.urls, row)
        if shown.get("purpose") == "generationSource":
            return {"selected": {"url": url, "width": row.width, "height": row.height}}
        image_id = _record_upload(self, claims, url, row.width, row.height)
        scanned = {"imageId": image_id, "nsfwLevel": UPLOAD_NSFW_LEVEL,
                   "contentRating": _content_rating(UPLOAD_NSFW_LEVEL), "url": url}
        if not shown.get("asyncScan"):
            return {"selected": scanned}
        request_id = payload.get("requestId")
        push = {"type": "IMAGE_SCAN_RESOLVED",
                "payload": {"requestId": request_id, "imageId": image_id,
                            "result": {"status": "scanned", "image": scanned}}}
        return {"selected": {"status": "pending", "imageId": image_id, "url": url}, _PUSHES: [push]}

    def _catalogue(self, claims: dict[str, Any] | None, types: tuple[str, ...], group: Any,
                   *, empty_group_lists_none: bool) -> list[dict[str, Any]]:
        """What the platform's picker lists: published versions of ``types`` within the viewer's maturity,
        narrowed to the base models of ``group`` (getBaseModelGroup, then getBaseModelsByGroup). Without a
        group the checkpoint picker lists nothing and the resource picker every base model (as each host does)."""
        from blockkit.dev.basemodels import base_model_group, base_models_of_group

        level = (claims or {}).get("maxBrowsingLevel")
        ceiling = level if isinstance(level, int) and level > 0 else 1
        base_models = base_models_of_group(base_model_group(group)) if isinstance(group, str) and group else None
        if base_models is None and empty_group_lists_none:
            base_models = []
        if base_models is not None and not base_models:
            return []
        marks = ", ".join("?" for _ in types)
        sql = ("SELECT m.id, m.name, m.type, v.id, v.name, v.base_model, v.trained_words, v.clip_skip"
               " FROM models m JOIN model_versions v ON v.model_id = m.id"
               " WHERE m.status = 'Published' AND v.status = 'Published' AND (m.nsfw_level & ?) = m.nsfw_level"
               f" AND m.type IN ({marks})")
        args: list[Any] = [ceiling, *types]
        if base_models is not None:
            sql += f" AND v.base_model IN ({', '.join('?' for _ in base_models)})"
            args.extend(base_models)
        sql += " ORDER BY m.id, v.id LIMIT ?"
        args.append(PICKER_LIMIT)
        with self.platform.store.read() as db:
            rows = db.execute(sql, args).fetchall()
        items = []
        for r in rows:
            try:
                words = json.loads(r[6])
            except (TypeError, ValueError):
                words = []
            items.append({"versionId": r[3], "modelId": r[0], "modelName": r[1], "versionName": r[4],
                          "baseModel": r[5], "modelType": r[2], **RESOURCE_DEFAULTS,
                          "trainedWords": [w for w in words if isinstance(w, str)] if isinstance(words, list) else [],
                          "clipSkip": r[7]})
        return items


# --- what the platform's host drops, and small helpers -------------------------------------------

# A page refuses SET_USER_CHECKPOINT whatever it carries (PageBlockHost).
PAGE_CHECKPOINT_REFUSAL = "page blocks cannot persist a checkpoint override (no model binding)"
# The slot's refusal of a versionId that is neither a number nor null (IframeHost).
SLOT_CHECKPOINT_TYPE_ERROR = "versionId must be a number or null"
# Pushes a confirmation sends after its reply (the key never reaches the block).
_PUSHES = "__pushes"
# Messages whose handler needs a non-empty string requestId (the platform's resolve*Request functions), by surface.
_NEEDS_ID = frozenset({"OPEN_RESOURCE_PICKER", "OPEN_IMAGE_UPLOAD", "SAVE_IMAGE", "GET_WILDCARD_PACK",
                       "PUBLISH_GENERATION_OUTPUTS", "GET_IMAGES_BY_IDS"})
_NEEDS_ID_ON_PAGE = frozenset({"OPEN_CHECKPOINT_PICKER", "SET_USER_CHECKPOINT"})
# A string requestId, '' included, is enough for these.
_NEEDS_STRING_ID = frozenset({"OPEN_CHECKPOINT_PICKER", "SET_USER_CHECKPOINT", "QUERY_APP_WORKFLOWS",
                              "CANCEL_APP_WORKFLOW"})


def _check_drop(type_: str, payload: dict[str, Any], surface: str) -> None:
    """Raise :class:`Dropped` where the platform's host drops the request without a reply (row 41)."""
    request_id = payload.get("requestId")
    if type_ in _NEEDS_ID or (surface == "page" and type_ in _NEEDS_ID_ON_PAGE):
        if not isinstance(request_id, str) or request_id == "":
            raise Dropped("payload.requestId must be a non-empty string")
    elif type_ in _NEEDS_STRING_ID and not isinstance(request_id, str):
        raise Dropped("payload.requestId must be a string")
    if type_ == "OPEN_RESOURCE_PICKER" and _resource_type(payload.get("resourceType")) is None:
        raise Dropped(f"resourceType must be one of {', '.join(RESOURCE_PICKER_TYPES)} (any case); "
                      "no picker opens for another type")
    if type_ == "GET_WILDCARD_PACK" and _wildcard_version(payload.get("modelVersionId")) is None:
        raise Dropped("modelVersionId must be a positive whole number (or a string of one)")
    if type_ in ("PUBLISH_GENERATION_OUTPUTS", "CANCEL_APP_WORKFLOW"):
        workflow_id = payload.get("workflowId")
        if not isinstance(workflow_id, str) or workflow_id == "":
            raise Dropped("workflowId must be a non-empty string")


def _resource_type(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    wanted = value.strip().lower()
    return next((t for t in RESOURCE_PICKER_TYPES if t.lower() == wanted), None)


def _wildcard_version(value: Any) -> int | None:
    # resolveGetWildcardPackRequest: a number, or a non-blank string read as Number(); a positive integer.
    if isinstance(value, bool):
        return None
    if isinstance(value, str) and value.strip():
        try:
            number: float = float(value.strip())
        except ValueError:
            return None
    elif isinstance(value, (int, float)):
        number = value
    else:
        return None
    return int(number) if number == number and number > 0 and float(number).is_integer() else None


def _publish_indexes(raw: Any) -> list[int] | None:
    # resolvePublishGenerationOutputsRequest: whole numbers >= 0 kept; none left means "publish all".
    if not isinstance(raw, list):
        return None
    kept = [i for i in raw if isinstance(i, int) and not isinstance(i, bool) and i >= 0]
    return kept or None


def _download_name(name: str | None, url: str) -> str:
    # saveImageDownload.ts sanitizeDownloadFilename: no directories, query or fragment; a doubled extension once.
    clean = name if name is not None else (url.split("/")[-1] or "download")
    clean = re.split(r"[\\/]", clean)[-1].split("?")[0].split("#")[0]
    ext = re.search(r"\.([a-zA-Z0-9]{2,5})$", clean)
    if ext:
        clean = re.sub(rf"(\.{re.escape(ext.group(1))})+$", f".{ext.group(1)}", clean)
    clean = clean.strip()
    return clean or "download"


def _image_media_type(data: bytes) -> str:
    if data.startswith(b"\x89PNG"):
        return "image/png"
    if data.startswith(b"\xff\xd8"):
        return "image/jpeg"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return "application/octet-stream"


def _decode_image(b64: str) -> Any:
    from PIL import Image, UnidentifiedImageError

    try:
        raw = base64.b64decode(b64, validate=True)
        picture = Image.open(io.BytesIO(raw))
        picture.load()
    except (binascii.Error, UnidentifiedImageError, OSError, ValueError):
        raise BridgeRefusal("BAD_IMAGE", "the file is not an image") from None
    return picture if picture.mode in ("RGB", "RGBA") else picture.convert("RGBA")


def _record_upload(b: Bridge, claims: dict[str, Any], url: str, width: int, height: int) -> int:
    """An uploaded display image, kept with the published ones (GET_IMAGES_BY_IDS and SAVE_IMAGE read it)."""
    with _PUBLISH_LOCK:
        saved = _published(b)
        image_id = saved["nextId"]
        saved["nextId"] += 1
        saved["images"][str(image_id)] = {"url": url, "width": width, "height": height, "nsfwLevel": UPLOAD_NSFW_LEVEL,
                                          "blockId": claims.get("blockId"), "userId": _viewer(claims),
                                          "uploadedAt": b.platform.clock.iso()}
        _write_published(b, saved)
    return image_id


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
    # The platform's PUBLISH_RESULT: {result: {imageIds}}, sent once the viewer confirmed the host's dialog. It
    # turns the workflow's available outputs (all of them, or those at `imageIndexes`, in AppWorkflow order;
    # deduplicated, at most 20) into bare images with no post. blockkit dev keeps them in PUBLISHED_FILE, per
    # block, for GET_IMAGES_BY_IDS; their rating is the output's own (the platform scans them again).
    from blockkit.emulator.services.orchestration import workflows

    if not scopes_satisfied(BLOCK_TO_HOST["PUBLISH_GENERATION_OUTPUTS"], b.declared_scopes):
        raise BridgeRefusal(SCOPE_ERROR, "block lacks ai:write:budgeted scope")
    p = b.platform
    user = _user(claims)
    workflow = workflows.poll(p.store, p.clock, p.urls, _workflow_caller(claims), str(payload.get("workflowId")))
    outputs = workflows.app_workflow(workflow)["images"]
    if not outputs:
        raise BridgeRefusal("NO_OUTPUTS", "workflow has no available outputs to publish")
    indexes = _publish_indexes(payload.get("imageIndexes"))
    if indexes is None:
        indexes = list(range(len(outputs)))
    elif len(indexes) > PUBLISH_MAX_INDEXES:
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
        _write_published(b, saved)
    return {"result": {"imageIds": ids}}


def _write_published(b: Bridge, saved: dict[str, Any]) -> None:
    path = b.platform.data_dir / PUBLISHED_FILE
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(saved, indent=1), encoding="utf-8")
    tmp.replace(path)


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


def _wildcard_pack(b: Bridge, claims: dict[str, Any], payload: dict[str, Any]) -> dict[str, Any]:
    # The platform's WILDCARD_PACK_RESULT: {pack: {modelId, modelVersionId, modelName, versionName, creatorUsername,
    # lists, truncated, truncatedLists, maturity: {browsingLevel, sfwOnly}}} or {error: discriminant}. Its host
    # resolves the pack with the viewer's session (wildcard-pack.service.ts): a version that is missing, not of
    # a Wildcards model or not downloadable is "not-found"; one above the viewer's ceiling is "forbidden"; a
    # signed-out viewer's call fails (UNAUTHORIZED), which the host's classifier reads as "parse-failed".
    from blockkit.emulator.store import models as models_store

    version_id = _wildcard_version(payload.get("modelVersionId"))
    if _viewer(claims) is None:
        return refusal("WILDCARD_PACK_RESULT", SIGN_IN_ERROR, "parse-failed")
    with b.platform.store.read() as db:
        row = db.execute("SELECT m.id, m.name, m.type, m.status, v.name, v.status, v.nsfw_level, u.username"
                         " FROM model_versions v JOIN models m ON m.id = v.model_id LEFT JOIN users u ON u.id = m.user_id"
                         " WHERE v.id = ?", (version_id,)).fetchone()
        files = models_store.files_of_versions(db, [version_id], public_only=True) if row is not None else []
    if row is None or row[2] != "Wildcards" or row[3] != "Published" or row[5] != "Published" or not files:
        return refusal("WILDCARD_PACK_RESULT", "NOT_FOUND", "not-found")
    level = claims.get("maxBrowsingLevel")
    ceiling = level if isinstance(level, int) and level > 0 else 1
    pack_level = row[6] or 0
    if pack_level & ceiling != pack_level:
        return refusal("WILDCARD_PACK_RESULT", "above_maturity", "forbidden")
    names = sorted(WILDCARD_PACKS)
    start = version_id % len(names)
    lists = {name: list(WILDCARD_PACKS[name]) for name in names[start:] + names[:start]}
    return {"pack": {"modelId": row[0], "modelVersionId": version_id, "modelName": row[1], "versionName": row[4],
                     "creatorUsername": row[7], "lists": lists, "truncated": False, "truncatedLists": [],
                     "maturity": {"browsingLevel": ceiling, "sfwOnly": ceiling & ~SFW_LEVELS == 0}}}


# The browsing levels that hold no mature content (PG, PG-13).
SFW_LEVELS = 1 | 2


def _set_user_checkpoint(b: Bridge, claims: dict[str, Any], payload: dict[str, Any]) -> dict[str, Any]:
    # The model slot's USER_CHECKPOINT_SET (IframeHost): `versionId`, a number or null (null clears), -> {ok: true};
    # anything else -> {ok: false, error: "versionId must be a number or null"}. A page always refuses (handle).
    from blockkit.emulator.services import usersettings

    version = payload.get("versionId")
    absent = "versionId" not in payload  # undefined is neither a number nor null
    if absent or (version is not None and (isinstance(version, bool) or not isinstance(version, (int, float)))):
        return refusal("USER_CHECKPOINT_SET", "BAD_REQUEST", SLOT_CHECKPOINT_TYPE_ERROR)
    user = _user(claims)
    if isinstance(version, float):
        if not version.is_integer():
            raise BridgeRefusal("BAD_REQUEST", "versionId must be a whole number")
        version = int(version)
    usersettings.set_checkpoint(b.platform.data_dir, b.platform.clock, str(claims.get("blockId")), user, version)
    return {"ok": True}


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
