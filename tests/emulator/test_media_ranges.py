"""Media and blobs answer byte ranges and HEAD, as the platform's CDN does.

A ``<video>`` fetches its file in ranges and seeks by asking for the bytes at the new time:
a server that answers every request with the whole file gives a video that plays but cannot
seek. Checked over HTTP on both routes (206 with Content-Range, suffix and open ranges, 416
past the end, a Range ignored when If-Range names an old ETag, HEAD without a body) and in
headless Chromium, which seeks a seeded video.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from emulator_helpers import store_row, stored_media
from orch_env import b64, make, png

UPSCALE = "/v2/consumer/recipes/imageUpscaler"


def _whole(client: Any, url: str) -> bytes:
    answer = client.get(url)
    assert answer.status_code == 200 and answer.headers["accept-ranges"] == "bytes", answer.headers
    assert int(answer.headers["content-length"]) == len(answer.content)
    return answer.content


def check_ranges(client: Any, url: str, media_type: str) -> None:
    whole = _whole(client, url)
    size = len(whole)
    assert size > 200
    cases = {"bytes=0-99": (0, 99), "bytes=100-": (100, size - 1), "bytes=-50": (size - 50, size - 1),
             f"bytes=10-{size + 1000}": (10, size - 1)}
    for header, (first, last) in cases.items():
        part = client.get(url, headers={"Range": header})
        assert part.status_code == 206, (header, part.status_code)
        assert part.headers["content-range"] == f"bytes {first}-{last}/{size}", header
        assert part.content == whole[first:last + 1], header
        assert part.headers["content-type"].startswith(media_type)
    past = client.get(url, headers={"Range": f"bytes={size}-"})
    assert past.status_code == 416 and past.headers["content-range"] == f"bytes */{size}"
    head = client.head(url)
    assert head.status_code == 200 and head.content == b"" and int(head.headers["content-length"]) == size
    etag = head.headers["etag"]
    # If-Range with the current validator: the range; with another one: the whole file.
    assert client.get(url, headers={"Range": "bytes=0-9", "If-Range": etag}).status_code == 206
    stale = client.get(url, headers={"Range": "bytes=0-9", "If-Range": '"not-this-one"'})
    assert stale.status_code == 200 and stale.content == whole


@pytest.mark.parametrize("kind", ["image", "video", "audio"])
def test_seed_media_answer_ranges_and_head(media: Any, kind: str) -> None:
    if kind == "audio":
        url, media_type = stored_media(media.store, "sounds/range-check.mp3"), "audio/wav"
    else:
        (url,), = media.sql(f"SELECT url FROM images WHERE type = '{kind}' AND url LIKE '/__emulator/media/%'"
                            " ORDER BY id LIMIT 1")
        media_type = "video/mp4" if kind == "video" else "image/"
    check_ranges(media.raw, url, media_type)


def test_a_range_asked_first_draws_the_file_then_answers_the_range(media: Any) -> None:
    url = stored_media(media.store, "range-first/never-drawn.png")
    part = media.raw.get(url, headers={"Range": "bytes=0-7"})
    assert part.status_code == 206 and part.content == b"\x89PNG\r\n\x1a\n"
    assert re.fullmatch(r"bytes 0-7/\d+", part.headers["content-range"])


def test_a_path_that_is_not_media_is_still_404_with_a_range(media: Any) -> None:
    answer = media.raw.get("/__emulator/media/../etc/passwd.png", headers={"Range": "bytes=0-9"})
    assert answer.status_code == 404


def test_blobs_answer_ranges_and_head(tmp_path: Path) -> None:
    o = make(tmp_path)
    made = o.orch.post(UPSCALE, headers=o.auth(), json={"image": b64(png(64, 64, split=True))})
    assert made.status_code == 200, made.text
    url = made.json()["blob"]["url"].removeprefix("http://testserver:2")
    check_ranges(o.orch, url, "image/png")
    missing = url.rsplit("/", 1)[0] + "/00000000-0000-0000-0000-000000000000.png"
    assert o.orch.get(missing, headers={"Range": "bytes=0-9"}).status_code == 404


@pytest.mark.browser
def test_chromium_seeks_a_seeded_video(browser: Any, emulator: dict[str, Any], landmarks: dict[str, Any]) -> None:
    url, seconds = store_row(emulator, "SELECT url, duration FROM images WHERE id = ?",
                             landmarks["video_without_thumbnail"]["id"])
    base = emulator["base_url"]
    page = browser.new_page()
    try:
        page.goto(f"{base}/api/v1/enums")
        seen = page.evaluate("""async ([src, target]) => {
          const v = document.createElement('video'); v.muted = true; v.preload = 'auto'; v.src = src;
          document.body.appendChild(v);
          const loaded = await new Promise(res => { v.onloadedmetadata = () => res('ok');
            v.onerror = () => res('error ' + (v.error && v.error.message)); setTimeout(() => res('timeout'), 10000); });
          if (loaded !== 'ok') return [loaded];
          const seekable = [v.seekable.length, v.seekable.length ? v.seekable.end(0) : 0];
          const seeked = await new Promise(res => { v.onseeked = () => res('seeked');
            setTimeout(() => res('timeout'), 10000); v.currentTime = target; });
          return [seeked, seekable, v.currentTime];
        }""", [base + url, seconds / 2])
    finally:
        page.close()
    assert seen[0] == "seeked", seen
    # The whole duration is seekable (with whole-file answers Chromium could seek only to 0: [1, 0]).
    assert seen[1] == [1, pytest.approx(seconds, abs=0.05)], seen
    assert seen[2] == pytest.approx(seconds / 2, abs=0.05)
