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
