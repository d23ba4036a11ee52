"""Timing helpers shared by the benchmark scripts (imported from the benchmarks folder)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


def best(call: Callable[[Any], object], items: list[Any], inner: int) -> float:
    """Microseconds of CPU time per item, the best of ``inner`` passes."""
    times = []
    for _ in range(inner):
        start = time.process_time()
        for item in items:
            call(item)
        times.append((time.process_time() - start) / len(items) * 1e6)
    return min(times)
