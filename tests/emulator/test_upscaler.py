"""The imageUpscaler recipe: real Lanczos upscales, whatif, ephemeral, every error row; media serving."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
from emulator_helpers import stored_media
from orch_env import FREE, MEMBER, POOR, b64, image_of, make, png, problem

from blockkit.emulator.services import buzz
from blockkit.emulator.services.orchestration import imaging

URL = "/v2/consumer/recipes/imageUpscaler"


@pytest.fixture
def o(tmp_path: Path):
    return make(tmp_path)


@pytest.mark.parametrize("repeats, side", [(1, 64), (2, 128), (3, 256)])
def test_upscale_doubles_per_repeat_and_keeps_pixels(o, repeats: int, side: int) -> None:
    r = o.orch.post(URL, headers=o.auth(), json={"image": b64(png(32, 32, split=True)), "numberOfRepeats": repeats})
    assert r.status_code == 200, r.text
    blob = r.json()["blob"]
    assert blob["type"] == "image" and blob["available"] is True and (blob["width"], blob["height"]) == (side, side)
    got = o.orch.get(blob["url"].removeprefix("http://testserver:2"))
    image = image_of(got.content).convert("RGB")
    assert image.size == (side, side)
    assert image.getpixel((1, side // 2)) == (200, 30, 60)          # left half: the input's red
    assert image.getpixel((side - 2, side // 2)) == (0, 0, 255)     # right half: blue
    assert (o.store.path.parent / "blobs" / f"{blob['id']}.png").is_file()


def test_default_repeat_data_url_and_charge(o) -> None:
    before = buzz.balance(o.store, o.clock, FREE)
    data_url = "data:image/png;base64," + b64(png(512, 512))
    blob = o.orch.post(URL, headers=o.auth(), json={"image": data_url}).json()["blob"]
    assert (blob["width"], blob["height"]) == (1024, 1024)
    after = buzz.balance(o.store, o.clock, FREE)
    assert sum(before.values()) - sum(after.values()) == imaging.price(1024, 1024) == 5


def test_whatif_prices_without_running(o) -> None:
    before = buzz.balance(o.store, o.clock, FREE)
    r = o.orch.post(URL + "?whatif=true", headers=o.auth(), json={"image": b64(png(100, 50)), "numberOfRepeats": 3})
    body = r.json()
    assert r.status_code == 200 and body["blob"]["available"] is False
    assert (body["blob"]["width"], body["blob"]["height"]) == (800, 400)
    assert body["cost"]["total"] == imaging.price(800, 400) == 2
    assert buzz.balance(o.store, o.clock, FREE) == before
    assert not (o.store.path.parent / "blobs").exists()


def test_ephemeral_keeps_nothing(o) -> None:
    r = o.orch.post(URL + "?ephemeral=true", headers=o.auth(), json={"image": b64(png(16, 16, split=True))})
    blob = r.json()["blob"]
    assert blob["url"].startswith("data:image/png;base64,")
    image = image_of(base64.b64decode(blob["url"].split(",", 1)[1])).convert("RGB")
    assert image.size == (32, 32) and image.getpixel((0, 16)) == (200, 30, 60)
    assert not (o.store.path.parent / "blobs").exists()
    with o.store.read() as db:
        assert db.execute("SELECT count(*) FROM blobs").fetchone()[0] == 0


def test_input_from_emulator_media_and_blob(o) -> None:
    stored_media(o.store, "x1.webp")
    media = o.orch.post(URL, headers=o.auth(), json={"image": "http://testserver/__emulator/media/x1.webp"})
    assert media.status_code == 200 and media.json()["blob"]["width"] == 1024
    again = o.orch.post(URL, headers=o.auth(), json={"image": media.json()["blob"]["url"]})
    assert again.status_code == 200 and again.json()["blob"]["width"] == 2048


@pytest.mark.parametrize("body", [
    {"image": "http://example.com/cat.png"},                      # no network
    {"image": "http://testserver/api/v1/models"},                 # our origin, not media
    {"image": "not base64 !!"},
    {"image": b64(b"this is not an image")},
    {"image": ""}, {"image": 5}, {},
    {"image": b64(png(8, 8)), "numberOfRepeats": 0},
    {"image": b64(png(8, 8)), "numberOfRepeats": 4},
    {"image": b64(png(8, 8)), "numberOfRepeats": 1.5},
    {"image": b64(png(8, 8)), "numberOfRepeats": True},
    {"image": b64(png(8, 8)), "model": "esrgan"},
    {"image": b64(png(8, 8)), "extra": 1},
    {"image": b64(png(2049, 8))},                                  # input over 2048
    {"image": b64(png(1100, 8)), "numberOfRepeats": 3},            # output over 8192
])
def test_upscaler_400(o, body: dict) -> None:
    problem(o.orch.post(URL, headers=o.auth(), json=body), 400)


def test_upscaler_400_truncated_and_bad_flag(o) -> None:
    problem(o.orch.post(URL, headers=o.auth(), json={"image": b64(png(64, 64)[:60])}), 400)
    problem(o.orch.post(URL + "?whatif=maybe", headers=o.auth(), json={"image": b64(png(8, 8))}), 400)


@pytest.mark.parametrize("headers", [{}, {"Authorization": "Bearer nope"}])
def test_upscaler_401(o, headers: dict[str, str]) -> None:
    problem(o.orch.post(URL, headers=headers, json={"image": b64(png(8, 8))}), 401)


def test_upscaler_403_when_short_of_buzz(o) -> None:
    # The orchestrator answers 403 when the payer is short (the platform maps that status to
    # its insufficient-funds error); never 402.
    with o.store.write() as db:
        buzz.open_accounts(db, POOR, o.clock.iso())
        db.execute("UPDATE buzz_accounts SET balance = 0 WHERE user_id = ?", (POOR,))
    answer = o.orch.post(URL, headers=o.auth(POOR), json={"image": b64(png(8, 8))})
    assert answer.status_code == 403 and isinstance(answer.json(), str) and "Buzz" in answer.json()


def test_mature_upscale_draws_yellow(o) -> None:
    before = buzz.balance(o.store, o.clock, MEMBER)
    o.orch.post(URL + "?allowMatureContent=true", headers=o.auth(MEMBER), json={"image": b64(png(512, 512))})
    assert buzz.balance(o.store, o.clock, MEMBER)["yellow"] == before["yellow"] - 5


@pytest.mark.parametrize("path, size, ctype", [("abc.jpeg", (512, 512), "image/jpeg"),
                                                ("avatars/u1.png", (128, 128), "image/png"),
                                                ("t1.webp", (512, 512), "image/webp")])
def test_media_served_deterministic(o, path: str, size: tuple[int, int], ctype: str) -> None:
    stored_media(o.store, path)
    first = o.api.get(f"/__emulator/media/{path}")
    assert first.status_code == 200 and first.headers["content-type"] == ctype
    assert image_of(first.content).size == size
    assert o.api.get(f"/__emulator/media/{path}").content == first.content
    assert imaging.procedural(path, 64, 64).tobytes() != imaging.procedural(path + "x", 64, 64).tobytes()


def test_media_refuses_bad_paths(o) -> None:
    with o.store.write() as db:
        cols = {r[1] for r in db.execute("PRAGMA table_info(images)")}
        assert {"url", "width", "height"} <= cols
    assert o.api.get("/__emulator/media/../etc/passwd").status_code == 404
    assert o.api.get("/__emulator/media/a.gif").status_code == 404
    assert o.api.get("/__emulator/media/a.mp3").status_code == 404  # not a stored path
    stored_media(o.store, "a.mp3")
    assert o.api.get("/__emulator/media/a.mp3").headers["content-type"] == "audio/wav"
