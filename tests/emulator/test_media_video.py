"""The seed's videos are served: a real H.264 MP4 at the catalogue's size and duration (video/mp4).

The structure is checked by walking the ISO BMFF boxes here; a headless Chromium plays the
file the live emulator serves (the decoder a block's ``<video>`` uses).
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

import pytest

from blockkit.emulator.orchestration import imaging, video


def boxes(data: bytes, start: int = 0, end: int | None = None) -> dict[str, tuple[int, int]]:
    """{type: (payload start, payload end)} of the boxes in data[start:end] (first of each type)."""
    end = len(data) if end is None else end
    found: dict[str, tuple[int, int]] = {}
    at = start
    while at < end:
        size, kind = struct.unpack(">I4s", data[at:at + 8])
        assert size >= 8 and at + size <= end, f"box {kind!r} overruns its parent"
        found.setdefault(kind.decode("latin-1"), (at + 8, at + size))
        at += size
    assert at == end, "boxes do not tile their parent"
    return found


def path_to(data: bytes, *kinds: str) -> tuple[int, int]:
    span = (0, len(data))
    for kind in kinds:
        span = boxes(data, *span)[kind]
    return span


def facts(data: bytes) -> dict[str, Any]:
    top = boxes(data)
    assert list(top)[:2] == ["ftyp", "moov"] and "mdat" in top, "moov comes before mdat (plays while loading)"
    start, _ = path_to(data, "moov", "mvhd")
    timescale, duration = struct.unpack(">II", data[start + 12:start + 20])
    start, _ = path_to(data, "moov", "trak", "tkhd")
    width, height = (v >> 16 for v in struct.unpack(">II", data[start + 76:start + 84]))
    stbl = path_to(data, "moov", "trak", "mdia", "minf", "stbl")
    stsd, _ = boxes(data, *stbl)["stsd"]
    entry = stsd + 8
    assert data[entry + 4:entry + 8] == b"avc1"
    avcc = boxes(data, entry + 8 + 78, entry + struct.unpack(">I", data[entry:entry + 4])[0])["avcC"]
    sps_length = struct.unpack(">H", data[avcc[0] + 6:avcc[0] + 8])[0]
    sps = data[avcc[0] + 8:avcc[0] + 8 + sps_length]
    stsz, _ = boxes(data, *stbl)["stsz"]
    count = struct.unpack(">I", data[stsz + 8:stsz + 12])[0]
    sizes = struct.unpack(f">{count}I", data[stsz + 12:stsz + 12 + 4 * count])
    stco, _ = boxes(data, *stbl)["stco"]
    offset = struct.unpack(">I", data[stco + 8:stco + 12])[0]
    mdat = top["mdat"]
    assert offset == mdat[0] and sum(sizes) == mdat[1] - mdat[0], "the chunk offset and sizes cover mdat exactly"
    first = data[offset + 4:offset + 4 + struct.unpack(">I", data[offset:offset + 4])[0]]
    return {"seconds": duration / timescale, "size": (width, height), "profile": sps[1], "samples": count,
            "first_nal": first[0] & 0x1F}


@pytest.mark.parametrize("size, seconds", [((1280, 720), 7.3), ((512, 512), 2.0), ((202, 100), 0.5)])
def test_the_mp4_is_whole_and_says_its_size_and_duration(size: tuple[int, int], seconds: float) -> None:
    data = video.mp4(imaging.procedural("v", *size), seconds)
    got = facts(data)
    assert got["size"] == size and got["seconds"] == pytest.approx(seconds)
    assert got["profile"] == 66 and got["first_nal"] == 5   # Baseline; the first sample is an IDR picture
    assert got["samples"] == max(1, -(-round(seconds * 1000) // 1000))  # one frame a second
    assert data == video.mp4(imaging.procedural("v", *size), seconds)  # deterministic


def test_emulation_prevention_escapes_start_codes() -> None:
    nal = video._nal(3, 5, bytes([0, 0, 0, 0, 0, 1, 0, 0, 3, 7]))
    assert b"\x00\x00\x00" not in nal and b"\x00\x00\x01" not in nal
    assert nal[1:] == bytes([0, 0, 3, 0, 0, 3, 0, 1, 0, 0, 3, 3, 7])


def test_a_seeded_video_is_served_as_the_catalogue_describes_it(media: Any) -> None:
    (url, width, height, seconds), = media.sql("SELECT url, width, height, duration FROM images"
                                               " WHERE type = 'video' AND url LIKE '/__emulator/media/%'"
                                               " ORDER BY id LIMIT 1")
    answer = media.raw.get(url)
    assert answer.status_code == 200 and answer.headers["content-type"] == "video/mp4"
    got = facts(answer.content)
    assert got["size"] == (width, height) and got["seconds"] == pytest.approx(seconds, abs=0.001)
    assert media.raw.get(url).content == answer.content
    assert media.raw.get("/__emulator/media/not-seeded.mp4").headers["content-type"] == "video/mp4"


@pytest.mark.browser
def test_chromium_plays_a_seeded_video(browser: Any, emulator: dict[str, Any], landmarks: dict[str, Any]) -> None:
    from blockkit.emulator.store import Store

    store = Store.open(Path(emulator["data"]), check=False)
    try:
        with store.read() as db:
            url, width, height, seconds = db.execute("SELECT url, width, height, duration FROM images WHERE id = ?",
                                                     (landmarks["video_without_thumbnail"]["id"],)).fetchone()
    finally:
        store.close()
    base = emulator["base_url"]
    page = browser.new_page()
    try:
        page.goto(f"{base}/api/v1/enums")
        played = page.evaluate("""async (src) => {
          const v = document.createElement('video'); v.muted = true; v.src = src; document.body.appendChild(v);
          const r = await new Promise(res => { v.onloadeddata = () => res('ok');
            v.onerror = () => res('error ' + (v.error && v.error.message)); setTimeout(() => res('timeout'), 10000); });
          return [r, v.videoWidth, v.videoHeight, v.duration];
        }""", base + url)
    finally:
        page.close()
    assert played[0] == "ok", played
    assert played[1:] == [width, height, pytest.approx(seconds, abs=0.01)]


def test_a_video_is_encoded_once_then_read_from_the_cache(tmp_path: Path) -> None:
    # A second read comes from <data>/media-cache, not a second encode.
    from blockkit.emulator.orchestration import media
    from blockkit.emulator.store import Store

    with Store.open(tmp_path) as store:
        first = media.read_media(store, "clip.mp4")
        assert first is not None and first[1] == "video/mp4"
        assert (tmp_path / "media-cache" / "clip.mp4").read_bytes() == first[0]
        assert facts(first[0])["seconds"] == pytest.approx(media.DEFAULT_VIDEO_SECONDS)
