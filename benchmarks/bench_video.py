"""Seeded-video figures: encode the seed's video sizes through PyAV (libx264) into the media cache.

Run: PYTHONPATH=src python3 benchmarks/bench_video.py
Prints, for each of the seed's video sizes, the time to draw and encode a 2 s and a 12 s video
(the seed's range) and the file size, then the 600 s cap at 1280 x 720 and a cached read.
Timings depend on the machine's load. Needs the video extra (pip install 'blockkit[video]').
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from blockkit.emulator.services.orchestration import imaging, video
from blockkit.emulator.services.orchestration.media import read_media
from blockkit.emulator.store import Store

SEED_SIZES = ((720, 1280), (1280, 720), (512, 512), (848, 480))


def encode(tmp: Path, size: tuple[int, int], seconds: float) -> tuple[float, int]:
    started = time.perf_counter()
    picture = imaging.procedural(f"bench-{size}-{seconds}", *size)
    target = tmp / f"{size[0]}x{size[1]}-{seconds}.mp4"
    video.write_mp4(picture, seconds, target)
    return (time.perf_counter() - started) * 1000, target.stat().st_size


def main() -> None:
    if not video.available():
        sys.exit(video.MISSING)
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        encode(tmp, (64, 64), 1.0)  # loads PyAV and FFmpeg once, outside the figures
        print(f"{'size':>10}  {'seconds':>7}  {'ms':>7}  {'bytes':>9}")
        runs = [(size, seconds) for size in SEED_SIZES for seconds in (2.0, 12.0)] + [((1280, 720), 600.0)]
        for size, seconds in runs:
            ms, length = encode(tmp, size, seconds)
            print(f"{size[0]:>4} x {size[1]:<4}  {seconds:>7.1f}  {ms:>7.0f}  {length:>9}")
        with Store.open(tmp / "data") as store:
            read_media(store, "cached.mp4")
            started = time.perf_counter()
            read_media(store, "cached.mp4")
            print(f"cached read of a 2 s 512 x 512 video: {(time.perf_counter() - started) * 1000:.2f} ms")


if __name__ == "__main__":
    main()
