"""The exceptions blockkit raises. Each carries a message fit for a human."""

from __future__ import annotations

from typing import TYPE_CHECKING

from blockkit.context import ConfigError
from blockkit.engine import UnreadableFile

if TYPE_CHECKING:
    from blockkit.report import Report


class InvalidManifestError(ValueError):
    """Raised by ``load_manifest`` for a manifest the platform would refuse; ``.report`` says why."""

    def __init__(self, report: "Report") -> None:
        self.report = report
        file = report.files[0] if report.files else None
        first = next((f for f in file.findings if f.severity == "error"), None) if file else None
        detail = f": {first.code} {first.message} (line {first.line})" if first else ""
        more = (file.errors - 1) if file else 0
        suffix = f" and {more} more error(s)" if more > 0 else ""
        super().__init__(f"{file.path if file else 'manifest'} is invalid{detail}{suffix}")


__all__ = ["ConfigError", "InvalidManifestError", "UnreadableFile"]
