"""blockkit.forkpool: results in order, errors carried back, and nothing left running."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from blockkit.forkpool import WorkerFailed, chunks_of, map_forked

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork and /proc")


def _square(n: int) -> int:
    return n * n


def test_chunks_cover_every_index_once() -> None:
    assert chunks_of(0, 4) == []
    assert chunks_of(10, 4) == [range(0, 4), range(4, 8), range(8, 10)]


@pytest.mark.parametrize(("count", "workers", "chunk"), [(1, 2, 16), (7, 3, 2), (100, 2, 16), (1000, 4, 7), (5, 8, 1)])
def test_results_come_back_in_order(count: int, workers: int, chunk: int) -> None:
    assert map_forked(_square, list(range(count)), workers, chunk) == [n * n for n in range(count)]


def _fail_on_seven(n: int) -> int:
    if n == 7:
        raise ValueError(f"bad item {n}")
    return n


def test_a_worker_exception_is_raised_in_the_parent() -> None:
    with pytest.raises(ValueError, match="bad item 7") as caught:
        map_forked(_fail_on_seven, list(range(50)), 2, 4)
    assert any("in a worker process" in note for note in getattr(caught.value, "__notes__", [""]))


def _die_on_three(n: int) -> int:
    import os

    if n == 3:
        os._exit(9)
    return n


def test_a_worker_that_dies_is_an_error_not_a_short_list() -> None:
    with pytest.raises(WorkerFailed, match="exit status 9"):
        map_forked(_die_on_three, list(range(40)), 2, 2)


# The parent is interrupted while every worker is stuck: one asleep mid-item, one blocked
# writing a result far larger than a pipe holds. The interrupt must surface at once and no
# worker may outlive the call.
_INTERRUPTED_RUN = textwrap.dedent("""
    import os, signal, threading, time
    from blockkit.forkpool import map_forked

    def work(n):
        if n == 0:
            time.sleep(90)  # longer than the timeout below; a leftover worker ends by itself
        return "x" * (8 << 20)

    def interrupt():
        time.sleep(1.0)
        os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=interrupt, daemon=True).start()
    started = time.monotonic()
    try:
        map_forked(work, list(range(4)), 2, 1)
    except KeyboardInterrupt:
        print("interrupted after", round(time.monotonic() - started, 2))
    def parent_of(pid):
        try:
            with open(f"/proc/{pid}/stat") as stat:
                return int(stat.read().rsplit(")", 1)[1].split()[1])
        except OSError:  # gone meanwhile
            return None

    print("children", [p for p in os.listdir("/proc") if p.isdigit() and parent_of(p) == os.getpid()])
""")


def test_an_interrupted_map_stops_every_worker_at_once() -> None:
    result = subprocess.run([sys.executable, "-c", _INTERRUPTED_RUN], capture_output=True, text=True, timeout=60)
    lines = result.stdout.splitlines()
    assert lines[0].startswith("interrupted after "), result.stdout + result.stderr
    assert lines[1] == "children []", result.stdout
    assert result.stderr == ""  # no worker printed a traceback


def test_when_no_worker_can_be_forked_the_work_is_done_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    import multiprocessing.process

    def refuse(self: object) -> None:
        raise BlockingIOError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(multiprocessing.process.BaseProcess, "start", refuse)
    assert map_forked(_square, list(range(30)), 2, 4) == [n * n for n in range(30)]
