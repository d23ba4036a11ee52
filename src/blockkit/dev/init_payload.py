"""What the dev host hands the block: token, viewer, context and ``BLOCK_INIT``."""

from __future__ import annotations

import base64
import json
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from blockkit.dev.errors import DevError
from blockkit.dev.manifest import DevManifest
from blockkit.dev.surface import Surface
from blockkit.platform import BUDGET_SCOPE, LIMITS

# A dev token lives as long as a real one is refreshed for, plus a margin:
# the host pushes TOKEN_REFRESH about every 13 minutes.
DEV_TOKEN_TTL = timedelta(minutes=15)
DEV_TOKEN_KIND = "block"
DEV_TOKEN_ISSUER = "blockkit-dev"


DEV_VIEWER: dict[str, Any] = {"userId": 1, "username": "dev-viewer"}

# Context members the flags may set, with their defaults. The types of the
# defaults are the types the members must have.
PAGE_CONTEXT_DEFAULTS: dict[str, Any] = {"subPath": "/"}
SLOT_CONTEXT_DEFAULTS: dict[str, Any] = {
    "modelId": 1,
    "modelVersionId": 1,
    "modelName": "Dev Model",
    "modelType": "Checkpoint",
    "modelNsfwLevel": 1,
}


@dataclass(frozen=True)
class HostIdentity:
    """Who is looking at the block, and where."""

    viewer: dict[str, Any] | None
    context: dict[str, Any]


def new_block_instance_id() -> str:
    return "bi_dev_" + secrets.token_hex(6)


def build_identity(
    manifest: DevManifest, surface: Surface, overrides: dict[str, str], *, anonymous: bool
) -> HostIdentity:
    viewer = None if anonymous else dict(DEV_VIEWER)
    return HostIdentity(viewer=viewer, context=build_context(manifest, surface, overrides, viewer))


def build_context(
    manifest: DevManifest, surface: Surface, overrides: dict[str, str], viewer: dict[str, Any] | None
) -> dict[str, Any]:
    if surface.kind == "page":
        defaults = {"slug": manifest.block_id, **PAGE_CONTEXT_DEFAULTS}
    else:
        defaults = dict(SLOT_CONTEXT_DEFAULTS)
    context = {"slotId": surface.slot_id, **defaults}
    for key, text in overrides.items():
        if key not in defaults:
            allowed = ", ".join(sorted(defaults))
            raise DevError(f"--context {key}=…: a {surface.kind} context has no {key!r}; it has {allowed}")
        if isinstance(defaults[key], int):
            try:
                context[key] = int(text)
            except ValueError:
                raise DevError(f"--context {key}={text}: {key} must be a whole number") from None
        else:
            context[key] = text
    if surface.kind == "page":
        context["viewerUserId"] = viewer["userId"] if viewer else None
    return context


def mint_dev_token(
    manifest: DevManifest, surface: Surface, viewer: dict[str, Any] | None, *, now: datetime | None = None
) -> dict[str, Any]:
    """A token shaped like the platform's, holding the manifest's scopes.

    ``raw`` is an unsigned JWT: a block can decode its claims as it would a real
    one, and no server would ever accept it.
    """
    issued = now or datetime.now(timezone.utc)
    expires = issued + DEV_TOKEN_TTL
    claims = {
        "iss": DEV_TOKEN_ISSUER,
        "sub": str(viewer["userId"]) if viewer else None,
        "blockId": manifest.block_id,
        "scopes": list(manifest.scopes),
        "iat": int(issued.timestamp()),
        "exp": int(expires.timestamp()),
        "jti": secrets.token_hex(8),
    }
    token: dict[str, Any] = {
        "raw": ".".join((_b64({"alg": "none", "typ": "JWT"}), _b64(claims), "dev")),
        "scopes": list(manifest.scopes),
        "expiresAt": expires.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        "kind": DEV_TOKEN_KIND,
    }
    budget = buzz_budget(manifest, surface)
    if budget is not None:
        token["buzzBudget"] = budget
    return token


def buzz_budget(manifest: DevManifest, surface: Surface) -> int | None:
    # PLATFORM.md §4: the budget is clamped when the token is minted, and a
    # page with the scope but no budget gets the default.
    if BUDGET_SCOPE not in manifest.scopes or surface.kind != "page":
        return None
    declared = (manifest.page or {}).get("buzzBudgetPerGen")
    if isinstance(declared, int) and not isinstance(declared, bool) and declared > 0:
        return min(declared, LIMITS.buzz_budget_clamp)
    return LIMITS.buzz_budget_default


def build_init_payload(
    manifest: DevManifest,
    identity: HostIdentity,
    *,
    token: dict[str, Any],
    theme: str,
    block_instance_id: str,
) -> dict[str, Any]:
    return {
        "blockInstanceId": block_instance_id,
        "blockId": manifest.block_id,
        "appId": manifest.app_id or f"dev-app-{manifest.block_id}",
        "token": token,
        "context": identity.context,
        "settings": {"publisherSettings": {}, "userSettings": {}},
        "viewer": identity.viewer,
        "theme": theme,
        "renderMode": manifest.render_mode,
    }


def _b64(value: dict[str, Any]) -> str:
    data = json.dumps(value, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()
