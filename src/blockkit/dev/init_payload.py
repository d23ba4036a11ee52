"""What the dev host hands the block: token, viewer, context and ``BLOCK_INIT``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from blockkit.dev.errors import DevError
from blockkit.dev.manifest import DevManifest
from blockkit.dev.surface import Surface

DEV_VIEWER: dict[str, Any] = {"userId": 1, "username": "dev-viewer"}

# The slot's effective checkpoint when the dev model is a Checkpoint (checkpoint_of).
DEV_VERSION_NAME = "Dev Version"
DEV_BASE_MODEL = "SDXL 1.0"

# Context members the flags may set, with their defaults. The types of the
# defaults are the types the members must have.
PAGE_CONTEXT_DEFAULTS: dict[str, Any] = {"subPath": ""}
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


# The platform's instance ids: `page_<appBlockId>` on the run page (PageBlockHost.tsx, the
# block-tokens route), `mbi_<...>` for a model-page install. blockkit dev's app block is
# `apb_dev_<blockId>`, one per block, as an app has one page block; the emulator caps ids at 64.
INSTANCE_ID_LIMIT = 64


def app_block_id(block_id: str) -> str:
    return "apb_dev_" + block_id


def block_instance_id(surface: Surface, block_id: str) -> str:
    """The instance id the platform's host would use: the same on every load, as an install's is."""
    if surface.kind == "page":
        return ("page_" + app_block_id(block_id))[:INSTANCE_ID_LIMIT]
    return ("mbi_dev_" + block_id)[:INSTANCE_ID_LIMIT]


def normalize_sub_path(text: str) -> str:
    """A page's subPath as the platform gives it: no leading or trailing slash, "" at the root."""
    return "/".join(part for part in text.split("/") if part)


def checkpoint_of(context: dict[str, Any]) -> dict[str, Any] | None:
    """The slot's effective checkpoint (BLOCK_INIT context.checkpoint), in the platform's shape.

    A Checkpoint model's install generates against the model itself; for any other type the
    platform resolves the publisher's default, which a local run has none of: null, the
    platform's "no checkpoint configured".
    """
    if context.get("modelType") != "Checkpoint":
        return None
    return {
        "versionId": context.get("modelVersionId"),
        "modelId": context.get("modelId"),
        "modelName": context.get("modelName"),
        "versionName": DEV_VERSION_NAME,
        "baseModel": DEV_BASE_MODEL,
    }


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
        context["subPath"] = normalize_sub_path(str(context["subPath"]))
        return {
            "slotId": context["slotId"],
            "entityType": "none",
            "slug": context["slug"],
            "subPath": context["subPath"],
            "viewerUserId": viewer["userId"] if viewer else None,
            "viewerUsername": viewer.get("username") if viewer else None,
        }
    return context


def build_init_payload(
    manifest: DevManifest,
    identity: HostIdentity,
    *,
    token: dict[str, Any],
    theme: str,
    block_instance_id: str,
    max_browsing_level: int | None = None,
    domain: str | None = None,
) -> dict[str, Any]:
    """BLOCK_INIT's payload. ``context`` gains the platform's host-side members: ``theme`` on
    both surfaces, the effective ``checkpoint`` and the ``showcaseImages`` on a slot."""
    context = {**identity.context, "theme": theme}
    if "modelId" in context:
        context["checkpoint"] = checkpoint_of(context)
        # The model version's curated images: the dev model has none.
        context["showcaseImages"] = []
    payload: dict[str, Any] = {
        "blockInstanceId": block_instance_id,
        "blockId": manifest.block_id,
        "appId": manifest.app_id or f"dev-app-{manifest.block_id}",
        "token": token,
        "context": context,
        "settings": {"publisherSettings": {}, "userSettings": {}},
        "viewer": identity.viewer,
        "theme": theme,
        "renderMode": manifest.render_mode,
        # The maturity signal (projectBlockInit.ts): the color domain (null off the three
        # civitai domains) and the ceiling the token was minted with.
        "domain": domain if domain in ("green", "blue", "red") else None,
    }
    if max_browsing_level is not None:
        payload["maxBrowsingLevel"] = max_browsing_level
    return payload
