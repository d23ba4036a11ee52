"""/api/v1/model-versions: by id, by hash (GET, POST, POST ids) and the minimal shape."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from inproc import bearer, client, seed_into
from inproc import mint as mint_in

from blockkit.emulator.store.clock import Clock

HASH_KINDS = ("AutoV1", "AutoV2", "AutoV3", "SHA256", "CRC32", "BLAKE3")


def sql(store_of: Any, query: str, *args: Any) -> list[tuple[Any, ...]]:
    with store_of.read() as db:
        return [tuple(r) for r in db.execute(query, args)]


def stranger_to(store: Any, version_id: int) -> int:
    """An active user who neither owns the version's model, moderates, nor bought its early access."""
    return int(sql(store, "SELECT u.id FROM users u WHERE u.id > 0 AND u.deleted_at IS NULL AND u.is_moderator = 0"
                   " AND u.id NOT IN (SELECT user_id FROM early_access_purchases WHERE version_id = ?)"
                   " AND u.id <> (SELECT m.user_id FROM model_versions v JOIN models m ON m.id = v.model_id"
                   " WHERE v.id = ?) ORDER BY u.id LIMIT 1", version_id, version_id)[0][0])


# --- GET /model-versions/{id} ------------------------------------------------------------------------

def test_a_public_version(api: httpx.Client, landmarks: dict[str, Any], store_of: Any, base_url: str) -> None:
    version = landmarks["public_version"]
    body = api.get(f"/api/v1/model-versions/{version['id']}").json()
    assert body["id"] == version["id"] and body["modelId"] == version["model_id"]
    ecosystem, air_type = sql(store_of, "SELECT air_ecosystem, air_type FROM model_versions WHERE id = ?",
                              version["id"])[0]
    assert body["air"] == f"urn:air:{ecosystem}:{air_type}:civitai:{version['model_id']}@{version['id']}"
    assert body["downloadUrl"] == f"{base_url}/api/download/models/{version['id']}"
    public = {r[0] for r in sql(store_of, "SELECT id FROM model_files WHERE version_id = ? AND visibility ="
                                " 'Public'", version["id"])}
    assert {f["id"] for f in body["files"]} == public
    assert "unlocked" not in (body["earlyAccessConfig"] or {})


# Review row "/model-versions/{id} id validation": z.preprocess(Number, z.number()); 0 is 'Missing
# modelVersionId'; negative, fractional or out-of-range numbers find nothing ({error: 'Model not found'}).
@pytest.mark.parametrize("value,status,message", [
    ("999999", 404, "Model not found"), ("-3", 404, "Model not found"), ("1.5", 404, "Model not found"),
    ("2147483648", 404, "Model not found"), ("0", 400, "Missing modelVersionId"), ("abc", 400, None)])
def test_version_id_errors(api: httpx.Client, value: str, status: int, message: str | None) -> None:
    response = api.get(f"/api/v1/model-versions/{value}")
    assert response.status_code == status and isinstance(response.json()["error"], str)
    if message is not None:
        assert response.json() == {"error": message}


def test_unpublished_is_404_but_moderators_see_it(api: httpx.Client, landmarks: dict[str, Any], mint: Any) -> None:
    version = landmarks["unpublished_version"]["id"]
    assert api.get(f"/api/v1/model-versions/{version}").status_code == 404
    member = bearer(mint(landmarks["member"]["id"]))
    assert api.get(f"/api/v1/model-versions/{version}", headers=member).status_code == 404
    moderator = api.get(f"/api/v1/model-versions/{version}", headers=bearer(mint(landmarks["moderator"]["id"])))
    assert moderator.status_code == 200 and moderator.json()["status"] != "Published"
    assert moderator.headers["cache-control"] == "private, no-store"


def test_versions_of_a_draft_model_are_404(api: httpx.Client, landmarks: dict[str, Any]) -> None:
    for version in landmarks["draft_model"]["version_ids"]:
        assert api.get(f"/api/v1/model-versions/{version}").status_code == 404


def test_private_training_result_only_for_its_owner(api: httpx.Client, landmarks: dict[str, Any], mint: Any) -> None:
    epoch = landmarks["private_epoch_version"]
    assert api.get(f"/api/v1/model-versions/{epoch['id']}").status_code == 404
    other = bearer(mint(landmarks["member"]["id"]))
    assert api.get(f"/api/v1/model-versions/{epoch['id']}", headers=other).status_code == 404
    owner = api.get(f"/api/v1/model-versions/{epoch['id']}", headers=bearer(mint(epoch["owner_id"])))
    assert owner.status_code == 200 and owner.json()["availability"] == "Private"
    assert owner.json()["publishedAt"] is None


def test_a_token_shows_the_early_access_the_caller_unlocked(api: httpx.Client, landmarks: dict[str, Any],
                                                            mint: Any, store_of: Any) -> None:
    purchase = landmarks["early_access_purchase"]
    url = f"/api/v1/model-versions/{purchase['version_id']}"
    anonymous = api.get(url).json()["earlyAccessConfig"]
    assert anonymous and "unlocked" not in anonymous and "unlockedAt" not in anonymous
    buyer = api.get(url, headers=bearer(mint(purchase["user_id"]))).json()["earlyAccessConfig"]
    assert buyer["unlocked"] is True and buyer["unlockedAt"].endswith("Z")
    stranger = api.get(url, headers=bearer(mint(stranger_to(store_of, purchase["version_id"])))).json()[
        "earlyAccessConfig"]
    assert stranger["unlocked"] is False and "unlockedAt" not in stranger
    assert {k: v for k, v in buyer.items() if k not in ("unlocked", "unlockedAt")} == anonymous


def test_a_bad_token_reads_as_anonymous(api: httpx.Client, landmarks: dict[str, Any]) -> None:
    url = f"/api/v1/model-versions/{landmarks['early_access_purchase']['version_id']}"
    assert api.get(url, headers={"Authorization": "Bearer nope"}).json() == api.get(url).json()


def test_images_follow_the_callers_browsing_level(api: httpx.Client, landmarks: dict[str, Any], mint: Any) -> None:
    url = f"/api/v1/model-versions/{landmarks['big_post']['model_version_id']}"
    anonymous = api.get(url).json()["images"]
    # Anonymous callers get every rated level but Blocked (allBrowsingLevelsFlag, [id].ts), at most 10
    # (imagesPerVersion: 10), without ids (review rows "/model-versions/{id} images").
    assert {1, 2, 4, 8, 16} <= {i["nsfwLevel"] for i in anonymous} and len(anonymous) == 10
    assert all("id" not in i and "meta" in i and "hasMeta" in i for i in anonymous)
    member = bearer(mint(landmarks["member"]["id"]))  # browsing level 31
    levels = {i["nsfwLevel"] for i in api.get(url, headers=member).json()["images"]}
    assert {1, 2, 4, 8, 16} <= levels and 32 not in levels
    assert len(api.get(url, headers=member).json()["images"]) <= 10
    # A restricted region: this model is flagged NSFW, so its versions are not shown at all.
    assert api.get(url, headers={**member, "X-Emulator-Region": "restricted"}).status_code == 404


def test_moderated_models_versions(api: httpx.Client, landmarks: dict[str, Any]) -> None:
    archived = api.get(f"/api/v1/model-versions/{landmarks['archived_model']['version_ids'][0]}").json()
    assert archived["model"]["mode"] == "Archived" and archived["files"] == []
    taken = api.get(f"/api/v1/model-versions/{landmarks['taken_down_model']['version_ids'][0]}").json()
    assert taken["model"]["mode"] == "TakenDown" and taken["files"] == [] and taken["images"] == []
    healthy = api.get(f"/api/v1/model-versions/{landmarks['public_version']['id']}").json()
    assert "mode" not in healthy["model"] and healthy["files"]


# --- by hash ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", HASH_KINDS)
@pytest.mark.parametrize("case", [str.upper, str.lower])
def test_every_hash_kind_any_case(api: httpx.Client, landmarks: dict[str, Any], kind: str, case: Any) -> None:
    known = landmarks["known_hashes"]
    body = api.get(f"/api/v1/model-versions/by-hash/{case(known[kind])}").json()
    assert body["id"] == known["version_id"]
    assert any(f["hashes"].get(kind) == known[kind] for f in body["files"])


def test_by_hash_misses_and_bad_hashes(api: httpx.Client, store_of: Any, landmarks: dict[str, Any]) -> None:
    assert api.get("/api/v1/model-versions/by-hash/" + "0" * 64).json() == {"error": "Model not found"}
    # Any string is a lookup ([hash].ts:10): what is not a hash finds nothing.
    xyz = api.get("/api/v1/model-versions/by-hash/xyz")
    assert xyz.status_code == 404 and xyz.json() == {"error": "Model not found"}
    unpublished = sql(store_of, "SELECT h.hash FROM file_hashes h JOIN model_files f ON f.id = h.file_id"
                      " WHERE f.version_id = ? AND h.kind = 'SHA256'", landmarks["unpublished_version"]["id"])
    assert unpublished
    assert api.get(f"/api/v1/model-versions/by-hash/{unpublished[0][0]}").status_code == 404


def sha256_of(store_of: Any, version_ids: list[int]) -> dict[int, str]:
    marks = ",".join("?" * len(version_ids))
    return {r[0]: r[1] for r in sql(store_of, f"SELECT f.version_id, h.hash FROM file_hashes h JOIN model_files f"
                                    f" ON f.id = h.file_id WHERE h.kind = 'SHA256' AND f.version_id IN ({marks})"
                                    f" ORDER BY f.id", *version_ids)}


def test_post_by_hash_drops_unmatched_and_keeps_order(api: httpx.Client, landmarks: dict[str, Any],
                                                      store_of: Any) -> None:
    a, b = landmarks["public_version"]["id"], landmarks["early_access_version"]["id"]
    hashes = sha256_of(store_of, [a, b])
    body = [hashes[b].lower(), "0" * 64, hashes[a], hashes[b]]
    found = api.post("/api/v1/model-versions/by-hash", json=body).json()
    assert [v["id"] for v in found] == [b, a]
    assert api.post("/api/v1/model-versions/by-hash", json=[]).json() == []


@pytest.mark.parametrize("body,needle", [
    (None, "Missing body"),
    (b"{}", "array"),
    (json.dumps(["0" * 64, "0" * 63]).encode(), "[1]"),
    (json.dumps(["0" * 64, 5, "x"]).encode(), "[1]: expected a string"),
    (json.dumps(["g" * 64]).encode(), "[0]: not a SHA256"),
    (json.dumps(["0" * 64] * 101).encode(), "at most 100"),
])
def test_post_by_hash_400_names_the_first_failure(api: httpx.Client, body: bytes | None, needle: str) -> None:
    response = api.post("/api/v1/model-versions/by-hash", content=body,
                        headers={"content-type": "application/json"})
    assert response.status_code == 400 and needle in response.json()["error"]


def test_post_by_hash_ids(api: httpx.Client, landmarks: dict[str, Any], store_of: Any) -> None:
    a = landmarks["public_version"]["id"]
    sha = sha256_of(store_of, [a])[a]
    found = api.post("/api/v1/model-versions/by-hash/ids", json=[sha.lower(), "1" * 64, sha]).json()
    model = sql(store_of, "SELECT model_id FROM model_versions WHERE id = ?", a)[0][0]
    assert found == [{"modelVersionId": a, "modelId": model, "hash": sha.lower()}]  # ids.ts:47-50
    limit = [f"{i:064X}" for i in range(10_000)]
    assert api.post("/api/v1/model-versions/by-hash/ids", json=limit).status_code == 200
    over = api.post("/api/v1/model-versions/by-hash/ids", json=limit + ["0" * 64])
    assert over.status_code == 400 and "10000" in over.json()["error"]


# --- mini ---------------------------------------------------------------------------------------------------

def test_mini_of_a_public_version(api: httpx.Client, landmarks: dict[str, Any], store_of: Any) -> None:
    version = landmarks["public_version"]["id"]
    mini = api.get(f"/api/v1/model-versions/mini/{version}").json()
    name, size = sql(store_of, "SELECT name, size_kb FROM model_files WHERE version_id = ? AND is_primary = 1",
                     version)[0]
    assert mini["fileName"] == name and mini["size"] == size
    assert mini["checkPermission"] is False and "earlyAccessEndsAt" not in mini
    assert mini["canGenerate"] is True and mini["downloadUrls"]


def test_mini_of_an_early_access_version(api: httpx.Client, landmarks: dict[str, Any], mint: Any) -> None:
    early = landmarks["early_access_version"]
    anonymous = api.get(f"/api/v1/model-versions/mini/{early['id']}").json()
    assert anonymous["checkPermission"] is True and anonymous["earlyAccessEndsAt"] == early["ends_at"]
    assert anonymous["canGenerate"] is False and anonymous["freeTrialLimit"] == 10 and anonymous["requireAuth"]
    buyer = landmarks["early_access_purchase"]["user_id"]
    unlocked = api.get(f"/api/v1/model-versions/mini/{early['id']}", headers=bearer(mint(buyer))).json()
    assert unlocked["canGenerate"] is True and unlocked["checkPermission"] is True


def test_mini_epochs(api: httpx.Client, landmarks: dict[str, Any], mint: Any) -> None:
    epoch = landmarks["private_epoch_version"]
    last = api.get(f"/api/v1/model-versions/mini/{epoch['id']}").json()
    assert last["fileName"].endswith(f"-{epoch['last_epoch']:06d}.safetensors")
    assert last["checkPermission"] is True and last["earlyAccessEndsAt"] is None and last["publishedAt"] is None
    assert last["canGenerate"] is False  # Private, and not the caller's
    second = api.get(f"/api/v1/model-versions/mini/{epoch['id']}?epoch=2").json()
    assert second["fileName"].endswith("-000002.safetensors")
    missing = api.get(f"/api/v1/model-versions/mini/{epoch['id']}?epoch={epoch['last_epoch'] + 1}")
    assert missing.status_code == 404 and "epoch" in missing.json()["error"]
    owner = api.get(f"/api/v1/model-versions/mini/{epoch['id']}", headers=bearer(mint(epoch["owner_id"]))).json()
    assert owner["canGenerate"] is True


def test_mini_epoch_is_ignored_by_a_version_without_epochs(api: httpx.Client, landmarks: dict[str, Any]) -> None:
    version = landmarks["public_version"]["id"]
    plain = api.get(f"/api/v1/model-versions/mini/{version}").json()
    assert api.get(f"/api/v1/model-versions/mini/{version}?epoch=3").json() == plain


def test_mini_flags(api: httpx.Client, landmarks: dict[str, Any]) -> None:
    def first_version(key: str) -> dict[str, Any]:
        version = landmarks[key]["version_ids"][-1]  # the oldest: published in every forced model
        response = api.get(f"/api/v1/model-versions/mini/{version}")
        assert response.status_code == 200, (key, response.text)
        return dict(response.json())

    assert first_version("generation_only_model")["additionalResourceCharge"] is True
    assert first_version("require_auth_model")["requireAuth"] is True
    assert first_version("minor_model")["minor"] is True
    assert first_version("sfw_only_model")["sfwOnly"] is True
    assert first_version("archived_model")["canGenerate"] is False  # moderated: not usable


@pytest.mark.parametrize("key,status", [("unpublished_version", 404), ("missing", 404)])
def test_mini_404s(api: httpx.Client, landmarks: dict[str, Any], key: str, status: int) -> None:
    version = landmarks[key]["id"] if key in landmarks else 999_999
    assert api.get(f"/api/v1/model-versions/mini/{version}").status_code == status


@pytest.mark.parametrize("query", ["epoch=0", "epoch=abc", "epoch=", "epoch=1&epoch=2"])
def test_mini_bad_epoch_is_a_400(api: httpx.Client, landmarks: dict[str, Any], query: str) -> None:
    response = api.get(f"/api/v1/model-versions/mini/{landmarks['public_version']['id']}?{query}")
    assert response.status_code == 400 and response.json()["error"].startswith("epoch")


# --- in-process: states the seed does not have, and the clock -------------------------------------------------

@pytest.fixture(scope="module")
def own_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    store = seed_into(Path(tmp_path_factory.mktemp("versions")))
    yield store
    store.close()


def test_mini_without_a_primary_file_is_404(own_store: Any) -> None:
    from blockkit.emulator.seed import landmarks

    version = landmarks(own_store)["public_version"]["id"]
    api = client(own_store)
    assert api.get(f"/api/v1/model-versions/mini/{version}").status_code == 200
    with own_store.write() as db:
        db.execute("UPDATE model_files SET is_primary = 0 WHERE version_id = ?", (version,))
    response = api.get(f"/api/v1/model-versions/mini/{version}")
    assert response.status_code == 404 and response.json() == {"error": "Missing model file"}


def test_early_access_ends_with_the_clock(own_store: Any) -> None:
    from blockkit.emulator.seed import landmarks

    marks = landmarks(own_store)
    early = marks["early_access_version"]["id"]
    clock = Clock(own_store)
    api = client(own_store, clock=clock)
    stranger = bearer(mint_in(own_store, stranger_to(own_store, early), clock=clock, ttl=10 * 365 * 86_400))
    before = api.get(f"/api/v1/model-versions/mini/{early}", headers=stranger).json()
    assert before["checkPermission"] is True and before["canGenerate"] is False
    clock.advance(6 * 365 * 86_400)  # past 2031-01-01
    after = api.get(f"/api/v1/model-versions/mini/{early}", headers=stranger).json()
    assert after["checkPermission"] is False and after["canGenerate"] is True and "earlyAccessEndsAt" not in after


def test_restricted_region_hides_versions_of_nsfw_models(api: httpx.Client, store_of: Any, landmarks: dict[str, Any],
                                                         mint: Any) -> None:
    restricted = {"X-Emulator-Region": "restricted"}
    nsfw_version = sql(store_of, "SELECT v.id FROM model_versions v JOIN models m ON m.id = v.model_id WHERE"
                       " m.nsfw = 1 AND m.status = 'Published' AND m.mode IS NULL AND v.status = 'Published'"
                       " AND v.availability = 'Public' ORDER BY v.id LIMIT 1")[0][0]
    assert api.get(f"/api/v1/model-versions/{nsfw_version}").status_code == 200
    assert api.get(f"/api/v1/model-versions/{nsfw_version}", headers=restricted).status_code == 404
    sha = sha256_of(store_of, [nsfw_version])[nsfw_version]
    assert api.get(f"/api/v1/model-versions/by-hash/{sha}", headers=restricted).status_code == 404
    assert api.post("/api/v1/model-versions/by-hash", json=[sha], headers=restricted).json() == []
    # A model not flagged NSFW may still hold mature images: the region clamps them away.
    safe = sql(store_of, "SELECT v.id FROM model_versions v JOIN models m ON m.id = v.model_id"
               " JOIN posts p ON p.model_version_id = v.id AND p.user_id = m.user_id JOIN images i ON i.post_id = p.id"
               " WHERE m.nsfw = 0 AND m.status = 'Published' AND v.status = 'Published' AND v.availability = 'Public'"
               " AND p.published_at IS NOT NULL AND p.availability = 'Public' AND p.blocked = 0 AND p.scanned = 1"
               " AND i.nsfw_level IN (4, 8, 16) AND i.type = 'image' AND i.scanned_at IS NOT NULL"
               " ORDER BY v.id LIMIT 1")[0][0]
    member = bearer(mint(landmarks["member"]["id"]))
    url = f"/api/v1/model-versions/{safe}"
    assert {i["nsfwLevel"] for i in api.get(url, headers=member).json()["images"]} & {4, 8, 16}
    clamped = {i["nsfwLevel"] for i in api.get(url, headers={**member, **restricted}).json()["images"]}
    assert clamped <= {1, 2}


def test_get_on_the_post_only_by_hash_path_reads_as_a_bad_id(api: httpx.Client) -> None:
    response = api.get("/api/v1/model-versions/by-hash")
    assert response.status_code == 400 and "expected number, received NaN" in response.json()["error"]
    assert api.put("/api/v1/model-versions/by-hash").status_code == 405
