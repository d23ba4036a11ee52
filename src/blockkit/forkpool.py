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

With ``parent_works`` the parent takes the first share itself, between reads of the
pipes: one process fewer to fork, and that share's results are never pickled.

It is built on ``os.fork`` and ``os.pipe`` directly (not ``multiprocessing``, whose
import alone took ~12 ms of a ~300 ms thousand-file ``blockkit validate``). A message
is an 8-byte length and a pickle of ``(start, results)``, or of ``("error", exception)``.
"""

from __future__ import annotations

import os
import signal
import sys
import traceback
from typing import Any, Callable, Sequence, TypeVar

T = TypeVar("T")
R = TypeVar("R")

_INTERRUPT = {signal.SIGINT}
_HEADER = 8  # bytes of the length before each message
# Linux: a pipe large enough for a chunk's results, so a worker seldom waits for the parent to read.
_PIPE_SIZE = 1 << 20


class WorkerFailed(RuntimeError):
    """A worker process ended before it sent all of its results."""


def fork_available() -> bool:
    return hasattr(os, "fork")


def chunks_of(count: int, size: int) -> list[range]:
    return [range(start, min(start + size, count)) for start in range(0, count, size)]


def _send(fd: int, message: Any) -> None:
    import pickle

    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    view = memoryview(len(data).to_bytes(_HEADER, "little") + data)
    while view:
        view = view[os.write(fd, view):]


def _worker(work: Callable[[Any], Any], items: Sequence[Any], share: list[range], fd: int) -> None:
    # SIGINT is blocked (inherited from the parent's fork): ignore it before unblocking,
    # so that one pending from the parent's Ctrl-C is dropped rather than raised here.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _INTERRUPT)
    try:
        for indices in share:
            _send(fd, (indices.start, [work(items[i]) for i in indices]))
    except BaseException as exc:  # a bug in ``work``: the parent raises it, as Pool.map would
        if hasattr(exc, "add_note"):  # Python 3.11+: BLOCKKIT_DEBUG then shows where it failed
            exc.add_note("in a worker process:\n" + "".join(traceback.format_exception(exc)).rstrip())
        try:
            _send(fd, ("error", exc))
        except Exception:  # an exception that does not pickle: its text still crosses
            _send(fd, ("error", RuntimeError(f"{type(exc).__name__}: {exc}")))


def _fork_worker(work: Callable[[Any], Any], items: Sequence[Any], share: list[range],
                 inherited: list[int]) -> tuple[int, int]:
    """Fork one worker for ``share``; returns (its pid, the read end of its pipe)."""
    reader, writer = os.pipe()
    try:
        import fcntl

        fcntl.fcntl(writer, getattr(fcntl, "F_SETPIPE_SZ", 1031), _PIPE_SIZE)
    except (ImportError, OSError):  # not Linux, or over the system's limit: the default size works too
        pass
    try:
        pid = os.fork()
    except BaseException:
        os.close(reader)
        os.close(writer)
        raise
    if pid == 0:  # the worker: it never returns from here
        status = 0
        try:
            os.close(reader)
            for fd in inherited:  # the other workers' pipes
                os.close(fd)
            _worker(work, items, share, writer)
        except BaseException:
            status = 1
        finally:
            try:
                os.close(writer)
                for stream in (sys.stdout, sys.stderr):
                    stream.flush()
            except BaseException:
                pass
            os._exit(status)
    os.close(writer)  # the worker holds the only write end: its exit means end of file
    return pid, reader


class _Inbox:
    """The bytes read so far from one worker, and how many chunks it still owes."""

    __slots__ = ("pid", "buffer", "left")

    def __init__(self, pid: int, left: int) -> None:
        self.pid = pid
        self.buffer = bytearray()
        self.left = left


def _exit_status(pid: int) -> int:
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)  # -N for a worker killed by signal N


def map_forked(work: Callable[[T], R], items: Sequence[T], workers: int, chunk: int, *,
               parent_works: bool = False) -> list[R]:
    """``[work(item) for item in items]``, computed in ``workers`` processes: forked workers,
    and with ``parent_works`` this process as one of them.

    The caller checks ``fork_available()`` first. KeyboardInterrupt in the parent stops
    every worker (SIGKILL) before it propagates; a worker's exception is raised here.
    """
    import pickle
    import select

    chunks = chunks_of(len(items), max(1, chunk))
    shares = [chunks[w::workers] for w in range(workers) if chunks[w::workers]]
    own: list[range] = shares.pop(0) if parent_works and shares else []
    results: list[Any] = [None] * len(items)
    # Output buffered now would be written again by every worker as it exits.
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    inboxes: dict[int, _Inbox] = {}  # read end -> its worker's messages
    pids: list[int] = []
    try:
        previous = signal.pthread_sigmask(signal.SIG_BLOCK, _INTERRUPT)
        try:  # a Ctrl-C during the forks waits here, pending, and is raised just after
            for share in shares:
                pid, reader = _fork_worker(work, items, share, list(inboxes))
                pids.append(pid)
                inboxes[reader] = _Inbox(pid, len(share))
        except OSError:  # no more processes or memory for a fork: do the work here instead
            for pid in pids:
                os.kill(pid, signal.SIGKILL)
            forked = False
        else:
            forked = True
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, previous)
        if not forked:  # with Ctrl-C unblocked again
            return [work(item) for item in items]
        poller = select.poll()
        for reader in inboxes:
            poller.register(reader, select.POLLIN)
        pending = {reader for reader, inbox in inboxes.items() if inbox.left}
        while pending or own:
            # Between chunks of its own share the parent only looks; with none left it waits.
            for reader, _ in poller.poll(0 if own else None):
                inbox = inboxes[reader]
                data = os.read(reader, _PIPE_SIZE)
                if not data:
                    poller.unregister(reader)
                    pending.discard(reader)
                    if inbox.left:
                        raise WorkerFailed(f"a worker process stopped before it finished (exit status "
                                           f"{_exit_status(inbox.pid)}); nothing was reported for its share "
                                           "of the work") from None
                    continue
                inbox.buffer += data
                while len(inbox.buffer) >= _HEADER:
                    size = int.from_bytes(inbox.buffer[:_HEADER], "little")
                    if len(inbox.buffer) < _HEADER + size:
                        break
                    start, batch = pickle.loads(inbox.buffer[_HEADER:_HEADER + size])
                    del inbox.buffer[:_HEADER + size]
                    if start == "error":
                        raise batch
                    results[start:start + len(batch)] = batch
                    inbox.left -= 1
                if not inbox.left:
                    pending.discard(reader)
            if own:
                indices = own.pop(0)
                results[indices.start:indices.stop] = [work(items[i]) for i in indices]
    finally:
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)  # a worker that has exited is a zombie until reaped: no error
            except OSError:
                pass
        for pid in pids:
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:  # reaped already (its exit status was read above)
                pass
        for reader in inboxes:
            os.close(reader)
    return results
