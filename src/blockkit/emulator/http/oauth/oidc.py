"""OpenID Connect as far as the platform goes: discovery, a JWKS, and an ``id_token``.

- ``GET /.well-known/openid-configuration``: the platform's discovery members (issuer is
  auth_url; the device endpoint; ``jwks_uri``; ES256; ``client_secret_post`` and ``none``).
- ``GET /.well-known/jwks.json``: the public half of the ES256 (P-256) key.
- ``id_token``: when the authorization request carried a ``nonce``, the code exchange also
  returns a JWT signed with that key: ``iss`` auth_url, ``sub`` the user id, ``aud`` the
  client_id, ``nonce``, ``auth_time``, ``iat``, ``exp`` (the access token's lifetime). As on the
  platform, no nonce means no id_token, and a refresh never returns one.

The key lives in the data directory (``oidc-signing-key.pem``, mode 0600, made on first use),
beside the block-token key and handled the same way. Signing is joserfc's.
"""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from joserfc import jwt
from joserfc.jwk import ECKey
from starlette.requests import Request
from starlette.responses import Response

from blockkit.emulator.http.errors import json_response
from blockkit.emulator.errors import EmulatorError
from blockkit.emulator.services.oauth import scopes
from blockkit.emulator.http.oauth.device import DEVICE_GRANT
from blockkit.emulator.state import emulator
from blockkit.emulator.store.tokens import DEFAULT_TTL_SECONDS

if TYPE_CHECKING:
    from blockkit.emulator.services.oauth.memory import Memory
    from blockkit.emulator.store import Store

KEY_FILENAME = "oidc-signing-key.pem"
ALGORITHM = "ES256"

_keys: dict[Path, tuple[ECKey, str]] = {}
_lock = threading.Lock()


def signing_key(store: Store) -> tuple[ECKey, str]:
    """(key, kid) of the data directory's ES256 key, created with mode 0600 on first use."""
    path = store.path.parent / KEY_FILENAME
    with _lock:
        if path in _keys:
            return _keys[path]
        if path.is_file():
            key = ECKey.import_key(path.read_bytes())
        else:
            key = ECKey.generate_key("P-256", private=True)
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            except FileExistsError:  # another process made it first: use theirs
                key = ECKey.import_key(path.read_bytes())
            except OSError as exc:
                raise EmulatorError(f"{path}: cannot write the OIDC signing key: {exc.strerror or exc}") from None
            else:
                with os.fdopen(fd, "wb") as handle:
                    handle.write(key.as_pem(private=True))
        public = key.as_dict(private=False)
        kid = hashlib.sha256(f"{public['x']}.{public['y']}".encode()).hexdigest()[:32]
        _keys[path] = (key, kid)
        return key, kid


def public_jwks(store: Store) -> dict[str, Any]:
    key, kid = signing_key(store)
    public = key.as_dict(private=False)
    return {"keys": [{"kty": "EC", "crv": public["crv"], "x": public["x"], "y": public["y"], "kid": kid,
                      "use": "sig", "alg": ALGORITHM}]}


def id_token_for(request: Request, memory: Memory, code: str) -> str | None:
    """The id_token of a code exchange whose authorize carried a nonce, else None (read once)."""
    context = memory.take_nonce(code)
    if context is None:
        return None
    state = emulator(request)
    key, kid = signing_key(state.store)
    now = int(state.clock.timestamp())
    claims = {"iss": state.urls.auth_url, "sub": str(context.user_id), "aud": context.client_id,
              "nonce": context.nonce, "auth_time": context.auth_time, "iat": now, "exp": now + DEFAULT_TTL_SECONDS}
    return jwt.encode({"alg": ALGORITHM, "kid": kid, "typ": "JWT"}, claims, key)


def discovery(request: Request) -> Response:
    issuer = emulator(request).urls.auth_url
    oauth = issuer + "/api/auth/oauth"
    document = {
        "issuer": issuer,
        "authorization_endpoint": oauth + "/authorize",
        "token_endpoint": oauth + "/token",
        "userinfo_endpoint": oauth + "/userinfo",
        "revocation_endpoint": oauth + "/revoke",
        "device_authorization_endpoint": oauth + "/device",
        "jwks_uri": issuer + "/.well-known/jwks.json",
        "id_token_signing_alg_values_supported": [ALGORITHM],
        "response_types_supported": ["code"],
        "grant_types_supported": ["authorization_code", "refresh_token", "client_credentials", DEVICE_GRANT],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["client_secret_post", "none"],
        "scopes_supported": [bit.name for bit in scopes.SCOPE_BITS],
        "subject_types_supported": ["public"],
        "claims_supported": ["sub", "name", "preferred_username", "picture", "email", "email_verified"],
    }
    return json_response(document, 200, {"Cache-Control": "public, max-age=86400",
                                         })


def jwks_endpoint(request: Request) -> Response:
    return json_response(public_jwks(emulator(request).store), 200,
                         {"Cache-Control": "public, max-age=300", })
