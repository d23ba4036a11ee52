"""The provider's grammar on oauthlib: its endpoints and grants, our RequestValidator over the store.

Why oauthlib (not authlib): oauthlib's server is framework-agnostic (a URI, method,
body and headers in; headers, body and status out) and delegates every storage and
policy decision to one ``RequestValidator``, which maps cleanly onto starlette routes
and our SQLite store. Authlib's server side is built around Flask and Django
integrations and has no starlette one. oauthlib carries the protocol: parameter
parsing and duplicate checks, grant dispatch, PKCE verification (S256, constant-time
compare), client-authentication flow, the token response and its error envelopes.

What the platform adds on top is here, as validator policy or custom validators:

- scope is one decimal bitmask (0..Full); UserRead is forced on every grant;
- PKCE is required and only ``S256`` (``plain`` is refused: the S256-only grant);
- ``state`` and the parameters the spec lists per grant are required (invalid_request);
- secrets: required for confidential clients, refused for public ones, compared in
  constant time (``hmac.compare_digest`` over the stored sha256);
- codes are single use and live 10 minutes, and an exchange that fails on PKCE or
  redirect_uri uses the code up (the platform's library revokes it before those checks);
  refresh tokens rotate, and a rotated one is refused while the new pair keeps working
  (the platform's behaviour: no family revocation on reuse);
- a narrowed refresh keeps the grant's scope on the new refresh token (RFC 6749 6);
- the token rate limit counts per client_id only requests whose caller proved the
  client (a secret, or a valid code or refresh token of a public client); failed client
  authentications count per source address (so a stranger cannot lock a client out);
- client_credentials is for confidential clients and binds the token to the owner.

Every validator call runs inside the write transaction the route opens around the
endpoint, so a code exchange or a rotation is atomic.
"""

from __future__ import annotations

import base64
import binascii
import hmac
import re
import secrets
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote_plus

from oauthlib.oauth2 import RequestValidator
from oauthlib.oauth2.rfc6749 import errors
from oauthlib.oauth2.rfc6749.endpoints import AuthorizationEndpoint, TokenEndpoint
from oauthlib.oauth2.rfc6749.grant_types import (
    AuthorizationCodeGrant,
    ClientCredentialsGrant,
    RefreshTokenGrant,
)
from oauthlib.oauth2.rfc6749.grant_types.authorization_code import code_challenge_method_s256
from oauthlib.oauth2.rfc6749.tokens import BearerToken

from blockkit.emulator import journal
from blockkit.emulator.services.oauth import scopes
from blockkit.emulator.services.oauth.clients import redirect_uri_matches
from blockkit.emulator.store import oauth as store
from blockkit.emulator.store.tokens import DEFAULT_TTL_SECONDS, hash_token

if TYPE_CHECKING:
    from oauthlib.common import Request as OAuthRequest

    from blockkit.emulator.state import EmulatorState

# RFC 7636 4.1: the verifier is 43-128 unreserved characters; an S256 challenge is the
# 43-character base64url of a SHA-256 digest.
VERIFIER = re.compile(r"[A-Za-z0-9\-._~]{43,128}", re.ASCII)
S256_CHALLENGE = re.compile(r"[A-Za-z0-9\-_]{43}", re.ASCII)

GRANT_PARAMS: dict[str, tuple[str, ...]] = {
    "authorization_code": ("code", "code_verifier", "client_id", "redirect_uri"),
    "refresh_token": ("refresh_token", "client_id"),
    "client_credentials": ("client_id",),
}


# The peer address the route passes to the validator (set by the route, never by the client).
PEER_HEADER = "X-Blockkit-Peer"
TOKEN_PREFIX = "civitai_"  # the platform's token format: the prefix and 36 hex digits


def new_token(request: OAuthRequest | None = None) -> str:
    return TOKEN_PREFIX + secrets.token_hex(18)


class RateLimited(errors.OAuth2Error):
    """429 from inside oauthlib (it answers an OAuth2Error with its status, body and headers)."""

    error = "rate_limited"
    status_code = 429

    def __init__(self, description: str, retry_after: int, request: OAuthRequest | None = None) -> None:
        super().__init__(description=description, request=request)
        self.retry_after = retry_after

    @property
    def headers(self) -> dict[str, str]:
        return {"Retry-After": str(self.retry_after)}


def _s256_noted(verifier: str, challenge: str) -> bool:
    """oauthlib's S256 check; a mismatch is told to the request journal."""
    if code_challenge_method_s256(verifier, challenge):
        return True
    journal.note_reason("PKCE: the code_verifier does not hash (S256) to the code_challenge sent to /authorize;"
                        " send the verifier the challenge was made from")
    return False


class S256OnlyCodeGrant(AuthorizationCodeGrant):
    """The authorization-code grant with PKCE ``S256`` only: ``plain`` is an unsupported method."""

    _code_challenge_methods = {"S256": lambda verifier, challenge: _s256_noted(verifier, challenge)}

    def create_authorization_code(self, request: OAuthRequest) -> dict[str, str]:
        grant = {"code": store.new_secret()}
        if request.state:
            grant["state"] = request.state
        return grant

    def validate_token_request(self, request: OAuthRequest) -> None:
        try:
            super().validate_token_request(request)
        except errors.InvalidGrantError as exc:
            if not exc.description:  # oauthlib's PKCE check says nothing; the code is already used up
                exc.description = ("Invalid grant: code verifier is invalid (the code is now used up)"
                                   if getattr(request, "code_row", None) is not None
                                   else "Invalid grant: authorization code is invalid")
            raise
        except errors.MismatchingRedirectURIError as exc:
            exc.description = ("Invalid request: redirect_uri is not the one sent to authorize"
                               " (the code is now used up)")
            raise


def basic_credentials(request: OAuthRequest) -> tuple[str, str] | None:
    """client_id and client_secret from ``Authorization: Basic`` (RFC 6749 2.3.1), or None."""
    return parse_basic(request.headers.get("Authorization") or "")


def parse_basic(header: str) -> tuple[str, str] | None:
    """(client_id, client_secret) of a Basic credential, each form-decoded, or None."""
    scheme, _, value = header.partition(" ")
    if scheme.lower() != "basic" or not value.strip():
        return None
    try:
        decoded = base64.b64decode(value.strip(), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None
    client_id, colon, secret = decoded.partition(":")
    if not colon:
        return None
    return unquote_plus(client_id), unquote_plus(secret)


class Validator(RequestValidator):
    """The store behind oauthlib. One per running emulator; thread-safe (no per-request state)."""

    def __init__(self, state: EmulatorState) -> None:
        super().__init__()
        self.state = state
        from blockkit.emulator.services.oauth.memory import Memory

        # Kept in the build's state: the web console (catalogue origin) lists and decides pending device codes.
        self.memory = state.kept("oauth-memory", lambda: Memory(state.clock))
        self._request_local = threading.local()

    # --- helpers ---------------------------------------------------------------------------

    def _client(self, client_id: str | None) -> store.Client | None:
        if not client_id:
            return None
        known: dict[str, store.Client | None] | None = getattr(self._request_local, "clients", None)
        if known is not None and client_id in known:
            return known[client_id]
        with self.state.store.write() as db:
            client = store.get_client(db, client_id)
        if known is not None:
            known[client_id] = client
        return client

    @contextmanager
    def one_request(self, *clients: store.Client) -> Iterator[None]:
        """Within: each client is read from the store once (oauthlib asks for it three or four times
        a token request, each a query while the writer lock is held), starting with ``clients``, which
        the endpoint read already. The thread runs the whole request, so the memo is the thread's."""
        self._request_local.clients = {client.id: client for client in clients}
        try:
            yield
        finally:
            self._request_local.clients = None

    def _now(self) -> Any:
        return self.state.clock.now()

    def _count(self, bucket: str, key: str, request: OAuthRequest) -> None:
        """Count one request in a rate-limit bucket; RateLimited when it is over the limit."""
        from blockkit.emulator.services.oauth.limits import RATE_LIMITS, RATE_WINDOW_SECONDS, rate_limited_body

        with self.state.store.write() as db:
            count, left = store.hit(db, bucket, key, now=self.state.clock.timestamp(), window=RATE_WINDOW_SECONDS)
        if count > RATE_LIMITS[bucket]:
            from blockkit.emulator.services.oauth.limits import limit_reason

            journal.note_reason(limit_reason(bucket, key, count, max(1, left)))
            raise RateLimited(rate_limited_body(bucket)["error_description"], max(1, left), request=request)

    def proven(self, client: store.Client, request: OAuthRequest) -> None:
        """The caller proved it is ``client``: count it in the client's token bucket."""
        if not getattr(request, "counted", False):
            request.counted = True
            self._count("token", client.id, request)

    def failed(self, request: OAuthRequest) -> None:
        """A failed client authentication: counted per source address, never against the client."""
        self._count("token-failed", request.headers.get(PEER_HEADER) or "-", request)

    # --- client authentication --------------------------------------------------------------

    def client_authentication_required(self, request: OAuthRequest, *args: Any, **kwargs: Any) -> bool:
        # A secret that was sent is always checked (a public client sending one is refused);
        # a confidential client must send one.
        if request.client_secret is not None or basic_credentials(request) is not None:
            return True
        client = self._client(request.client_id)
        return client is not None and client.confidential

    def authenticate_client(self, request: OAuthRequest, *args: Any, **kwargs: Any) -> bool:
        basic = basic_credentials(request)
        if basic is not None:
            if request.client_secret is not None:
                return False  # two authentication methods at once (RFC 6749 2.3)
            client_id, secret = basic
            if request.client_id and request.client_id != client_id:
                journal.note_reason(f"client_id {request.client_id!r} in the body differs from {client_id!r} in"
                                    " the Basic credentials")
                return False
        else:
            client_id, secret = request.client_id, request.client_secret
        client = self._client(client_id)
        if client is None or secret is None or not client.confidential or client.secret_hash is None:
            journal.note_reason(f"no client {client_id!r} is registered" if client is None else
                                f"client {client_id!r} is public: it authenticates with PKCE, not a client_secret"
                                if not client.confidential else f"client {client_id!r} sent no client_secret")
            self.failed(request)
            return False  # unknown client, or a secret from a public client
        if not hmac.compare_digest(hash_token(secret), client.secret_hash):
            journal.note_reason(f"the client_secret sent is not the one registered for client {client_id!r}")
            self.failed(request)
            return False
        request.client = client
        request.client_id = client.id
        self.proven(client, request)
        return True

    def authenticate_client_id(self, client_id: str, request: OAuthRequest, *args: Any, **kwargs: Any) -> bool:
        client = self._client(client_id)
        if client is None or client.confidential:
            journal.note_reason(f"no client {client_id!r} is registered" if client is None else
                                f"client {client_id!r} is confidential and sent no client_secret")
            self.failed(request)
            return False
        request.client = client
        return True  # proven later, by a valid code or refresh token

    def validate_client_id(self, client_id: str, request: OAuthRequest, *args: Any, **kwargs: Any) -> bool:
        client = self._client(client_id)
        if client is None:
            return False
        request.client = client
        return True

    def validate_grant_type(self, client_id: str, grant_type: str, client: store.Client, request: OAuthRequest,
                            *args: Any, **kwargs: Any) -> bool:
        if grant_type == "client_credentials":
            return client.confidential
        return grant_type in GRANT_PARAMS

    # --- redirect URIs and response types --------------------------------------------------

    def validate_redirect_uri(self, client_id: str, redirect_uri: str, request: OAuthRequest, *args: Any,
                              **kwargs: Any) -> bool:
        client = self._client(client_id)
        if client is not None and redirect_uri_matches(client.redirect_uris, redirect_uri):
            return True
        if client is not None:
            journal.note_reason(redirect_reason(client, redirect_uri))
        return False

    def get_default_redirect_uri(self, client_id: str, request: OAuthRequest, *args: Any, **kwargs: Any) -> None:
        return None  # redirect_uri is required on every request

    def validate_response_type(self, client_id: str, response_type: str, client: store.Client,
                               request: OAuthRequest, *args: Any, **kwargs: Any) -> bool:
        return response_type == "code"

    def is_pkce_required(self, client_id: str, request: OAuthRequest) -> bool:
        return True

    # --- scopes ----------------------------------------------------------------------------

    def get_default_scopes(self, client_id: str, request: OAuthRequest, *args: Any, **kwargs: Any) -> list[str]:
        client = request.client if isinstance(request.client, store.Client) else self._client(client_id)
        return [str(client.allowed_scopes)] if client is not None else []

    def validate_scopes(self, client_id: str, scope_list: list[str], client: store.Client, request: OAuthRequest,
                        *args: Any, **kwargs: Any) -> bool:
        if len(scope_list) != 1:
            return False
        value = scopes.parse_scope(scope_list[0])
        if value is None:
            return False
        value |= scopes.USER_READ  # a baseline on every grant: the app may always learn who the user is
        if client is None or not scopes.within(value, client.allowed_scopes | scopes.USER_READ):
            if client is not None:
                ceiling = client.allowed_scopes | scopes.USER_READ
                journal.note_reason(f"scope {value} asks for {scope_names(value & ~ceiling)}, outside the scopes"
                                    f" client {client.id!r} is allowed ({client.allowed_scopes}:"
                                    f" {scope_names(client.allowed_scopes)})")
            return False
        request.scopes = [str(value)]
        return True

    def get_original_scopes(self, refresh_token: str, request: OAuthRequest, *args: Any, **kwargs: Any) -> list[str]:
        return [str(request.refresh_row.scope)]

    def is_within_original_scope(self, request_scopes: list[str], refresh_token: str, request: OAuthRequest,
                                 *args: Any, **kwargs: Any) -> bool:
        if len(request_scopes) != 1 or (value := scopes.parse_scope(request_scopes[0])) is None:
            return False
        value |= scopes.USER_READ
        if not scopes.within(value, request.refresh_row.scope):
            raise errors.InvalidScopeError(
                description=f"scope {value} asks for more than the grant's scope {request.refresh_row.scope}",
                request=request)
        request.scopes = [str(value)]
        return True

    # --- authorization codes ---------------------------------------------------------------

    def get_code_challenge(self, code: str, request: OAuthRequest) -> str | None:
        row = getattr(request, "code_row", None)
        return row.code_challenge if row is not None else None

    def get_code_challenge_method(self, code: str, request: OAuthRequest) -> str | None:
        row = getattr(request, "code_row", None)
        return row.code_challenge_method if row is not None else None

    def save_authorization_code(self, client_id: str, code: dict[str, str], request: OAuthRequest, *args: Any,
                                **kwargs: Any) -> None:
        with self.state.store.write() as db:
            store.save_code(db, code["code"], client_id=client_id, user_id=request.user,
                            scope=int(request.scopes[0]), redirect_uri=request.redirect_uri,
                            code_challenge=request.code_challenge,
                            code_challenge_method=request.code_challenge_method, now=self._now())
        nonce = getattr(request, "oidc_nonce", None)
        if nonce:
            self.memory.save_nonce(code["code"], nonce=nonce, user_id=request.user, client_id=client_id,
                                   auth_time=int(self.state.clock.timestamp()))

    def validate_code(self, client_id: str, code: str, client: store.Client, request: OAuthRequest, *args: Any,
                      **kwargs: Any) -> bool:
        invalid = "Invalid grant: authorization code is invalid"
        with self.state.store.write() as db:
            row = store.find_code(db, code)
            if row is None or row.client_id != client_id or row.used_at is not None:
                journal.note_reason("the authorization code is not one this emulator issued" if row is None else
                                    f"the authorization code was issued to client {row.client_id!r}, not"
                                    f" {client_id!r}" if row.client_id != client_id else
                                    f"the authorization code was already used (at {row.used_at}); a code is"
                                    " good for one exchange")
                raise errors.InvalidGrantError(description=invalid, request=request)
            if row.expires_at <= self.state.clock.iso():
                journal.note_reason(f"the authorization code expired at {row.expires_at}; the emulator's clock"
                                    f" reads {self.state.clock.iso()}")
                raise errors.InvalidGrantError(description="Invalid grant: authorization code has expired",
                                               request=request)
        if not client.confidential:
            self.proven(client, request)  # before the code is used up: a 429 leaves it for a retry
        with self.state.store.write() as db:
            # Used up now, before PKCE and redirect_uri are checked (as the platform's library does):
            # a failed exchange cannot be retried with other values.
            if not store.use_code(db, row.id, now=self._now()):
                raise errors.InvalidGrantError(description=invalid, request=request)
        request.code_row = row
        request.user = row.user_id
        request.scopes = [str(row.scope)]
        return True

    def confirm_redirect_uri(self, client_id: str, code: str, redirect_uri: str, client: store.Client,
                             request: OAuthRequest, *args: Any, **kwargs: Any) -> bool:
        row = getattr(request, "code_row", None)
        if row is not None and redirect_uri == row.redirect_uri:
            return True
        if row is not None:
            journal.note_reason(f"redirect_uri {redirect_uri!r} is not the one the code was issued for"
                                f" ({row.redirect_uri!r})")
        return False

    def invalidate_authorization_code(self, client_id: str, code: str, request: OAuthRequest, *args: Any,
                                      **kwargs: Any) -> None:
        pass  # save_bearer_token marks the code used in the same transaction as the tokens

    # --- refresh tokens --------------------------------------------------------------------

    def validate_refresh_token(self, refresh_token: str, client: store.Client, request: OAuthRequest,
                               *args: Any, **kwargs: Any) -> bool:
        with self.state.store.read() as db:
            row = store.find_refresh_token(db, refresh_token)
        if row is None or row.client_id != client.id or row.revoked_at is not None or row.rotated_at is not None:
            # A rotated token is simply gone, as on the platform: refused, and the pair that replaced
            # it keeps working (no family revocation).
            raise errors.InvalidGrantError(description="Invalid grant: refresh token is invalid", request=request)
        if row.expires_at <= self.state.clock.iso():
            raise errors.InvalidGrantError(description="Invalid grant: refresh token has expired", request=request)
        if not client.confidential:
            self.proven(client, request)
        request.refresh_row = row
        request.user = row.user_id
        return True

    def rotate_refresh_token(self, request: OAuthRequest) -> bool:
        return True

    # --- tokens ----------------------------------------------------------------------------

    def save_bearer_token(self, token: dict[str, Any], request: OAuthRequest, *args: Any, **kwargs: Any) -> None:
        now = self._now()
        scope = int(token["scope"])
        client: store.Client = request.client
        with self.state.store.write() as db:
            refresh_id: int | None = None
            if request.grant_type == "authorization_code":
                user_id = request.user
                refresh_id = store.save_refresh_token(db, token["refresh_token"], client_id=client.id,
                                                      user_id=user_id, scope=scope, now=now)
            elif request.grant_type == "refresh_token":
                parent = request.refresh_row
                if not store.rotate_refresh_token(db, parent.id, now=now):
                    raise errors.InvalidGrantError(description="Invalid grant: refresh token is invalid",
                                                   request=request)
                user_id = parent.user_id
                # The new refresh token keeps the grant's scope; a narrowing applies to this access token.
                refresh_id = store.save_refresh_token(db, token["refresh_token"], client_id=client.id,
                                                      user_id=user_id, scope=parent.scope, now=now, parent=parent)
            else:  # client_credentials: the client acts as its owner
                user_id = client.owner_user_id
            store.issue_access_token(db, token["access_token"], client_id=client.id, user_id=user_id, scope=scope,
                                     now=now, refresh_token_id=refresh_id)


# --- custom validators (the spec's parameter rules) ------------------------------------------

def require_state_and_scope(request: OAuthRequest) -> dict[str, Any]:
    """Authorize: ``state`` and ``scope`` are required; the S256 challenge has its fixed form."""
    if not request.state:
        raise errors.InvalidRequestError(description="state is required", request=request)
    if request.scope is None:
        raise errors.InvalidRequestError(description="scope is required (a decimal bitmask)", request=request)
    if request.code_challenge is not None and request.code_challenge_method == "S256" \
            and not S256_CHALLENGE.fullmatch(request.code_challenge):
        raise errors.InvalidRequestError(
            description="code_challenge must be the 43-character base64url SHA-256 of the verifier",
            request=request)
    return {}


def require_grant_params(request: OAuthRequest) -> None:
    """Token: every parameter the spec lists for the grant is present (else invalid_request)."""
    wanted = GRANT_PARAMS.get(request.grant_type or "", ())
    basic = basic_credentials(request)
    for name in wanted:
        value = getattr(request, name, None)
        if name == "client_id" and not value and basic is not None:
            continue
        if not value:
            raise errors.InvalidRequestError(description=f"{name} is required", request=request)
    if request.grant_type == "client_credentials" and request.client_secret is None and basic is None:
        raise errors.InvalidRequestError(description="client_secret is required", request=request)
    if request.grant_type == "authorization_code" and not VERIFIER.fullmatch(request.code_verifier or ""):
        raise errors.InvalidRequestError(description="Invalid parameter: code_verifier must be 43-128 unreserved"
                                         " characters (RFC 7636 4.1)", request=request)
    if request.scope is not None and request.grant_type in ("refresh_token", "client_credentials") \
            and scopes.parse_scope(request.scope) is None:
        raise errors.InvalidScopeError(description="scope must be a decimal integer from 0 to Full",
                                       request=request)


class ConfidentialSecretRequired:
    """Token: a confidential client that sent no secret is missing a required parameter."""

    def __init__(self, validator: Validator) -> None:
        self.validator = validator

    def __call__(self, request: OAuthRequest) -> None:
        if request.client_secret is not None or basic_credentials(request) is not None:
            return
        client = self.validator._client(request.client_id)
        if client is not None and client.confidential:
            raise errors.InvalidRequestError(description="client_secret is required for a confidential client",
                                             request=request)


def scope_names(scope: int) -> str:
    """A scope's bits by name (``UserRead and ModelsRead``), for the journal's reasons."""
    return journal.described([bit.name for bit in scopes.bits_of(scope)])


def redirect_reason(client: store.Client, sent: str | None) -> str:
    """Why a redirect_uri was refused, for the journal: the one sent beside the registered ones."""
    registered = journal.described([repr(uri) for uri in client.redirect_uris])
    if not sent:
        return f"no redirect_uri was sent; client {client.id!r} registers {registered}"
    return (f"redirect_uri {sent!r} does not match any redirect URI registered for client {client.id!r}:"
            f" {registered}")


# --- the endpoints ---------------------------------------------------------------------------

class Provider:
    """oauthlib's authorization and token endpoints, wired to one Validator."""

    def __init__(self, state: EmulatorState) -> None:
        self.validator = Validator(state)
        bearer = BearerToken(self.validator, token_generator=new_token, expires_in=DEFAULT_TTL_SECONDS,
                             refresh_token_generator=new_token)
        secret_required = ConfidentialSecretRequired(self.validator)
        code_grant = S256OnlyCodeGrant(self.validator, pre_auth=[require_state_and_scope],
                                       pre_token=[require_grant_params, secret_required])
        refresh_grant = RefreshTokenGrant(self.validator, issue_new_refresh_tokens=True,
                                          pre_token=[require_grant_params, secret_required])
        credentials_grant = ClientCredentialsGrant(self.validator, pre_token=[require_grant_params])
        self.authorization = AuthorizationEndpoint(default_response_type="code", default_token_type=bearer,
                                                   response_types={"code": code_grant})
        self.token = TokenEndpoint(default_grant_type=None, default_token_type=bearer,
                                   grant_types={"authorization_code": code_grant, "refresh_token": refresh_grant,
                                                "client_credentials": credentials_grant})
