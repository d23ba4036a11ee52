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

# --- the review rows (2026-11-27) ----------------------------------------------------------------
#
# Every OAuth row of ``shared/reviews/platform-fidelity-2-2026-11-27.md`` (section 1, keyed by
# sub-section and aspect) and each security row owned here (``security-emulator-2026-11-27.md``),
# with what was done and the tests that show it:
#   fixed     the emulator now answers as the platform does (or as the row's fix asks);
#   same      the review found no difference; the test keeps it so;
#   spec      the spec states the behaviour and the platform differs: the spec is kept;
#   ours      a deliberate difference (docs/platform-shapes.md, "OAuth provider", says why);
#   platform  the platform's behaviour is matched where a reviewer asked for more;
#   held      a held security row; the test keeps it held;
#   not       not emulated (admin or first-party features); recorded, no test.
P = T + "test_oauth_platform.py::"
D = T + "test_oauth_device_client.py::"
B = T + "test_oauth_e01_browser.py::"
W = T + "test_oauth_browser.py::"
K = T + "test_oauth_catalogue.py::"

REVIEW_ROWS: dict[str, tuple[str, tuple[str, ...]]] = {
    # 1a authorize
    "1a order of checks": ("fixed", (O + "test_authorize_checks_in_the_platforms_order",)),
    "1a no session": ("fixed", (O + "test_no_session_redirects_to_login_and_back",
                                P + "test_signed_out_consent_post_returns_to_the_request_from_its_body")),
    "1a rate limit": ("spec", (O + "test_authorize_rate_limit_is_10_a_minute_per_user",)),
    "1a missing client_id": ("fixed", (O + "test_authorize_error_rows_before_the_redirect_uri_is_known",)),
    "1a appblk- client": ("not", ()),
    "1a unknown client": ("same", (O + "test_authorize_error_rows_before_the_redirect_uri_is_known",)),
    "1a redirect_uri matching": ("fixed", (P + "test_loopback_redirect_uri_any_port",)),
    "1a per-client access mode": ("not", ()),
    "1a PKCE": ("fixed", (O + "test_authorize_checks_in_the_platforms_order", O + "test_authorize_error_rows")),
    "1a state": ("same", (O + "test_authorize_error_rows",)),
    "1a scope parsing": ("spec", (O + "test_authorize_error_rows",)),
    "1a scope bound": ("spec", (O + "test_authorize_error_rows",)),
    "1a UserRead forced": ("same", (O + "test_code_flow_issues_single_use_code_and_exact_body",)),
    "1a scope above allowedScopes": ("ours", (O + "test_scope_above_client_allowed_scopes_is_invalid_scope",)),
    "1a response_type": ("spec", (O + "test_authorize_error_rows",)),
    "1a success status": ("spec", (O + "test_code_flow_issues_single_use_code_and_exact_body",)),
    "1a code lifetime": ("same", (O + "test_code_expires_after_10_minutes",)),
    "1a nonce": ("fixed", (P + "test_id_token_carries_the_nonce",)),
    # 1b consent
    "1b where consent shows": ("fixed", (P + "test_consent_is_a_separate_page_reached_by_303",)),
    "1b remembered consent": ("fixed", (P + "test_remembered_consent_that_covers_the_request_skips_the_page",)),
    "1b approval (CSRF)": ("ours", (P + "test_consent_csrf_token_is_bound_to_one_authorization_request",
                                    O + "test_consent_post_needs_the_sessions_csrf_token")),
    "1b remember": ("same", (O + "test_remember_stores_consent_and_buzz_limit",)),
    "1b buzz_limit": ("spec", (O + "test_bad_buzz_limit_is_invalid_request",)),
    "1b deny": ("fixed", (O + "test_deny_redirects_access_denied",)),
    "1b account switcher": ("not", ()),
    "1b login": ("ours", (O + "test_no_session_redirects_to_login_and_back",)),
    # 1c token
    "1c body types": ("fixed", (P + "test_token_format_and_json_body",)),
    "1c rate limit": ("ours", (O + "test_token_rate_limit_is_20_a_minute_per_client",
                               P + "test_failed_client_authentication_cannot_lock_the_client_out")),
    "1c missing client_id": ("spec", (O + "test_missing_grant_type_and_non_form_body",)),
    "1c public client sends a secret": ("spec", (O + "test_public_client_secret_refused_and_pkce_alone_works",)),
    "1c confidential client, no secret": ("spec", (O + "test_code_exchange_error_rows",)),
    "1c wrong secret in the body": ("fixed", (P + "test_client_authentication_failures",)),
    "1c public-client Origin check": ("ours", (O + "test_public_client_from_unlisted_origin_is_refused",)),
    "1c code, wrong verifier": ("fixed", (P + "test_failed_exchange_uses_the_code_up",)),
    "1c code, redirect_uri mismatch": ("fixed", (P + "test_failed_exchange_uses_the_code_up",)),
    "1c code replay / expired / other client": ("fixed", (P + "test_failed_exchange_uses_the_code_up",
                                                          O + "test_code_is_bound_to_its_client")),
    "1c missing / short verifier": ("fixed", (O + "test_code_exchange_error_rows",)),
    "1c grant_type": ("ours", (O + "test_unsupported_grant_type",)),
    "1c success body (scope form)": ("spec", (P + "test_token_format_and_json_body",)),
    "1c token format": ("fixed", (P + "test_token_format_and_json_body",)),
    "1c headers (no-store)": ("ours", (P + "test_tokens_never_travel_in_urls_and_answers_are_not_stored",)),
    "1c lifetimes": ("same", (O + "test_access_token_expires_after_3600_seconds", O + "test_refresh_token_expires",
                              O + "test_code_expires_after_10_minutes")),
    "1c refresh scope param": ("spec", (O + "test_refresh_scope_narrows_never_widens",
                                        O + "test_narrowed_refresh_keeps_the_grants_scope")),
    "1c refresh rotation": ("same", (O + "test_reused_refresh_token_is_refused_and_the_new_pair_keeps_working",)),
    "1c refresh reuse": ("fixed", (O + "test_reused_refresh_token_is_refused_and_the_new_pair_keeps_working",
                                   C + "test_authlib_code_flow_refresh_revoke_userinfo")),
    "1c client_credentials refresh token": ("spec", (O + "test_client_credentials_bound_to_owner_without_refresh",)),
    "1c client_credentials default scope": ("spec", (O + "test_client_credentials_bound_to_owner_without_refresh",)),
    "1c client_credentials who may": ("spec", (O + "test_client_credentials_needs_a_confidential_client",)),
    # 1d revoke
    "1d order": ("fixed", (P + "test_revoke_refuses_a_public_clients_foreign_origin",)),
    "1d public client, Origin not allowed": ("fixed", (P + "test_revoke_refuses_a_public_clients_foreign_origin",)),
    "1d no token": ("fixed", (P + "test_revoke_without_a_token_and_its_rate_limit_name",)),
    "1d JSON body": ("fixed", (P + "test_token_format_and_json_body",)),
    "1d unauthenticated": ("same", (O + "test_public_client_without_session_cannot_revoke",)),
    "1d confidential-client authority": ("fixed", (P + "test_confidential_client_revokes_only_its_owners_tokens",)),
    "1d revoking a refresh token": ("spec", (O + "test_revoke_refresh_token_by_confidential_client_kills_its_access_tokens",)),
    "1d rate limit body": ("fixed", (P + "test_revoke_without_a_token_and_its_rate_limit_name",)),
    # 1e userinfo
    "1e bearer parsing": ("ours", (O + "test_userinfo_401_rows",)),
    "1e 401 bodies": ("same", (O + "test_userinfo_401_rows",)),
    "1e 403": ("same", (O + "test_userinfo_403_without_user_read",)),
    "1e claims": ("fixed", (O + "test_userinfo_claims_exactly",)),
    "1e other methods": ("fixed", (P + "test_userinfo_other_methods_are_405",)),
    # 1f scope bits
    "1f bits 0-24": ("same", (O + "test_consent_page_shows_client_scopes_and_buzz_limit",)),
    "1f AppBlocksSubmit, AppBlocksDevTunnel": ("spec", (O + "test_authorize_error_rows",)),
    "1f Full": ("same", (O + "test_authorize_error_rows",)),
    "1f labels": ("ours", (O + "test_consent_page_shows_client_scopes_and_buzz_limit",)),
    # 1g device, OIDC, session, legacy, CORS
    "1g POST /device": ("fixed", (P + "test_device_grant_over_http", P + "test_device_errors",
                                  D + "test_cli_device_grant_through_discovery")),
    "1g POST /device-token": ("fixed", (P + "test_device_grant_over_http", P + "test_device_code_expires_on_the_emulator_clock",
                                        D + "test_cli_device_grant_through_discovery", D + "test_cli_device_grant_denied")),
    "1g device-approve, device-info, device page": ("fixed", (P + "test_device_grant_over_http",
                                                              P + "test_device_deny_on_the_page",
                                                              P + "test_device_page_needs_a_session",
                                                              W + "test_device_page_in_a_browser",
                                                              P + "test_device_approval_from_another_origin_is_refused")),
    "1g OIDC": ("fixed", (P + "test_discovery_and_jwks", P + "test_id_token_carries_the_nonce",
                          D + "test_oidc_code_flow_with_a_validated_id_token",
                          D + "test_discovery_document_is_what_the_library_reads")),
    "1g session, legacy-exchange": ("not", ()),
    "1g legacy base_url paths": ("spec", (O + "test_legacy_paths_answer_308_keeping_method_query_and_body",
                                          O + "test_legacy_redirect_drops_authorization_and_userinfo_401s")),
    "1g CORS on token, revoke, userinfo, device": ("fixed", (O + "test_cors_is_a_wildcard_without_credentials",
                                                             P + "test_token_cors_echoes_a_public_clients_allowed_origin_without_credentials",
                                                             W + "test_cors_from_a_real_cross_origin_page")),
    "1g CORS on authorize": ("fixed", (O + "test_authorize_sends_no_cors",
                                       B + "test_another_local_page_cannot_read_or_approve_consent")),
    # security review rows owned here
    "E01": ("fixed", (O + "test_authorize_sends_no_cors", P + "test_consent_csrf_token_is_bound_to_one_authorization_request",
                      P + "test_consent_post_from_another_origin_is_refused",
                      B + "test_another_local_page_cannot_read_or_approve_consent",
                      P + "test_device_approval_from_another_origin_is_refused")),
    "E06": ("platform", (P + "test_catalogue_private_routes_do_not_check_oauth_scopes_as_on_the_platform",)),
    "E11": ("platform", (P + "test_code_replay_is_refused_and_the_first_tokens_stay",)),
    "E12": ("fixed", (P + "test_failed_client_authentication_cannot_lock_the_client_out",
                      P + "test_bogus_codes_for_a_public_client_do_not_lock_it_out")),
    "E14": ("fixed", (P + "test_confidential_client_revokes_only_its_owners_tokens",
                      P + "test_revoke_refuses_a_public_clients_foreign_origin",
                      O + "test_public_client_without_session_cannot_revoke")),
    "E15": ("fixed", (P + "test_loopback_redirect_uri_any_port",)),
    "E16": ("fixed", (O + "test_authorize_error_rows",)),
    "E17": ("fixed", (P + "test_client_authentication_failures",)),
    "E22": ("fixed", (O + "test_narrowed_refresh_keeps_the_grants_scope",)),
    "H01": ("held", (P + "test_loopback_redirect_uri_any_port",
                     O + "test_authorize_error_rows_before_the_redirect_uri_is_known")),
    "H02": ("held", (O + "test_login_refuses_open_redirects",)),
    "H03": ("held", (P + "test_concurrent_exchanges_of_one_code_give_one_token", O + "test_code_is_bound_to_its_client",
                     O + "test_code_expires_after_10_minutes", O + "test_code_exchange_error_rows")),
    "H04": ("held", (O + "test_authorize_error_rows",)),
    "H05": ("held", (P + "test_state_comes_back_byte_for_byte", O + "test_deny_redirects_access_denied")),
    "H06": ("held", (P + "test_client_authentication_failures", O + "test_code_exchange_error_rows",
                     O + "test_public_client_secret_refused_and_pkce_alone_works")),
    "H07": ("held", (P + "test_tokens_never_travel_in_urls_and_answers_are_not_stored",)),
    "H08": ("held", (O + "test_scope_above_client_allowed_scopes_is_invalid_scope",
                     O + "test_client_credentials_bound_to_owner_without_refresh",
                     O + "test_refresh_scope_narrows_never_widens")),
    "H09": ("held", (O + "test_reused_refresh_token_is_refused_and_the_new_pair_keeps_working",
                     O + "test_refresh_token_of_another_client_or_unknown_is_invalid_grant",
                     O + "test_revoke_refresh_token_by_confidential_client_kills_its_access_tokens",
                     O + "test_refresh_token_expires")),
    "H10": ("held", (O + "test_userinfo_401_rows", O + "test_userinfo_403_without_user_read",
                     K + "test_revoked_and_expired_tokens_get_the_spec_401")),
    "H11": ("held", (P + "test_pages_cannot_be_framed", O + "test_session_cookie_attributes",
                     O + "test_consent_post_needs_the_sessions_csrf_token",
                     B + "test_another_local_page_cannot_read_or_approve_consent")),
}
