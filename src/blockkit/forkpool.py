"""A map over forked workers that Ctrl-C stops at once.

``multiprocessing.Pool`` can hang when a run is interrupted: a SIGINT that reaches a
freshly forked worker before its initializer ignores it kills that worker (with a
traceback), sometimes while it holds the task queue's lock; the pool forks a
replacement behind the parent's back, the replacement waits on that lock forever,
outlives the parent, and keeps the caller's stderr pipe open. Here nothing is shared
but one pipe per worker, and the parent alone decides when a worker ends:

- Workers are forked with SIGINT blocked, and ignore it before unblocking, so a
  Ctrl-C never runs Python code in a worker.
- Each worker gets its share of the items when it is forked (fork copies them): no
  task queue, no locks. Shares are small chunks dealt round-robin, which evens out
  the load on uniform batches such as manifests.
- The parent reads every worker's pipe as results arrive, so no worker waits long
  on a full pipe; the parent never writes to a worker.
- However the parent leaves (results complete, an error, Ctrl-C), any worker still
  running is killed with SIGKILL and reaped: nothing waits on a worker that is mid-item.
"""

from __future__ import annotations

import signal
import sys
import traceback
from typing import Any, Callable, Sequence, TypeVar

T = TypeVar("T")
R = TypeVar("R")

_INTERRUPT = {signal.SIGINT}


class WorkerFailed(RuntimeError):
    """A worker process ended before it sent all of its results."""


def fork_available() -> bool:
    import multiprocessing

    try:
        multiprocessing.get_context("fork")
    except ValueError:  # pragma: no cover - platforms without fork
        return False
    return True


def chunks_of(count: int, size: int) -> list[range]:
    return [range(start, min(start + size, count)) for start in range(0, count, size)]


def _worker(work: Callable[[Any], Any], items: Sequence[Any], share: list[range], conn: Any) -> None:
    # SIGINT is blocked (inherited from the parent's fork): ignore it before unblocking,
    # so that one pending from the parent's Ctrl-C is dropped rather than raised here.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _INTERRUPT)
    try:
        for indices in share:
            conn.send((indices.start, [work(items[i]) for i in indices]))
    except BaseException as exc:  # a bug in ``work``: the parent raises it, as Pool.map would
        if hasattr(exc, "add_note"):  # Python 3.11+: BLOCKKIT_DEBUG then shows where it failed
            exc.add_note("in a worker process:\n" + "".join(traceback.format_exception(exc)).rstrip())
        try:
            conn.send(("error", exc))
        except Exception:  # an exception that does not pickle: its text still crosses
            conn.send(("error", RuntimeError(f"{type(exc).__name__}: {exc}")))
    finally:
        conn.close()


def map_forked(work: Callable[[T], R], items: Sequence[T], workers: int, chunk: int) -> list[R]:
    """``[work(item) for item in items]``, computed in ``workers`` forked processes.

    The caller checks ``fork_available()`` first. KeyboardInterrupt in the parent stops
    every worker (SIGKILL) before it propagates; a worker's exception is raised here.
    """
    import multiprocessing
    from multiprocessing.connection import wait

    context = multiprocessing.get_context("fork")
    chunks = chunks_of(len(items), max(1, chunk))
    shares = [chunks[w::workers] for w in range(workers) if chunks[w::workers]]
    results: list[Any] = [None] * len(items)
    # Output buffered now would be written again by every worker as it exits.
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    processes: list[Any] = []
    left: dict[Any, int] = {}  # reader -> chunks still to come from its worker
    owner: dict[Any, Any] = {}
    try:
        previous = signal.pthread_sigmask(signal.SIG_BLOCK, _INTERRUPT)
        try:  # a Ctrl-C during the forks waits here, pending, and is raised just after
            for share in shares:
                reader, writer = context.Pipe(duplex=False)
                owner[reader] = process = context.Process(target=_worker, args=(work, items, share, writer),
                                                          daemon=True)
                try:
                    process.start()
                finally:
                    writer.close()  # the worker holds the only write end: its exit means EOF
                processes.append(process)
                left[reader] = len(share)
        except OSError:  # no more processes or memory for a fork: do the work here instead
            for process in processes:
                process.kill()
            left.clear()
            forked = False
        else:
            forked = True
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, previous)
        if not forked:  # with Ctrl-C unblocked again
            return [work(item) for item in items]
        while left:
            for reader in wait(list(left)):
                try:
                    start, batch = reader.recv()
                except EOFError:
                    process = owner[reader]
                    process.join()
                    raise WorkerFailed(f"a worker process stopped before it finished (exit status "
                                       f"{process.exitcode}); nothing was reported for its share of the work") from None
                if start == "error":
                    raise batch
                results[start:start + len(batch)] = batch
                left[reader] -= 1
                if not left[reader]:
                    del left[reader]
                    reader.close()
    finally:
        for process in processes:
            process.kill()  # a no-op for a worker that has exited; never waits on one mid-item
        for process in processes:
            process.join()
        for reader in owner:
            reader.close()
    return results
