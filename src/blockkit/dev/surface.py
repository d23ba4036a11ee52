"""Which surface the dev host shows the block on: the page, or one model slot."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from blockkit.dev.errors import DevError
from blockkit.dev.manifest import DevManifest
from blockkit.platform import MODEL_SLOTS as KNOWN_MODEL_SLOTS
from blockkit.platform import PAGE_SLOT as PAGE_SLOT_ID

PAGE_SURFACE = "page"


@dataclass(frozen=True)
class Surface:
    kind: Literal["page", "slot"]
    slot_id: str

    @property
    def label(self) -> str:
        return PAGE_SURFACE if self.kind == "page" else self.slot_id


def choose_surface(manifest: DevManifest, requested: str | None) -> tuple[Surface, list[str]]:
    """The surface to show, and notes about choices the manifest does not back."""
    notes: list[str] = []
    if requested is None:
        if manifest.page is not None:
            return Surface("page", PAGE_SLOT_ID), notes
        for slot in manifest.target_slots:
            if slot in KNOWN_MODEL_SLOTS:
                return Surface("slot", slot), notes
        notes.append("the manifest declares no page and no known target slot; showing the block as a page")
        return Surface("page", PAGE_SLOT_ID), notes
    if requested in (PAGE_SURFACE, PAGE_SLOT_ID):
        if manifest.page is None:
            notes.append("the manifest declares no page; on the platform this block has no page surface")
        return Surface("page", PAGE_SLOT_ID), notes
    if requested not in KNOWN_MODEL_SLOTS:
        choices = ", ".join((PAGE_SURFACE, *KNOWN_MODEL_SLOTS))
        raise DevError(f"--surface {requested!r} is not a surface; choose one of: {choices}")
    if requested not in manifest.target_slots:
        notes.append(f"the manifest does not target {requested}; the platform would not mount it there")
    return Surface("slot", requested), notes
