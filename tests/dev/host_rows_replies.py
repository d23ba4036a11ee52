"""The rows of the dev-host fidelity review (2026-12-02) worked on with the reply shapes."""

from host_row import Row


B = "test_dev_bridge.py::"
R = "test_dev_replies_browser.py::"

ROWS: dict[int, Row] = {
    31: Row("fixed", (B + "test_an_upload_answers_each_purpose_in_the_platforms_shape",
                      R + "test_page_uploads_display_source_and_async_scan")),
    41: Row("deviation", (B + "test_the_checkpoint_picker_narrows_by_family_and_answers_selected_or_a_bare_dismissal",
                          B + "test_a_wildcard_pack_by_model_version",
                          B + "test_publish_asks_first_and_cancel_says_so",
                          B + "test_app_workflow_refusals_are_the_error_sentence",
                          R + "test_page_resource_picker_takes_loras_and_drops_other_types"),
            "The picker, upload, save, pack, checkpoint, publish and app-workflow messages are now dropped as the "
            "platform drops them (with a 'dropped' note and the reason in --check). App and shared storage keep "
            "answering a wrongly typed key or value with an error sentence: the block fails on both hosts, and "
            "here it is told why at once instead of waiting for its SDK timeout."),
    42: Row("deviation", (),
            "Over 1 MiB a message cannot reach the host server (its body limit keeps a block from filling memory "
            "and the trace): no reply, a console warning and a panel row. The platform answers (its storage "
            "refuses over 64 KB); no value the platform stores is that large. Not changed by this helper."),
    45: Row("same", (B + "test_get_viewer_names_the_chosen_viewer", B + "test_a_signed_out_viewer")),
    46: Row("fixed", (B + "test_the_buzz_balance_needs_no_scope_the_other_buzz_reads_do", B + "test_a_signed_out_viewer",
                      B + "test_buzz_balance_and_purchase_dialog")),
    47: Row("same", (B + "test_an_upscale_workflow_runs_to_completion",
                     B + "test_the_platforms_text_to_image_body_and_failure_snapshots")),
    48: Row("fixed", (B + "test_app_workflow_refusals_are_the_error_sentence",)),
    49: Row("fixed", (B + "test_publish_asks_first_and_cancel_says_so",
                      R + "test_page_wildcard_pack_checkpoint_refusal_and_publish_cancel")),
    50: Row("same", (B + "test_an_upscale_workflow_runs_to_completion",)),
    51: Row("fixed", (B + "test_the_checkpoint_picker_narrows_by_family_and_answers_selected_or_a_bare_dismissal",
                      R + "test_page_checkpoint_picker_pick_and_dismiss",
                      R + "test_slot_checkpoint_and_what_the_slot_leaves_unanswered",
                      "test_dev_dialogs_browser.py::test_a_picker_lists_the_emulated_catalogue_and_returns_the_choice",
                      "test_templates_on_platform_browser.py::"
                      "test_the_scaffolds_bridge_reads_picks_dismissals_and_sentence_refusals")),
    52: Row("fixed", (B + "test_the_resource_picker_takes_checkpoints_and_loras_only",
                      R + "test_page_resource_picker_takes_loras_and_drops_other_types")),
    53: Row("fixed", (B + "test_an_upload_answers_each_purpose_in_the_platforms_shape",
                      R + "test_page_uploads_display_source_and_async_scan",
                      "test_dev_dialogs_browser.py::test_the_upload_dialog_gives_the_block_a_platform_url_not_the_file")),
    54: Row("same", ("test_dev_dialogs_browser.py::test_buy_buzz_confirm_adds_to_the_balance_and_cancel_does_not",)),
    55: Row("fixed", (B + "test_save_image_takes_the_platforms_urls_and_ids_only",
                      R + "test_page_save_image_downloads_in_the_host_and_refuses_data_urls")),
    56: Row("fixed", (B + "test_a_wildcard_pack_by_model_version",
                      R + "test_page_wildcard_pack_checkpoint_refusal_and_publish_cancel")),
    57: Row("fixed", (B + "test_set_user_checkpoint_on_a_page_and_on_a_slot",
                      R + "test_page_wildcard_pack_checkpoint_refusal_and_publish_cancel",
                      R + "test_slot_checkpoint_and_what_the_slot_leaves_unanswered")),
    58: Row("same", (B + "test_storage_round_trip_is_persisted_in_the_store",
                     B + "test_shared_storage_in_the_platforms_shapes")),
    62: Row("fixed", (B + "test_a_request_without_its_scope_gets_an_error_not_silence",
                      B + "test_a_handler_that_fails_answers_a_platform_error",
                      B + "test_an_oauth_kind_token_is_refused_by_the_procedures",
                      "test_dev_violations.py::test_an_undeclared_scope_still_gets_an_error_reply_so_the_block_does_not_hang")),
    67: Row("fixed", (B + "test_what_the_slot_does_not_bridge_goes_unanswered_with_a_note",
                      R + "test_slot_checkpoint_and_what_the_slot_leaves_unanswered")),
}
