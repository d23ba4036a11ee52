"""Orchestration figures: upscale a 512x512 image 2x through the imageUpscaler service (target <= 300 ms).

Run: PYTHONPATH=src python3 benchmarks/bench_orchestration.py
Prints the median and max of 10 runs of (decode + Lanczos resample + PNG encode + blob store), and
the resample alone. Timings depend on the machine's load.
"""

from __future__ import annotations

import base64
import io
import statistics
import sys
import tempfile
import time
from pathlib import Path

from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from blockkit.emulator.store.clock import Clock
from blockkit.emulator.services.orchestration import imaging, upscaler
from blockkit.emulator.state import Urls
from blockkit.emulator.store import Store

TARGET_MS = 300


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        store = Store.open(Path(tmp))
        with store.write() as db:
            db.execute("INSERT INTO users (id, username, created_at) VALUES (1, 'bench', '2025-01-01T00:00:00.000Z')")
        clock = Clock(store)
        urls = Urls("http://127.0.0.1:1", "http://127.0.0.1:2", "http://127.0.0.1:3")
        source = imaging.procedural("bench", 512, 512)
        buffer = io.BytesIO()
        source.save(buffer, "PNG")
        payload = {"image": base64.b64encode(buffer.getvalue()).decode(), "numberOfRepeats": 1}
        full, resample = [], []
        for _ in range(10):
            started = time.perf_counter()
            out = upscaler.invoke(store, clock, urls, 1, payload)
            full.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            imaging.upscale(source, 1)
            resample.append((time.perf_counter() - started) * 1000)
        assert (out["blob"]["width"], out["blob"]["height"]) == (1024, 1024)
        store.close()
    median = statistics.median(full)
    print(f"upscale 512x512 -> 1024x1024 (service: decode, Lanczos, PNG, store): median {median:.1f} ms,"
          f" max {max(full):.1f} ms (target <= {TARGET_MS} ms: {'met' if median <= TARGET_MS else 'MISSED'})")
    print(f"Lanczos resample alone: median {statistics.median(resample):.1f} ms")
    print(f"Pillow {Image.__version__}")


if __name__ == "__main__":
    main()
