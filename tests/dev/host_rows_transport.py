"""The rows of /work/shared/reviews/dev-host-fidelity-2026-12-02.md handled by helper "transport"."""

from __future__ import annotations

from typing import NamedTuple


class Row(NamedTuple):
    outcome: str  # fixed | same | spec | deviation
    tests: tuple[str, ...] = ()  # "test_file.py::test_name" under tests/dev/
    why: str = ""  # required for spec/deviation: the reason


B = "test_dev_transport_browser.py::"
H = "test_dev_host.py::"
U = "test_dev_transport.py::"

ROWS: dict[int, Row] = {
    1: Row("fixed", (H + "test_the_iframe_sandbox_is_the_platforms_for_the_manifest",
                     U + "test_the_sandbox_is_the_manifests_tokens_the_platform_allows"),
           "the manifest's tokens in the platform's allowlist after allow-scripts (always added); "
           "allow-same-origin is never added, as the spec says (the platform adds it for verified/internal)"),
    2: Row("spec", (H + "test_the_iframe_sandbox_is_the_platforms_for_the_manifest",
                    "test_dev_origins.py::test_with_allow_same_origin_in_the_manifest_the_frame_is_still_opaque"),
           "the frame is always opaque: the spec forbids allow-same-origin beside allow-scripts, where the "
           "platform gives verified and internal apps their real origin; dev has no tiers"),
    3: Row("fixed", (H + "test_the_iframe_sandbox_is_the_platforms_for_the_manifest",
                     B + "test_the_page_frame_fills_the_stage_and_sends_no_referrer")),
    4: Row("same", (H + "test_the_iframe_sandbox_is_the_platforms_for_the_manifest",)),
    5: Row("fixed", (H + "test_a_block_completes_the_handshake_on_a_page",
                     H + "test_the_theme_flag_reaches_the_payload",
                     U + "test_the_host_page_serves_the_apps_run_urls_a_navigate_leaves")),
    6: Row("deviation", (U + "test_the_host_page_serves_the_apps_run_urls_a_navigate_leaves",),
           "the host page now sends the platform's X-Frame-Options: DENY; the bundle origin's headers are not "
           "in the platform's public source, so the block document keeps blockkit's (cache-control: no-store)"),
    7: Row("fixed", (B + "test_the_page_frame_fills_the_stage_and_sends_no_referrer",)),
    8: Row("fixed", (B + "test_before_ready_the_frame_is_invisible_inert_and_dialogs_are_refused",
                     B + "test_a_slot_frame_is_hidden_until_ready_and_ignores_resize_before",
                     B + "test_boot_skeleton_shows_the_page_frame_from_mount_still_inert"),
           "bootSkeleton: true shows the page frame from mount (still inert) as the spec says; the platform's "
           "host ignores bootSkeleton. The slot's overlay is the page's text where the platform shows a skeleton"),
    9: Row("fixed", (B + "test_the_first_init_goes_at_mount_and_only_the_first_hello_speeds_one_up",)),
    10: Row("same", (H + "test_a_silent_page_is_retried_on_schedule_then_shows_the_failure_card",
                     H + "test_a_silent_slot_collapses_after_ten_seconds_at_real_timing")),
    11: Row("fixed", (B + "test_the_first_init_goes_at_mount_and_only_the_first_hello_speeds_one_up",)),
    12: Row("same", (H + "test_a_silent_page_is_retried_on_schedule_then_shows_the_failure_card",)),
    13: Row("fixed", (H + "test_a_silent_page_is_retried_on_schedule_then_shows_the_failure_card",
                      B + "test_a_fatal_error_on_a_page_shows_the_card_and_remounts_twice")),
    14: Row("same", (H + "test_a_silent_slot_collapses_after_ten_seconds_at_real_timing",)),
    15: Row("fixed", (B + "test_a_fatal_error_on_a_page_shows_the_card_and_remounts_twice",
                      B + "test_a_fatal_error_before_ready_ends_the_mount_at_once",
                      B + "test_a_fatal_error_collapses_a_slot",
                      B + "test_a_non_fatal_error_changes_nothing")),
    16: Row("fixed", (H + "test_a_block_that_reloads_itself_after_ready_gets_no_new_handshake",)),
    18: Row("fixed", (H + "test_a_block_completes_the_handshake_on_a_page",
                      B + "test_a_slot_init_has_the_platforms_context",
                      "test_dev_init_payload.py::test_instance_ids_have_the_platforms_prefixes"),
            ),
    19: Row("fixed", (H + "test_a_block_completes_the_handshake_on_a_page",
                      B + "test_a_slot_init_has_the_platforms_context",
                      "test_dev_init_payload.py::test_the_init_payload_adds_the_platforms_members")),
    22: Row("fixed", (H + "test_a_block_completes_the_handshake_on_a_page",
                      "test_dev_init_payload.py::test_page_and_slot_contexts",
                      B + "test_navigate_moves_the_host_url_and_the_block_hears_route_changed")),
    23: Row("fixed", (B + "test_a_slot_init_has_the_platforms_context",
                      "test_dev_init_payload.py::test_the_init_payload_adds_the_platforms_members")),
    24: Row("same", (H + "test_a_block_completes_the_handshake_on_a_page",)),
    25: Row("same", (H + "test_a_block_completes_the_handshake_on_a_page",)),
    27: Row("same", (H + "test_the_controls_push_theme_change_and_token_refresh",)),
    29: Row("fixed", (B + "test_navigate_moves_the_host_url_and_the_block_hears_route_changed",)),
    30: Row("fixed", (B + "test_before_ready_the_frame_is_invisible_inert_and_dialogs_are_refused",
                      B + "test_reload_block_suspends_the_old_frame")),
    32: Row("same", ("test_dev_violations.py::test_each_violation_kind_is_detected_and_explained",)),
    33: Row("same", (),
            "not changed: a frame is always opaque here, so every message says origin \"null\", which the "
            "platform accepts; the source pin is what authenticates (no test can send another origin from it)"),
    34: Row("same", (H + "test_the_block_runs_on_another_origin_than_the_host",)),
    35: Row("same", (H + "test_a_block_completes_the_handshake_on_a_page",)),
    36: Row("fixed", (B + "test_unknown_types_are_dropped_before_any_request_to_the_host_server",)),
    37: Row("fixed", (B + "test_a_burst_of_100_gets_at_most_30_replies_in_its_second",
                      B + "test_ready_and_resize_count_toward_the_rate_on_a_slot",
                      U + "test_each_drop_reason_is_a_violation_that_says_why",
                      U + "test_drops_fail_the_check_and_a_flood_reads_as_one_line")),
    38: Row("fixed", (B + "test_a_repeated_request_id_is_answered_once",
                      U + "test_the_host_api_traces_each_drop_and_explains_it")),
    39: Row("fixed", (B + "test_a_request_without_a_usable_id_gets_no_reply",
                      U + "test_a_no_request_id_drop_is_not_also_a_missing_field")),
    40: Row("fixed", (B + "test_a_request_without_a_usable_id_gets_no_reply",)),
    43: Row("fixed", (B + "test_before_ready_the_frame_is_invisible_inert_and_dialogs_are_refused",
                      U + "test_the_surfaces_handle_what_the_platforms_hosts_handle")),
    60: Row("fixed", (B + "test_navigate_moves_the_host_url_and_the_block_hears_route_changed",
                      B + "test_a_slot_frame_is_hidden_until_ready_and_ignores_resize_before")),
    61: Row("same", (H + "test_resize_is_ignored_on_a_page", B + "test_a_non_fatal_error_changes_nothing")),
    63: Row("spec", (H + "test_resize_is_ignored_on_a_slot_that_is_not_resizable",),
            "the spec: RESIZE_IFRAME is honoured only when iframe.resizable is true; IframeHost never reads it"),
    64: Row("fixed", (B + "test_a_slot_frame_is_hidden_until_ready_and_ignores_resize_before",)),
    65: Row("fixed", (B + "test_a_slot_frame_is_hidden_until_ready_and_ignores_resize_before",
                      H + "test_resize_is_clamped_on_a_resizable_slot")),
    66: Row("spec", (H + "test_resize_is_ignored_on_a_slot_that_is_not_resizable",),
            "the spec: BLOCK_READY's height applies on a slot only when iframe.resizable is true; the platform "
            "applies it whatever resizable says"),
}
