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
    Scenario("consent-denied", "tokens are minted as on a first visit and every REQUEST_CONSENT is answered as the "
                               "viewer clicking Not now: the block gets nothing, and the gated scopes stay withheld"),
    Scenario("slow", "every reply the host sends waits 1500 ms (slow=MS for another latency, up to 30000)"),
    Scenario("token-expires-early", "tokens live 60 s and the host does not refresh them: a call after that is "
                                    "refused as expired until the block asks with REQUEST_TOKEN"),
)}
DEFAULT_LATENCY_MS = 1500
MAX_LATENCY_MS = 30_000


def _split(value: str) -> tuple[str, str | None]:
    name, sep, argument = value.strip().lower().partition("=")
    return name, argument if sep else None


def parse_scenarios(values: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """The scenario names, checked and without repeats, in the order given (``slow=MS`` counts as slow)."""
    names: list[str] = []
    for value in values:
        name, argument = _split(value)
        if argument is not None and name != "slow":
            raise DevError(f"--scenario {value!r}: only slow takes a value (slow=MS)")
        if name == "slow" and argument is not None:
            latency_ms([value])  # checked here, so a bad latency is one line at start
        if name not in SCENARIOS:
            known = ", ".join(sorted(SCENARIOS))
            raise DevError(f"--scenario {value!r}: no such scenario; choose from {known}")
        if name not in names:
            names.append(name)
    return tuple(names)


def latency_ms(values: tuple[str, ...] | list[str]) -> float:
    """The latency the ``slow`` scenario asks for (0 without it)."""
    chosen = 0.0
    for value in values:
        name, argument = _split(value)
        if name != "slow":
            continue
        if argument is None:
            chosen = DEFAULT_LATENCY_MS
            continue
        try:
            number = float(argument)
        except ValueError:
            number = -1.0
        if not 0 < number <= MAX_LATENCY_MS or number != number:
            raise DevError(f"--scenario {value!r}: slow=MS takes a number of milliseconds from 1 to {MAX_LATENCY_MS}")
        chosen = number
    return chosen


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
        # consent-denied, slow and token-expires-early are the host's: host_app.py and DevPlatform.mint.
        notes.append(f"scenario {name}: {SCENARIOS[name].effect}")
    return notes


# The scenarios the host page's menu switches (anonymous is the Viewer menu's "signed out").
SWITCHABLE = ("insufficient-buzz", "workflow-fails", "storage-write-fails", "consent-denied", "slow",
              "token-expires-early")


def switch(platform: DevPlatform, names: tuple[str, ...], name: str, on: bool) -> tuple[str, ...]:
    """``names`` with ``name`` switched on or off, its platform side applied now; the new names."""
    from blockkit.emulator.services import buzz, faults

    if name not in SWITCHABLE:
        raise DevError(f"no such scenario to switch: {name!r}; choose from {', '.join(SWITCHABLE)}")
    chosen = [n for n in names if n != name] + ([name] if on else [])
    if name == "insufficient-buzz":
        if on and platform.viewer_id is not None:
            buzz.set_aside(platform.store, platform.clock, platform.viewer_id)
        elif not on:
            buzz.give_back(platform.store, platform.clock)
    elif name in ("workflow-fails", "storage-write-fails"):
        faults.arm(platform.store, name, 1 if on else 0)
    return tuple(chosen)
