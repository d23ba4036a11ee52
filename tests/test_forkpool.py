"""blockkit.forkpool: results in order, errors carried back, and nothing left running."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from typing import NamedTuple

import pytest

from blockkit.forkpool import WorkerFailed, chunks_of, map_forked

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork and /proc")


def _square(n: int) -> int:
    return n * n


def test_chunks_cover_every_index_once() -> None:
    assert chunks_of(0, 4) == []
    assert chunks_of(10, 4) == [range(0, 4), range(4, 8), range(8, 10)]


@pytest.mark.parametrize(("count", "workers", "chunk"), [(1, 2, 16), (7, 3, 2), (100, 2, 16), (1000, 4, 7), (5, 8, 1)])
@pytest.mark.parametrize("parent_works", [False, True])
def test_results_come_back_in_order(count: int, workers: int, chunk: int, parent_works: bool) -> None:
    assert map_forked(_square, list(range(count)), workers, chunk, parent_works=parent_works) == [
        n * n for n in range(count)]


def test_results_larger_than_a_pipe_come_back_whole() -> None:
    # Each chunk's message is many times a pipe's size; the parent reads while it works on its share.
    items = list(range(24))
    assert map_forked(_big, items, 3, 2, parent_works=True) == [_big(n) for n in items]


def _big(n: int) -> str:
    return str(n) * (3 << 20)


# The test's own process: a worker is any other. Which process takes which chunk is decided as
# they run (each takes the next free one), so the tests below make the parent slow (a worker
# is then sure to take a chunk) and fail only in a worker.
_PARENT = os.getpid()


def _fail_in_a_worker(n: int) -> int:
    if os.getpid() != _PARENT:
        raise ValueError(f"bad item {n}")
    time.sleep(0.02)
    return n


@pytest.mark.parametrize("parent_works", [False, True])
def test_a_worker_exception_is_raised_in_the_parent(parent_works: bool) -> None:
    with pytest.raises(ValueError, match="bad item") as caught:
        map_forked(_fail_in_a_worker, list(range(50)), 2, 4, parent_works=parent_works)
    assert any("in a worker process" in note for note in getattr(caught.value, "__notes__", [""]))


def _die_in_a_worker(n: int) -> int:
    if os.getpid() != _PARENT:
        os._exit(9)
    time.sleep(0.02)
    return n


@pytest.mark.parametrize("parent_works", [False, True])
def test_a_worker_that_dies_is_an_error_not_a_short_list(parent_works: bool) -> None:
    with pytest.raises(WorkerFailed, match="exit status 9"):
        map_forked(_die_in_a_worker, list(range(40)), 2, 2, parent_works=parent_works)


def _pid_slow_in_a_worker(n: int) -> int:
    if os.getpid() != _PARENT:
        time.sleep(0.05)
    return os.getpid()


def test_a_slow_worker_takes_fewer_chunks() -> None:
    # Dealt out in advance, the worker would get half of the 40 chunks (1 s of sleep); taken as
    # each process is free, the parent does nearly all of them while the worker sleeps on one.
    # (No wall-time bound: the count tells the two apart, and a loaded machine only slows both.)
    pids = map_forked(_pid_slow_in_a_worker, list(range(40)), 2, 1, parent_works=True)
    assert len(pids) == 40
    assert pids.count(_PARENT) >= 30, pids


def _pid(n: int) -> int:
    return os.getpid()


@pytest.mark.parametrize("parent_works", [False, True])
def test_more_items_than_chunk_numbers_are_cut_into_larger_chunks(parent_works: bool) -> None:
    from blockkit.forkpool import CHUNKS_MAX

    count = CHUNKS_MAX * 3 + 5  # chunks of 1 asked for: 4 per chunk instead
    assert map_forked(_square, list(range(count)), 3, 1, parent_works=parent_works) == [n * n for n in range(count)]
    pids = map_forked(_pid, list(range(count)), 3, 1, parent_works=parent_works)
    # Whole chunks of 4 go to one process each.
    assert all(len(set(pids[i:i + 4])) == 1 for i in range(0, count, 4))


# The parent is interrupted while every worker is stuck: one asleep mid-item, one blocked
# writing a result far larger than a pipe holds. The interrupt must surface at once and no
# worker may outlive the call.
_INTERRUPTED_RUN = textwrap.dedent("""
    import os, signal, sys, threading, time
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
        map_forked(work, list(range(4)), 2, 1, parent_works=sys.argv[1] == "parent-works")
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


@pytest.mark.parametrize("parent_works", [False, True])
def test_an_interrupted_map_stops_every_worker_at_once(parent_works: bool) -> None:
    # With parent_works, the parent is the one asleep mid-item.
    result = subprocess.run([sys.executable, "-c", _INTERRUPTED_RUN, "parent-works" if parent_works else "forks-only"],
                            capture_output=True, text=True, timeout=60)
    lines = result.stdout.splitlines()
    assert lines[0].startswith("interrupted after "), result.stdout + result.stderr
    assert lines[1] == "children []", result.stdout
    assert result.stderr == ""  # no worker printed a traceback


def test_when_no_worker_can_be_forked_the_work_is_done_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse() -> int:
        raise BlockingIOError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(os, "fork", refuse)
    assert map_forked(_square, list(range(30)), 2, 4) == [n * n for n in range(30)]


class _Pair(NamedTuple):
    left: int
    right: str


class _Text(str):
    pass


def _typed(n: int) -> object:
    # Plain built-ins (marshal), and a NamedTuple, a str subclass and a set beside them (pickle).
    return [n, f"n{n}", (n, None, True), {"k": [1.5]}, _Pair(n, "x"), _Text("t"), frozenset({n})][n % 7]


@pytest.mark.parametrize("chunk", [1, 7])
def test_results_keep_their_types_whichever_way_they_cross(chunk: int) -> None:
    got = map_forked(_typed, list(range(70)), 3, chunk)
    expected = [_typed(n) for n in range(70)]
    assert got == expected
    assert [type(value) for value in got] == [type(value) for value in expected]
