"""The feed of the block's own requests that the host page's trace panel polls."""

from __future__ import annotations

import asyncio
import threading

from async_run import run  # type: ignore[import-not-found]

from blockkit.dev.requests_feed import RequestFeed


def request(seq: int, ok: bool = True) -> dict[str, object]:
    return {"seq": seq, "kind": "call", "via": "http", "type": "GET /api/v1/blocks/models", "ok": ok,
            "status": 200 if ok else 400}


def test_a_poll_gets_what_came_after_the_seq_it_names() -> None:
    feed = RequestFeed()
    assert feed.last_seq == 0
    for seq in (3, 5, 9):
        feed.add(request(seq))
    assert feed.last_seq == 9
    assert [e["seq"] for e in run(feed.wait_after(4))] == [5, 9]
    assert feed.after(9) == []


def test_only_the_newest_are_kept() -> None:
    feed = RequestFeed(keep=2)
    for seq in (1, 2, 3):
        feed.add(request(seq))
    assert [e["seq"] for e in feed.after(0)] == [2, 3]


def test_a_waiting_poll_is_answered_by_a_request_recorded_on_another_thread() -> None:
    feed = RequestFeed()
    feed.add(request(1))

    async def poll() -> list[dict[str, object]]:
        waiting = asyncio.ensure_future(feed.wait_after(1, timeout=3600))
        await asyncio.sleep(0)  # the poll is waiting now
        # As the emulator records it: from its own thread and event loop.
        recorder = threading.Thread(target=feed.add, args=(request(2, ok=False),))
        recorder.start()
        recorder.join()
        await _turns()
        assert waiting.done(), "the poll was not woken by the request"
        return waiting.result()

    assert [(e["seq"], e["ok"]) for e in run(poll())] == [(2, False)]


def test_closing_answers_every_open_poll_and_later_ones_at_once() -> None:
    feed = RequestFeed()

    async def polls() -> list[list[dict[str, object]]]:
        waiting = [asyncio.ensure_future(feed.wait_after(0, timeout=3600)) for _ in range(3)]
        await asyncio.sleep(0)
        feed.close()
        await _turns()
        assert all(w.done() for w in waiting), "an open poll was left waiting"
        later = asyncio.ensure_future(feed.wait_after(0, timeout=3600))
        await _turns()
        assert later.done(), "a poll after the close waited"
        return [*(w.result() for w in waiting), later.result()]

    assert run(polls()) == [[], [], [], []]
    assert feed.closed


def test_a_poll_with_nothing_new_answers_empty_after_its_wait() -> None:
    feed = RequestFeed()
    feed.add(request(1))
    assert run(feed.wait_after(1, timeout=0.01)) == []


async def _turns(count: int = 20) -> None:
    """A few turns of the event loop (no waiting on the clock): what a woken poll needs to finish."""
    for _ in range(count):
        await asyncio.sleep(0)
