"""``blockkit lint --against REV``: add the diff findings to each manifest's lint report.

``run_check`` drives a policy object through ``prepare`` (per manifest, before
the check; a ConfigError there is exit status 2), ``review`` (per manifest,
after the check) and ``finish``. ``AgainstRevision`` wraps the lint policy:
``prepare`` reads the manifest as it was at REV, ``review`` appends what
``compare`` says about going from there to the working copy.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

from blockkit.context import Config, ConfigError
from blockkit.diff.compare import compare
from blockkit.diff.git import RevisionError, source_at_revision
from blockkit.report import FileReport, Report
from blockkit.source import Source, read_text


class AgainstRevision:
    def __init__(self, policy: Any, revision: str) -> None:
        self.policy = policy  # the lint policy, or None
        self.revision = revision
        self._old: dict[Path, Optional[Source]] = {}

    def prepare(self, manifest: Path, config: Config) -> Any:
        try:
            self._old[manifest] = source_at_revision(manifest, self.revision)
        except RevisionError as exc:
            raise ConfigError(f"--against {self.revision}: {exc}") from None
        return self.policy.prepare(manifest, config) if self.policy is not None else None

    def review(self, manifest: Path, config: Config, report: FileReport) -> None:
        old = self._old.pop(manifest, None)
        if old is not None and report.text is not None:
            report.findings.extend(compare(old, read_text(report.text, report.path)))
            report.sort()
        if self.policy is not None:
            self.policy.review(manifest, config, report)

    def finish(self, report: Report) -> None:
        if self.policy is not None:
            self.policy.finish(report)
