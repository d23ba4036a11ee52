"""The local platform behind ``blockkit dev``: the emulator, in this process.

``blockkit dev`` starts an :class:`~blockkit.emulator.runtime.Emulator` with its data
under ``<block>/.blockkit/emulator/`` (seeded small on first use, kept across runs), registers
each page load's block instance, mints the emulator's RS256 block tokens for the viewer the
developer picked, and lets the block's origin call the block catalogue routes (CORS).
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from blockkit.dev.errors import DevError
from blockkit.dev.manifest import DevManifest
from blockkit.dev.surface import Surface
from blockkit.emulator.http.access import new_access_key, sign_in_url

DATA_DIR = Path(".blockkit") / "emulator"
# --scenario token-expires-early: how long a token lives (dev/scenarios.py).
EARLY_TOKEN_SECONDS = 60
# Set: the local platform's data lives here instead of <block>/.blockkit/emulator/ (a shared
# store for several blocks, or a scratch one; the tests set it so fixture folders stay clean).
DATA_ENV = "BLOCKKIT_DEV_DATA"
# The catalogue routes a block calls with its token; only these get CORS for the block's origin.
CORS_PREFIXES = ("/api/v1/blocks/", "/api/v1/models/", "/api/v1/models")
CORS_MAX_AGE = "600"
# The catalogue's words for a token without the route's scope (http/blocks/blockroutes.py), and the
# trace's code for a call refused for a scope the viewer has not granted (bridge.CONSENT_REQUIRED).
MISSING_SCOPE_PREFIX = "missing required scope: "
CONSENT_REQUIRED = "consent_required"
# How much of an error body the trace keeps to say why a catalogue call failed.
ERROR_BODY_LIMIT = 2048


@dataclass(frozen=True)
class SeededUser:
    id: int
    username: str
    tier: str
    status: str
    is_moderator: bool

    def label(self) -> str:
        role = "member " + self.tier if self.tier != "free" else "free"
        extra = (", moderator" if self.is_moderator else "") + ("" if self.status == "active" else f", {self.status}")
        return f"{self.username} ({role}{extra})"

    def as_json(self) -> dict[str, Any]:
        return {"id": self.id, "username": self.username, "tier": self.tier, "status": self.status,
                "isModerator": self.is_moderator, "label": self.label()}


PURCHASE_OVER_HTTP = "POST /api/v1/blocks/goods/purchase"
PURCHASE_WITHOUT_DIALOG = ("the block bought a good over POST /api/v1/blocks/goods/purchase with its own token, not through"
                           " the bridge's PURCHASE_GOOD: the viewer saw no confirmation dialog and made no click; buy"
                           " through PURCHASE_GOOD so that the host asks the viewer first")


class DevPlatform:
    """The emulator for one ``blockkit dev`` run, and who is looking at the block."""

    def __init__(self, manifest: DevManifest, surface: Surface, *, anonymous: bool = False,
                 data_dir: Path | None = None, block_origins: tuple[str, ...] = (),
                 on_call: Callable[[dict[str, Any]], None] | None = None,
                 allowed_hosts: tuple[str, ...] = (),
                 on_note: Callable[[str], None] | None = None) -> None:
        self.manifest = manifest
        # Told the emulator's notes (a video asked for without PyAV, once), for the terminal.
        self.on_note = on_note
        # Told each call the block's frame makes to the emulated catalogue (for the trace).
        self.on_call = on_call
        self._told_purchase = False
        self.surface = surface
        env = os.environ.get(DATA_ENV)
        self.data_dir = (data_dir or (Path(env) if env else manifest.block_dir / DATA_DIR)).absolute()
        self.block_origins = block_origins
        # The emulator's origins answer these names too (--allowed-host), besides loopback.
        self.allowed_hosts = allowed_hosts
        # Its sign-in, control routes and mint route ask for this run's key (printed as a link).
        self.access_key = new_access_key()
        self._anonymous = anonymous
        self._lock = threading.Lock()
        self.viewer_id: int | None = None
        self.users: list[SeededUser] = []
        self._emulator: Any = None
        self._state: Any = None
        # The newest token handed to each block instance: the bridge's procedures run with it.
        self.tokens: dict[str, str] = {}
        # The run's --scenario names (dev/scenarios.py): insufficient-buzz follows the viewer.
        self.scenarios: tuple[str, ...] = ()
        # Per instance: the token the host holds (as it hands it to the block) and what its mint withheld.
        self.held: dict[str, dict[str, Any]] = {}
        self.missing: dict[str, list[str]] = {}

    # --- lifecycle -------------------------------------------------------------------------
    def start(self) -> DevPlatform:
        from blockkit.emulator.errors import EmulatorError
        from blockkit.emulator.options import EmulatorOptions
        from blockkit.emulator.runtime import Emulator
        from blockkit.emulator.state import EmulatorState
        from blockkit.emulator.store import users as users_store

        try:
            self.data_dir.mkdir(parents=True, exist_ok=True)
            emulator = Emulator(EmulatorOptions(data=self.data_dir, scale="small", access_key=self.access_key,
                                                allowed_hosts=self.allowed_hosts),
                                note=self.on_note,
                                wrap_catalogue=lambda app: BlockCors(app, self.block_origins,
                                                                    self._http_call if self.on_call else None))
            emulator.start()
        except (EmulatorError, OSError) as exc:
            raise DevError(f"cannot start the local platform in {self.data_dir}: {exc}") from None
        self._emulator = emulator
        self._state = EmulatorState(emulator.store, emulator.clock, emulator.options, emulator.urls)
        with emulator.store.read() as db:
            rows = users_store.list_users(db)
        self.users = [SeededUser(r.id, r.username, r.tier, r.status, r.is_moderator)
                      for r in rows if r.id > 0 and not r.deleted and r.status != "banned"]
        if not self._anonymous:
            # The first active signed-in member who is no moderator: what most viewers are.
            active = [u for u in self.users if u.status == "active"]
            plain = [u for u in active if not u.is_moderator]
            self.viewer_id = (plain or active)[0].id if active else None
        return self

    def _http_call(self, call: dict[str, Any]) -> None:
        """A catalogue call of the block's frame, for the trace: a 403 for a scope the viewer has not granted
        (withheld at the mint) is marked as such, as the bridge marks its own calls."""
        message = call.get("message")
        if call.get("status") == 403 and isinstance(message, str) and message.startswith(MISSING_SCOPE_PREFIX):
            scope = message[len(MISSING_SCOPE_PREFIX):].strip()
            if any(scope in missing for missing in self.missing.values()):
                call = {**call, "error": CONSENT_REQUIRED, "consentScopes": [scope],
                        "message": f"{message}: the viewer has not granted {scope}"}
        if call.get("ok") and call.get("type") == PURCHASE_OVER_HTTP:
            # Security review 2, S17: the route takes the block's token alone, so a good can be bought with
            # no dialog and no click. Said on the trace's row, and once a run in the terminal.
            call = {**call, "note": PURCHASE_WITHOUT_DIALOG}
            if self.on_note is not None and not self._told_purchase:
                self._told_purchase = True
                self.on_note(PURCHASE_WITHOUT_DIALOG)
        assert self.on_call is not None
        self.on_call(call)

    def stop(self) -> None:
        if self._emulator is not None:
            self._emulator.stop()
            self._emulator = None

    # --- what the services need ------------------------------------------------------------
    @property
    def state(self) -> Any:
        if self._state is None:
            raise DevError("the local platform is not started")
        return self._state

    @property
    def journal(self) -> Any:
        """The emulator's request journal (None before start, or with the journal off): the host page's
        bridge calls go in it beside the emulator's own requests (host_app.py)."""
        journal = getattr(self._emulator, "journal", None)
        return journal if journal is not None and journal.enabled else None

    @property
    def store(self) -> Any:
        return self.state.store

    @property
    def clock(self) -> Any:
        return self.state.clock

    @property
    def urls(self) -> Any:
        return self.state.urls

    @property
    def base_url(self) -> str:
        return str(self.urls.base_url)

    @property
    def sign_in_url(self) -> str:
        """The emulator's sign-in link for this run (it carries the access key)."""
        return sign_in_url(str(self.urls.auth_url), self.access_key)

    @property
    def app_id(self) -> str:
        return self.manifest.app_id or f"dev-app-{self.manifest.block_id}"

    # --- the viewer ---------------------------------------------------------------------------
    def user(self, user_id: int | None) -> SeededUser | None:
        return next((u for u in self.users if u.id == user_id), None)

    def set_viewer(self, user_id: int | None) -> None:
        if user_id is not None and self.user(user_id) is None:
            raise DevError(f"no seeded user with id {user_id}")
        with self._lock:
            self.viewer_id = user_id
        if user_id is not None and "insufficient-buzz" in self.scenarios:
            from blockkit.emulator.services import buzz

            buzz.set_aside(self.store, self.clock, user_id)

    def viewer(self) -> dict[str, Any] | None:
        """BLOCK_INIT's viewer: ``{id, username, signedIn: true}`` or None (PLATFORM.md §8)."""
        user = self.user(self.viewer_id)
        return None if user is None else {"id": user.id, "username": user.username, "signedIn": True}

    # --- instances and tokens -------------------------------------------------------------------
    def register(self, instance_id: str) -> None:
        from blockkit.emulator.services import goods
        from blockkit.emulator.services.blocktokens import KNOWN_SCOPES, register_block_instance

        # The app's goods, so POST /api/v1/blocks/goods/purchase prices from the server side.
        goods.register_catalogue(self.store, self.clock, self.app_id, self.manifest.block_id, list(self.manifest.goods))
        scopes = [s for s in self.manifest.scopes if s in KNOWN_SCOPES]
        is_page = self.surface.kind == "page"
        budget = (self.manifest.page or {}).get("buzzBudgetPerGen") if is_page else None
        register_block_instance(
            self.store, self.clock.iso(), instance_id=instance_id, block_id=self.manifest.block_id,
            app_id=self.app_id, scopes=scopes, slot_id=self.surface.slot_id,
            model_id=None if is_page else 1,
            buzz_budget_per_gen=budget if isinstance(budget, int) and not isinstance(budget, bool) else None,
            installed_by=self.viewer_id)

    def mint(self, instance_id: str) -> dict[str, Any]:
        """A new token for the instance, as BLOCK_INIT and TOKEN_REFRESH carry it: ``{raw, scopes, expiresAt}``
        on a page, plus ``buzzBudget`` on a model slot (PageBlockHost.tsx:792-801; IframeHost.tsx:713-719).

        ``scopes`` is what the platform's host advertises: the declared scopes minus those the mint withheld
        for want of consent (pageBlockHostLogic.ts grantedPageScopes). A signed-out viewer has nothing
        withheld, so every declared scope is listed, though the JWT holds only the ones needing no subject."""
        from blockkit.emulator.services.blocktokens import KNOWN_SCOPES, MintRefused, mint_block_token

        try:
            early = "token-expires-early" in self.scenarios
            minted = mint_block_token(self.state, instance_id=instance_id, user_id=self.viewer_id,
                                      lifetime_seconds=EARLY_TOKEN_SECONDS if early else None,
                                      ignore_grants="consent-denied" in self.scenarios)
        except MintRefused as exc:
            raise DevError(f"the local platform refused a block token: {exc}") from None
        self.tokens[instance_id] = minted.token
        missing = set(minted.missing_scopes)
        self.missing[instance_id] = [s for s in self.manifest.scopes if s in missing]
        # The manifest's order (the emulator signs them sorted), the known vocabulary only.
        token: dict[str, Any] = {"raw": minted.token,
                                 "scopes": [s for s in dict.fromkeys(self.manifest.scopes)
                                            if s in KNOWN_SCOPES and s not in missing],
                                 "expiresAt": minted.expires_at}
        if self.surface.kind == "slot" and "buzzBudget" in minted.claims:
            token["buzzBudget"] = minted.claims["buzzBudget"]
        self.held[instance_id] = token
        return token

    def current_token(self, instance_id: str) -> dict[str, Any]:
        """The token the host holds for the instance (what REQUEST_TOKEN answers, PageBlockHost.tsx:1038-1053);
        a new one only when none is held or the held one is no longer valid (the host's own refresh would
        have replaced it by then)."""
        from blockkit.emulator.services.blocktokens import verify

        token = self.held.get(instance_id)
        if token is None or verify(token["raw"], self.state) is None:
            return self.mint(instance_id)
        return token

    def expires_in_ms(self, token: dict[str, Any]) -> float:
        """How long until ``token`` expires, on the local platform's clock."""
        from blockkit.emulator.store.clock import parse_timestamp

        return (parse_timestamp(token["expiresAt"]).timestamp() - self.clock.timestamp()) * 1000

    # --- consent (services/consent.py) ----------------------------------------------------------
    @property
    def app_block_id(self) -> str:
        from blockkit.emulator.services.blocktokens import app_block_id

        return app_block_id(self.app_id, self.manifest.block_id)

    def missing_scopes(self, instance_id: str | None) -> list[str]:
        """The declared scopes the instance's last token withheld for want of the viewer's consent."""
        return list(self.missing.get(instance_id or "", []))

    def grant_consent(self, instance_id: str) -> dict[str, Any]:
        """The viewer allowed what the instance's token lacks: record the grant, mint again, return the token."""
        from blockkit.emulator.services import consent
        from blockkit.emulator.services.errors import ServiceError

        if self.viewer_id is None:
            raise DevError("a signed-out viewer cannot grant scopes")
        try:
            consent.grant(self.store, self.clock, self.viewer_id, self.app_block_id, self.missing_scopes(instance_id),
                          ceiling=self.manifest.scopes)
        except ServiceError as exc:
            raise DevError(exc.detail) from None
        return self.mint(instance_id)

    def granted_scopes(self) -> list[str]:
        """What the viewer has granted this block (sorted; empty signed out)."""
        from blockkit.emulator.services import consent

        if self.viewer_id is None:
            return []
        return sorted(consent.granted(self.store, self.viewer_id, self.app_block_id))

    def grant_declared(self) -> None:
        """Record the viewer's consent to every consent-gated scope the block declares (what an install or
        an earlier Allow leaves): for tests and screenshots that start past the first visit."""
        from blockkit.emulator.services import consent

        gated = consent.gated(self.manifest.scopes)
        if self.viewer_id is not None and gated:
            consent.grant(self.store, self.clock, self.viewer_id, self.app_block_id, gated,
                          ceiling=self.manifest.scopes)

    def reset_consent(self) -> bool:
        """Forget the viewer's grant for this block, so the next page load is a first visit again."""
        from blockkit.emulator.services import consent

        if self.viewer_id is None:
            return False
        return consent.reset(self.store, self.viewer_id, self.app_block_id)

    def claims(self, instance_id: str | None) -> dict[str, Any] | None:
        """The verified claims of the block token the instance holds; None when it holds no block JWT."""
        from blockkit.emulator.services.blocktokens import looks_like_jwt, verify

        raw = self.tokens.get(instance_id or "")
        if raw is None or not looks_like_jwt(raw):
            return None  # an opaque OAuth token is no block token: the bridge's procedures refuse it
        claims = verify(raw, self.state)
        if claims is None:  # expired since: mint afresh, as the host's refresh would have
            self.mint(instance_id or "")
            claims = verify(self.tokens[instance_id or ""], self.state)
        return claims


class BlockCors:
    """CORS for the block's origin on the block catalogue routes only (ASGI middleware).

    The block calls ``{apiBaseUrl}/api/v1/blocks/models`` with ``Authorization: Bearer``: a
    cross-origin request with a preflight. Only the dev block origin(s) get an answer;
    ``null`` is among them when the sandbox makes the frame's origin opaque. Each such call
    (preflights aside) is told to ``on_call`` with its status, as a brokered call for the trace.
    """

    def __init__(self, app: Any, origins: tuple[str, ...],
                 on_call: Callable[[dict[str, Any]], None] | None = None) -> None:
        self.app = app
        self.origins = frozenset(origins)
        self.on_call = on_call

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or not scope["path"].startswith(CORS_PREFIXES):
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        origin = headers.get(b"origin", b"").decode("latin-1")
        if origin not in self.origins:
            await self.app(scope, receive, send)
            return
        allow = [(b"access-control-allow-origin", origin.encode("latin-1")), (b"vary", b"Origin")]
        if scope["method"] == "OPTIONS" and b"access-control-request-method" in headers:
            await send({"type": "http.response.start", "status": 204, "headers": [
                *allow, (b"access-control-allow-methods", b"GET, POST"),
                (b"access-control-allow-headers", b"authorization, content-type"),
                (b"access-control-max-age", CORS_MAX_AGE.encode())]})
            await send({"type": "http.response.body", "body": b""})
            return
        seen: dict[str, Any] = {"status": None, "body": b""}
        started = time.monotonic()

        async def send_with_cors(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                seen["status"] = message.get("status")
                message = {**message, "headers": [*message.get("headers", []), *allow]}
            elif message["type"] == "http.response.body" and (seen["status"] or 0) >= 400:
                seen["body"] = (seen["body"] + message.get("body", b""))[:ERROR_BODY_LIMIT]
            await send(message)

        try:
            await self.app(scope, receive, send_with_cors)
        finally:
            if self.on_call is not None:
                self.on_call(http_call(scope, seen["status"], seen["body"],
                                       duration_ms=(time.monotonic() - started) * 1000))


def http_call(scope: dict[str, Any], status: int | None, body: bytes, *,
              duration_ms: float | None = None) -> dict[str, Any]:
    """A trace ``call`` event for one request of the block's frame to the emulated catalogue.

    ``duration_ms``: from the request's arrival to the end of its answer (the host page's trace shows it).
    """
    failed = status is None or status >= 400
    call: dict[str, Any] = {"via": "http", "type": f"{scope['method']} {scope['path']}", "ok": not failed,
                            "status": status or 500}
    if duration_ms is not None:
        call["durationMs"] = round(duration_ms, 1)
    query = scope.get("query_string", b"").decode("latin-1")
    if query:
        call["query"] = query
    if failed:
        call["error"] = f"HTTP {status or 500}"
        call["message"] = _error_message(body) if status is not None else "the emulator raised before answering"
    return call


def _error_message(body: bytes) -> str | None:
    """The reason in an error body: the catalogue's ``{error}`` or ``{message}``, ProblemDetails, or text."""
    text = body.decode("utf-8", "replace").strip()
    try:
        document = json.loads(text)
    except ValueError:
        return text[:200] or None
    if isinstance(document, str):
        return document
    if isinstance(document, dict):
        for key in ("message", "detail", "error", "title"):
            value = document.get(key)
            if isinstance(value, str):
                return value
            if isinstance(value, dict):
                return json.dumps(value, ensure_ascii=False)[:200]
    return text[:200] or None
