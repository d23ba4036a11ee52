"""Who is calling: a request's bearer token resolved to a :class:`Caller`.

Every route that cares about the caller asks ``caller_of(request)``:

- no token: the anonymous caller (or, with ``required=True``, :class:`TokenRejected`);
- a token: each registered verifier is asked in turn; the first that recognises the
  token's form answers with a Caller or raises :class:`TokenRejected` (unknown,
  expired by the emulator clock, revoked, malformed). A token no verifier claims is
  rejected as unknown.

``TokenRejected`` is an ``ApiError`` whose default body is the catalogue's 401
``{"error": "Unauthorized"}`` (``/me``, the vault, ``/models?favorites``); a group
with another 401 shape (OAuth userinfo: ``invalid_token``) catches it and answers
its own. Public routes that always evaluate as anonymous never call ``caller_of``,
so a bad token there changes nothing.

Verifiers: the opaque OAuth access token (``store/tokens.py``) is built in and asked
last; ``register_verifier(fn)`` puts another (block JWTs) before it. A verifier is
``fn(raw_token, state) -> Caller | None``: None means "not my kind of token".

The token travels as ``Authorization: Bearer <token>``; downloads may also send
``?token=`` (``allow_query_token=True``). A header that is present but not a
well-formed bearer credential is rejected (malformed), never read as anonymous.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from blockkit.emulator import facts, journal
from blockkit.emulator.http.errors import ApiError, error_body

if TYPE_CHECKING:
    from starlette.requests import Request

    from blockkit.emulator.state import EmulatorState

CallerKind = Literal["anonymous", "oauth", "block"]

# What an anonymous caller may see: the public level (PG). A signed-in user sees up to
# their configured level.
PUBLIC_BROWSING_LEVEL = facts.NSFW_LEVELS["PG"]

# RFC 6750 b64token (token68); anything else in a bearer credential is malformed. The
# length cap keeps a 100 KB header from reaching a hash or a JWT parser.
_TOKEN68 = re.compile(r"[A-Za-z0-9\-._~+/]+=*", re.ASCII)
MAX_TOKEN_LENGTH = 4096


@dataclass(frozen=True)
class Caller:
    user_id: int | None = None            # None: anonymous
    username: str | None = None
    tier: str = "free"
    status: str = "active"
    is_moderator: bool = False
    browsing_level: int = PUBLIC_BROWSING_LEVEL   # the user's configured level
    kind: CallerKind = "anonymous"
    scope: int = 0                        # OAuth bitmask; 0 when anonymous
    block_scopes: frozenset[str] = frozenset()
    max_browsing_level: int | None = None  # a block token's signed ceiling
    token_ctx: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)
    # Active subscription product names (/me lists them; a membership needs one).
    subscriptions: tuple[str, ...] = ()

    @property
    def anonymous(self) -> bool:
        return self.user_id is None

    @property
    def is_member(self) -> bool:
        """A paid tier with an active membership (what the vault requires)."""
        return self.tier != "free" and bool(self.subscriptions)

    def clamp(self, level: int) -> int:
        """``level`` within this caller's token ceiling (a block token's maxBrowsingLevel)."""
        return level if self.max_browsing_level is None else level & self.max_browsing_level


ANONYMOUS = Caller()

Reason = Literal["missing", "malformed", "unknown", "expired", "revoked", "user"]


class TokenRejected(ApiError):
    """A token was required and absent, or presented and not acceptable. Answers 401 by default."""

    def __init__(self, reason: Reason, detail: str = "") -> None:
        super().__init__(401, error_body("Unauthorized"))
        self.reason = reason
        self.detail = detail or reason
        journal.note_reason("the route needs a bearer token (Authorization: Bearer <token>) and none was sent"
                            if reason == "missing" else f"the bearer token was refused: {self.detail}")

    def __str__(self) -> str:
        return f"token rejected: {self.detail}"


Verifier = Callable[[str, "EmulatorState"], "Caller | None"]
_verifiers: list[Verifier] = []


def register_verifier(fn: Verifier) -> Verifier:
    """Ask ``fn`` about every token before the built-in OAuth access-token verifier. Idempotent."""
    if fn not in _verifiers:
        _verifiers.append(fn)
    return fn


def verifiers() -> tuple[Verifier, ...]:
    return (*_verifiers, verify_access_token)


# --- the built-in verifier: opaque OAuth access tokens -------------------------------------

def verify_access_token(raw: str, state: EmulatorState) -> Caller:
    """An opaque access token from ``oauth_access_tokens`` (the last verifier: it claims every token)."""
    from blockkit.emulator.store import tokens

    now = state.clock.iso()
    found = tokens.lookup_token_and_user(state.store.connection(), raw)
    if found is None:
        raise TokenRejected("unknown", "no such access token")
    token, user = found
    if token.revoked_at is not None:
        raise TokenRejected("revoked", "the access token was revoked")
    if token.expires_at <= now:  # one timestamp form, so text order is time order
        raise TokenRejected("expired", f"the access token expired at {token.expires_at} (the emulator's clock"
                                       f" reads {now})")
    if user is None or user.deleted:
        raise TokenRejected("user", "the token's user no longer exists")
    journal.note_who(user=user.id, client=token.client_id)
    return Caller(
        user_id=user.id, username=user.username, tier=user.tier, status=user.status,
        is_moderator=user.is_moderator, browsing_level=user.browsing_level, kind="oauth", scope=token.scope,
        token_ctx={"token_id": token.id, "client_id": token.client_id, "expires_at": token.expires_at},
        subscriptions=user.subscriptions,
    )


# --- reading the request ---------------------------------------------------------------------

def bearer_token(request: Request, *, allow_query_token: bool = False) -> str | None:
    """The presented token (None when none), or TokenRejected("malformed")."""
    header = request.headers.getlist("authorization")
    if len(header) > 1:
        raise TokenRejected("malformed", "more than one Authorization header")
    if header:
        scheme, _, credential = header[0].strip().partition(" ")
        credential = credential.strip()
        if scheme.lower() != "bearer" or not credential:
            raise TokenRejected("malformed", "the Authorization header is not 'Bearer <token>'")
        return _checked(credential)
    if allow_query_token:
        values = request.query_params.getlist("token")
        if len(values) > 1:
            raise TokenRejected("malformed", "more than one token parameter")
        if values:
            return _checked(values[0])
    return None


def _checked(token: str) -> str:
    if len(token) > MAX_TOKEN_LENGTH or not _TOKEN68.fullmatch(token):
        raise TokenRejected("malformed", "the token is not a bearer token")
    return token


def resolve_token(raw: str, state: EmulatorState) -> Caller:
    """The Caller of a raw token, through the verifiers (raises TokenRejected)."""
    for verifier in verifiers():
        caller = verifier(raw, state)
        if caller is not None:
            return caller
    raise TokenRejected("unknown", "no verifier recognises the token")  # pragma: no cover - the last one claims all


def caller_of(request: Request, *, required: bool = False, allow_query_token: bool = False) -> Caller:
    """Who sent ``request``: anonymous without a token; TokenRejected for a bad one (or none when required)."""
    cached = request.scope.get("blockkit.caller")
    if cached is not None:
        return cached  # type: ignore[no-any-return]
    from blockkit.emulator.state import emulator

    raw = bearer_token(request, allow_query_token=allow_query_token)
    if raw is None:
        if required:
            raise TokenRejected("missing", "no token")
        return ANONYMOUS
    caller = resolve_token(raw, emulator(request))
    request.scope["blockkit.caller"] = caller
    return caller
