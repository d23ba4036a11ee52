"""Review catalogue-shapes-2026-12-02 (issue 33): each row the emulator now answers as the platform does.

One test per row, each from the row's finding; every one failed on 7e5f866. The map from
the rows to these tests is ``fidelity_rows.py`` ("Shapes review"); the whole shape of each
route is held by ``test_shapes.py``.
"""

from __future__ import annotations

import re
from typing import Any

import httpx

from blockkit.emulator.http.catalogue.models import commercial_uses, timestamp_without_zone

SCAN_KEYS = {"pickleScanResult", "pickleScanMessage", "virusScanResult", "virusScanMessage", "scannedAt"}
Z = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z")
NO_ZONE = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?")


def one(store_of: Any, query: str, *args: Any) -> tuple[Any, ...]:
    with store_of.read() as db:
        row = db.execute(query, args).fetchone()
    assert row is not None, query
    return tuple(row)


def pending_file(store_of: Any) -> tuple[int, int, int]:
    """(file id, version id, model id) of a public file whose scan is pending, in a listed healthy model."""
    return one(store_of, "SELECT f.id, v.id, m.id FROM model_files f JOIN model_versions v ON v.id = f.version_id"
                         " JOIN models m ON m.id = v.model_id WHERE f.scanned_at IS NULL AND f.visibility = 'Public'"
                         " AND v.status = 'Published' AND v.availability = 'Public' AND m.status = 'Published'"
                         " AND m.availability = 'Public' AND m.mode IS NULL AND m.nsfw = 0 ORDER BY f.id LIMIT 1")


def test_list_and_by_id_files_carry_the_scan_fields_and_override_name(api: httpx.Client, store_of: Any) -> None:
    # Rows "file scan fields" and "overrideName": modelFileSelect's keys on the model routes' files.
    file_id, _version_id, model_id = pending_file(store_of)
    listed = api.get(f"/api/v1/models?nsfw=true&ids={model_id}").json()["items"][0]
    single = api.get(f"/api/v1/models/{model_id}").json()
    for model in (listed, single):
        files = [f for v in model["modelVersions"] for f in v.get("files", [])]
        assert files
        for file in files:
            assert SCAN_KEYS | {"overrideName"} <= set(file) and file["overrideName"] is None
        pending = next(f for f in files if f["id"] == file_id)
        assert pending["scannedAt"] is None and pending["pickleScanResult"] == "Pending"
        scanned = [f for f in files if f["pickleScanResult"] == "Success"]
        for file in scanned:
            assert Z.fullmatch(file["scannedAt"]) and file["pickleScanMessage"] == "No Pickle imports"


def test_model_by_id_versions_keep_created_at_status_and_covered(api: httpx.Client, store_of: Any,
                                                                 landmarks: dict[str, Any]) -> None:
    # Row "versions' covered, status, createdAt": models/[id].ts spreads the cached version whole.
    model_id = landmarks["generation_only_model"]["id"]
    body = api.get(f"/api/v1/models/{model_id}").json()
    listed = api.get(f"/api/v1/models?nsfw=true&ids={model_id}").json()["items"][0]
    for version, in_list in zip(body["modelVersions"], listed["modelVersions"]):
        created, status, generation = one(store_of, "SELECT created_at, status, supports_generation FROM"
                                                    " model_versions WHERE id = ?", version["id"])
        assert (version["createdAt"], version["status"], version["covered"]) == (created, status, bool(generation))
        assert "supportsGeneration" not in version
        # The list takes them off and renames covered (model-search.service.ts).
        assert not {"createdAt", "status", "covered"} & set(in_list)
        assert in_list["supportsGeneration"] == bool(generation)


def test_model_by_id_leaves_out_empty_arrays(api: httpx.Client, store_of: Any, landmarks: dict[str, Any]) -> None:
    # removeEmpty drops null values and empty arrays: an archived model's files, empty trainedWords.
    archived = api.get(f"/api/v1/models/{landmarks['archived_model']['id']}").json()
    assert archived["mode"] == "Archived"
    assert all("files" not in v and "downloadUrl" not in v for v in archived["modelVersions"])
    version_id = one(store_of, "SELECT v.id FROM model_versions v JOIN models m ON m.id = v.model_id"
                               " WHERE v.trained_words = '[]' AND v.status = 'Published' AND v.availability = 'Public'"
                               " AND m.status = 'Published' AND m.availability = 'Public' AND m.nsfw = 0"
                               " AND m.mode IS NULL ORDER BY v.id LIMIT 1")[0]
    model_id = one(store_of, "SELECT model_id FROM model_versions WHERE id = ?", version_id)[0]
    version = next(v for v in api.get(f"/api/v1/models/{model_id}").json()["modelVersions"] if v["id"] == version_id)
    assert "trainedWords" not in version
    assert not [k for k, v in version.items() if v is None or v == []]


def test_allow_commercial_use_is_a_json_array(api: httpx.Client, store_of: Any) -> None:
    # Row "allowCommercialUse": the platform's CommercialUse[] column, an array on every live body.
    page = api.get("/api/v1/models?nsfw=true&limit=100").json()["items"]
    seen = set()
    for model in page:
        stored = one(store_of, "SELECT allow_commercial_use FROM models WHERE id = ?", model["id"])[0]
        assert model["allowCommercialUse"] == commercial_uses(stored)
        assert isinstance(model["allowCommercialUse"], list)
        seen.add(len(model["allowCommercialUse"]))
    assert 0 in seen and max(seen) >= 2
    single = api.get(f"/api/v1/models/{page[0]['id']}").json()
    assert single["allowCommercialUse"] == page[0]["allowCommercialUse"]
    assert commercial_uses("{Image,RentCivit}") == ["Image", "RentCivit"] and commercial_uses("{}") == []


def test_video_previews_carry_duration_audio_and_size(api: httpx.Client, store_of: Any) -> None:
    # Row "video previews": getImagesForModelVersion sends the stored metadata (videoMetadataSchema).
    version_id, duration = one(
        store_of, "SELECT p.model_version_id, i.duration FROM images i JOIN posts p ON p.id = i.post_id"
                  " JOIN model_versions v ON v.id = p.model_version_id JOIN models m ON m.id = v.model_id"
                  " WHERE i.type = 'video' AND i.scanned_at IS NOT NULL AND i.nsfw_level = 1 AND p.user_id = m.user_id"
                  " AND p.published_at IS NOT NULL AND p.blocked = 0 AND p.scanned = 1 AND p.availability = 'Public'"
                  " AND v.status = 'Published' AND v.availability = 'Public' AND m.status = 'Published'"
                  " AND m.mode IS NULL AND m.nsfw = 0 AND i.duration IS NOT NULL ORDER BY i.id LIMIT 1")
    images = api.get(f"/api/v1/model-versions/{version_id}").json()["images"]
    videos = [i for i in images if i["type"] == "video"]
    assert videos
    for video in videos:
        meta = video["metadata"]
        assert {"hash", "width", "height", "duration", "audio", "size"} <= set(meta)
        assert meta["audio"] is False and isinstance(meta["size"], int) and meta["size"] > 0
        assert isinstance(meta["duration"], (int, float)) and meta["duration"] > 0
    assert duration in {v["metadata"]["duration"] for v in videos}
    for still in (i for i in images if i["type"] == "image"):
        assert set(still["metadata"]) == {"hash", "width", "height"}


def test_images_page_mode_carries_current_page_and_page_size(api: httpx.Client) -> None:
    # Row "/images page mode": usingPaging = page && !cursor (images/index.ts).
    paged = api.get("/api/v1/images?limit=3&page=2").json()["metadata"]
    assert (paged["currentPage"], paged["pageSize"]) == (2, 3)
    cursor = api.get("/api/v1/images?limit=3").json()["metadata"]
    assert "currentPage" not in cursor and "pageSize" not in cursor
    following = api.get(f"/api/v1/images?limit=3&page=2&cursor={cursor['nextCursor']}").json()["metadata"]
    assert "currentPage" not in following  # a cursor wins


def test_version_by_id_scanned_at_is_written_without_a_zone(api: httpx.Client, store_of: Any,
                                                            landmarks: dict[str, Any]) -> None:
    # Row "timestamps": model-versions/[id].ts reads its files with json_build_object; by-hash through Prisma.
    version_id = landmarks["public_version"]["id"]
    files = api.get(f"/api/v1/model-versions/{version_id}").json()["files"]
    assert files
    for file in files:
        assert "overrideName" not in file
        stored = one(store_of, "SELECT scanned_at FROM model_files WHERE id = ?", file["id"])[0]
        if stored is None:
            assert file["scannedAt"] is None
        else:
            assert NO_ZONE.fullmatch(file["scannedAt"]) and file["scannedAt"] == timestamp_without_zone(stored)
    sha = one(store_of, "SELECT h.hash FROM file_hashes h WHERE h.kind = 'SHA256' AND h.file_id = ?", files[0]["id"])[0]
    by_hash = api.get(f"/api/v1/model-versions/by-hash/{sha}").json()["files"]
    assert all("overrideName" in f and (f["scannedAt"] is None or Z.fullmatch(f["scannedAt"])) for f in by_hash)


def test_timestamp_without_zone_is_postgres_json() -> None:
    assert timestamp_without_zone("2025-07-28T16:12:12.347Z") == "2025-07-28T16:12:12.347"
    assert timestamp_without_zone("2025-07-28T16:12:12.340Z") == "2025-07-28T16:12:12.34"
    assert timestamp_without_zone("2025-07-28T16:12:12.000Z") == "2025-07-28T16:12:12"
    assert timestamp_without_zone(None) is None


def test_image_meta_names_its_resources_civitai_resources(api: httpx.Client) -> None:
    # Row "image meta": the platform's key is civitaiResources (image.schema.ts); the spec's platformResources.
    items = api.get("/api/v1/images?nsfw=X&limit=200&withMeta=true").json()["items"]
    metas = [i["meta"] for i in items if isinstance(i["meta"], dict)]
    with_resources = [m for m in metas if "civitaiResources" in m]
    assert with_resources and not any("platformResources" in m for m in metas)
    for meta in with_resources:
        assert all(isinstance(r["modelVersionId"], int) for r in meta["civitaiResources"])
