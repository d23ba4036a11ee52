"""GET /api/v1/permissions/check: may a user use these model versions for generation?

Public: the bearer token does not scope the check (it is never read); ``userId``
names the user to judge, anonymous when omitted. The answer maps each requested id
(a decimal string) to a boolean: false when the version is gated and the user lacks
access (early access still running and not bought, or Private and not theirs), and
also when no published version has that id (it cannot be used); true otherwise. A
moderator, and the model's owner, always have access. An empty ``entityIds`` answers
``[]``; a ``userId`` that names no user is judged as anonymous.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from blockkit.emulator.http.auth import ANONYMOUS, Caller
from blockkit.emulator.http.errors import ApiError, error_body, json_response
from blockkit.emulator.http.catalogue.model_versions import has_access
from blockkit.emulator.http.catalogue.params import (
    CommaList,
    QueryId,
    QueryModel,
    parse_query,
    raw_params,
)
from blockkit.emulator.state import EmulatorState, emulator
from blockkit.emulator.store import models as store
from blockkit.emulator.store import tokens


class PermissionsQuery(QueryModel):
    entity_ids: CommaList[QueryId] = Field(alias="entityIds")
    entity_type: Literal["ModelVersion"] = Field("ModelVersion", alias="entityType")
    permission: Literal["Generate"] = "Generate"
    user_id: QueryId | None = Field(None, alias="userId")


def check(state: EmulatorState, entity_ids: list[int], user_id: int | None) -> dict[str, bool] | list[Any]:
    if not entity_ids:
        return []
    now = state.clock.iso()
    wanted = sorted(set(entity_ids))
    with state.store.read() as db:
        caller: Caller = ANONYMOUS
        if user_id is not None:
            user = tokens.token_user(db, user_id)
            if user is not None and not user.deleted:
                caller = Caller(user_id=user.id, username=user.username, tier=user.tier, status=user.status,
                                is_moderator=user.is_moderator, browsing_level=user.browsing_level)
        versions = store.versions_by_ids(db, wanted)
        purchases = store.early_access_purchases(db, caller.user_id, wanted) if caller.user_id is not None else {}
    out: dict[str, bool] = {}
    for version_id in entity_ids:
        version = versions.get(version_id)
        # A Private version exists for everyone (it is gated); an unpublished one only for moderators.
        exists = version is not None and (version.published or caller.is_moderator)
        out[str(version_id)] = bool(exists and version is not None and has_access(version, caller, purchases, now))
    return out


MALFORMED_IDS = "Could not parse provided model versions array."  # permissions/check.ts


def check_endpoint(request: Request) -> Response:
    if any(isinstance(v, str) and v != "" for v in raw_params(request).get("entityIds", [])):
        try:
            parse_query(request, PermissionsQuery, shape="error")
        except ApiError as exc:
            # A malformed entityIds gets the platform's message; other failures keep theirs.
            if isinstance(exc.body, dict) and str(exc.body.get("error", "")).startswith("entityIds"):
                raise ApiError(400, error_body(MALFORMED_IDS)) from None
            raise
    query = parse_query(request, PermissionsQuery, shape="error")
    return json_response(check(emulator(request), list(query.entity_ids), query.user_id))


routes = [Route("/permissions/check", check_endpoint, methods=["GET"])]
