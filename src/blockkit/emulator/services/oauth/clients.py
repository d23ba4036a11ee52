"""Client registration: ``register_client`` (Python; ``blockkit dev`` registers the block's
own client with it) and what ``blockkit emulator client add`` checks before calling it.

A client has a name, one or more redirect URIs (matched exactly at authorize, or by the RFC 8252
loopback rule of ``redirect_uri_matches``), allowed
scopes (a bitmask up to Full; default Full), allowed origins (browser origins a public
client may call the token endpoint from) and an owner (the seeded user a
client_credentials token acts as; default the first active user). Confidential clients
get a secret, shown once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from blockkit.emulator.errors import EmulatorError
from blockkit.emulator.services.oauth import scopes
from blockkit.emulator.store import oauth as store

if TYPE_CHECKING:
    from blockkit.emulator.store.clock import Clock
    from blockkit.emulator.store import Store


@dataclass(frozen=True)
class Registered:
    client_id: str
    client_secret: str | None

    def as_dict(self) -> dict[str, str]:
        out = {"client_id": self.client_id}
        if self.client_secret is not None:
            out["client_secret"] = self.client_secret
        return out


def check_redirect_uri(uri: str) -> str:
    """An absolute http(s) URI without a fragment, or EmulatorError saying why not."""
    parts = urlsplit(uri)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise EmulatorError(f"--redirect-uri {uri}: must be an absolute http:// or https:// URI")
    if parts.fragment or "#" in uri:
        raise EmulatorError(f"--redirect-uri {uri}: a redirect URI has no #fragment (RFC 6749 3.1.2)")
    if any(ch.isspace() for ch in uri):
        raise EmulatorError(f"--redirect-uri {uri!r}: contains whitespace")
    return uri


def check_origin(origin: str) -> str:
    """scheme://host[:port], lower-cased, nothing else, or EmulatorError."""
    parts = urlsplit(origin)
    if parts.scheme not in ("http", "https") or not parts.netloc or parts.path not in ("", "/") or parts.query \
            or parts.fragment:
        raise EmulatorError(f"--allowed-origin {origin}: must be an origin, scheme://host[:port]")
    return f"{parts.scheme}://{parts.netloc}".lower()


def register_client(store_: Store, clock: Clock, *, name: str, redirect_uris: list[str],
                    confidential: bool = False, allowed_scopes: int = scopes.FULL,
                    allowed_origins: list[str] | None = None, owner: str | None = None,
                    client_id: str | None = None) -> Registered:
    """Register an OAuth client in the store (works while the emulator serves it)."""
    if not name.strip():
        raise EmulatorError("--name: must not be empty")
    if not redirect_uris:
        raise EmulatorError("give at least one --redirect-uri")
    uris = list(dict.fromkeys(check_redirect_uri(u) for u in redirect_uris))
    origins = list(dict.fromkeys(check_origin(o) for o in allowed_origins or []))
    if not 0 <= allowed_scopes <= scopes.FULL:
        raise EmulatorError(f"--allowed-scopes {allowed_scopes}: must be 0..{scopes.FULL} (Full)")
    with store_.write() as db:
        if owner is None:
            row = db.execute("SELECT id FROM users WHERE id > 0 AND deleted_at IS NULL AND status = 'active'"
                             " ORDER BY id LIMIT 1").fetchone()
        else:
            row = db.execute("SELECT id FROM users WHERE username = ? AND deleted_at IS NULL", (owner,)).fetchone()
        if row is None:
            raise EmulatorError(f"--owner {owner}: no such user ('blockkit emulator users' lists them)"
                                if owner else "the store has no active user to own the client")
        if client_id is not None and store.get_client(db, client_id) is not None:
            raise EmulatorError(f"client {client_id} is already registered")
        new_id, secret = store.add_client(db, name=name.strip(), owner_user_id=int(row[0]), redirect_uris=uris,
                                          allowed_scopes=allowed_scopes, confidential=confidential,
                                          allowed_origins=origins, now=clock.now(), client_id=client_id)
    return Registered(new_id, secret)


# --- matching a redirect_uri at authorize ------------------------------------------------------

# The loopback hosts the platform treats as one (apps/auth/src/lib/server/oauth/redirect-uri.ts).
_LOOPBACK_NETLOC = re.compile(r"(127\.0\.0\.1|\[::1\]|localhost)(?::(\d{1,5}))?", re.ASCII)


def _loopback_parts(uri: str) -> tuple[str, str, str] | None:
    """(scheme, path, query) of an ``http(s)://<loopback>[:port]/path[?query]`` URI, else None.

    Parsed by hand so nothing is normalised: a tab, a fragment, userinfo, another case or an
    encoded path segment make it another URI (RFC 6749 3.1.2.2: simple string comparison).
    """
    if any(ord(ch) <= 0x20 or ch in "#\\\x7f" for ch in uri):
        return None
    scheme, sep, rest = uri.partition("://")
    if not sep or scheme not in ("http", "https"):
        return None
    netloc, slash, tail = rest.partition("/")
    if not _LOOPBACK_NETLOC.fullmatch(netloc):
        return None
    path, _, query = (slash + tail).partition("?")
    return scheme, path, query


def redirect_uri_matches(registered: tuple[str, ...], provided: str) -> bool:
    """Whether ``provided`` is one of the client's redirect URIs.

    Exact string match, plus RFC 8252 7.3 for loopback redirects, as the platform does: a
    registered ``http://127.0.0.1:9000/cb`` also matches any port, and ``localhost`` and
    ``[::1]`` for ``127.0.0.1``, with the same scheme, path (and, our addition, query).
    """
    if provided in registered:
        return True
    wanted = _loopback_parts(provided)
    return wanted is not None and any(_loopback_parts(uri) == wanted for uri in registered)
