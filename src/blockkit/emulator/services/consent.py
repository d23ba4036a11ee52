"""Consent: which of an app block's scopes a signed-in viewer's block token may carry.

As the platform does (civitai/civitai ``src/server/services/blocks/scope-grant.service.ts:167-201``,
``src/pages/api/v1/block-tokens/index.ts:1011-1051``): every scope but the consent-exempt ones
(:data:`CONSENT_EXEMPT_SCOPES`) is withheld from a viewer's token until the viewer grants it for that
app block. The mint reports what it withheld (``missingScopes``, ``needsConsent``); the host asks the
viewer (REQUEST_CONSENT), a grant is recorded (additive, bounded to what the block declares) and the
host mints again. A signed-out viewer has no ledger: the mint keeps only the exempt scopes and
reports nothing missing.

The grant is kept per viewer and app block (``<appId>/<blockId>``), not per instance, so every page
load of ``blockkit dev`` and every HTTP mint of the emulator sees it. ``reset`` (blockkit dev's viewer
menu) forgets a grant so the first visit can be tried again; the platform has no such path.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from blockkit.emulator.services.errors import ServiceError
from blockkit.emulator.store import consent as consent_store

if TYPE_CHECKING:
    from blockkit.emulator.store import Store
    from blockkit.emulator.store.clock import Clock

# scope-grant.service.ts:167-185. block:settings:* is deliberately not here (the platform's note).
CONSENT_EXEMPT_SCOPES = frozenset({
    "apps:storage:read", "apps:storage:write",
    "apps:storage:shared:read", "apps:storage:shared:write",
    "models:read:self",
    "collections:read:self", "collections:write:self",
})
# blocks.router.ts grantScopes: what the platform answers when nothing asked for is in the ceiling.
OUTSIDE_CEILING = "none of the requested scopes are within the app\u2019s approved manifest"


def gated(scopes: Iterable[str]) -> list[str]:
    """The scopes that need a grant (every one not exempt), in the given order."""
    return [s for s in scopes if s not in CONSENT_EXEMPT_SCOPES]


def partition(requested: Iterable[str], granted: set[str]) -> tuple[list[str], list[str]]:
    """(the scopes the token may carry, the scopes withheld for want of a grant), each in order."""
    signable: list[str] = []
    missing: list[str] = []
    for scope in requested:
        (signable if scope in CONSENT_EXEMPT_SCOPES or scope in granted else missing).append(scope)
    return signable, missing


def granted(store: Store, user_id: int, app_block_id: str) -> set[str]:
    """What the viewer granted the app block (empty: nothing, or revoked)."""
    with store.read() as db:
        return consent_store.granted_scopes(db, user_id, app_block_id)


def grant(store: Store, clock: Clock, user_id: int, app_block_id: str, scopes: Iterable[str], *,
          ceiling: Iterable[str], version: str = "") -> list[str]:
    """Record the viewer's consent to ``scopes`` that lie within ``ceiling`` (what the block declares).

    Returns the scopes granted by this call. Raises ServiceError(400) when none lies within the ceiling,
    as the platform's grantScopes does."""
    allowed = set(ceiling)
    wanted = [s for s in dict.fromkeys(scopes) if isinstance(s, str) and s in allowed]
    if not wanted:
        raise ServiceError(400, "outside_ceiling", OUTSIDE_CEILING)
    with store.write() as db:
        consent_store.add_grant(db, user_id, app_block_id, wanted, version=version, now=clock.iso())
    return wanted


def reset(store: Store, user_id: int, app_block_id: str) -> bool:
    """Forget the viewer's grant for the app block; True when there was one."""
    with store.write() as db:
        return consent_store.delete_grant(db, user_id, app_block_id)


def grant_declared(store: Store, clock: Clock, user_id: int, instance_id: str) -> list[str]:
    """Grant the viewer every consent-gated scope the instance declares (what the platform's install
    and subscribe paths record as the viewer's implicit first consent). Returns what was granted."""
    from blockkit.emulator.services.blocktokens import app_block_id, find_instance

    with store.read() as db:
        instance = find_instance(db, instance_id)
    if instance is None:
        raise ServiceError(404, "not_found", "Block install not found")
    wanted = gated(instance.scopes)
    if not wanted:
        return []
    return grant(store, clock, user_id, app_block_id(instance.app_id, instance.block_id), wanted,
                 ceiling=instance.scopes)
