"""The catalogue's edge cache: repeats of marked anonymous answers skip the stack, never stale."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from blockkit.emulator.http.catalogue.edge import EdgeCache


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[TestClient, EdgeCache, object]]:
    from blockkit.emulator.store.clock import Clock
    from blockkit.emulator.options import EmulatorOptions
    from blockkit.emulator.seed import ensure_seeded
    from blockkit.emulator.http.server import build_apps
    from blockkit.emulator.store import Store

    store = Store.open(tmp_path / "data")
    for _line in ensure_seeded(store, 1, "small"):
        pass
    catalogue, _auth, _orch = build_apps(store, Clock(store), EmulatorOptions())
    client = TestClient(catalogue, base_url="http://127.0.0.1:7100")
    client.get("/api/v1/enums")  # builds the middleware stack
    stack = catalogue.middleware_stack
    while not isinstance(stack, EdgeCache):
        stack = stack.app
    yield client, stack, store
    store.close()


def _first_model(client: TestClient) -> int:
    return int(client.get("/api/v1/models?limit=1").json()["items"][0]["id"])


def test_a_repeat_is_answered_by_the_edge_with_the_same_bytes(served) -> None:
    client, edge, _store = served
    model_id = _first_model(client)
    first = client.get(f"/api/v1/models/{model_id}")
    before = edge.hits
    again = client.get(f"/api/v1/models/{model_id}")
    assert edge.hits == before + 1
    assert again.status_code == 200 and again.content == first.content
    assert again.headers["cache-control"] == first.headers["cache-control"]


def test_a_write_is_seen_by_the_next_request(served) -> None:
    client, edge, store = served
    model_id = _first_model(client)
    client.get(f"/api/v1/models/{model_id}")
    client.get(f"/api/v1/models/{model_id}")
    with store.write() as db:
        db.execute("UPDATE models SET name = 'Renamed by the test' WHERE id = ?", (model_id,))
    hits = edge.hits
    answer = client.get(f"/api/v1/models/{model_id}")
    assert edge.hits == hits, "an answer of older data was sent"
    assert answer.json()["name"] == "Renamed by the test"


def test_what_it_keeps_depends_on_host_and_region(served) -> None:
    client, edge, _store = served
    model_id = _first_model(client)
    url = f"/api/v1/models/{model_id}"
    client.get(url)
    other_host = client.get(url, headers={"Host": "localhost:7100"})
    assert "http://localhost:7100/" in other_host.text and "127.0.0.1:7100" not in other_host.text
    hits = edge.hits
    client.get(url, headers={"X-Emulator-Region": "restricted"})
    assert edge.hits == hits, "a restricted region's answer came from an unrestricted request's"


def test_a_repeated_region_header_is_kept_as_the_clamp_read_it(served) -> None:
    """R08 (reliability review 2): ``restricted`` then ``eu`` was clamped but kept under ``eu``, so the
    next plain ``eu`` request got the clamped page (0 NSFW models instead of 59)."""
    client, _edge, _store = served
    url = "/api/v1/models?limit=100&nsfw=true&probe=dup"

    def nsfw(answer) -> int:
        return sum(1 for item in answer.json()["items"] if item["nsfw"])

    twin = nsfw(client.get(url.replace("dup", "twin"), headers={"X-Emulator-Region": "eu"}))
    assert twin > 0
    both = client.get(url, headers=[("X-Emulator-Region", "restricted"), ("X-Emulator-Region", "eu")])
    assert nsfw(both) == 0
    assert nsfw(client.get(url, headers={"X-Emulator-Region": "eu"})) == twin
    assert nsfw(client.get(url, headers=[("X-Emulator-Region", "eu"), ("X-Emulator-Region", "restricted")])) == 0


def test_unmarked_and_authorised_answers_go_through(served) -> None:
    client, edge, _store = served
    model_id = _first_model(client)
    for _ in range(3):
        client.get("/api/v1/images?limit=5")  # the feed is never cached
        client.get(f"/api/v1/models/{model_id}", headers={"Authorization": "Bearer not-a-token"})
    hits = edge.hits
    client.get("/api/v1/images?limit=5")
    client.get(f"/api/v1/models/{model_id}", headers={"Authorization": "Bearer not-a-token"})
    assert edge.hits == hits


def test_padded_queries_do_not_grow_the_caches(served) -> None:
    # Security review 2, S07: GET /models?limit=1&ids=999999&pad=<60,000 hex> (any page can send
    # it) kept a 60 KB key for a 26-byte answer in both caches; only the bodies were counted.
    import secrets

    from blockkit.emulator.http.catalogue import fragments

    client, edge, store = served
    cache, _generation = fragments.cache_for(store)
    client.get("/api/v1/models?limit=1&ids=999999")
    edge_before, fragments_before = edge.bytes_held, cache.bytes_held
    for _ in range(30):
        answer = client.get(f"/api/v1/models?limit=1&ids=999999&pad={secrets.token_hex(30_000)}",
                            headers={"Origin": "https://evil.example"})
        assert answer.status_code == 200
    assert edge.bytes_held - edge_before < 30 * 1024
    assert cache.bytes_held - fragments_before < 30 * 1024
    # what is kept counts its key: a short query's entry holds more than its body
    body = client.get("/api/v1/models?limit=1&ids=999998").content
    assert cache.bytes_held - fragments_before > len(body)


def test_cache_key_sizes_count() -> None:
    from blockkit.emulator.http.catalogue import fragments

    assert fragments.key_bytes(("models-page", b"x" * 1000, True, "http://a")) > 1000
    cache = fragments.FragmentCache.__new__(fragments.FragmentCache)
    import threading

    cache._lock, cache._data, cache._sizes, cache._bytes, cache.generation = threading.Lock(), {}, {}, 0, 1
    cache.put(("k", b"q" * 10_000), b"{}", 1)
    assert len(cache) == 0  # a key this long is not kept
    cache.put(("k", b"q" * 100), b"{}", 1)
    assert cache.bytes_held >= 102
