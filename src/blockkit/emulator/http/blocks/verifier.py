"""Block tokens on HTTP: accepted on the block routes only, and the :class:`Caller` they make.

``block_verifier`` is registered with ``auth.register_verifier`` when this module is imported
(``http/server.py`` imports it before it serves): a JWT-shaped bearer token is a block token,
checked by ``services/blocktokens.verify``; it is accepted only on the routes that take one
(``blockroutes.BlockScopeMiddleware`` sets ``ON_BLOCK_ROUTE``) and refused everywhere else, as
the platform does (401).
"""

from __future__ import annotations

import contextvars
from typing import TYPE_CHECKING, Any

from blockkit.emulator import facts, journal
from blockkit.emulator.http.auth import Caller, TokenRejected, register_verifier
from blockkit.emulator.services.blocktokens import looks_like_jwt, verify

if TYPE_CHECKING:
    from blockkit.emulator.state import EmulatorState


# The route a request is on takes block tokens: set by blockroutes.BlockScopeMiddleware.
ON_BLOCK_ROUTE: contextvars.ContextVar[bool] = contextvars.ContextVar("blockkit_block_route", default=False)


def caller_from_claims(claims: dict[str, Any], state: EmulatorState) -> Caller:
    ceiling = claims.get("maxBrowsingLevel")
    ceiling = facts.SFW_BROWSING_LEVEL if ceiling is None else int(ceiling)  # no claim: fail closed to SFW
    sub = claims["sub"]
    scopes = frozenset(claims["scopes"])
    journal.note_who(block=str(claims.get("appBlockId") or claims.get("blockId") or ""))
    if sub == "anon":
        return Caller(kind="block", block_scopes=scopes, max_browsing_level=ceiling, token_ctx=claims)
    from blockkit.emulator.store import tokens

    with state.store.read() as db:
        user = tokens.token_user(db, int(sub.split(":", 1)[1]))
    if user is None or user.deleted:
        raise TokenRejected("user", "the token's user no longer exists")
    journal.note_who(user=user.id)
    return Caller(user_id=user.id, username=user.username, tier=user.tier, status=user.status,
                  is_moderator=user.is_moderator, browsing_level=user.browsing_level, kind="block",
                  block_scopes=scopes, max_browsing_level=ceiling, token_ctx=claims, subscriptions=user.subscriptions)


def block_verifier(raw: str, state: EmulatorState) -> Caller | None:
    """The registered verifier: JWT-shaped tokens are block tokens; only block routes accept them."""
    if not looks_like_jwt(raw):
        return None  # an opaque OAuth access token: the built-in verifier's
    if not ON_BLOCK_ROUTE.get():
        raise TokenRejected("unknown", "a block token is not accepted on this route")
    claims = verify(raw, state)
    if claims is None:
        raise TokenRejected("unknown", "invalid block token")
    return caller_from_claims(claims, state)


register_verifier(block_verifier)
