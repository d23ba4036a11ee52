"""``Manifest``: a valid manifest as a typed object, in the form the platform stores.

Built only from documents that passed validation, so the models describe shape
and normalisation; the rules are the validator's job.
"""

from __future__ import annotations

from typing import Any, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field

_CONFIG = ConfigDict(populate_by_name=True, frozen=True, extra="ignore")


class IFrame(BaseModel):
    model_config = _CONFIG
    min_height: Optional[int] = Field(default=None, alias="minHeight")
    max_height: Optional[int] = Field(default=None, alias="maxHeight")
    resizable: Optional[bool] = None
    sandbox: Optional[str] = None

    @property
    def sandbox_tokens(self) -> list[str]:
        from blockkit.jsstr import js_split_whitespace

        return js_split_whitespace(self.sandbox or "")


class Page(BaseModel):
    model_config = _CONFIG
    path: str
    title: str
    icon: Optional[str] = None
    buzz_budget_per_gen: Optional[int] = Field(default=None, alias="buzzBudgetPerGen")


class Good(BaseModel):
    model_config = _CONFIG
    id: str
    title: str
    price_buzz: int = Field(alias="priceBuzz")
    description: Optional[str] = None
    kind: Literal["good", "app_unlock"] = "good"
    justification: Optional[str] = None
    payload: Optional[dict[str, Any]] = None


class Target(BaseModel):
    model_config = _CONFIG
    slot_id: str = Field(alias="slotId")


class Manifest(BaseModel):
    """A manifest the platform accepts. ``repository`` holds the stored form https://<host>/<owner>/<repo>."""

    model_config = _CONFIG
    block_id: str = Field(alias="blockId")
    version: str
    name: str
    content_rating: Literal["g", "pg", "pg13", "r", "x"] = Field(alias="contentRating")
    scopes: tuple[str, ...]
    schema_url: Optional[str] = Field(default=None, alias="$schema")
    tagline: Optional[str] = None
    repository: Optional[str] = None
    type: Optional[str] = None
    category: Optional[str] = None
    render_mode: Literal["iframe", "inline", "hybrid"] = Field(default="iframe", alias="renderMode")
    auth: Literal["block-token", "oauth"] = "block-token"
    scope_justifications: dict[str, str] = Field(default_factory=dict, alias="scopeJustifications")
    min_api_version: Optional[str] = Field(default=None, alias="minApiVersion")
    build_command: Optional[str] = Field(default=None, alias="buildCommand")
    output_dir: Optional[str] = Field(default=None, alias="outputDir")
    public_settings_keys: tuple[str, ...] = Field(default=(), alias="publicSettingsKeys")
    asset_bundle_url: Optional[str] = Field(default=None, alias="assetBundleUrl")
    iframe: Optional[IFrame] = None
    boot_skeleton: bool = Field(default=False, alias="bootSkeleton")
    page: Optional[Page] = None
    goods: tuple[Good, ...] = ()
    targets: tuple[Target, ...] = ()

    @classmethod
    def from_document(cls, document: dict[str, Any]) -> "Manifest":
        data = dict(document)
        if isinstance(data.get("repository"), str):
            from blockkit.urls import normalize_repository

            data["repository"] = normalize_repository(data["repository"]) or data["repository"]
        return cls.model_validate(data)

    @property
    def sensitive_scopes(self) -> tuple[str, ...]:
        from blockkit.platform import SENSITIVE_SCOPES

        return tuple(s for s in self.scopes if s in SENSITIVE_SCOPES)
