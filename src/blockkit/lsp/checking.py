"""One open document checked as ``blockkit lint - --stdin-filename PATH`` checks it.

The same steps as ``run_check`` for standard input: the document's UTF-8 bytes (at most one
byte past the size limit, as ``_read_stdin`` reads them), the config nearest to PATH with the
editor's flags on top (``ContextFlags.config_for``), lint's settings (``LintPolicy``), and the
project beside a file named block.manifest.json. Nothing is cached between checks but what
the engine keeps warm itself (rules, validators): the config file is read again on each
check, so an edit to it counts at the next keystroke (about 0.1 ms, benchmarks/bench_lsp.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from blockkit.report import FileReport, Finding
from blockkit.source import Source

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
        from blockkit.commands._common import ContextFlags

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


def check_text(path: Path, text: str, settings: Settings) -> Checked:
    """``blockkit lint - --stdin-filename PATH`` on ``text``, in this process."""
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
    report = check(source, config.context, layers=ALL_LAYERS, project_dir=project_dir)
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
