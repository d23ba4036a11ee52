"""Context: the platform state a verdict depends on (PLATFORM.md §1).

It comes from command-line flags, ``blockkit.toml`` or ``[tool.blockkit]`` in
``pyproject.toml``; library callers build one directly.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Iterable, Literal, Optional

from blockkit.platform import DEFAULT_APP_DOMAIN, DEFAULT_TIER, SCOPES, TRUST_TIERS

Stage = Literal["submit", "approve", "all"]
STAGES: tuple[str, ...] = ("submit", "approve", "all")
CONFIG_FILENAME = "blockkit.toml"


class ConfigError(Exception):
    """A configuration file or value blockkit cannot use (exit status 2)."""


@dataclass(frozen=True)
class Context:
    """The platform's state a verdict depends on: trust tier, allowed origins, granted scopes,
    app domain and stage (the defaults are the platform's own)."""

    tier: str = DEFAULT_TIER
    # None: the app's own origin, https://<blockId>.<app_domain>
    allowed_origins: Optional[tuple[str, ...]] = None
    # None: review's grant is not known, so the subset rule is skipped.
    granted_scopes: Optional[frozenset[str]] = None
    app_domain: str = DEFAULT_APP_DOMAIN
    stage: Stage = "all"

    def __post_init__(self) -> None:
        if self.tier not in TRUST_TIERS:
            raise ConfigError(f"unknown trust tier {self.tier!r}; expected one of {', '.join(TRUST_TIERS)}")
        if self.stage not in STAGES:
            raise ConfigError(f"unknown stage {self.stage!r}; expected one of {', '.join(STAGES)}")
        if self.granted_scopes is not None:
            unknown = sorted(set(self.granted_scopes) - set(SCOPES))
            if unknown:
                raise ConfigError(f"unknown granted scope(s): {', '.join(unknown)}")

    def origins_for(self, block_id: Any) -> tuple[str, ...]:
        if self.allowed_origins is not None:
            return self.allowed_origins
        if isinstance(block_id, str) and block_id:
            return (f"https://{block_id}.{self.app_domain}",)
        return ()

    def runs(self, stage: str) -> bool:
        """Whether rules the platform applies at ``stage`` run in this context."""
        return self.stage != "submit" or stage == "submit"

    def with_overrides(self, **values: Any) -> "Context":
        return replace(self, **{k: v for k, v in values.items() if v is not None})


class Config:
    """Everything read from a config file: the context plus lint settings.

    A plain class, not a dataclass (whose generated methods cost ~2 ms at every start of
    the CLI); it compares and prints as the dataclass it was."""

    __slots__ = ("context", "path", "raw")

    def __init__(self, context: Optional[Context] = None, path: Optional[Path] = None,
                 raw: Optional[dict[str, Any]] = None) -> None:
        self.context: Context = Context() if context is None else context
        self.path = path
        self.raw: dict[str, Any] = {} if raw is None else raw

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return (self.context, self.path, self.raw) == (other.context, other.path, other.raw)  # type: ignore[attr-defined]

    __hash__ = None  # type: ignore[assignment]  # mutable, as before

    def __repr__(self) -> str:
        return f"Config(context={self.context!r}, path={self.path!r}, raw={self.raw!r})"


def _load_toml(path: Path) -> dict[str, Any]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read config: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: not UTF-8 (byte {exc.start})") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None


def _tool_table(path: Path, document: dict[str, Any]) -> Optional[dict[str, Any]]:
    """``[tool.blockkit]`` of a pyproject.toml: None when absent, ConfigError when not a table."""
    tool = document.get("tool", {})
    table = tool.get("blockkit") if isinstance(tool, dict) else None
    if table is not None and not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.blockkit] must be a table")
    return table


def find_config(start: Path) -> tuple[Optional[Path], dict[str, Any]]:
    """Find the nearest blockkit.toml, or pyproject.toml with [tool.blockkit], at or above ``start``."""
    directory = start if start.is_dir() else start.parent
    for folder in (directory, *directory.parents):
        candidate = folder / CONFIG_FILENAME
        if candidate.is_file():
            return candidate, _load_toml(candidate)
        pyproject = folder / "pyproject.toml"
        if pyproject.is_file():
            table = _tool_table(pyproject, _load_toml(pyproject))
            if table is not None:
                return pyproject, table
    return None, {}


def _str_list(path: Optional[Path], key: str, value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{path}: '{key}' must be a string or a list of strings")
    return tuple(value)


def context_from_table(table: dict[str, Any], path: Optional[Path] = None) -> Context:
    """Build a Context from a config table; keys use dashes or underscores."""
    # blockkit.toml written by `blockkit new` keeps the context under [context].
    source = table.get("context", table) if isinstance(table.get("context"), dict) else table
    norm = {k.replace("_", "-"): v for k, v in source.items()}
    values: dict[str, Any] = {}
    for key in ("tier", "app-domain", "stage"):
        if key in norm:
            if not isinstance(norm[key], str):
                raise ConfigError(f"{path}: '{key}' must be a string")
            values[key.replace("-", "_")] = norm[key]
    if "allowed-origins" in norm:
        values["allowed_origins"] = _str_list(path, "allowed-origins", norm["allowed-origins"])
    if "granted-scopes" in norm:
        values["granted_scopes"] = frozenset(_str_list(path, "granted-scopes", norm["granted-scopes"]))
    try:
        return Context(**values)
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from None


def load_config(start: Path, explicit: Optional[Path] = None) -> Config:
    if explicit is not None:
        if not explicit.is_file():
            # A directory, FIFO or socket is refused unopened (opening a FIFO would wait for a writer).
            what = "is not a regular file" if explicit.exists() else "config file not found"
            raise ConfigError(f"{explicit}: {what}")
        table = _load_toml(explicit)
        if explicit.name == "pyproject.toml":
            table = _tool_table(explicit, table) or {}
        path: Optional[Path] = explicit
    else:
        path, table = find_config(start)
    return Config(context=context_from_table(table, path), path=path, raw=table)


def merge_flags(
    context: Context,
    *,
    tier: Optional[str] = None,
    allowed_origins: Iterable[str] = (),
    granted_scopes: Iterable[str] = (),
    app_domain: Optional[str] = None,
    stage: Optional[str] = None,
) -> Context:
    """Flags win over the config file."""
    origins = tuple(allowed_origins) or None
    granted = frozenset(granted_scopes) or None
    return context.with_overrides(
        tier=tier, allowed_origins=origins, granted_scopes=granted, app_domain=app_domain, stage=stage
    )


class ContextFlags:
    """The context flags of one run, and the config each manifest's folder resolves to."""

    __slots__ = ("tier", "allowed_origins", "granted_scopes", "app_domain", "stage", "config", "_cache")

    def __init__(self, tier: Optional[str] = None, allowed_origins: tuple[str, ...] = (),
                 granted_scopes: tuple[str, ...] = (), app_domain: Optional[str] = None,
                 stage: Optional[str] = None, config: Optional[Path] = None) -> None:
        self.tier = tier
        self.allowed_origins = allowed_origins
        self.granted_scopes = granted_scopes
        self.app_domain = app_domain
        self.stage = stage
        self.config = config
        self._cache: dict[str, Config] = {}

    def config_for(self, manifest: Path) -> Config:
        """The config nearest to ``manifest`` (or --config), with flags applied on top."""
        # Keyed by the folder's name: a thousand files hash a string far faster than a Path.
        key = os.path.dirname(manifest)
        cached = self._cache.get(key)
        if cached is None:
            base = load_config(manifest.parent, self.config)
            try:
                context = merge_flags(base.context, tier=self.tier, allowed_origins=self.allowed_origins,
                                      granted_scopes=self.granted_scopes, app_domain=self.app_domain,
                                      stage=self.stage)
            except ConfigError as exc:
                raise ConfigError(f"invalid option: {exc}") from None
            cached = Config(context=context, path=base.path, raw=base.raw)
            self._cache[key] = cached
        return cached
