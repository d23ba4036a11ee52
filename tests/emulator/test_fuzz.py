"""schemathesis against the running emulator, from the document the emulator serves.

Bounded (a few examples per operation, no stateful phase) so the whole file stays
within a couple of minutes on a 2-core machine; it runs in CI, it is never skipped.
Every answer must: not be a 5xx, have a documented status and content type, match
its documented headers and body schema (schemathesis's checks), and pass our own
contract check (jsonschema 2020-12 over the same document).

Authenticated operations (vault, me) are fuzzed in a second test with a member's
token; the first runs every other operation anonymously.
"""

from __future__ import annotations

from typing import Any

import pytest
import schemathesis
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from contract import contract, load_document

AUTHENTICATED = sorted(
    op["operationId"]
    for item in load_document()["paths"].values()
    for op in item.values()
    if op.get("x-blockkit-auth") == "Authenticated"
)

# Examples per operation and phase. 26 operations; keep the total near two minutes.
MAX_EXAMPLES = 12
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
]

pytestmark = pytest.mark.emulator_fuzz


def _config() -> schemathesis.Config:
    return schemathesis.Config.from_dict(
        {
            "generation": {"max-examples": MAX_EXAMPLES, "mode": "all", "database": "none"},
            "phases": {"stateful": {"enabled": False}},
        }
    )


@pytest.fixture(scope="module")
def served_schema(base_url: str) -> Any:
    loaded = schemathesis.openapi.from_url(f"{base_url}/api/v1/openapi.json", config=_config())
    loaded.config.update(base_url=base_url)
    return loaded


def _own_check(response: Any, case: Any) -> None:
    # Our jsonschema-based contract over the same document: a second, independent reading.
    path = response.request.path_url.split("?", 1)[0]
    # schemathesis keeps each header as a list of values.
    headers = {k.lower(): (v[0] if isinstance(v, list) else v) for k, v in response.headers.items()}
    problems = contract().problems(case.method, path, response.status_code, headers, response.content)
    assert not problems, "\n".join(problems)


served = schemathesis.pytest.from_fixture("served_schema")
# Moving the session's one clock by fuzzed amounts would expire every token other tests hold;
# the clock has its own tests (test_live_contract.py).
anonymous = served.exclude(operation_id=[*AUTHENTICATED, "advanceClock"])
authenticated = served.include(operation_id=AUTHENTICATED)


@anonymous.parametrize()
def test_catalogue_conforms(case: Any) -> None:
    response = case.call_and_validate(checks=CHECKS, timeout=30)
    _own_check(response, case)


def _checks(case: Any) -> list[Any]:
    # toggle-version's 500 is the spec's own answer for a version that does not exist (or a full
    # vault): fuzzed ids hit it. There a 500 is checked against its documented body, not refused.
    if case.operation.definition.raw.get("operationId") == "toggleVaultVersion":
        return [c for c in CHECKS if c is not not_a_server_error]
    return CHECKS


@authenticated.parametrize()
def test_authenticated_catalogue_conforms(case: Any, member_token: str) -> None:
    response = case.call_and_validate(checks=_checks(case), headers={"Authorization": f"Bearer {member_token}"},
                                      timeout=30)
    _own_check(response, case)
