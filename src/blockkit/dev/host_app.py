"""The host's origin: the host page, and the API it reports the protocol to.

The host page drives the bridge (timers, iframe, DOM) in the browser. What can
be decided without the DOM is decided here, in Python: each inbound message is
judged against the contract, requests are answered by :class:`Bridge`, and
everything is written to the trace.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from blockkit.dev import contract, trace
from blockkit.dev.bridge import Bridge
from blockkit.dev.init_payload import (
    HostIdentity,
    build_init_payload,
    mint_dev_token,
    new_block_instance_id,
)
from blockkit.dev.manifest import DevManifest
from blockkit.dev.protocol import FRAGMENT_KEY, FRAGMENT_VERSION
from blockkit.dev.surface import Surface
from blockkit.dev.timings import HostTimings

STATIC_DIR = Path(__file__).resolve().parent / "static"
CONFIG_PLACEHOLDER = "__BLOCKKIT_CONFIG__"
# Events the host page may report besides inbound messages.
PAGE_EVENT_KINDS = frozenset({trace.MESSAGE, trace.LIFECYCLE})
UNANSWERED = "unanswered"


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

    def mint_token(self) -> dict[str, Any]:
        return mint_dev_token(self.manifest, self.surface, self.identity.viewer)

    def page_config(self) -> dict[str, Any]:
        """Everything the host page needs, fresh for each page load."""
        block_instance_id = new_block_instance_id()
        manifest = self.manifest
        return {
            "pageId": secrets.token_hex(4),
            "blockId": manifest.block_id,
            "name": manifest.name,
            "surface": {"kind": self.surface.kind, "slotId": self.surface.slot_id, "label": self.surface.label},
            "page": _page_chrome(manifest),
            "iframe": {
                "sandbox": manifest.iframe.sandbox,
                "minHeight": manifest.iframe.min_height,
                "maxHeight": manifest.iframe.max_height,
                "resizable": manifest.iframe.resizable,
            },
            "blockUrl": self.block_url,
            "theme": self.theme,
            "renderMode": manifest.render_mode,
            "blockInstanceId": block_instance_id,
            "initPayload": build_init_payload(
                manifest,
                self.identity,
                token=self.mint_token(),
                theme=self.theme,
                block_instance_id=block_instance_id,
            ),
            "timings": self.timings.as_json(),
            "fragment": {"key": FRAGMENT_KEY, "version": FRAGMENT_VERSION},
            "notes": list(self.notes),
            "traceFile": str(self.trace.path) if self.trace.path else None,
        }


def build_host_app(setup: HostSetup) -> Any:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import HTMLResponse, JSONResponse, Response
    from starlette.routing import Mount, Route
    from starlette.staticfiles import StaticFiles

    bridge = Bridge(declared_scopes=frozenset(setup.manifest.scopes), mint_token=setup.mint_token)
    template = (STATIC_DIR / "host.html").read_text(encoding="utf-8")

    async def host_page(request: Request) -> Response:
        html = template.replace(CONFIG_PLACEHOLDER, _script_json(setup.page_config()))
        return HTMLResponse(html, headers={"cache-control": "no-store"})

    async def inbound(request: Request) -> Response:
        body = await _json_body(request)
        if body is None:
            return JSONResponse({"error": "expected a JSON object"}, status_code=400)
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
        reply = bridge.reply_to(data) if js_type == contract.JS_OBJECT else None
        return JSONResponse({"violations": [v.as_json() for v in found], "reply": reply})

    async def page_events(request: Request) -> Response:
        body = await _json_body(request)
        events = body.get("events") if body is not None else None
        if not isinstance(events, list):
            return JSONResponse({"error": "expected {events: [...]}"}, status_code=400)
        found: list[contract.Violation] = []
        for event in events:
            if not isinstance(event, dict):
                continue
            base = {k: event.get(k) for k in ("t", "attempt", "pageId")}
            if event.get("kind") == UNANSWERED:
                violation = contract.unanswered_request(
                    event.get("type"), str(event.get("requestId")), float(event.get("waitedMs") or 0)
                )
                _record_violation(setup, violation, base, None)
                found.append(violation)
            elif event.get("kind") in PAGE_EVENT_KINDS:
                setup.trace.append(event)
        return JSONResponse({"violations": [v.as_json() for v in found]})

    async def token(request: Request) -> Response:
        return JSONResponse({"token": setup.mint_token()})

    async def trace_dump(request: Request) -> Response:
        return JSONResponse({"events": setup.trace.events()})

    async def no_favicon(request: Request) -> Response:
        return Response(status_code=204)

    return Starlette(
        routes=[
            Route("/", host_page),
            Route("/favicon.ico", no_favicon),
            Route("/api/inbound", inbound, methods=["POST"]),
            Route("/api/events", page_events, methods=["POST"]),
            Route("/api/token", token, methods=["POST"]),
            Route("/api/trace", trace_dump),
            Mount("/static", app=StaticFiles(directory=STATIC_DIR)),
        ]
    )


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


async def _json_body(request: Any) -> dict[str, Any] | None:
    try:
        body = json.loads(await request.body())
    except ValueError:
        return None
    return body if isinstance(body, dict) else None


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
