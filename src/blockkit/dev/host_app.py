"""The host's origin: the host page, and the API it reports the protocol to.

The host page drives the bridge (timers, iframe, DOM) in the browser. What can
be decided without the DOM is decided here, in Python: each inbound message is
judged against the contract, requests are answered by :class:`Bridge`, and
everything is written to the trace.

The API takes JSON from the host page only: the server answers its own host
names, and writes must come from its own origin (:mod:`blockkit.emulator.http.hostcheck`),
as ``application/json`` of at most :data:`API_BODY_LIMIT` bytes. Anything else
is a 4xx with a one-line reason, never a traceback.

Every ``/api/`` route also asks for the run's key (:class:`DevKeyGuard`): the host page mints
block tokens for the viewer and switches the viewer, and the port is open to every account and
process of the machine, so Host and Origin (which any program can write) are not enough. The key
is made per run (:func:`new_dev_key`), travels in the fragment of the URL ``blockkit dev`` prints
(``#key=...``: never sent to a server, nor in a Referer), and host.js sends it as the
:data:`DEV_KEY_HEADER` header on each API call. The page itself (``GET /``) holds nothing
secret: its configuration, the first token included, is the answer of ``POST /api/page``.
"""

from __future__ import annotations

import hmac
import json
import math
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from blockkit.dev.bridge_journal import BridgeCall
from blockkit.dev import contract, trace, transport
from blockkit.dev.bridge import CANCELED, Bridge
from blockkit.dev.errors import DevError
from blockkit.emulator.http.access import console_url
from blockkit.emulator.http.hostcheck import HostAllowlist, HostGuard, OriginPolicy
from blockkit.dev.init_payload import (
    HostIdentity,
    block_instance_id as platform_instance_id,
    build_init_payload,
    normalize_sub_path,
)
from blockkit.dev.manifest import DevManifest
from blockkit.dev.platform import DevPlatform
from blockkit.dev.requests_feed import RequestFeed
from blockkit.dev.scenarios import SCENARIOS as _SCENARIOS
from blockkit.dev.scenarios import SWITCHABLE as SWITCHABLE_SCENARIOS
from blockkit.dev.surface import Surface
from blockkit.dev.timings import HostTimings

STATIC_DIR = Path(__file__).resolve().parent / "static"
# Events the host page may report besides inbound messages.
PAGE_EVENT_KINDS = frozenset({trace.MESSAGE, trace.LIFECYCLE})
UNANSWERED = "unanswered"
# What a dropped inbound message may say about why (blockkit.dev.transport).
_DROPPED = (transport.NOT_HANDLED, *transport.DROP_REASONS)
# One report from the host page. A block message is rarely more than a few KB;
# the cap keeps a block that posts megabytes from filling memory and the trace.
API_BODY_LIMIT = 1 << 20
# Deeper JSON than this is no bridge message (the manifest's own limit is 256 too).
API_DEPTH_LIMIT = 256
JSON_MEDIA_TYPE = "application/json"
# The run's key: in the fragment of the printed URL (DEV_KEY_FRAGMENT=...), and as this header on every API call.
DEV_KEY_HEADER = "x-blockkit-dev-key"
DEV_KEY_FRAGMENT = "key"
API_PREFIX = "/api/"
BOOT_PLACEHOLDER = "__BLOCKKIT_BOOT__"
# Sec-Fetch-Site values an API call may carry: host.js's own fetches, or none (a program, not a page).
_API_FETCH_SITES = ("same-origin", "none")


def new_dev_key() -> str:
    """A fresh key for one ``blockkit dev`` run (192 bits, URL-safe)."""
    return secrets.token_urlsafe(24)


def page_url(host_url: str, key: str) -> str:
    """The URL to open: the host page with the run's key in its fragment."""
    return f"{host_url}#{DEV_KEY_FRAGMENT}={key}"


@dataclass
class HostSetup:
    manifest: DevManifest
    surface: Surface
    identity: HostIdentity
    theme: str
    timings: HostTimings
    block_url: str
    trace: trace.TraceLog
    notes: list[str] = field(default_factory=list)
    # Called with each violation as it is found (the command prints them).
    on_violation: Callable[[contract.Violation], None] | None = None
    # The local platform (the emulator in this process): it mints every token the host hands out.
    platform: DevPlatform | None = None
    # Told what the developer should know (a message not bridged on this surface).
    on_note: Callable[[str], None] | None = None
    # pageId -> the block instance that page load registered.
    instances: dict[str, str] = field(default_factory=dict)
    # Told each brokered call that failed (a cancelled dialog is none).
    on_failed_call: Callable[[dict[str, Any]], None] | None = None
    # Whether the dev server behind --proxy just told the frame to reload (used up when asked).
    dev_reload_seen: Callable[[], bool] | None = None
    # The run's --scenario names (dev/scenarios.py) and the latency of `slow`, in milliseconds.
    scenarios: tuple[str, ...] = ()
    latency_ms: float = 0.0
    # The block's own requests to the local platform, as they are recorded (the host page polls it).
    requests: RequestFeed = field(default_factory=RequestFeed)

    def mint_token(self, instance_id: str | None) -> dict[str, Any]:
        """The local platform's RS256 block token for a registered instance; DevError otherwise.

        There is no other kind: a token the emulator did not sign would be refused by every
        route the block calls with it, which is not how the platform's host behaves.
        """
        if instance_id is None:
            raise DevError("no block instance: this host page was not loaded from this blockkit dev run")
        return self._platform().mint(instance_id)

    def current_token(self, instance_id: str | None) -> dict[str, Any]:
        """The token the host holds for a registered instance (REQUEST_TOKEN's answer); DevError otherwise."""
        if instance_id is None:
            raise DevError("no block instance: this host page was not loaded from this blockkit dev run")
        return self._platform().current_token(instance_id)

    def refresh_in_ms(self, token: dict[str, Any]) -> float | None:
        """When the host mints again after handing out ``token``: 2 minutes before it expires. None under
        ``--scenario token-expires-early``: the short-lived token is not refreshed, so the block meets
        its expiry and must ask with REQUEST_TOKEN."""
        if "token-expires-early" in self.scenarios:
            return None
        return self.timings.token_refresh_in_ms(self._platform().expires_in_ms(token))

    def _platform(self) -> DevPlatform:
        if self.platform is None:
            raise DevError("the dev host runs on the local platform; start it first")
        return self.platform

    def viewer(self) -> dict[str, Any] | None:
        return self._platform().viewer()

    def page_config(self, sub_path: str | None = None) -> dict[str, Any]:
        """Everything the host page needs, fresh for each page load.

        ``sub_path``: the page's sub-path when the host page was loaded at
        ``/apps/run/<slug>/<sub_path>`` (after a NAVIGATE and a reload); None at ``/``.
        """
        manifest = self.manifest
        block_instance_id = platform_instance_id(self.surface, manifest.block_id)
        page_id = secrets.token_hex(4)
        identity = self.identity
        platform = self._platform()
        platform.register(block_instance_id)
        self.instances[page_id] = block_instance_id
        viewer = platform.viewer()
        context = dict(identity.context)
        if "viewerUserId" in context:
            context["viewerUserId"] = viewer["id"] if viewer else None
            context["viewerUsername"] = viewer["username"] if viewer else None
        if sub_path is not None and "subPath" in context:
            context["subPath"] = normalize_sub_path(sub_path)
        identity = HostIdentity(viewer=viewer, context=context)
        local = {
            "apiBaseUrl": platform.base_url,
            # The top bar's Console link; without the key (the link asks POST /api/console for it on a click).
            "consoleUrl": console_url(platform.base_url),
            "viewerId": platform.viewer_id,
            "users": [u.as_json() for u in platform.users],
        }
        token = self.mint_token(block_instance_id)
        claims = platform.claims(block_instance_id) or {}
        ceiling = claims.get("maxBrowsingLevel")
        init = build_init_payload(manifest, identity, token=token, theme=self.theme,
                                  block_instance_id=block_instance_id,
                                  max_browsing_level=ceiling if isinstance(ceiling, int) else None)
        # blockkit dev only (the platform sends no such member): where the emulated API answers.
        init["apiBaseUrl"] = local["apiBaseUrl"]
        return {
            **local,
            "pageId": page_id,
            "blockId": manifest.block_id,
            "name": manifest.name,
            "surface": {"kind": self.surface.kind, "slotId": self.surface.slot_id, "label": self.surface.label},
            "page": _page_chrome(manifest),
            "iframe": {
                # The platform's sandbox for the manifest's (transport.effective_sandbox).
                "sandbox": transport.effective_sandbox(manifest.iframe.sandbox),
                "declaredSandbox": manifest.iframe.sandbox,
                "minHeight": manifest.iframe.min_height,
                "maxHeight": manifest.iframe.max_height,
                "resizable": manifest.iframe.resizable,
                "bootSkeleton": manifest.boot_skeleton,
            },
            "blockUrl": self.block_url,
            "theme": self.theme,
            "renderMode": manifest.render_mode,
            "blockInstanceId": block_instance_id,
            "initPayload": init,
            "timings": self.timings.as_json(),
            "transport": transport.as_json(self.surface.kind),
            "apiBodyLimit": API_BODY_LIMIT,
            "notes": list(self.notes) + _sandbox_notes(manifest.iframe.sandbox),
            "traceFile": str(self.trace.path) if self.trace.path else None,
            "tokenRefreshInMs": self.refresh_in_ms(token),
            "scenarios": list(self.scenarios),
            "switchableScenarios": [{"name": n, "effect": _SCENARIOS[n].effect} for n in SWITCHABLE_SCENARIOS],
            # What the viewer granted this block and what the first token withheld (the host's consent step).
            "consent": {"granted": platform.granted_scopes(),
                        "missingScopes": platform.missing_scopes(block_instance_id)},
            # The page shows the block's own requests made after it loaded (POST /api/requests).
            "requestsAfter": self.requests.last_seq,
        }


def build_host_app(setup: HostSetup, *, hosts: HostAllowlist, key: str, hint: str = "") -> Any:
    """The host origin's app, answering only ``hosts``, taking writes only from its own pages, and
    API calls only with the run's ``key``."""
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import HTMLResponse, JSONResponse, Response
    from starlette.routing import Mount, Route
    from starlette.staticfiles import StaticFiles

    bridge = Bridge(
        declared_scopes=frozenset(setup.manifest.scopes),
        mint_token=setup.current_token,
        platform=setup.platform,  # type: ignore[arg-type]
        surface_kind=setup.surface.kind,
        goods=list(setup.manifest.goods),
    )
    template = (STATIC_DIR / "host.html").read_text(encoding="utf-8")
    # (pageId, requestId) -> why the host sends no reply (not bridged here, or dropped as the platform drops it).
    unanswered_why: dict[tuple[str, str], str] = {}

    def api(handler: Callable[[dict[str, Any]], dict[str, Any]]) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            try:
                return JSONResponse(handler(await _json_body(request)))
            except BadRequest as exc:
                return JSONResponse({"error": str(exc)}, status_code=exc.status)

        return endpoint

    async def host_page(request: Request) -> Response:
        # /apps/run/<slug>/<path>: where a NAVIGATE took the page, so a reload lands there again.
        slug = request.path_params.get("slug")
        sub_path = None
        if slug is not None:
            own = setup.identity.context.get("slug")
            if setup.surface.kind != "page" or slug != own:
                return Response(f"not found: this dev host runs /apps/run/{own}\n" if own else "not found\n",
                                status_code=404, media_type="text/plain")
            sub_path = request.path_params.get("path", "")
        # Nothing secret here: host.js asks POST /api/page (with the key) for the configuration and token.
        html = template.replace(BOOT_PLACEHOLDER, _script_json({"subPath": sub_path}))
        # The platform's pages refuse to be framed (next.config.mjs); the block never sees it.
        # no-referrer: nothing the page loads learns its URL.
        return HTMLResponse(html, headers={"cache-control": "no-store", "x-frame-options": "DENY",
                                           "referrer-policy": "no-referrer"})

    def page(body: dict[str, Any]) -> dict[str, Any]:
        # host.js's first call: the page load's configuration (a new page id, the first token).
        sub_path = body.get("subPath")
        if sub_path is not None and not isinstance(sub_path, str):
            raise BadRequest("expected {subPath: string | null}")
        return setup.page_config(sub_path)

    def inbound(body: dict[str, Any]) -> dict[str, Any]:
        before = body.get("before")
        earlier: list[dict[str, Any]] = []
        if isinstance(before, list) and before:
            # What happened before this message arrived (host.js's outbox: what the host posted
            # to the block, messages it dropped, requests that went unanswered).
            earlier = page_events({"events": before})["violations"]
        data = body.get("data")
        js_type = str(body.get("jsType"))
        base = {k: body.get(k) for k in ("t", "attempt", "pageId")}
        message_type = data.get("type") if isinstance(data, dict) and isinstance(data.get("type"), str) else None
        recorded = setup.trace.append(
            {
                "kind": trace.MESSAGE,
                "dir": "in",
                "type": message_type,
                "jsType": js_type,
                "origin": body.get("origin"),
                "data": data,
                **base,
            }
        )
        found = contract.check_inbound(js_type, data, setup.manifest.scopes)
        for violation in found:
            _record_violation(setup, violation, base, recorded["seq"])
        if js_type != contract.JS_OBJECT:
            return {"violations": earlier + [v.as_json() for v in found], "reply": None}
        with _bridge_call(setup, message_type, data.get("payload") if isinstance(data, dict) else None) as call:
            outcome = bridge.handle(data, setup.instances.get(str(body.get("pageId"))))
        _journal(setup, call, outcome)
        if outcome.note is not None:
            setup.trace.append({"kind": trace.LIFECYCLE, "event": outcome.note_event, "type": message_type,
                                "reason": outcome.note, "causeSeq": recorded["seq"], **base})
            payload = data.get("payload") if isinstance(data, dict) else None
            if isinstance(payload, dict) and isinstance(payload.get("requestId"), str):
                # Why no reply will come, for the unanswered-request violation the host page reports later.
                unanswered_why[(str(body.get("pageId")), payload["requestId"])] = outcome.note
            if setup.on_note is not None:
                setup.on_note(outcome.note)
        if outcome.call is not None:
            _record_call(setup, outcome, base, recorded["seq"])
        if outcome.dialog is not None:
            setup.trace.append({"kind": trace.LIFECYCLE, "event": "dialog-opened", "type": message_type,
                                "causeSeq": recorded["seq"], **base})
        if outcome.consent is not None and "consent-denied" in setup.scenarios:
            # --scenario consent-denied: the viewer answers "Not now" at once; as on the platform the
            # block gets nothing, and the mint keeps withholding the scopes.
            setup.trace.append({"kind": trace.LIFECYCLE, "event": "consent-declined", "causeSeq": recorded["seq"],
                                "missingScopes": outcome.consent["missingScopes"], "scenario": "consent-denied",
                                **base})
            outcome.consent = None
        if outcome.consent is not None:
            setup.trace.append({"kind": trace.LIFECYCLE, "event": "consent-requested", "causeSeq": recorded["seq"],
                                "missingScopes": outcome.consent["missingScopes"], **base})
        return {"violations": earlier + [v.as_json() for v in found], "reply": outcome.reply,
                "dialog": outcome.dialog, "note": outcome.note, "noteEvent": outcome.note_event if outcome.note else None,
                "consent": outcome.consent, "notice": outcome.notice,
                # --scenario slow: how long the host page holds the reply before it sends it.
                "delayMs": setup.latency_ms if outcome.reply is not None else 0}

    def dropped(event: dict[str, Any], base: dict[str, Any]) -> list[contract.Violation]:
        """A message the host page dropped before any handler (blockkit.dev.transport), into the trace."""
        reason = event.get("dropped")
        data = event.get("data")
        js_type = str(event.get("jsType"))
        message_type = data.get("type") if isinstance(data, dict) and isinstance(data.get("type"), str) else None
        detail = event.get("detail") if isinstance(event.get("detail"), dict) else {}
        recorded = setup.trace.append({"kind": trace.MESSAGE, "dir": "in", "type": message_type, "jsType": js_type,
                                       "origin": event.get("origin"), "data": data, "dropped": reason,
                                       **({"detail": detail} if detail else {}), **base})
        skip = ("requestId",) if reason == transport.NO_REQUEST_ID else ()
        found = contract.check_inbound(js_type, data, setup.manifest.scopes, skip_fields=skip)
        if reason != transport.NOT_HANDLED:
            found.append(contract.dropped_message(reason, message_type, data, detail))
        elif js_type == contract.JS_OBJECT:
            # No handler on this surface: the bridge says why when the type is not bridged here.
            note = bridge.handle(data).note
            if note is not None:
                setup.trace.append({"kind": trace.LIFECYCLE, "event": "not-bridged", "type": message_type,
                                    "reason": note, "causeSeq": recorded["seq"], **base})
                payload = data.get("payload") if isinstance(data, dict) else None
                if isinstance(payload, dict) and isinstance(payload.get("requestId"), str):
                    # Why no reply will come, for the unanswered-request violation the page reports later.
                    unanswered_why[(str(base.get("pageId")), payload["requestId"])] = note
                if setup.on_note is not None:
                    setup.on_note(note)
        for violation in found:
            _record_violation(setup, violation, base, recorded["seq"])
        return found

    def dialog(body: dict[str, Any]) -> dict[str, Any]:
        # dialogId: the id the host gave the dialog; requestId: accepted when one open dialog has it.
        dialog_id = body.get("dialogId", body.get("requestId"))
        choice = body.get("choice")
        if not isinstance(dialog_id, str) or not (choice is None or isinstance(choice, dict)):
            raise BadRequest("expected {dialogId, choice: {...} | null}")
        with _bridge_call(setup, None, {"choice": choice}) as call:
            outcome = bridge.finish_dialog(dialog_id, choice)
        if outcome.call is not None:
            call.message_type = str(outcome.call.get("type"))
        _journal(setup, call, outcome)
        if outcome.call is not None:
            base = {k: body.get(k) for k in ("t", "attempt", "pageId")}
            _record_call(setup, outcome, base, None)
        return {"reply": outcome.reply, "pushes": outcome.pushes}

    async def download(request: Request) -> Response:
        # SAVE_IMAGE: the bytes of an emulator media or blob URL, which the host page then saves (as the
        # platform's host downloads the image in its own frame). Read from the store: no network.
        try:
            body = await _json_body(request)
        except BadRequest as exc:
            return JSONResponse({"error": str(exc)}, status_code=exc.status)
        found = bridge.download(str(body.get("dialogId")))
        if found is None:
            return JSONResponse({"error": "no such image to save"}, status_code=404)
        return Response(found[0], media_type=found[1], headers={"cache-control": "no-store"})

    def choose_viewer(body: dict[str, Any]) -> dict[str, Any]:
        if setup.platform is None:
            raise BadRequest("no local platform")
        user_id = body.get("userId")
        if user_id is not None and (not isinstance(user_id, int) or isinstance(user_id, bool)):
            raise BadRequest("userId must be a seeded user's id or null")
        try:
            setup.platform.set_viewer(user_id)
        except DevError as exc:
            raise BadRequest(str(exc)) from None
        setup.trace.append({"kind": trace.LIFECYCLE, "event": "viewer-changed", "viewerId": user_id})
        return {"viewer": setup.platform.viewer()}

    def choose_scenario(body: dict[str, Any]) -> dict[str, Any]:
        # The host page's Scenarios menu: one switch on or off, for the rest of the run.
        from blockkit.dev import scenarios

        name, on = body.get("name"), body.get("on")
        if not isinstance(name, str) or not isinstance(on, bool):
            raise BadRequest("expected {name, on}")
        platform = setup._platform()
        try:
            chosen = scenarios.switch(platform, setup.scenarios, name, on)
        except DevError as exc:
            raise BadRequest(str(exc)) from None
        setup.scenarios = platform.scenarios = chosen
        if name == "slow":
            setup.latency_ms = scenarios.DEFAULT_LATENCY_MS if on else 0.0
        setup.trace.append({"kind": trace.LIFECYCLE, "event": "scenario-switched", "scenario": name, "on": on})
        return {"scenarios": list(chosen), "latencyMs": setup.latency_ms}

    def page_events(body: dict[str, Any]) -> dict[str, Any]:
        events = body.get("events")
        if not isinstance(events, list):
            raise BadRequest("expected {events: [...]}")
        for event in events:
            if isinstance(event, dict) and event.get("kind") == UNANSWERED:
                _finite_number(event.get("waitedMs"), "waitedMs")
            if isinstance(event, dict) and "dropped" in event and event.get("dropped") not in _DROPPED:
                raise BadRequest(f"dropped must be one of {', '.join(_DROPPED)}")
        found: list[contract.Violation] = []
        for event in events:
            if not isinstance(event, dict):
                continue
            base = {k: event.get(k) for k in ("t", "attempt", "pageId")}
            if event.get("kind") == trace.MESSAGE and event.get("dir") == "in" and "dropped" in event:
                found.extend(dropped(event, base))
            elif event.get("kind") == UNANSWERED:
                violation = contract.unanswered_request(
                    event.get("type"), str(event.get("requestId")), _finite_number(event.get("waitedMs"), "waitedMs"),
                    reason=unanswered_why.pop((str(event.get("pageId")), str(event.get("requestId"))), None),
                )
                _record_violation(setup, violation, base, None)
                found.append(violation)
            elif event.get("kind") in PAGE_EVENT_KINDS:
                setup.trace.append(event)
        return {"violations": [v.as_json() for v in found]}

    def consent_answer(body: dict[str, Any]) -> dict[str, Any]:
        # The viewer's answer to the consent step: Allow records the grant and mints again (the host pushes
        # TOKEN_REFRESH with it); "Not now" sends the block nothing, as on the platform.
        instance = setup.instances.get(str(body.get("pageId")))
        allow = body.get("allow")
        if instance is None:
            raise BadRequest("this host page was loaded by another blockkit dev run: reload it", status=409)
        if not isinstance(allow, bool):
            raise BadRequest("expected {pageId, allow: true | false}")
        base = {k: body.get(k) for k in ("t", "attempt", "pageId")}
        missing = setup._platform().missing_scopes(instance)
        if not allow:
            setup.trace.append({"kind": trace.LIFECYCLE, "event": "consent-denied", "missingScopes": missing, **base})
            return {}
        try:
            granted = setup._platform().grant_consent(instance)
        except DevError as exc:
            raise BadRequest(str(exc), status=403) from None
        setup.trace.append({"kind": trace.LIFECYCLE, "event": "consent-granted", "scopes": missing, **base})
        return {"token": granted, "refreshInMs": setup.refresh_in_ms(granted)}

    def consent_reset(body: dict[str, Any]) -> dict[str, Any]:
        # blockkit dev's viewer menu: forget the viewer's grant, so the next page load is a first visit.
        platform = setup._platform()
        was = platform.reset_consent()
        setup.trace.append({"kind": trace.LIFECYCLE, "event": "consent-reset", "viewerId": platform.viewer_id,
                            "hadGrant": was})
        return {"reset": was}

    def console_link(body: dict[str, Any]) -> dict[str, Any]:
        # The top bar's Console link, clicked: the local platform's console sign-in link, which holds the
        # run's access key. Answered only to the key-guarded host page (DevKeyGuard: the dev key, same
        # origin), never written into the page, so nothing another origin can read ever holds it.
        platform = setup._platform()
        return {"url": console_url(platform.base_url, platform.access_key)}

    def frame_navigated(body: dict[str, Any]) -> dict[str, Any]:
        # The frame loaded a new document after READY. On the platform nothing follows; but when the
        # dev server behind --proxy caused it (an edit it could not hot-swap), there is no platform
        # counterpart, and the host remounts the block, as a new version would be mounted.
        seen = setup.dev_reload_seen is not None and setup.dev_reload_seen()
        return {"devServer": seen}

    def token(body: dict[str, Any]) -> dict[str, Any]:
        # As the platform's token route refuses a block instance it does not know, so does this one:
        # a host tab left open across a restart names a page this run never registered.
        instance = setup.instances.get(str(body.get("pageId")))
        if instance is None:
            raise BadRequest("this host page was loaded by another blockkit dev run: reload it", status=409)
        try:
            minted = setup.mint_token(instance)
        except DevError as exc:
            raise BadRequest(str(exc), status=403) from None
        return {"token": minted, "refreshInMs": setup.refresh_in_ms(minted)}

    async def block_requests(request: Request) -> Response:
        # A long poll: the block's own requests to the local platform recorded after `after` (a trace seq).
        try:
            body = await _json_body(request)
            after = body.get("after")
            if not isinstance(after, int) or isinstance(after, bool) or after < 0:
                raise BadRequest("expected {after: the seq of the last request seen, 0 or more}")
        except BadRequest as exc:
            return JSONResponse({"error": str(exc)}, status_code=exc.status)
        found = await setup.requests.wait_after(after)
        return JSONResponse({"requests": found, "closed": setup.requests.closed},
                            headers={"cache-control": "no-store"})

    async def trace_dump(request: Request) -> Response:
        return JSONResponse({"events": setup.trace.events(), "dropped": setup.trace.dropped})

    async def no_favicon(request: Request) -> Response:
        return Response(status_code=204)

    app = Starlette(
        routes=[
            Route("/", host_page),
            Route("/apps/run/{slug}", host_page),
            Route("/apps/run/{slug}/{path:path}", host_page),
            Route("/favicon.ico", no_favicon),
            Route("/api/page", api(page), methods=["POST"]),
            Route("/api/inbound", api(inbound), methods=["POST"]),
            Route("/api/events", api(page_events), methods=["POST"]),
            Route("/api/token", api(token), methods=["POST"]),
            Route("/api/dialog", api(dialog), methods=["POST"]),
            Route("/api/download", download, methods=["POST"]),
            Route("/api/viewer", api(choose_viewer), methods=["POST"]),
            Route("/api/consent", api(consent_answer), methods=["POST"]),
            Route("/api/consent/reset", api(consent_reset), methods=["POST"]),
            Route("/api/frame-navigated", api(frame_navigated), methods=["POST"]),
            Route("/api/console", api(console_link), methods=["POST"]),
            Route("/api/scenario", api(choose_scenario), methods=["POST"]),
            Route("/api/requests", block_requests, methods=["POST"]),
            Route("/api/trace", trace_dump),
            Mount("/static", app=StaticFiles(directory=STATIC_DIR)),
        ]
    )
    return HostGuard(DevKeyGuard(app, key, hosts), hosts, write_origins=OriginPolicy((hosts,)), hint=hint)


class DevKeyGuard:
    """ASGI middleware: every ``/api/`` request must carry the run's key in :data:`DEV_KEY_HEADER`.

    Checked in constant time. A request from a page (``Origin`` or ``Sec-Fetch-Site`` present) must
    also be the host page's own: same-origin, from one of ``hosts``. Refused: 401 without the key or
    with another run's, 403 from another site; JSON ``{"error": ...}`` saying what to open.
    """

    def __init__(self, app: Any, key: str, hosts: HostAllowlist) -> None:
        if not key:
            raise ValueError("the dev host needs a key")
        self.app = app
        self.key = key.encode()
        self.hosts = OriginPolicy((hosts,))

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and str(scope.get("path", "")).startswith(API_PREFIX):
            refusal = self.refusal(list(scope.get("headers") or []))
            if refusal is not None:
                body = json.dumps({"error": refusal[1]}).encode()
                await send({"type": "http.response.start", "status": refusal[0],
                            "headers": [(b"content-type", b"application/json"),
                                        (b"content-length", str(len(body)).encode()),
                                        (b"cache-control", b"no-store"), (b"x-content-type-options", b"nosniff")]})
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)

    def refusal(self, headers: list[tuple[bytes, bytes]]) -> tuple[int, str] | None:
        site = _header(headers, b"sec-fetch-site")
        if site is not None and site.lower() not in _API_FETCH_SITES:
            return 403, f"the dev host's API takes calls from its own page only (Sec-Fetch-Site: {site})"
        origin = _header(headers, b"origin")
        if origin is not None and not self.hosts.allows(origin):
            return 403, f"the dev host's API takes calls from its own page only, not from Origin {origin!r}"
        offered = _header(headers, DEV_KEY_HEADER.encode())
        # compare_digest on bytes of any length: no early exit on the first differing character.
        if offered is None or not hmac.compare_digest(offered.encode("latin-1"), self.key):
            return 401, ("the dev host's API asks for this run's key: open the host page URL blockkit dev printed"
                         " (it carries the key after #key=); a tab from another run must open the new URL")
        return None


def _header(headers: list[tuple[bytes, bytes]], name: bytes) -> str | None:
    found = [value for key, value in headers if key.lower() == name]
    if len(found) != 1:
        return None if not found else "\x00"  # several: taken as none that matches
    return found[0].decode("latin-1")


def _sandbox_notes(declared: str) -> list[str]:
    dropped = transport.dropped_sandbox_tokens(declared)
    notes = []
    if dropped:
        notes.append(f"iframe.sandbox: {', '.join(dropped)} left out, as the platform leaves out every token "
                     "outside its allowlist (allow-same-origin is never given beside allow-scripts)")
    if "allow-scripts" not in declared.split():
        notes.append("iframe.sandbox has no allow-scripts: the platform adds it, and so does the dev host")
    return notes


class BadRequest(Exception):
    """A host-API request that cannot be taken: the message is the one-line reason."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


def _record_call(setup: HostSetup, outcome: Any, base: dict[str, Any], cause_seq: int | None) -> None:
    """One brokered call (block -> host -> local platform) and its result, in the trace."""
    reply = outcome.reply or {}
    recorded = setup.trace.append({"kind": trace.CALL, **outcome.call, "reply": reply.get("type"),
                                   "result": reply.get("payload"), "causeSeq": cause_seq, **base})
    if setup.on_failed_call is not None and not outcome.call["ok"] and outcome.call.get("error") != CANCELED:
        result = recorded["result"] if isinstance(recorded["result"], dict) else {}
        setup.on_failed_call({**outcome.call, "message": outcome.call.get("message", result.get("message")),
                              "status": result.get("status")})


def _bridge_call(setup: HostSetup, message_type: str | None, payload: Any) -> BridgeCall:
    """A bridge message about to be answered, for the local platform's request journal (bridge_journal.py)."""
    platform = setup.platform
    return BridgeCall(platform.journal if platform is not None else None, message_type, payload)


def _journal(setup: HostSetup, call: BridgeCall, outcome: Any) -> None:
    platform = setup.platform
    if platform is None or call.journal is None:
        return
    try:
        call.record(outcome, block=platform.app_block_id, user=platform.viewer_id)
    except Exception:  # noqa: BLE001 - the journal never costs the block its reply
        import logging

        logging.getLogger("blockkit.dev").exception("the request journal could not record a bridge call")


def _record_violation(
    setup: HostSetup, violation: contract.Violation, base: dict[str, Any], cause_seq: int | None
) -> None:
    if setup.on_violation is not None:
        setup.on_violation(violation)
    setup.trace.append(
        {
            "kind": trace.VIOLATION,
            "violation": violation.kind,
            "type": violation.message_type,
            "explanation": violation.explanation,
            "causeSeq": cause_seq,
            **base,
        }
    )


async def _json_body(request: Any) -> dict[str, Any]:
    """The request's JSON object, read up to :data:`API_BODY_LIMIT` bytes; BadRequest otherwise."""
    media_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if media_type != JSON_MEDIA_TYPE:
        # Also stops a cross-site form or text/plain fetch from any browser that sends no Origin.
        raise BadRequest(f"send the body as {JSON_MEDIA_TYPE}", status=415)
    from blockkit.emulator.http.bodies import BodyTooLarge, read_limited

    try:
        raw = await read_limited(request, API_BODY_LIMIT)  # the emulator's one reader with a limit
    except BodyTooLarge:
        raise _too_large() from None
    try:
        # NaN, Infinity and 1e400 are no JSON a page's JSON.stringify makes, and the
        # trace and the API's answers could not carry them.
        body = json.loads(raw, parse_constant=_no_constant, parse_float=_finite_float)
    except (ValueError, RecursionError):
        raise BadRequest("expected a JSON object") from None
    if not isinstance(body, dict):
        raise BadRequest("expected a JSON object")
    if _deeper_than(body, API_DEPTH_LIMIT):
        raise BadRequest(f"the JSON is nested deeper than {API_DEPTH_LIMIT} levels")
    return body


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _finite_float(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise ValueError(f"{text} is out of range")
    return number


def _too_large() -> BadRequest:
    return BadRequest(f"the body is larger than {API_BODY_LIMIT} bytes, the dev host's limit", status=413)


def _deeper_than(value: Any, limit: int) -> bool:
    # A loop, not recursion: the depth is what is being checked.
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


def _finite_number(value: Any, name: str) -> float:
    """``value`` as a float; 0 when absent; BadRequest when it is not a finite number."""
    if value is None:
        return 0.0
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            number = float(value)
        except OverflowError:
            number = math.inf
        if math.isfinite(number):
            return number
    raise BadRequest(f"{name} must be a finite number")


def _script_json(value: Any) -> str:
    # Inside <script>, "</script>" or "<!--" in a block name would end or bend the element.
    text = json.dumps(value, ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _page_chrome(manifest: DevManifest) -> dict[str, Any] | None:
    page = manifest.page
    if page is None:
        return None
    return {
        "title": page.get("title") if isinstance(page.get("title"), str) else manifest.name,
        "path": page.get("path") if isinstance(page.get("path"), str) else "/",
        "icon": page.get("icon") if isinstance(page.get("icon"), str) else None,
    }
