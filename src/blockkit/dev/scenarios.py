"""Unhappy paths a developer switches on: ``blockkit dev --scenario NAME`` (repeatable).

Each scenario is one named switch with a documented effect, and each drives the real local
platform: the services take their own failure path (``emulator/services/faults.py``,
``services/buzz.py``), nothing is a canned reply. ``dev --check`` takes them too, so a block's
verdict can be asked under each.

The platform-side switches are armed when the run starts, for the run only: what a previous run
armed or set aside (a run that was killed) is disarmed and given back first, and again at the end.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from blockkit.dev.errors import DevError

if TYPE_CHECKING:
    from blockkit.dev.platform import DevPlatform


@dataclass(frozen=True)
class Scenario:
    name: str
    effect: str


SCENARIOS: dict[str, Scenario] = {s.name: s for s in (
    Scenario("anonymous", "the viewer is signed out (viewer null; the token holds only what an anonymous viewer gets), "
                          "as --anonymous"),
    Scenario("insufficient-buzz", "the viewer's Buzz pools are emptied in the local platform for the run (ledger "
                                  "adjustments, given back at the end): balances read 0, workflows and purchases are "
                                  "refused as short of Buzz"),
    Scenario("workflow-fails", "the next workflow submitted is charged, then fails 1 s into its first step with no "
                               "output, and is refunded when the failure is due"),
    Scenario("storage-write-fails", "the next app-storage write (set or delete) answers Internal server error and "
                                    "writes nothing"),
)}


def parse_scenarios(values: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """The scenario names, checked and without repeats, in the order given."""
    names: list[str] = []
    for value in values:
        name = value.strip().lower()
        if name not in SCENARIOS:
            known = ", ".join(sorted(SCENARIOS))
            raise DevError(f"--scenario {value!r}: no such scenario; choose from {known}")
        if name not in names:
            names.append(name)
    return tuple(names)


def describe() -> list[str]:
    return [f"{s.name}: {s.effect}" for s in SCENARIOS.values()]


def clear(platform: DevPlatform) -> None:
    """Disarm every switch and give back what was set aside (this run's, or a killed run's)."""
    from blockkit.emulator.services import buzz, faults

    faults.disarm_all(platform.store)
    buzz.give_back(platform.store, platform.clock)


def apply(platform: DevPlatform, names: tuple[str, ...]) -> list[str]:
    """Arm the platform-side switches of ``names`` (after :func:`clear`); a note per scenario."""
    from blockkit.emulator.services import buzz, faults

    clear(platform)
    notes = []
    for name in names:
        if name == "insufficient-buzz":
            if platform.viewer_id is not None:
                buzz.set_aside(platform.store, platform.clock, platform.viewer_id)
        elif name == "workflow-fails":
            faults.arm(platform.store, "workflow-fails")
        elif name == "storage-write-fails":
            faults.arm(platform.store, "storage-write-fails")
        notes.append(f"scenario {name}: {SCENARIOS[name].effect}")
    return notes
