"""What the web console (``http/console``) does to the platform, beyond what other services already offer.

Each function takes the store and the clock and raises :class:`ServiceError` for a refusal, as every
service does; the console's routes turn that into the one-line message its pages show.

- ``set_balance``: a pool to a chosen balance, as one ledger entry (kind ``adjustment``), so the
  books still add up (``store.buzz.first_unbalanced``).
- ``sign_in``: a session of the OAuth provider for a user (the ``bk_session`` cookie's value).
- ``advance_to``: the clock to a moment (only forward: the clock never goes back).
- ``export_zip`` / ``import_zip``: the CLI's ``emulator export`` and ``import --replace`` as one zip file.
"""

from __future__ import annotations

import io
import math
import os
import stat
import tempfile
import zipfile
from datetime import datetime
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from blockkit.emulator.errors import EmulatorError
from blockkit.emulator.services import buzz
from blockkit.emulator.services.errors import ServiceError, bad_request
from blockkit.emulator.store import buzz as buzz_store
from blockkit.emulator.store import oauth as oauth_store
from blockkit.emulator.store.buzz import POOLS
from blockkit.emulator.store.clock import ClockError, parse_timestamp

if TYPE_CHECKING:
    from blockkit.emulator.store import Store
    from blockkit.emulator.store.clock import Clock

MAX_BALANCE = 1_000_000_000
MAX_IMPORT_BYTES = 512 * 1024 * 1024     # the zip as uploaded
MAX_IMPORT_UNPACKED = 2 * 1024 * 1024 * 1024
MAX_IMPORT_MEMBERS = 100_000


def set_balance(store: Store, clock: Clock, user_id: int, pool: str, value: object) -> dict[str, int]:
    """Make ``pool`` of ``user_id`` hold ``value`` Buzz; the difference is one ``adjustment`` entry."""
    if pool not in POOLS:
        raise bad_request("bad_pool", f"pool must be one of {', '.join(POOLS)}, not {pool!r}")
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_BALANCE:
        raise bad_request("bad_amount", f"a balance is a whole number of Buzz from 0 to {MAX_BALANCE}")
    now = clock.iso()
    with store.write() as db:
        buzz.open_accounts(db, user_id, now)
        held = buzz_store.balances(db, user_id)[pool]
        if value != held:
            buzz_store.move(db, user_id, pool, value - held, "adjustment", None,
                            f"{pool} set to {value} in the console", now)
        return buzz_store.balances(db, user_id)


def sign_in(store: Store, clock: Clock, user_id: int) -> str:
    """A new sign-in session of the OAuth provider for ``user_id``: the raw ``bk_session`` value."""
    with store.write() as db:
        row = db.execute("SELECT status, deleted_at FROM users WHERE id = ?", (user_id,)).fetchone()
        if row is None:
            raise ServiceError(404, "no_user", f"user {user_id} does not exist")
        if row[1] is not None or row[0] != "active":
            raise bad_request("user_unavailable", f"user {user_id} is {'deleted' if row[1] else row[0]}:"
                                                  " the sign-in page does not offer them either")
        return oauth_store.start_session(db, user_id, now=clock.now())


def advance_seconds(value: object, unit: object = "seconds") -> float:
    """``value`` of ``unit`` (seconds, minutes, hours, days) as seconds; a bad one is a one-line refusal."""
    units = {"seconds": 1, "minutes": 60, "hours": 3600, "days": 86400}
    if unit not in units:
        raise bad_request("bad_unit", f"unit must be one of {', '.join(units)}")
    try:
        amount = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise bad_request("bad_amount", "the amount is a number, such as 90 or 1.5") from None
    if not math.isfinite(amount) or amount < 0:
        raise bad_request("bad_amount", "the amount is a finite number, 0 or more (the clock never goes back)")
    return amount * units[str(unit)]


def seconds_until(clock: Clock, moment: object) -> float:
    """Seconds from the clock's now to ``moment`` (ISO 8601; no offset: UTC); a past moment is refused."""
    if not isinstance(moment, str) or not moment.strip():
        raise bad_request("bad_date", "give the date as ISO 8601, such as 2026-12-31T12:00")
    try:
        target = parse_timestamp(moment.strip())
    except ValueError:
        raise bad_request("bad_date", f"{moment!r} is not a date and time (ISO 8601, such as 2026-12-31T12:00)") \
            from None
    seconds = (target - clock.now()).total_seconds()
    if seconds < 0:
        raise bad_request("date_past", f"{moment} is before the clock's now ({clock.iso()}): the clock never"
                                       " goes back (reset the data to start over)")
    return seconds


def advance(clock: Clock, seconds: float) -> datetime:
    try:
        return clock.advance(seconds)
    except ClockError as exc:
        raise bad_request("bad_amount", str(exc)) from None


def _ops(data_ops: Any) -> Any:
    if data_ops is None:
        raise bad_request("unavailable", "export, import and reset need the emulator as 'blockkit emulator start'"
                                         " runs it (these apps were built without its data operations)")
    return data_ops


def export_zip(store: Store, data_ops: Any) -> bytes:
    """The store exported (``blockkit emulator export``: ``data_ops.export``) and packed as one zip file."""
    export = _ops(data_ops).export
    with tempfile.TemporaryDirectory(prefix="blockkit-console-") as tmp:
        target = Path(tmp) / "export"
        export(store, target)
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
            for path in sorted(target.rglob("*")):
                if path.is_file() and not path.is_symlink():
                    archive.write(path, path.relative_to(target).as_posix())
        return buffer.getvalue()


def import_zip(store: Store, data: bytes, data_ops: Any) -> dict[str, Any]:
    """Replace the store's data with the export in zip ``data`` (checked first, all or nothing;
    ``data_ops.import_export``, as ``blockkit emulator import --replace``)."""
    import_export = _ops(data_ops).import_export
    if len(data) > MAX_IMPORT_BYTES:
        raise ServiceError(413, "too_large", f"an import is at most {MAX_IMPORT_BYTES // (1024 * 1024)} MiB")
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        members = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError):
        raise bad_request("bad_zip", "the file is not a zip of an export (the console's Export makes one)") from None
    if len(members) > MAX_IMPORT_MEMBERS or sum(m.file_size for m in members) > MAX_IMPORT_UNPACKED:
        raise ServiceError(413, "too_large", "the zip unpacks to more than an export can hold")
    with tempfile.TemporaryDirectory(prefix="blockkit-console-") as tmp:
        root = Path(tmp) / "export"
        root.mkdir(mode=0o700)
        for member in members:
            name = PurePosixPath(member.filename)
            mode = member.external_attr >> 16
            if name.is_absolute() or ".." in name.parts or "\\" in member.filename or stat.S_ISLNK(mode):
                raise bad_request("bad_zip", f"the zip holds {member.filename!r}: not a file of an export")
            if member.is_dir():
                continue
            destination = root.joinpath(*name.parts)
            destination.parent.mkdir(parents=True, exist_ok=True)
            with archive.open(member) as source, open(destination, "wb") as sink:
                os.fchmod(sink.fileno(), 0o600)
                sink.write(source.read())
        try:
            return import_export(store, root, replace=True)
        except EmulatorError as exc:
            raise bad_request("bad_export", str(exc)) from None


def reset(store: Store, seed: object, scale: object, data_ops: Any) -> tuple[int, str]:
    """Re-seed (``blockkit emulator reset``: ``data_ops.reset``): every change is thrown away; the clock offset stays."""
    reset_store = _ops(data_ops).reset
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise bad_request("bad_seed", "the seed is a whole number, 0 or more")
    if scale not in ("small", "large"):
        raise bad_request("bad_scale", "the scale is small or large")
    reset_store(store, seed, str(scale))
    return seed, str(scale)


# --- apps and access ------------------------------------------------------------------------

def scope_of(bits: object) -> int:
    """The scope bitmask of a list of bits (the console's checkboxes) or one; unknown bits are refused."""
    from blockkit.emulator.services.oauth import scopes

    values = bits if isinstance(bits, list) else [] if bits in (None, "") else [bits]
    total = 0
    for value in values:
        try:
            bit = int(str(value))
        except ValueError:
            raise bad_request("bad_scope", f"{value!r} is not a scope bit") from None
        if bit <= 0 or bit & (bit - 1) or bit > scopes.FULL:
            raise bad_request("bad_scope", f"{value!r} is not a scope bit")
        total |= bit
    return total


def update_client(store: Store, client_id: str, *, redirect_uris: list[str], allowed_scopes: int) -> None:
    """Replace a client's registered redirect URIs (exact strings, as ``client add`` checks them) and scopes."""
    from blockkit.emulator.services.oauth.clients import check_redirect_uri
    from blockkit.emulator.store import console as console_store

    if not redirect_uris:
        raise bad_request("no_redirect_uri", "a client needs at least one redirect URI")
    try:
        uris = list(dict.fromkeys(check_redirect_uri(uri) for uri in redirect_uris))
    except EmulatorError as exc:
        raise bad_request("bad_redirect_uri", str(exc).replace("--redirect-uri ", "")) from None
    with store.write() as db:
        if not console_store.update_client(db, client_id, redirect_uris=uris, allowed_scopes=allowed_scopes):
            raise ServiceError(404, "no_client", f"no client {client_id}")


def remove_client(store: Store, client_id: str) -> None:
    from blockkit.emulator.store import console as console_store

    with store.write() as db:
        if not console_store.remove_client(db, client_id):
            raise ServiceError(404, "no_client", f"no client {client_id}")


def revoke_grant(store: Store, clock: Clock, user_id: int, client_id: str) -> int:
    from blockkit.emulator.store import console as console_store

    with store.write() as db:
        touched = console_store.revoke_grant(db, user_id, client_id, clock.iso())
    if not touched:
        raise ServiceError(404, "no_grant", f"user {user_id} has no grant to {client_id}")
    return touched


def revoke_token(store: Store, clock: Clock, token_id: int) -> None:
    from blockkit.emulator.store import tokens as tokens_store

    with store.write() as db:
        if not tokens_store.revoke_access_token_id(db, token_id, now=clock.now()):
            raise ServiceError(404, "no_token", f"token {token_id} is not live")


def revoke_api_key(store: Store, clock: Clock, key_id: int) -> None:
    from blockkit.emulator.store import console as console_store

    with store.write() as db:
        if not console_store.revoke_api_key(db, key_id, clock.iso()):
            raise ServiceError(404, "no_key", f"API key {key_id} is not live")


def pending_devices(memory: Any) -> list[Any]:
    """The device codes a person has not decided yet, soonest expiry first."""
    now = memory.now()
    with memory.lock:
        found = [entry for entry in memory.devices.values() if entry.status == "pending" and entry.expires_at > now]
    return sorted(found, key=lambda entry: entry.expires_at)


def decide_device(store: Store, memory: Any, user_code: str, user_id: int, *, approved: bool) -> None:
    """Approve (as ``user_id``) or deny a pending device code, as its page would."""
    entry, why = memory.pending_by_user_code(user_code)
    if entry is None:
        raise bad_request("bad_code", f"{user_code}: {why.lower()}")
    with store.read() as db:
        row = db.execute("SELECT 1 FROM users WHERE id = ? AND deleted_at IS NULL AND status = 'active'",
                         (user_id,)).fetchone()
    if row is None:
        raise bad_request("no_user", f"user {user_id} cannot approve: not an active user")
    memory.decide(entry, user_id=user_id, approved=approved)


# --- orchestration and goods ----------------------------------------------------------------

def deliver_again(store: Store, event_id: int) -> None:
    """Queue a callback event again (the dispatcher sends it within a moment, as a new attempt)."""
    from blockkit.emulator.store import console as console_store

    with store.write() as db:
        if not console_store.deliver_again(db, event_id):
            raise bad_request("not_queued", f"callback event {event_id} does not exist or is already waiting to"
                                            " be delivered")
