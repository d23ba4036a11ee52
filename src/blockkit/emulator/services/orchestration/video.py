"""The seed's videos as real H.264 MP4s, encoded by PyAV (FFmpeg's libx264 and its mp4 muxer).

The seed points video images at ``/__emulator/media/<uid>.mp4`` with a width, a height and a
duration; a browser's ``<video>`` must play what is served there. PyAV's wheel bundles FFmpeg
with libx264, so the file is what real tools make, not a hand-written bitstream. PyAV is about
35 MB, so it is the optional ``video`` extra (``pip install 'blockkit[video]'``, also pulled in
by ``test``) and is imported only when a video is first drawn: blockkit's light installs (the
pre-commit hook, validate/lint) never load it. Without it :func:`write_mp4` raises
:class:`VideoUnavailable` and the media route answers 501 naming the extra.

What is encoded, and why:

=====================  ==========================================================================
picture                the path's procedural picture (one still), at the catalogue's width and
                       height rounded up to even (4:2:0 needs even sides)
frames                 one a second, at most 60 (longer videos space them out; the picture is
                       still); time base 1/1000 s; the last frame lasts the remainder, so the
                       track is exactly the catalogue's duration to the millisecond
codec                  libx264, ``yuv420p``, no B-frames (no reordering, no ``ctts``), preset
                       ``veryfast``, CRF 23: a 12 s 720p video is ~80 KB, encoded in ~0.15 s
determinism            ``threads=1`` (x264's output otherwise follows the thread count, so the
                       machine's cores) and ``+bitexact``: the same request, the same bytes
container              MP4 with ``moov`` before ``mdat`` (``+faststart``: plays while loading);
                       faststart re-reads the file, so the muxer writes to a path, not memory
=====================  ==========================================================================
"""

from __future__ import annotations

import importlib.util
import math
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from PIL import Image

EXTRA_HINT = "pip install 'blockkit[video]'"
MISSING = f"seeded videos (.mp4) need PyAV: {EXTRA_HINT}"
NO_ENCODER = "seeded videos (.mp4) need an H.264 encoder: PyAV's FFmpeg has no libx264"
ENCODER = "libx264"
TICKS = 1000          # time base: milliseconds
FRAME_TICKS = 1000    # one frame a second: a still picture needs no more
MAX_FRAMES = 60       # past a minute, frames are spaced out (each 720p frame costs ~10 ms to encode)
ENCODER_OPTIONS = {"preset": "veryfast", "crf": "23", "bf": "0", "threads": "1"}
MUXER_OPTIONS = {"movflags": "+faststart", "fflags": "+bitexact"}


class VideoUnavailable(Exception):
    """PyAV (the ``video`` extra) or its H.264 encoder is missing; the message says what to install."""


def available() -> bool:
    """Whether PyAV is installed (a cheap look-up: it does not import it)."""
    try:
        return importlib.util.find_spec("av") is not None
    except (ImportError, ValueError):
        return False


def missing_note() -> str | None:
    """The line for a missing ``video`` extra, or None when PyAV is there."""
    return None if available() else note_line(MISSING)


def note_line(message: str) -> str:
    """What the emulator tells whoever runs it, once, when a video is first asked for and cannot be drawn."""
    return f"{message} (until then they answer 501)"


def frame_durations(seconds: float) -> list[int]:
    """Each frame's duration in milliseconds: one a second (fewer past a minute), the last the remainder."""
    total = max(1, round(seconds * TICKS))
    step = max(FRAME_TICKS, math.ceil(total / MAX_FRAMES))
    frames = max(1, math.ceil(total / step))
    return [step] * (frames - 1) + [total - step * (frames - 1)]


def write_mp4(image: Image.Image, seconds: float, path: Path) -> None:
    """Write an MP4 showing ``image`` (its size, rounded up to even) for ``seconds`` to ``path``."""
    try:
        import av
    except ImportError:
        raise VideoUnavailable(MISSING) from None
    if ENCODER not in av.codecs_available:
        raise VideoUnavailable(NO_ENCODER)
    width, height = image.width + image.width % 2, image.height + image.height % 2
    picture = av.VideoFrame.from_image(image.convert("RGB").resize((width, height))).reformat(format="yuv420p")
    time_base = Fraction(1, TICKS)
    with av.open(str(path), "w", format="mp4", options=MUXER_OPTIONS) as out:
        stream = out.add_stream(ENCODER, rate=1, options=ENCODER_OPTIONS)
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        stream.time_base = stream.codec_context.time_base = time_base
        durations: dict[int, int] = {}  # pts -> duration
        for duration in frame_durations(seconds):
            start = sum(durations.values())
            durations[start] = duration
            picture.pts, picture.time_base = start, time_base
            _mux(out, stream.encode(picture), durations)
        _mux(out, stream.encode(None), durations)


def _mux(out: Any, packets: list[Any], durations: dict[int, int]) -> None:
    # libx264 stamps each packet with the nominal frame rate's duration; the muxer takes the
    # track's length from the last packet, so each packet gets its frame's own duration.
    for packet in packets:
        packet.duration = durations[packet.pts]
        out.mux(packet)
