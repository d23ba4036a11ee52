"""Every row of review emulator-fidelity-2026-11-27 (measured on 0f86161), and what became of it.

``ROWS`` maps (section, aspect) to an outcome and its evidence:

- ``fixed``: the emulator now answers as the platform does; ``tests`` names the tests
  (``file.py::function``) built from the row's reproduction;
- ``same``: the review found no difference; ``tests`` names the test that holds it;
- ``spec``: the spec states the behaviour and the platform differs, so the spec stands
  (the brief's rule 1); ``why`` quotes the spec;
- ``deviation``: kept as it is, deliberately; ``why`` gives the reason.

``test_fidelity_rows.py`` checks that every named test exists and every row without a
test has a reason. docs/platform-shapes.md ("The catalogue against the platform")
carries the same rows for readers.
"""

from __future__ import annotations

from typing import NamedTuple


class Row(NamedTuple):
    outcome: str                 # fixed | same | spec | deviation
    tests: tuple[str, ...] = ()
    why: str = ""


M = "test_models.py::"
MV = "test_model_versions.py::"
F = "test_fidelity.py::"
I = "test_images.py::"
CS = "test_catalogue_shapes.py::"
SH = "test_shapes.py::test_route_sends_its_tables_keys_and_types"

ROWS: dict[tuple[str, str], Row] = {
    # GET /api/v1/models
    ("GET /models", "limit"): Row("spec", (M + "test_limit_outside_1_100_is_a_400_in_the_validation_shape",),
                                  "spec: limit 'integer 1-100'; the platform's Number() also passes 0 and fractions"),
    ("GET /models", "booleans supportsGeneration, fromPlatform, earlyAccess"): Row(
        "fixed", (M + "test_boolean_model_filters", M + "test_early_access_filter")),
    ("GET /models", "nsfw, primaryFileOnly, favorites, hidden"): Row(
        "fixed", (F + "test_nsfw_takes_the_boolean_strings", M + "test_primary_file_only")),
    ("GET /models", "types"): Row("spec", (M + "test_types_repeat_or_comma",),
                                  "spec: types 'repeat param or comma-separate'; the platform 400s a comma list"),
    ("GET /models", "ModelType values"): Row("fixed", (F + "test_models_types_take_the_platforms_model_types",)),
    ("GET /models", "favorites / hidden without a token"): Row(
        "fixed", (F + "test_favorites_or_hidden_present_without_a_token_is_a_401",)),
    ("GET /models", "page + cursor"): Row("fixed", (F + "test_page_with_a_cursor_reads_the_cursor",)),
    ("GET /models", "metadata.nextPage in page mode"): Row(
        "fixed", (M + "test_page_pagination_metadata_and_continuity",)),
    ("GET /models", "query + page"): Row(
        "fixed", (F + "test_query_with_page_is_the_platforms_400_after_the_page_window",)),
    ("GET /models", "page*limit > 1000"): Row("same", (M + "test_page_times_limit_above_1000_is_a_429",)),
    ("GET /models", "400 body"): Row("fixed", (M + "test_limit_outside_1_100_is_a_400_in_the_validation_shape",)),
    ("GET /models", "unknown params"): Row("same", (M + "test_unknown_parameters_are_ignored",)),
    ("GET /models", "model fields"): Row("fixed", (F + "test_model_and_version_fields",
                                                   "test_recorded_responses.py::test_recorded_body_validates")),
    ("GET /models", "version fields in the list"): Row("fixed", (F + "test_model_and_version_fields",)),
    ("GET /models", "files in the list"): Row(
        "fixed", (F + "test_list_files_carry_primary_only_on_the_primary_file",
                  CS + "test_list_and_by_id_files_carry_the_scan_fields_and_override_name"),
        "primary fixed; the scan fields and overrideName are sent since issue 33 (Shapes review below)"),
    ("GET /models", "preview images in the list"): Row("fixed", (F + "test_model_and_version_fields",)),
    ("GET /models", "Cache-Control (anonymous)"): Row("fixed", (M + "test_token_answers_are_private",)),
    # GET /api/v1/models/{id}
    ("GET /models/{id}", "id validation"): Row(
        "fixed", (M + "test_model_id_400_is_zods_prettified_error", M + "test_model_id_is_read_as_a_number")),
    ("GET /models/{id}", "404"): Row("same", (M + "test_unpublished_models_are_404",)),
    ("GET /models/{id}", "preview images"): Row("fixed", (M + "test_model_by_id_previews_are_not_level_filtered",)),
    ("GET /models/{id}", "primary / empty fields"): Row("fixed", (M + "test_model_by_id_is_the_all_levels_list_item",)),
    ("GET /models/{id}", "remaining fields"): Row("fixed", (M + "test_model_by_id_is_the_all_levels_list_item",)),
    # GET /api/v1/model-versions/{id}
    ("GET /model-versions/{id}", "id validation"): Row("fixed", (MV + "test_version_id_errors",)),
    ("GET /model-versions/{id}", "404"): Row("fixed", (MV + "test_version_id_errors",)),
    ("GET /model-versions/{id}", "top-level fields"): Row(
        "fixed", (F + "test_version_carries_paid_access_licensing_fee_and_scan_fields",),
        "paidAccess and licensingFee added; availability, earlyAccessConfig and earlyAccessEndsAt stay: the "
        "spec's ModelVersion table lists them"),
    ("GET /model-versions/{id}", "files"): Row(
        "fixed", (F + "test_version_carries_paid_access_licensing_fee_and_scan_fields",)),
    ("GET /model-versions/{id}", "images"): Row("fixed", (MV + "test_images_follow_the_callers_browsing_level",)),
    ("GET /model-versions/{id}", "stats"): Row("same", (MV + "test_a_public_version",)),
    # by-hash
    ("GET /model-versions/by-hash/{hash}", "validation"): Row("fixed", (MV + "test_by_hash_misses_and_bad_hashes",)),
    ("GET /model-versions/by-hash/{hash}", "404 body"): Row("fixed", (MV + "test_by_hash_misses_and_bad_hashes",)),
    ("GET /model-versions/by-hash/{hash}", "body"): Row(
        "fixed", (MV + "test_every_hash_kind_any_case", CS + "test_version_by_id_scanned_at_is_written_without_a_zone"),
        "the version shape as above; files carry overrideName (null: no renamed files) since issue 33"),
    ("GET /model-versions/by-hash/{hash}", "Cache-Control"): Row("fixed", (F + "test_by_hash_is_edge_cached_for_an_hour",)),
    ("POST /model-versions/by-hash", "400 body"): Row("fixed", (F + "test_post_by_hash_400_carries_the_platforms_sentence",)),
    ("POST /model-versions/by-hash", "by-hash entries"): Row(
        "fixed", (F + "test_post_by_hash_answers_one_entry_per_matching_file",),
        "one entry per matching file; no null entries (every seeded version has a primary file)"),
    ("POST /model-versions/by-hash", "by-hash/ids item"): Row("fixed", (MV + "test_post_by_hash_ids",)),
    ("POST /model-versions/by-hash", "limits 100 / 10000"): Row("same", (MV + "test_post_by_hash_ids",)),
    # mini
    ("GET /model-versions/mini/{id}", "epoch"): Row(
        "spec", (MV + "test_mini_epochs",),
        "spec: 'Query: epoch integer ... selects an epoch's file'; on the platform any query epoch is a 400"),
    ("GET /model-versions/mini/{id}", "modelFileId"): Row("fixed", (F + "test_mini_fields_and_model_file_id",)),
    ("GET /model-versions/mini/{id}", "fields"): Row("fixed", (F + "test_mini_fields_and_model_file_id",)),
    ("GET /model-versions/mini/{id}", "404 bodies"): Row(
        "fixed", (F + "test_mini_fields_and_model_file_id", MV + "test_mini_without_a_primary_file_is_404")),
    # images
    ("GET /images", "default limit"): Row("spec", (), "spec: images limit 'integer 0-200', default 50"),
    ("GET /images", "baseModels"): Row("fixed", (I + "test_unknown_base_model_is_a_400",)),
    ("GET /images", "browsingLevel"): Row("fixed", (I + "test_negative_browsing_level_is_accepted",)),
    ("GET /images", "nsfw"): Row("fixed", (I + "test_nsfw_takes_the_boolean_strings",)),
    ("GET /images", "withTags, flatMeta, requiringMeta"): Row(
        "fixed", (I + "test_with_tags_adds_each_images_tags", I + "test_meta_is_wrapped_for_lookups_unless_flat_meta"),
        "requiringMeta is accepted and filters nothing"),
    ("GET /images", "item fields"): Row(
        "fixed", (I + "test_meta_only_with_with_meta",),
        "meta always sent; thumbnail stays: the spec's Image table lists it"),
    ("GET /images", "meta on lookups"): Row("fixed", (I + "test_meta_is_wrapped_for_lookups_unless_flat_meta",)),
    ("GET /images", "429 paging"): Row("same", (I + "test_page_times_limit_over_1000_is_a_429",)),
    ("GET /images", "empty page"): Row("same", (I + "test_an_empty_page_is_not_the_end",)),
    ("GET /images", "400 body"): Row("fixed", (I + "test_invalid_parameter_is_a_400_with_the_validation_envelope",)),
    ("GET /images", "cursor text"): Row("spec", (), "spec, Images rule 2: 'Cursors begin with feed:'"),
    ("GET /images", "method"): Row("deviation", (), "D-method: a method the document does not define is a 405"),
    # posts
    ("GET /posts/{id}", "route"): Row("spec", ("test_posts.py::test_a_public_post",),
                                      "spec: 'GET /posts/{id} (Public)' is in the spec's endpoint list"),
    # articles
    ("GET /articles", "limit"): Row("spec", (), "spec: articles limit 'integer 1-100'"),
    ("GET /articles", "cursor"): Row("fixed", ("test_articles.py::test_malformed_cursor_is_a_400",
                                              "test_articles.py::test_cursor_longer_than_100_is_a_400")),
    ("GET /articles", "list stats"): Row("spec", (), "spec: Article stats are the seven keys it names"),
    ("GET /articles", "list item"): Row("fixed", ("test_articles.py::test_items_carry_the_platforms_extra_fields",),
                                        "userId, coverId, unlisted, cosmetic and the user's deletedAt and cosmetics "
                                        "added (issue 33: the list's cosmetics null, profilePicture null, the single "
                                        "article's isModerator); cover (the cover's JSON) and userNsfwLevel are not"),
    ("GET /articles/{id}", "detail stats"): Row("spec", (), "spec: the single shape 'adds the article body' to the "
                                                            "list shape, whose stats it names"),
    ("GET /articles/{id}", "detail extras"): Row("deviation", (), "contentJson, attachments, reactions, ... have no "
                                                                  "data in the emulator's store"),
    ("GET /articles/{id}", "no viewable cover"): Row("fixed", ("test_articles.py::test_cover_above_the_regions_ceiling_is_dropped",)),
    ("GET /articles/{id}", "404"): Row("fixed", ("test_articles.py::test_hidden_single_articles_are_indistinguishable_404s",)),
    ("GET /articles", "Cache-Control"): Row("spec", (), "spec, general behaviour 5: 'public, s-maxage=300' "
                                                        "(stale-while-revalidate for posts only)"),
    # collections
    ("GET /collections", "fields"): Row("same", ("test_collections.py::test_item_count_and_cover",)),
    ("GET /collections", "params"): Row("same", ("test_collections.py::test_cursor_only_with_newest",)),
    ("GET /collections/{id}", "404"): Row("fixed", ("test_collections.py::test_private_and_missing_collections_are_404s",)),
    # users
    ("GET /users", "item"): Row("fixed", (F + "test_users_items_and_limit",),
                                "avatarUrl and meta added; avatarNsfw stays a name: the spec's table says "
                                "'string: None, Soft, Mature, X'"),
    ("GET /users", "limit"): Row("fixed", (F + "test_users_items_and_limit",)),
    ("GET /users", "400"): Row("fixed", ("test_spec_errors.py::test_users_malformed_ids_is_400_validation_json",)),
    ("GET /users", "query ordering"): Row("spec", (), "spec: 'username prefix match, shortest matches first'"),
    # creators and tags
    ("GET /creators, /tags", "page"): Row("spec", (), "spec: page 'integer >= 1'"),
    ("GET /creators, /tags", "creator image"): Row("spec", (), "spec: creator image 'string or null' (the "
                                                               "document accepts it left out, as the platform does)"),
    ("GET /creators, /tags", "metadata"): Row("fixed", (F + "test_page_two_has_a_prev_page",)),
    ("GET /creators, /tags", "400 body"): Row("fixed", (F + "test_creators_and_tags_issue_codes_are_zods",)),
    ("GET /creators, /tags", "tag item"): Row("same", ("test_tags.py::test_model_tags_only_most_used_first_with_the_platforms_metadata",)),
    # me
    ("GET /me", "fields"): Row("fixed", ("test_me.py::test_me_describes_the_tokens_user",)),
    ("GET /me", "401"): Row("same", ("test_me.py::test_me_401_for_missing_malformed_or_unknown",)),
    # permissions
    ("GET /permissions/check", "no entityIds"): Row("spec", ("test_permissions.py::test_bad_parameters_are_400_error",),
                                                    "spec: entityIds 'required'; errors: 400 'entityIds missing'"),
    ("GET /permissions/check", "entityIds="): Row("spec", (), "spec: 'When entityIds is empty the response is an "
                                                             "empty array'"),
    ("GET /permissions/check", "malformed"): Row("fixed", ("test_permissions.py::test_bad_parameters_are_400_error",)),
    # enums
    ("GET /enums", "ModelType"): Row("fixed", (F + "test_enums_are_the_platforms",)),
    ("GET /enums", "ModelFileType"): Row("fixed", (F + "test_enums_are_the_platforms",)),
    ("GET /enums", "BaseModel / ActiveBaseModel"): Row(
        "fixed", (F + "test_enums_are_the_platforms",),
        "99 records at ebed661 (the review's 'about 160' counted every name: key in the file)"),
    ("GET /enums", "BaseModelType"): Row("same", (F + "test_enums_are_the_platforms",)),
    ("GET /enums", "method"): Row("deviation", (), "D-method: a method the document does not define is a 405"),
    # vault
    ("Vault", "vault/get"): Row("same", ("test_vault.py::test_get_creates_the_vault_on_the_first_call",)),
    ("Vault", "vault/all params"): Row("spec", (), "spec: vault/all takes types comma-separated and ISO dates; the "
                                                   "platform's 500s for them are not the documented API"),
    ("Vault", "check-vault item"): Row("spec", (), "spec: 'vaultItem is a full vault item or null'"),
    ("Vault", "toggle-version"): Row("same", ("test_vault.py::test_toggle_adds_then_removes",)),
    # review catalogue-shapes-2026-12-02 (issue 33): the shapes, key by key
    ("Shapes review", "files[] scan fields on GET /models and /models/{id}"): Row(
        "fixed", (CS + "test_list_and_by_id_files_carry_the_scan_fields_and_override_name", SH)),
    ("Shapes review", "files[].overrideName"): Row(
        "fixed", (CS + "test_list_and_by_id_files_carry_the_scan_fields_and_override_name",
                  CS + "test_version_by_id_scanned_at_is_written_without_a_zone", SH),
        "null (no renamed files); not on GET /model-versions/{id}, whose json_build_object has none"),
    ("Shapes review", "GET /models/{id} versions' covered, status, createdAt"): Row(
        "fixed", (CS + "test_model_by_id_versions_keep_created_at_status_and_covered", SH)),
    ("Shapes review", "GET /models/{id} removeEmpty drops empty arrays"): Row(
        "fixed", (CS + "test_model_by_id_leaves_out_empty_arrays", SH)),
    ("Shapes review", "allowCommercialUse as an array"): Row(
        "fixed", (CS + "test_allow_commercial_use_is_a_json_array", "test_contract.py::test_a_departing_model_fails",
                  "test_recorded_responses.py::test_recorded_body_validates"),
        "the platform's CommercialUse[] and every recorded body, against the spec's brace string"),
    ("Shapes review", "video metadata duration, audio, size"): Row(
        "fixed", (CS + "test_video_previews_carry_duration_audio_and_size", SH),
        "audio false (the served MP4 has no sound); size estimated (our choice)"),
    ("Shapes review", "/images page mode currentPage, pageSize"): Row(
        "fixed", (CS + "test_images_page_mode_carries_current_page_and_page_size", SH)),
    ("Shapes review", "timestamps without Z"): Row(
        "fixed", (CS + "test_version_by_id_scanned_at_is_written_without_a_zone",
                  CS + "test_timestamp_without_zone_is_postgres_json", SH),
        "files[].scannedAt on /model-versions/{id} without Z (json_build_object); list publishedAt keeps Z "
        "(a Date at ebed661) and the document accepts both forms"),
    ("Shapes review", "image meta civitaiResources"): Row(
        "fixed", (CS + "test_image_meta_names_its_resources_civitai_resources",),
        "the platform's key (image.schema.ts) against the spec's platformResources"),
    ("Shapes review", "stats null when the creator hides them"): Row(
        "deviation", (), "no Creator Controls metric privacy in the emulator: the counts are always integers"),
    ("Shapes review", "GET /tags metadata (the platform counts no tags)"): Row(
        "fixed", ("test_tags.py::test_model_tags_only_most_used_first_with_the_platforms_metadata",
                  "test_tags.py::test_with_query_the_metadata_is_the_same_and_items_drive_paging",
                  F + "test_page_two_has_a_prev_page", SH),
        "totalItems 0, totalPages 1, no nextPage or prevPage (tag.service.ts getTags, getPagingData)"),
    ("Shapes review", "GET /creators metadata (getPagingData, getPaginationLinks)"): Row(
        "fixed", ("test_creators.py::test_with_query_totals_are_lower_bounds_exact_on_the_last_page",
                  "test_creators.py::test_page_past_the_end", "test_creators.py::test_no_creators_is_one_page",
                  "test_creators.py::test_the_links_repeat_the_requests_query", SH),
        "hasMore on the search path, totalPages 1 for nothing, the links carry the request's whole query"),
    ("Shapes review", "GET /me token fields for every bearer token"): Row(
        "fixed", ("test_me.py::test_me_names_a_cli_tokens_subject_by_its_row_id",
                  "test_me.py::test_me_bodies_validate_against_the_document", SH),
        "a client-less token is the platform's API key: subject {type: apiKey, id: row id}, buzzLimit null"),
    ("Shapes review", "GET /vault/all totalPages for no items"): Row(
        "fixed", ("test_vault.py::test_all_pages", SH),
        "getPaginatedVaultItems ends in getPagingData: totalPages 1 when nothing matches (it was 0)"),
    ("Shapes review", "validator: upper-case scheme in an allowed origin"): Row(
        "fixed", ("../rules/test_asset_url.py::test_family2_bare_hosts_are_https_origins",)),
    # routes
    ("Routes", "real v1 routes the emulator does not serve"): Row(
        "deviation", (), "apps, content, bugs, tensor-metadata, users/{id}, partners, image-upload, "
                         "creator-program, developer, early-access, bust-cache and the block routes listed are "
                         "outside the spec's catalogue; they answer 404 {error: 'Not found'} (early-access and "
                         "bust-cache read as a version id: 400)"),
}
