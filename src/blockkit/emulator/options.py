"""The emulator's start options, checked once (bad values: one line, exit 2)."""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from pathlib import Path

from blockkit.emulator.errors import EmulatorError

SCALES = ("small", "large")
DEFAULT_SEED = 1
DEFAULT_HOST = "127.0.0.1"
ACCESS_KEY = re.compile(r"[A-Za-z0-9_-]{16,128}", re.ASCII)


@dataclass(frozen=True)
class EmulatorOptions:
    data: Path | None = None          # None: a temporary directory removed at exit
    host: str = DEFAULT_HOST
    port: int = 0                     # 0: three free ports; P: P, P+1, P+2
    seed: int = DEFAULT_SEED
    scale: str = "small"
    ready_file: Path | None = None
    sfw_only: bool = False
    # The per-run access key /login, the control routes and the block-token mint route ask for
    # (access.py); None: no key (in-process use, or --no-access-key).
    access_key: str | None = None
    # Host names besides loopback the three origins answer to (blockkit dev's --allowed-host).
    allowed_hosts: tuple[str, ...] = ()
    # Entries the request journal keeps (journal.py); None: BLOCKKIT_EMULATOR_JOURNAL or 2000; 0: off.
    journal_size: int | None = None

    def __post_init__(self) -> None:
        check_loopback(self.host)
        if self.access_key is not None and not ACCESS_KEY.fullmatch(self.access_key):
            raise EmulatorError("--access-key: give 16 to 128 letters, digits, '-' or '_'")
        if not 0 <= self.port <= 65533:
            raise EmulatorError(f"--port {self.port}: must be 0 (any free ports) or 1-65533 (it uses PORT, PORT+1"
                                " and PORT+2)")
        if self.scale not in SCALES:
            raise EmulatorError(f"--scale {self.scale}: must be one of {', '.join(SCALES)}")
        if self.journal_size is not None and not 0 <= self.journal_size <= 1_000_000:
            raise EmulatorError(f"--journal-size {self.journal_size}: give 0 (off) to 1000000 entries")
        if self.seed < 0:
            raise EmulatorError(f"--seed {self.seed}: must be 0 or more")


def check_loopback(host: str) -> None:
    """The emulator is a loopback tool: refuse any host that is not this machine."""
    if host.lower() == "localhost":
        return
    try:
        address = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        raise EmulatorError(f"--host {host}: not an IP address; the emulator listens on loopback only"
                            " (127.0.0.1, ::1 or localhost)") from None
    if not address.is_loopback:
        raise EmulatorError(f"--host {host}: not a loopback address; the emulator listens on loopback only"
                            " (127.0.0.0/8, ::1 or localhost)")
