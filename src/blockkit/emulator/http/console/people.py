"""The console's people and money: users, their three Buzz pools and ledger; set a balance; sign in as one."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from starlette.responses import Response
from starlette.routing import Route

from blockkit.emulator.http.console import action, done, integer, page, refusal
from blockkit.emulator.services import buzz
from blockkit.emulator.services import console as service
from blockkit.emulator.state import EmulatorState, emulator
from blockkit.emulator.store import console as queries
from blockkit.emulator.store import oauth as oauth_store

if TYPE_CHECKING:
    from starlette.requests import Request

SESSION_COOKIE = "bk_session"  # the OAuth provider's sign-in cookie (http/oauth/web.py)


def signed_in_user(request: Request, state: EmulatorState) -> int | None:
    """Whom this browser is signed in as at the OAuth provider (its cookie reaches every local port)."""
    raw = request.cookies.get(SESSION_COOKIE)
    if not raw or len(raw) > 128:
        return None
    with state.store.read() as db:
        session = oauth_store.find_session(db, raw, now=state.clock.iso())
    return None if session is None else session.user_id


def _opening(user: dict[str, Any]) -> dict[str, Any]:
    """A user whose pools never opened shows what they open with (services/buzz.py OPENING), marked so."""
    if user["opened"]:
        return user
    return {**user, **buzz.OPENING.get(user["tier"], buzz.OPENING["free"])}


def people_page(request: Request) -> Response:
    state = emulator(request)
    with state.store.read() as db:
        users = [_opening(user) for user in queries.users_with_pools(db)]
    return page(request, "people.html", "people", users=users, signed_in=signed_in_user(request, state))


def person_page(request: Request) -> Response:
    state = emulator(request)
    user_id = request.path_params["user_id"]
    with state.store.read() as db:
        user = queries.user_with_pools(db, user_id)
    if user is not None and not user["deleted"] and not user["opened"]:
        buzz.balance(state.store, state.clock, user_id)  # open the pools, as the first API read would
    with state.store.read() as db:
        user = queries.user_with_pools(db, user_id)
        entries = queries.ledger(db, user_id) if user is not None else []
    if user is None:
        return refusal(404, f"user {user_id} does not exist")
    return page(request, "person.html", "people", user=user, entries=entries, pools=queries.POOLS,
                signed_in=signed_in_user(request, state))


@action("set-balance")
def set_balance_action(request: Request, state: EmulatorState, payload: dict[str, Any]) -> Response:
    user_id = integer(payload, "user_id")
    pool = str(payload.get("pool", ""))
    balances = service.set_balance(state.store, state.clock, user_id, pool, integer(payload, "balance"))
    return done(f"user {user_id}: {pool} now holds {balances[pool]} Buzz", balances=balances)


@action("sign-in")
def sign_in_action(request: Request, state: EmulatorState, payload: dict[str, Any]) -> Response:
    user_id = integer(payload, "user_id")
    raw = service.sign_in(state.store, state.clock, user_id)
    answer = done(f"this browser is now signed in as user {user_id} at {state.urls.auth_url}")
    # Cookies ignore ports (RFC 6265 section 8.5): set here, the OAuth provider's origin receives it too.
    answer.set_cookie(SESSION_COOKIE, raw, max_age=oauth_store.SESSION_TTL_SECONDS, path="/", httponly=True,
                      samesite="lax")
    return answer


routes = [
    Route("/people", people_page, methods=["GET"]),
    Route("/people/{user_id:int}", person_page, methods=["GET"]),
]
