"""The one error type of ``blockkit dev``: a message fit to print as one line."""

from __future__ import annotations


class DevError(Exception):
    """``blockkit dev`` cannot do its job; the message says why in one line.

    The command prints it and exits 2, never with a traceback.
    """
