"""Funds (CreateFund) and their deposits, and orchestration API keys.

Python API:

- ``create_api_key(store, clock, username) -> {"api_key", "user_id"}`` (the CLI's ``apikey add``);
- ``api_key_user(store, raw) -> int | None``;
- ``create_fund(store, clock, user_id, template) -> FundResponse dict`` (``template``: the parsed
  body, a dict or None);
- ``get_fund(store, clock, fund_id) -> FundResponse dict`` (404 once the clock passes expiresAt);
- ``deposit(store, clock, fund_id, user_id, account_type, amount) -> FundResponse dict``.

``ttl`` is a .NET TimeSpan string, the form the orchestrator's OpenAPI calls ``date-span``
(``[d.]hh:mm:ss[.fffffff]``: "1.00:00:00", "12:00:00"); the ISO-8601 duration form
("PT24H", "P1D") is accepted too. Hours 0-23, minutes and seconds 0-59, as .NET parses it
("24:00:00" is refused: write "1.00:00:00"). Default 24 hours; more than 7 days, zero or
negative is a 400.
"""

from __future__ import annotations

import re
import secrets
import uuid
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from blockkit.emulator import journal
from blockkit.emulator.services import buzz
from blockkit.emulator.store.clock import format_timestamp
from blockkit.emulator.services.errors import ServiceError, bad_request, forbidden, not_found
from blockkit.emulator.store import orchestration as orch_store
from blockkit.emulator.store import users as users_store
from blockkit.emulator.store.buzz import POOLS, user_tier

if TYPE_CHECKING:
    from blockkit.emulator.store.clock import Clock
    from blockkit.emulator.store import Store

DEFAULT_TTL = timedelta(hours=24)
MAX_TTL = timedelta(days=7)
MAX_DESCRIPTION = 1000  # our cap; the spec gives none
FUND_ACCOUNT_TYPES = ("yellow", "blue", "green", "fakeRed")
BLOCKED_STATUSES = ("banned", "muted")  # our decision: such a key owner gets CreateFund's 403

_DOTNET_SPAN = re.compile(r"(?:(\d{1,8})\.)?(\d{1,2}):(\d{1,2})(?::(\d{1,2})(?:\.(\d{1,7}))?)?", re.ASCII)
_ISO_DURATION = re.compile(r"P(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?", re.ASCII)


# --- API keys -------------------------------------------------------------------------------

def create_api_key(store: Store, clock: Clock, username: str) -> dict[str, Any]:
    raw = "bkorch_" + secrets.token_urlsafe(32)
    with store.write() as db:
        user = users_store.find_by_username(db, username)
        if user is None or user.deleted:
            raise not_found(f"no such user: {username}")
        orch_store.add_api_key(db, user.id, raw, clock.iso())
    return {"api_key": raw, "user_id": user.id}


def api_key_user(store: Store, raw: str) -> int | None:
    with store.read() as db:
        return orch_store.api_key_user(db, raw)


# --- funds ----------------------------------------------------------------------------------

def parse_ttl(value: object) -> timedelta:
    """A date-span (or ISO-8601 duration) as a timedelta; ServiceError 400 when malformed or out of range."""
    if value is None:
        return DEFAULT_TTL
    if not isinstance(value, str):
        raise bad_request("bad_ttl", "ttl must be a string date-span such as \"1.00:00:00\" (or null)")
    text = value.strip()
    span: timedelta | None = None
    match = _DOTNET_SPAN.fullmatch(text)
    if match:
        days, hours, minutes, seconds, fraction = match.groups()
        if int(hours) > 23 or int(minutes) > 59 or int(seconds or 0) > 59:
            raise bad_request("bad_ttl", f"ttl {value!r}: hours must be 0-23 and minutes/seconds 0-59"
                                         " (write a day as \"1.00:00:00\")")
        span = timedelta(days=int(days or 0), hours=int(hours), minutes=int(minutes), seconds=int(seconds or 0),
                         microseconds=int((fraction or "0").ljust(7, "0")) // 10)
    else:
        iso = _ISO_DURATION.fullmatch(text)
        if iso and text not in ("P", "PT") and not text.endswith("T"):
            weeks, days, hours, minutes, seconds = iso.groups()
            span = timedelta(weeks=int(weeks or 0), days=int(days or 0), hours=int(hours or 0),
                             minutes=int(minutes or 0), seconds=float(seconds or 0))
    if span is None:
        raise bad_request("bad_ttl", f"ttl {value!r} is not a date-span such as \"1.00:00:00\" or \"12:00:00\"")
    if span <= timedelta(0):
        raise bad_request("bad_ttl", "ttl must be longer than zero")
    if span > MAX_TTL:
        raise bad_request("bad_ttl", "ttl may be at most 7 days (\"7.00:00:00\")")
    return span


def check_template(template: object) -> tuple[timedelta, bool, str | None]:
    if template is None:
        return DEFAULT_TTL, False, None
    if not isinstance(template, dict):
        raise bad_request("bad_body", "the body must be a FundTemplate JSON object")
    unknown = sorted(set(template) - {"ttl", "allowMatureContent", "description"})
    if unknown:
        raise bad_request("bad_body", f"unknown FundTemplate field(s): {', '.join(unknown)}")
    mature = template.get("allowMatureContent", False)
    if mature is None:
        mature = False
    if not isinstance(mature, bool):
        raise bad_request("bad_allow_mature_content", "allowMatureContent must be a boolean")
    description = template.get("description")
    if description is not None and not isinstance(description, str):
        raise bad_request("bad_description", "description must be a string or null")
    if description is not None and len(description) > MAX_DESCRIPTION:
        raise bad_request("bad_description", f"description may be at most {MAX_DESCRIPTION} characters")
    return parse_ttl(template.get("ttl")), mature, description


def _response(db: Any, fund: orch_store.FundRow) -> dict[str, Any]:
    held = orch_store.fund_balances(db, fund.id)
    balances = {key: held.get(key, 0) for key in FUND_ACCOUNT_TYPES}
    out: dict[str, Any] = {"id": fund.id, "allowMatureContent": fund.allow_mature_content}
    if fund.description is not None:
        out["description"] = fund.description
    out.update(createdAt=fund.created_at, expiresAt=fund.expires_at, balance=sum(balances.values()),
               balances=balances)
    return out


def _owner_allowed(db: Any, user_id: int) -> None:
    row = db.execute("SELECT status FROM users WHERE id = ? AND deleted_at IS NULL", (user_id,)).fetchone()
    if row is None or row[0] in BLOCKED_STATUSES:
        raise forbidden(f"the API key's owner is {row[0] if row else 'deleted'} and may not create funds")


def create_fund(store: Store, clock: Clock, user_id: int, template: object) -> dict[str, Any]:
    ttl, mature, description = check_template(template)
    now = clock.now()
    fund = orch_store.FundRow(str(uuid.uuid4()), user_id, mature, description, format_timestamp(now),
                              format_timestamp(now + ttl))
    with store.write() as db:
        _owner_allowed(db, user_id)
        orch_store.insert_fund(db, fund)
        return _response(db, fund)


def _missing_fund(db: Any, fund_id: str, now: str) -> None:
    """Why no live fund is ``fund_id``: it expired (when), or this run never made it."""
    row = db.execute("SELECT expires_at FROM funds WHERE id = ?", (fund_id,)).fetchone()
    journal.note_reason(f"fund {fund_id} expired at {row[0]}; the emulator's clock reads {now}" if row is not None
                        else f"this run holds no fund {fund_id!r}")


def get_fund(store: Store, clock: Clock, fund_id: str) -> dict[str, Any]:
    with store.read() as db:
        fund = orch_store.live_fund(db, fund_id, clock.iso())
        if fund is None:
            _missing_fund(db, fund_id, clock.iso())
            raise not_found("no such fund (a fund is gone once its expiresAt has passed)")
        return _response(db, fund)


def deposit(store: Store, clock: Clock, fund_id: str, user_id: int, account_type: object,
            amount: object) -> dict[str, Any]:
    """Move ``amount`` Buzz from the depositor's pool into the fund.

    The mature-content rule: a fund with allowMatureContent takes Yellow, and Blue only from a
    member (403 otherwise). ``fakeRed`` is not a pool a viewer holds, so it cannot be deposited.
    """
    if account_type not in POOLS:
        raise bad_request("bad_account_type", "accountType must be one of yellow, blue, green")
    if isinstance(amount, bool) or not isinstance(amount, int) or not 1 <= amount <= buzz.MAX_PURCHASE:
        journal.note_reason(f"a deposit's amount is a whole number of Buzz from 1 to {buzz.MAX_PURCHASE}; this one"
                            f" is {journal.kind_of(amount)}")
        raise bad_request("bad_amount", "amount must be a whole number of Buzz, 1 or more")
    now = clock.iso()
    with store.write() as db:
        fund = orch_store.live_fund(db, fund_id, now)
        if fund is None:
            _missing_fund(db, fund_id, now)
            raise not_found("no such fund (a fund is gone once its expiresAt has passed)")
        if fund.allow_mature_content:
            tier = user_tier(db, user_id)
            member = tier is not None and tier[0] != "free" and tier[1]
            if account_type == "green" or (account_type == "blue" and not member):
                standing = "" if account_type == "green" or tier is None else \
                    f" (tier {tier[0]}, {'with' if tier[1] else 'without'} an active membership)"
                journal.note_reason(f"fund {fund.id} allows mature content, so it takes Yellow, and Blue from a"
                                    f" member; this deposit is from {account_type}, by user {user_id}{standing}")
                raise forbidden("a fund that allows mature content takes deposits only from Yellow, and Blue"
                                " from members")
        try:
            buzz.charge(db, now, user_id, amount, (str(account_type),), kind="fund_deposit", reference=fund.id,
                        description=fund.description or "fund deposit")
        except ServiceError as exc:
            raise bad_request("insufficient_buzz", exc.detail) from None
        orch_store.add_deposit(db, fund.id, user_id, str(account_type), amount, now)
        return _response(db, fund)
