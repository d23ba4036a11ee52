"""One open document checked as ``blockkit lint - --stdin-filename PATH`` checks it.

The same steps as ``run_check`` for standard input: the document's UTF-8 bytes (at most one
byte past the size limit, as ``_read_stdin`` reads them), the config nearest to PATH with the
editor's flags on top (``ContextFlags.config_for``), lint's settings (``LintPolicy``), and the
project beside a file named block.manifest.json. Nothing is cached between checks but what
the engine keeps warm itself (rules, validators): the config file is read again on each
check, so an edit to it counts at the next keystroke (about 0.1 ms, benchmarks/bench_lsp.py).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from blockkit.report import FileReport, Finding
from blockkit.source import Source

# Where lint's project rules find the project in RuleContext.cache (blockkit.project.scan.project_of).
PROJECT_KEY = "lint.project"

# Flags the editor may pass as initialization options: option name -> ContextFlags argument.
FLAG_OPTIONS: dict[str, str] = {
    "tier": "tier",
    "allowedOrigins": "allowed_origins",
    "grantedScopes": "granted_scopes",
    "appDomain": "app_domain",
    "stage": "stage",
    "config": "config",
}


class SettingsError(Exception):
    """Initialization options blockkit cannot use: one line for the user."""


@dataclass(frozen=True)
class Settings:
    """The CLI's --tier, --allowed-origin, --granted-scope, --app-domain, --stage and --config."""

    tier: Optional[str] = None
    allowed_origins: tuple[str, ...] = ()
    granted_scopes: tuple[str, ...] = ()
    app_domain: Optional[str] = None
    stage: Optional[str] = None
    config: Optional[Path] = None

    @classmethod
    def from_options(cls, options: Any) -> "Settings":
        """Read the editor's initialization options (a JSON object; unknown keys are ignored)."""
        if options is None:
            return cls()
        if not isinstance(options, dict):
            raise SettingsError("initializationOptions must be an object")
        values: dict[str, Any] = {}
        for name, argument in FLAG_OPTIONS.items():
            value = options.get(name)
            if value is None:
                continue
            if argument in ("allowed_origins", "granted_scopes"):
                if isinstance(value, str):
                    value = [value]
                if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                    raise SettingsError(f"initializationOptions.{name} must be a string or a list of strings")
                values[argument] = tuple(value)
            elif not isinstance(value, str):
                raise SettingsError(f"initializationOptions.{name} must be a string")
            else:
                values[argument] = Path(value).expanduser() if argument == "config" else value
        return cls(**values)

    def flags(self) -> Any:
        from blockkit.context import ContextFlags

        return ContextFlags(tier=self.tier, allowed_origins=self.allowed_origins,
                            granted_scopes=self.granted_scopes, app_domain=self.app_domain,
                            stage=self.stage, config=self.config)


@dataclass
class Checked:
    """One check of one text: the report lint would print, or why there is none."""

    path: Path
    text: str
    report: Optional[FileReport] = None
    source: Optional[Source] = None
    problem: Optional[str] = None  # the config could not be read: what the CLI says before exit 2
    config: Any = None
    context: Any = None
    project_dir: Optional[Path] = None
    policy: Any = None
    fatal: Optional[Finding] = field(default=None)  # the parse finding that leaves no document

    @property
    def findings(self) -> list[Finding]:
        return self.report.findings if self.report is not None else []


def utf8_bytes(text: str) -> bytes:
    """The bytes the editor would save (a lone surrogate, impossible in a real editor, as written)."""
    return text.encode("utf-8", "surrogatepass")


# Past this many entries a project is not fingerprinted (nor kept): it is read at each check.
FINGERPRINT_ENTRIES_MAX = 20000


def project_fingerprint(root: Path) -> Optional[tuple[Any, ...]]:
    """What a project's files look like from their metadata: every file and folder below
    ``root`` that lint's project scan may read (the folders it skips are skipped here too),
    with its size and modification time. None when there are too many to count cheaply."""
    from blockkit.project.scan import SKIPPED_DIRS

    seen: list[tuple[str, int, int]] = []
    visited: set[str] = set()
    stack = [str(root)]
    while stack:
        folder = stack.pop()
        try:
            real = os.path.realpath(folder)
            if real in visited:
                continue
            visited.add(real)
            entries = list(os.scandir(folder))
        except OSError:
            seen.append((folder, -1, -1))
            continue
        for entry in entries:
            try:
                info = entry.stat()
                is_dir = entry.is_dir()
            except OSError:
                seen.append((entry.path, -1, -1))
                continue
            seen.append((entry.path, info.st_size, info.st_mtime_ns))
            if is_dir and not entry.name.startswith(".") and entry.name not in SKIPPED_DIRS:
                stack.append(entry.path)
        if len(seen) > FINGERPRINT_ENTRIES_MAX:
            return None
    return tuple(sorted(seen))


class Projects:
    """The block projects of the open manifests, each read once and kept while its files stay
    as they were (by ``project_fingerprint``): lint's project rules then cost a walk of stat
    calls per keystroke, not a read and scan of every source file (170 ms for 2.4 MB of code)."""

    def __init__(self) -> None:
        self._kept: dict[Path, tuple[tuple[Any, ...], Any]] = {}

    def project(self, root: Path) -> Any:
        from blockkit.project.scan import Project

        fingerprint = project_fingerprint(root)
        kept = self._kept.get(root)
        if fingerprint is not None and kept is not None and kept[0] == fingerprint:
            return kept[1]
        project = Project(root)
        if fingerprint is None:
            self._kept.pop(root, None)
        else:
            self._kept[root] = (fingerprint, project)
        return project

    def forget(self) -> None:
        self._kept.clear()


def check_text(path: Path, text: str, settings: Settings, projects: Optional[Projects] = None) -> Checked:
    """``blockkit lint - --stdin-filename PATH`` on ``text``, in this process (``projects``: keep
    the project beside the manifest read between checks)."""
    from blockkit.context import ConfigError
    from blockkit.engine import ALL_LAYERS, check
    from blockkit.lint.policy import LintPolicy
    from blockkit.platform import LIMITS, MANIFEST_FILENAME
    from blockkit.source import FATAL_PROBLEMS, read_bytes

    checked = Checked(path=path, text=text)
    policy = LintPolicy()
    try:
        config = settings.flags().config_for(path)
        policy.prepare(path, config)
    except ConfigError as exc:
        checked.problem = str(exc)
        return checked
    raw = utf8_bytes(text)[: LIMITS.file_bytes_max + 1]
    project_dir = path.parent if path.name == MANIFEST_FILENAME else None
    source = read_bytes(raw, str(path))
    # What validate._check_one does for a job read from standard input.
    cache = None
    if project_dir is not None and projects is not None and source.has_document:
        cache = {PROJECT_KEY: projects.project(project_dir)}
    report = check(source, config.context, layers=ALL_LAYERS, project_dir=project_dir, rule_cache=cache)
    report.data = None
    policy.review(path, config, report)
    checked.report = report
    checked.source = source
    checked.config = config
    checked.context = config.context
    checked.project_dir = project_dir
    checked.policy = policy
    checked.fatal = next((f for f in checked.findings if f.code in FATAL_PROBLEMS), None)
    return checked
