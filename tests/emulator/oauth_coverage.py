"""Which test covers each OAuth row of the spec's error table and states table.

``test_oauth_coverage.py`` fails when a row here names a test that does not exist, and
when the spec's OAuth rows (parsed from the spec, when shared/ is present) have no entry.
Keys are (endpoint group, status or error code) for errors, (entity, state, move) for
states, as the spec writes them.
"""

from __future__ import annotations

T = "tests/emulator/"
O = T + "test_oauth.py::"
C = T + "test_oauth_client.py::"

ERRORS: dict[tuple[str, str], tuple[str, ...]] = {
    ("OAuth authorize", "400 invalid_request"): (
        O + "test_authorize_error_rows", O + "test_authorize_error_rows_before_the_redirect_uri_is_known",
        O + "test_unregistered_redirect_uri_is_a_page_never_a_redirect",
        O + "test_bad_buzz_limit_is_invalid_request"),
    ("OAuth authorize", "400 invalid_client"): (O + "test_authorize_error_rows_before_the_redirect_uri_is_known",),
    ("OAuth authorize", "400 invalid_scope"): (
        O + "test_authorize_error_rows", O + "test_scope_above_client_allowed_scopes_is_invalid_scope"),
    ("OAuth authorize", "429 rate_limit"): (O + "test_authorize_rate_limit_is_10_a_minute_per_user",),
    ("OAuth token", "invalid_grant"): (
        O + "test_code_exchange_error_rows", O + "test_code_flow_issues_single_use_code_and_exact_body",
        O + "test_code_expires_after_10_minutes", O + "test_code_is_bound_to_its_client",
        O + "test_refresh_token_of_another_client_or_unknown_is_invalid_grant", O + "test_refresh_token_expires",
        O + "test_reused_refresh_token_is_refused_and_the_new_pair_keeps_working", C + "test_authlib_code_flow_refresh_revoke_userinfo"),
    ("OAuth token", "invalid_client"): (
        O + "test_code_exchange_error_rows", O + "test_unknown_client_is_invalid_client",
        O + "test_public_client_secret_refused_and_pkce_alone_works",
        O + "test_client_credentials_needs_a_confidential_client"),
    ("OAuth token", "invalid_request"): (
        O + "test_code_exchange_error_rows", O + "test_missing_grant_type_and_non_form_body",
        O + "test_refresh_token_of_another_client_or_unknown_is_invalid_grant"),
    ("OAuth token", "unsupported_grant_type"): (O + "test_unsupported_grant_type",),
    ("OAuth token", "invalid_scope"): (
        O + "test_refresh_scope_narrows_never_widens", O + "test_client_credentials_bound_to_owner_without_refresh"),
    ("OAuth token", "429"): (O + "test_token_rate_limit_is_20_a_minute_per_client",),
    ("OAuth userinfo", "401 invalid_token"): (
        O + "test_userinfo_401_rows", O + "test_access_token_expires_after_3600_seconds",
        O + "test_legacy_redirect_drops_authorization_and_userinfo_401s"),
    ("OAuth userinfo", "403 insufficient_scope"): (O + "test_userinfo_403_without_user_read",),
}

STATES: dict[tuple[str, str, str], tuple[str, ...]] = {
    ("Authorization code", "issued", "POST /oauth/token (authorization_code)"): (
        O + "test_code_flow_issues_single_use_code_and_exact_body", O + "test_code_within_10_minutes_works"),
    ("Authorization code", "issued", "time"): (O + "test_code_expires_after_10_minutes",),
    ("Refresh token", "valid", "POST /oauth/token (refresh_token)"): (
        O + "test_refresh_rotates_and_old_token_stops_working", C + "test_authlib_code_flow_refresh_revoke_userinfo"),
    ("Refresh token", "valid", "POST /oauth/revoke"): (
        O + "test_revoke_refresh_token_by_confidential_client_kills_its_access_tokens",),
    ("Access token", "valid", "time"): (O + "test_access_token_expires_after_3600_seconds",),
}

# Limits of the spec's table that concern OAuth.
LIMITS: dict[str, tuple[str, ...]] = {
    "access token lifetime": (O + "test_access_token_expires_after_3600_seconds",),
    "authorization code lifetime": (O + "test_code_expires_after_10_minutes",
                                    O + "test_code_flow_issues_single_use_code_and_exact_body"),
    "authorize rate": (O + "test_authorize_rate_limit_is_10_a_minute_per_user",),
    "token rate": (O + "test_token_rate_limit_is_20_a_minute_per_client",),
    "revoke rate": (O + "test_revoke_rate_limit_is_20_a_minute_per_ip",),
}
