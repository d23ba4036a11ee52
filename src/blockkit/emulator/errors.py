"""The emulator's errors: each one is a single line the CLI prints before exiting 2."""

from __future__ import annotations


class EmulatorError(Exception):
    """The emulator cannot do what was asked (bad option, busy port, unusable store): exit 2."""


class StoreError(EmulatorError):
    """The data directory's database cannot be used: corrupt, locked, foreign, or too new."""
