"""Which tests cover which row of the spec's catalogue part.

Rows come from ``spec_rows`` (endpoints, their parameters, the error table). Each maps
to test node ids; ``test_spec_coverage.py`` fails when a spec row has no entry, when an
entry names a row the spec no longer has, or when a named test does not exist.

Endpoint and parameter rows follow one rule each (the document, a valid call, malformed
input, the fuzzer); error rows are listed by hand below. Error rows whose cause cannot
be produced on demand name only the test that holds their documented shape.
"""

from __future__ import annotations

import spec_rows

T = "tests/emulator/"
DOCUMENTED = T + "test_openapi.py::test_error_row_documented[{key}]"


def _bad(path: str, method: str, name: str) -> str:
    return f"{T}test_bad_input.py::test_malformed_parameter_is_a_400[{method} {path} {name}: NUL]"


def _fuzz(endpoint: spec_rows.Endpoint) -> str:
    if endpoint.auth == "Authenticated":
        return T + "test_fuzz.py::test_authenticated_catalogue_conforms"
    return T + "test_fuzz.py::test_catalogue_conforms"


def _errors(key: str, *tests: str) -> list[str]:
    return [DOCUMENTED.format(key=key), *(T + t for t in tests)]


# Error rows (group | status | condition) -> behaviour tests, besides the documented shape.
ERRORS: dict[tuple[str, str], tuple[str, ...]] = {
    ("any list endpoint", "400"): (
        "test_bad_input.py::test_malformed_parameter_is_a_400[GET /api/v1/models limit: word]",
        "test_bad_input.py::test_malformed_parameter_is_a_400[GET /api/v1/articles cursor: not a cursor]",
        "test_spec_errors.py::test_malformed_cursor_is_400[/api/v1/models]",
        "test_spec_errors.py::test_malformed_cursor_is_400[/api/v1/images]",
        "test_spec_errors.py::test_malformed_cursor_is_400[/api/v1/articles]",
        "test_spec_errors.py::test_malformed_cursor_is_400[/api/v1/collections]",
    ),
    ("models, images", "429"): (
        "test_spec_errors.py::test_page_times_limit_over_1000_is_429[/api/v1/models]",
        "test_spec_errors.py::test_page_times_limit_over_1000_is_429[/api/v1/images]",
    ),
    ("models", "400"): ("test_spec_errors.py::test_models_query_with_page_is_400",),
    ("models/{id}, articles/{id}, collections/{id}", "404"): (
        "test_spec_errors.py::test_missing_is_404_with_error[/api/v1/models/2147483647]",
        "test_spec_errors.py::test_missing_is_404_with_error[/api/v1/articles/2147483647]",
        "test_spec_errors.py::test_missing_is_404_with_error[/api/v1/collections/2147483647]",
    ),
    ("model-versions/{id}, by-hash/{hash}, mini/{id}", "404"): (
        "test_spec_errors.py::test_missing_is_404_with_error[/api/v1/model-versions/2147483647]",
        "test_spec_errors.py::test_missing_is_404_with_error[/api/v1/model-versions/by-hash/" + "0" * 64 + "]",
        "test_spec_errors.py::test_missing_is_404_with_error[/api/v1/model-versions/mini/2147483647]",
        "test_spec_errors.py::test_mini_epoch_not_found_is_404",
    ),
    ("model-versions/by-hash", "400"): (
        "test_bad_input.py::test_malformed_hash_body_is_a_400[missing body-/api/v1/model-versions/by-hash-100]",
        "test_bad_input.py::test_malformed_hash_body_is_a_400[an object-/api/v1/model-versions/by-hash-100]",
        "test_bad_input.py::test_malformed_hash_body_is_a_400[63 characters-/api/v1/model-versions/by-hash-100]",
        "test_bad_input.py::test_malformed_hash_body_is_a_400[one over the limit-/api/v1/model-versions/by-hash-100]",
    ),
    ("posts/{id}", "400"): (
        "test_spec_errors.py::test_post_id_not_positive_integer_is_400[0]",
        "test_spec_errors.py::test_post_id_not_positive_integer_is_400[-5]",
        "test_spec_errors.py::test_post_id_not_positive_integer_is_400[abc]",
    ),
    ("posts/{id}", "404"): ("test_spec_errors.py::test_missing_is_404_with_error[/api/v1/posts/2147483647]",),
    # Numeric rate limits of the site endpoints are not shown: documented shape only.
    ("posts, articles, collections", "429"): (),
    ("posts", "503"): (),
    ("collections", "400"): ("test_spec_errors.py::test_collections_cursor_with_most_followers_is_400",),
    ("images (feed: cursor)", "503"): (),
    ("images (feed: cursor)", "400"): (
        "test_spec_errors.py::test_feed_cursor_with_changed_filters_is_400",
        "test_spec_errors.py::test_feed_cursor_too_old_is_400",
    ),
    ("me", "401"): (
        "test_spec_errors.py::test_me_without_a_valid_token_is_401[missing]",
        "test_spec_errors.py::test_me_without_a_valid_token_is_401[unknown]",
        "test_spec_errors.py::test_me_with_a_revoked_token_is_401",
    ),
    ("users", "400"): (
        "test_spec_errors.py::test_users_malformed_ids_is_400_validation_json[abc]",
        "test_bad_input.py::test_malformed_parameter_is_a_400[GET /api/v1/users ids: one bad entry]",
    ),
    ("users, permissions", "500"): (),
    ("permissions", "400"): (
        "test_spec_errors.py::test_permissions_bad_request_is_400_error[missing]",
        "test_spec_errors.py::test_permissions_bad_request_is_400_error[word]",
        "test_spec_errors.py::test_permissions_bad_request_is_400_error[invalid permission]",
    ),
    ("vault/toggle-version", "401"): (
        "test_spec_errors.py::test_toggle_without_valid_token_is_401[missing]",
        "test_spec_errors.py::test_toggle_without_valid_token_is_401[invalid]",
    ),
    ("vault/toggle-version", "400"): (
        "test_spec_errors.py::test_toggle_bad_model_version_id_is_400[missing]",
        "test_spec_errors.py::test_toggle_bad_model_version_id_is_400[word]",
    ),
    ("vault/toggle-version", "500"): (
        "test_spec_errors.py::test_toggle_unknown_version_is_500_with_error_message",
        "test_spec_errors.py::test_toggle_without_membership_is_500_with_error_message",
    ),
}


def coverage(rows: spec_rows.SpecRows) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for e in rows.endpoints:
        label = f"{e.method} {e.api_path}"
        out[e.key] = [
            f"{T}test_openapi.py::test_spec_endpoint_is_documented_with_its_auth[{e.key}]",
            f"{T}test_endpoints.py::test_operation_answers[{label}]",
            _fuzz(e),
        ]
        for p in e.params:
            key = rows.param_key(e, p)
            tests = [
                f"{T}test_openapi.py::test_spec_parameter_is_documented[{key}]",
                _bad(e.api_path, e.method, p.name),
            ]
            if p.where == "query" and e.path != "/vault/toggle-version":
                tests.append(f"{T}test_endpoints.py::test_valid_parameter_values[{label} ?{p.name}]")
            else:
                tests.append(f"{T}test_endpoints.py::test_operation_answers[{label}]")
            out[key] = tests
    for r in rows.errors:
        behaviour = ERRORS.get((r.group, r.status))
        # Two spec rows share "images (feed: cursor) | 400"; both map to the same tests.
        out[r.key] = _errors(r.key, *behaviour) if behaviour is not None else []
    return out


def uncovered_by_behaviour(rows: spec_rows.SpecRows) -> list[str]:
    """Error rows held only to their documented shape (no way to produce them on demand)."""
    return [r.key for r in rows.errors if ERRORS.get((r.group, r.status)) == ()]
