"""The seed's videos are served: a real H.264 MP4 at the catalogue's size and duration (video/mp4).

The file is encoded by PyAV (the ``video`` extra). Its structure is checked by walking the ISO
BMFF boxes here, its picture by decoding it back; a headless Chromium plays the file the live
emulator serves (the decoder a block's ``<video>`` uses). Without PyAV the route answers 501
naming the extra, and the emulator says so once at startup.
"""

from __future__ import annotations

import os
import signal
import struct
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
from emulator_helpers import store_row, stored_media

from blockkit.emulator.services.orchestration import imaging, video

ROOT = Path(__file__).resolve().parents[2]
H264_PROFILES = {66: "Baseline", 77: "Main", 100: "High"}  # what every browser's H.264 decoder plays


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
    order = [kind for kind in top if kind in ("ftyp", "moov", "mdat")]
    assert order == ["ftyp", "moov", "mdat"], "moov comes before mdat (plays while loading)"
    start, _ = path_to(data, "moov", "mvhd")
    timescale, duration = struct.unpack(">II", data[start + 12:start + 20])
    start, _ = path_to(data, "moov", "trak", "tkhd")
    width, height = (v >> 16 for v in struct.unpack(">II", data[start + 76:start + 84]))
    stbl = boxes(data, *path_to(data, "moov", "trak", "mdia", "minf", "stbl"))
    entry = stbl["stsd"][0] + 8
    assert data[entry + 4:entry + 8] == b"avc1", "the sample entry is H.264"
    avcc, _ = boxes(data, entry + 8 + 78, entry + struct.unpack(">I", data[entry:entry + 4])[0])["avcC"]
    stsz = stbl["stsz"][0]
    constant, count = struct.unpack(">II", data[stsz + 4:stsz + 12])
    sizes = [constant] * count if constant else list(struct.unpack(f">{count}I", data[stsz + 12:stsz + 12 + 4 * count]))
    stco = stbl["stco"][0]
    chunks = struct.unpack(">I", data[stco + 4:stco + 8])[0]
    offsets = struct.unpack(f">{chunks}I", data[stco + 8:stco + 8 + 4 * chunks])
    mdat = top["mdat"]
    assert offsets[0] == mdat[0] and sum(sizes) == mdat[1] - mdat[0], "the samples fill mdat exactly"
    stts = stbl["stts"][0]
    runs = struct.unpack(">I", data[stts + 4:stts + 8])[0]
    pairs = struct.unpack(f">{2 * runs}I", data[stts + 8:stts + 8 + 8 * runs])
    ticks = [delta for count, delta in zip(pairs[::2], pairs[1::2]) for _ in range(count)]
    mdhd, _ = path_to(data, "moov", "trak", "mdia", "mdhd")
    track_timescale = struct.unpack(">I", data[mdhd + 12:mdhd + 16])[0]
    stss = stbl["stss"][0] if "stss" in stbl else None  # absent: every sample is a sync sample
    first_sync = struct.unpack(">I", data[stss + 8:stss + 12])[0] if stss is not None else 1
    return {"seconds": duration / timescale, "size": (width, height), "profile": data[avcc + 1], "samples": count,
            "first_sync": first_sync, "sample_ticks": ticks, "timescale": track_timescale}


def decoded_first_frame(path: Path) -> Any:
    import av

    with av.open(str(path)) as container:
        return next(container.decode(video=0)).to_image()


def mean_difference(a: Any, b: Any) -> float:
    from PIL import ImageChops, ImageStat

    return sum(ImageStat.Stat(ImageChops.difference(a.convert("RGB"), b.convert("RGB"))).mean) / 3


@pytest.mark.parametrize("size, seconds", [((1280, 720), 7.3), ((512, 512), 2.0), ((202, 100), 0.5),
                                           ((848, 480), 11.99)])
def test_the_mp4_is_whole_and_says_its_size_and_duration(tmp_path: Path, size: tuple[int, int],
                                                         seconds: float) -> None:
    picture = imaging.procedural("v", *size)
    video.write_mp4(picture, seconds, tmp_path / "a.mp4")
    data = (tmp_path / "a.mp4").read_bytes()
    got = facts(data)
    assert got["size"] == size and got["seconds"] == pytest.approx(seconds, abs=0.001)
    assert got["profile"] in H264_PROFILES and got["first_sync"] == 1  # the first sample is a keyframe
    assert got["samples"] == len(video.frame_durations(seconds)) == max(1, -(-round(seconds * 1000) // 1000))
    assert got["sample_ticks"] == [round(d * got["timescale"] / 1000) for d in video.frame_durations(seconds)]
    video.write_mp4(picture, seconds, tmp_path / "b.mp4")
    assert (tmp_path / "b.mp4").read_bytes() == data  # deterministic
    # It shows the path's picture (lossy: close, not equal), not some other one.
    shown = decoded_first_frame(tmp_path / "a.mp4")
    assert shown.size == size
    assert mean_difference(shown, picture) < 8  # measured 1.9-5.8 (0-255 scale); another path: ~62
    assert mean_difference(shown, imaging.procedural("other", *size)) > 4 * mean_difference(shown, picture)


def test_frames_come_one_a_second_and_the_last_takes_the_remainder() -> None:
    assert video.frame_durations(7.3) == [1000] * 7 + [300]
    assert video.frame_durations(2.0) == [1000, 1000]
    assert video.frame_durations(0.0001) == [1]
    long = video.frame_durations(600.0)  # the cap: 60 frames, not 600
    assert len(long) == 60 and sum(long) == 600_000 and set(long) == {10_000}
    assert sum(video.frame_durations(61.5)) == 61_500 and len(video.frame_durations(61.5)) == 60


def test_an_odd_size_is_rounded_up_to_even(tmp_path: Path) -> None:
    video.write_mp4(imaging.procedural("odd", 201, 99), 1.0, tmp_path / "odd.mp4")
    assert facts((tmp_path / "odd.mp4").read_bytes())["size"] == (202, 100)


def test_a_seeded_video_is_served_as_the_catalogue_describes_it(media: Any) -> None:
    (url, width, height, seconds), = media.sql("SELECT url, width, height, duration FROM images"
                                               " WHERE type = 'video' AND url LIKE '/__emulator/media/%'"
                                               " ORDER BY id LIMIT 1")
    answer = media.raw.get(url)
    assert answer.status_code == 200 and answer.headers["content-type"] == "video/mp4"
    got = facts(answer.content)
    assert got["size"] == (width, height) and got["seconds"] == pytest.approx(seconds, abs=0.001)
    assert media.raw.get(url).content == answer.content
    assert media.raw.get("/__emulator/media/not-seeded.mp4").status_code == 404  # only stored paths are drawn


@pytest.mark.browser
def test_chromium_plays_a_seeded_video(browser: Any, emulator: dict[str, Any], landmarks: dict[str, Any]) -> None:
    url, width, height, seconds = store_row(emulator, "SELECT url, width, height, duration FROM images WHERE id = ?",
                                            landmarks["video_without_thumbnail"]["id"])
    base = emulator["base_url"]
    page = browser.new_page()
    try:
        page.goto(f"{base}/api/v1/enums")
        played = page.evaluate("""async (src) => {
          const v = document.createElement('video'); v.muted = true; v.src = src; document.body.appendChild(v);
          const r = await new Promise(res => { v.onloadeddata = () => res('ok');
            v.onerror = () => res('error ' + (v.error && v.error.message)); setTimeout(() => res('timeout'), 10000); });
          if (r !== 'ok') return [r];
          // Play to the end: every frame decodes and the clock reaches the catalogue's duration.
          const end = await new Promise(res => { v.onended = () => res('ended');
            v.onerror = () => res('error ' + (v.error && v.error.message)); setTimeout(() => res('timeout'), 20000);
            v.playbackRate = 4; v.play().catch(e => res('play ' + e)); });
          return [end, v.videoWidth, v.videoHeight, v.duration, v.currentTime];
        }""", base + url)
    finally:
        page.close()
    assert played[0] == "ended", played
    assert played[1:] == [width, height, pytest.approx(seconds, abs=0.01), pytest.approx(seconds, abs=0.05)]


def test_a_video_is_encoded_once_then_read_from_the_cache(tmp_path: Path) -> None:
    # A second read comes from <data>/media-cache, not a second encode.
    from blockkit.emulator.services.orchestration import media
    from blockkit.emulator.store import Store

    with Store.open(tmp_path) as store:
        stored_media(store, "clip.mp4")
        first = media.read_media(store, "clip.mp4")
        assert first is not None and first[1] == "video/mp4"
        assert (tmp_path / "media-cache" / "clip.mp4").read_bytes() == first[0]
        assert facts(first[0])["seconds"] == pytest.approx(media.DEFAULT_VIDEO_SECONDS)
        assert sorted(p.name for p in (tmp_path / "media-cache").iterdir()) == ["clip.mp4"]  # no temporary left


# --- without the video extra ------------------------------------------------------------------

@pytest.fixture
def without_pyav(monkeypatch: pytest.MonkeyPatch) -> None:
    """As if PyAV were not installed: ``import av`` fails and find_spec finds nothing."""
    monkeypatch.setitem(sys.modules, "av", None)


@pytest.mark.usefixtures("without_pyav")
def test_without_pyav_a_video_answers_501_naming_the_extra(media: Any) -> None:
    from blockkit.emulator.services.orchestration import media as media_module

    url = stored_media(media.store, f"no-extra-{uuid.uuid4().hex}.mp4")
    answer = media.raw.get(url)
    assert answer.status_code == 501 and answer.headers["content-type"] == "application/json"
    assert answer.json() == {"error": "seeded videos (.mp4) need PyAV: pip install 'blockkit[video]'"}
    cache = media.store.path.parent / "media-cache"
    assert not list(cache.glob("no-extra-*")), "nothing (not even a temporary) is left in the cache"
    assert media_module.resolve_local(_urls(), media.store, media.base_url + url) is None
    # Images need no extra.
    assert media.raw.get(stored_media(media.store, "no-extra.jpeg")).status_code == 200


def test_a_pyav_without_libx264_answers_501_saying_so(media: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # A PyAV built against a system FFmpeg may lack libx264; Chromium will not play the alternatives in .mp4.
    import av

    monkeypatch.setattr(av, "codecs_available", set(av.codecs_available) - {"libx264"})
    answer = media.raw.get(stored_media(media.store, f"no-x264-{uuid.uuid4().hex}.mp4"))
    assert answer.status_code == 501
    assert answer.json() == {"error": "seeded videos (.mp4) need an H.264 encoder: PyAV's FFmpeg has no libx264"}


def test_without_pyav_a_cached_video_is_still_served(media: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    url = stored_media(media.store, f"cached-{uuid.uuid4().hex}.mp4")
    made = media.raw.get(url)
    assert made.status_code == 200
    monkeypatch.setitem(sys.modules, "av", None)
    again = media.raw.get(url)
    assert again.status_code == 200 and again.content == made.content


NOTE = "seeded videos (.mp4) need PyAV: pip install 'blockkit[video]' (until then they answer 501)"


@pytest.fixture
def env_without_pyav(tmp_path: Path) -> dict[str, str]:
    """A subprocess environment in which ``import av`` fails (a sitecustomize hides it)."""
    from emulator_helpers import subprocess_env

    hide = tmp_path / "hide-pyav"
    hide.mkdir()
    (hide / "sitecustomize.py").write_text('import sys\nsys.modules["av"] = None\n')
    env = subprocess_env()
    env["PYTHONPATH"] = os.pathsep.join((str(hide), env["PYTHONPATH"]))
    return env


def test_without_pyav_emulator_start_says_so_once_and_videos_answer_501(start_emulator: Any,
                                                                        env_without_pyav: dict[str, str]) -> None:
    from emulator_helpers import get_json

    started = start_emulator(env=env_without_pyav)
    (url,) = store_row(started.info, "SELECT url FROM images WHERE type = 'video' ORDER BY id LIMIT 1")
    answers = [get_json(f"{started.info['base_url']}{url}") for _ in range(2)]
    code, _out, err = started.stop()
    assert answers == [(501, {"error": "seeded videos (.mp4) need PyAV: pip install 'blockkit[video]'"})] * 2
    assert code == 0 and [line for line in err.splitlines() if "PyAV" in line] == [f"blockkit emulator: {NOTE}"], err


def test_without_pyav_a_start_that_serves_no_video_says_nothing_of_it(start_emulator: Any,
                                                                      env_without_pyav: dict[str, str]) -> None:
    # Issue 37: the note printed at every start, exec and dev, for users who never touch video.
    from emulator_helpers import get_json

    started = start_emulator(env=env_without_pyav)
    (url,) = store_row(started.info, "SELECT url FROM images WHERE type = 'image' ORDER BY id LIMIT 1")
    status, _body = get_json(f"{started.info['base_url']}/api/v1/enums")
    code, _out, err = started.stop()
    assert status == 200 and url.startswith("/__emulator/media/")
    assert code == 0 and "PyAV" not in err, err


def test_without_pyav_emulator_exec_says_nothing_of_it(tmp_path: Path, env_without_pyav: dict[str, str]) -> None:
    # Issue 37 row 8, for exec: a command that reads the catalogue and no video hears no PyAV note.
    script = ("import json, os, urllib.request;"
              "print(json.load(urllib.request.urlopen(os.environ['BLOCKKIT_BASE_URL'] + '/api/v1/enums'))['ModelType'][0])")
    result = subprocess.run([sys.executable, "-m", "blockkit", "emulator", "exec", "--data", str(tmp_path / "data"),
                             "--", sys.executable, "-c", script], capture_output=True, text=True, env=env_without_pyav,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip(), result.stdout
    assert "PyAV" not in result.stderr and "PyAV" not in result.stdout, result.stderr


def test_without_pyav_blockkit_dev_says_so_once_when_a_video_is_asked_for(tmp_path: Path,
                                                                           env_without_pyav: dict[str, str]) -> None:
    from emulator_helpers import get_json

    block = tmp_path / "block"
    block.mkdir()
    (block / "block.manifest.json").write_bytes((ROOT / "examples" / "hello-block" / "block.manifest.json").read_bytes())
    (block / "index.html").write_text("<!doctype html><title>hello</title>\n")
    env = dict(env_without_pyav, BLOCKKIT_DEV_DATA=str(tmp_path / "platform"))
    process = subprocess.Popen([sys.executable, "-m", "blockkit", "dev", str(block), "--trace",
                                str(tmp_path / "trace.jsonl")], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, env=env)
    try:
        assert process.stdout is not None
        lines = [process.stdout.readline() for _ in range(9)]  # up to "Ctrl-C stops."
        assert lines[-1].strip() == "Ctrl-C stops.", lines
        (platform_line,) = [line for line in lines if line.lstrip().startswith("platform")]
        base = platform_line.split()[1].removesuffix("/api/v1")
        (url,) = store_row({"data": str(tmp_path / "platform")},
                           "SELECT url FROM images WHERE type = 'video' ORDER BY id LIMIT 1")
        answers = [get_json(f"{base}{url}")[0] for _ in range(2)]
    finally:
        process.send_signal(signal.SIGINT)
        _out, err = process.communicate(timeout=30)
    assert answers == [501, 501]
    assert [line for line in err.splitlines() if "PyAV" in line] == [f"note: {NOTE}"], err


def test_without_pyav_blockkit_dev_says_nothing_of_it_at_start(tmp_path: Path,
                                                                env_without_pyav: dict[str, str]) -> None:
    block = tmp_path / "block"
    block.mkdir()
    (block / "block.manifest.json").write_bytes((ROOT / "examples" / "hello-block" / "block.manifest.json").read_bytes())
    (block / "index.html").write_text("<!doctype html><title>hello</title>\n")
    env = dict(env_without_pyav, BLOCKKIT_DEV_DATA=str(tmp_path / "platform"))
    process = subprocess.Popen([sys.executable, "-m", "blockkit", "dev", str(block), "--trace",
                                str(tmp_path / "trace.jsonl")], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, env=env)
    try:
        assert process.stdout is not None
        lines = [process.stdout.readline() for _ in range(9)]
        assert lines[-1].strip() == "Ctrl-C stops.", lines
    finally:
        process.send_signal(signal.SIGINT)
        _out, err = process.communicate(timeout=30)
    assert "PyAV" not in err, err


def test_the_test_install_has_pyav_so_there_is_no_startup_note() -> None:
    # The test extra pulls in the video extra: CI runs every test above, never the 501 path by accident.
    assert video.available() and video.missing_note() is None


def _urls() -> Any:
    from blockkit.emulator.state import Urls

    return Urls("http://testserver", "http://auth.invalid", "http://orch.invalid")


def test_pyav_is_imported_only_when_a_video_is_drawn(tmp_path: Path) -> None:
    # The startup check is a find_spec and images need no PyAV: ~100 MB of FFmpeg stays unloaded.
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "import blockkit.commands.dev, blockkit.emulator.http.server, blockkit.emulator.runtime\n"
        "from blockkit.emulator.services.orchestration import media, video\n"
        "from blockkit.emulator.store import Store\n"
        "video.missing_note()\n"
        f"store = Store.open(Path({str(tmp_path)!r}))\n"
        "with store.write() as db:\n"  # only stored paths are drawn
        "    db.execute(\"INSERT INTO users (id, username, created_at) VALUES (1, 'u', '2025-01-01')\")\n"
        "    for kind, name in (('image', 'still.jpeg'), ('video', 'moving.mp4')):\n"
        "        db.execute('INSERT INTO images (user_id, type, url, created_at) VALUES (1, ?, ?, ?)',\n"
        "                   (kind, '/__emulator/media/' + name, '2025-01-01'))\n"
        "media.read_media(store, 'still.jpeg')\n"
        "print('av' in sys.modules)\n"
        "media.read_media(store, 'moving.mp4')\n"
        "print('av' in sys.modules)\n"
        "store.close()\n"
    )
    from emulator_helpers import subprocess_env

    result = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True, env=subprocess_env(),
                            timeout=60)
    assert result.stdout.split() == ["False", "True"], result.stdout + result.stderr
