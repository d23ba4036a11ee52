"""What the dev host hands the block: token, viewer, context and ``BLOCK_INIT``."""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any

from blockkit.dev.errors import DevError
from blockkit.dev.manifest import DevManifest
from blockkit.dev.surface import Surface

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
