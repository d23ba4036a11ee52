"""A map over forked workers that Ctrl-C stops at once.

``multiprocessing.Pool`` can hang when a run is interrupted: a SIGINT that reaches a
freshly forked worker before its initializer ignores it kills that worker (with a
traceback), sometimes while it holds the task queue's lock; the pool forks a
replacement behind the parent's back, the replacement waits on that lock forever,
outlives the parent, and keeps the caller's stderr pipe open. Here nothing is shared
but pipes, no lock is ever taken, and the parent alone decides when a worker ends:

- Workers are forked with SIGINT blocked, and ignore it before unblocking, so a
  Ctrl-C never runs Python code in a worker.
- The items are cut into small chunks, and the number of every chunk is written to one
  task pipe before any worker is forked (fork copies the items; the parent then closes
  the pipe's write end). Each process takes the next chunk by reading one 4-byte number
  from it: the kernel hands each number to exactly one reader, and an empty pipe with
  no writer reads as end of file, which means "no work left". So whoever is free takes
  the next chunk: a worker that starts late or runs on a busier core does less, and
  all of them finish within about one chunk of each other.
- Each worker sends its results on a pipe of its own; the parent reads every one as
  results arrive, so no worker waits long on a full pipe; the parent never writes to
  a worker.
- However the parent leaves (results complete, an error, Ctrl-C), any worker still
  running is killed with SIGKILL and reaped: nothing waits on a worker that is mid-item.

With ``parent_works`` the parent takes chunks from the task pipe too, between reads of
the result pipes: one process fewer to fork, and its chunks' results are never serialized.

It is built on ``os.fork`` and ``os.pipe`` directly (not ``multiprocessing``, whose
import alone took ~12 ms of a ~300 ms thousand-file ``blockkit validate``). A message
is an 8-byte length, then ``(start, results)`` or ``("error", exception)`` serialized: with
``marshal`` when it holds only built-in types (validate's text parts and counts; marshal is
built in, where importing pickle cost the parent ~2 ms), else with ``pickle``; one byte says which.
"""

from __future__ import annotations

import marshal
import os
import signal
import sys
from typing import Any, Callable, Sequence, TypeVar

T = TypeVar("T")
R = TypeVar("R")

_INTERRUPT = {signal.SIGINT}
_HEADER = 8  # bytes of the length before each message
# Linux: a pipe large enough for a chunk's results, so a worker seldom waits for the parent to read.
_PIPE_SIZE = 1 << 20
_TASK = 4  # bytes of one chunk number in the task pipe
# At most this many chunks: their numbers (4 KiB) fit in any pipe, even one the kernel has
# shrunk to a single page, so writing them all before the fork can never block.
CHUNKS_MAX = 1024


class WorkerFailed(RuntimeError):
    """A worker process ended before it sent all of its results."""


def fork_available() -> bool:
    return hasattr(os, "fork")


def chunks_of(count: int, size: int) -> list[range]:
    return [range(start, min(start + size, count)) for start in range(0, count, size)]


def _encode(message: Any) -> bytes:
    try:
        # Exact built-in types only: marshal refuses subclasses (a NamedTuple, an enum) and
        # instances, which then go by pickle and keep their types.
        return b"m" + marshal.dumps(message)
    except ValueError:
        import pickle

        return b"p" + pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)


def _decode(data: bytes) -> Any:
    if data[:1] == b"m":
        return marshal.loads(data[1:])
    import pickle

    return pickle.loads(data[1:])


def _send(fd: int, message: Any) -> None:
    data = _encode(message)
    view = memoryview(len(data).to_bytes(_HEADER, "little") + data)
    while view:
        view = view[os.write(fd, view):]


def _take(tasks: int) -> int:
    """The number of the next chunk to work on, from the task pipe; -1 when none is left."""
    data = os.read(tasks, _TASK)
    if len(data) == _TASK:
        return int.from_bytes(data, "little")
    if data:  # cannot happen: every number was written whole before anyone read
        raise RuntimeError(f"the task pipe gave {len(data)} bytes of a chunk number")
    return -1


def _worker(work: Callable[[Any], Any], items: Sequence[Any], chunks: list[range], tasks: int, fd: int) -> None:
    # SIGINT is blocked (inherited from the parent's fork): ignore it before unblocking,
    # so that one pending from the parent's Ctrl-C is dropped rather than raised here.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _INTERRUPT)
    try:
        while (index := _take(tasks)) >= 0:
            indices = chunks[index]
            _send(fd, (indices.start, [work(items[i]) for i in indices]))
    except BaseException as exc:  # a bug in ``work``: the parent raises it, as Pool.map would
        if hasattr(exc, "add_note"):  # Python 3.11+: BLOCKKIT_DEBUG then shows where it failed
            import traceback  # here, not at the top: only a failing worker needs it (~2 ms at start-up)

            exc.add_note("in a worker process:\n" + "".join(traceback.format_exception(exc)).rstrip())
        try:
            _send(fd, ("error", exc))
        except Exception:  # an exception that does not pickle: its text still crosses
            _send(fd, ("error", RuntimeError(f"{type(exc).__name__}: {exc}")))


def _fork_worker(work: Callable[[Any], Any], items: Sequence[Any], chunks: list[range], tasks: int,
                 inherited: list[int]) -> tuple[int, int]:
    """Fork one worker that takes ``chunks`` from ``tasks``; returns (its pid, the read end of its pipe)."""
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
            _worker(work, items, chunks, tasks, writer)
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
    """The bytes read so far from one worker."""

    __slots__ = ("pid", "buffer")

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.buffer = bytearray()


def _exit_status(pid: int) -> int:
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)  # -N for a worker killed by signal N


def _task_pipe(count: int) -> int:
    """A pipe holding the chunk numbers 0..count-1; returns its read end (the write end is closed)."""
    reader, writer = os.pipe()
    try:
        os.set_blocking(writer, False)  # over a pipe's size (it cannot be: CHUNKS_MAX) it fails, never waits
        data = b"".join(index.to_bytes(_TASK, "little") for index in range(count))
        view = memoryview(data)
        while view:
            view = view[os.write(writer, view):]
    except BaseException:
        os.close(reader)
        raise
    finally:
        os.close(writer)
    return reader


def map_forked(work: Callable[[T], R], items: Sequence[T], workers: int, chunk: int, *,
               parent_works: bool = False) -> list[R]:
    """``[work(item) for item in items]``, computed in ``workers`` processes: forked workers,
    and with ``parent_works`` this process as one of them.

    The caller checks ``fork_available()`` first. KeyboardInterrupt in the parent stops
    every worker (SIGKILL) before it propagates; a worker's exception is raised here.
    """
    import select

    size = max(1, chunk, -(-len(items) // CHUNKS_MAX))
    chunks = chunks_of(len(items), size)
    forks = min(workers - 1 if parent_works else workers, len(chunks) - 1 if parent_works else len(chunks))
    if forks < 1:
        return [work(item) for item in items]
    results: list[Any] = [None] * len(items)
    # Output buffered now would be written again by every worker as it exits.
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    try:
        tasks = _task_pipe(len(chunks))
    except OSError:  # out of file descriptors: do the work here instead
        return [work(item) for item in items]
    inboxes: dict[int, _Inbox] = {}  # read end -> its worker's messages
    pids: list[int] = []
    try:
        previous = signal.pthread_sigmask(signal.SIG_BLOCK, _INTERRUPT)
        try:  # a Ctrl-C during the forks waits here, pending, and is raised just after
            for _ in range(forks):
                pid, reader = _fork_worker(work, items, chunks, tasks, list(inboxes))
                pids.append(pid)
                inboxes[reader] = _Inbox(pid)
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
        left = len(chunks)  # chunks whose results have not come in yet
        open_pipes = len(inboxes)
        working = parent_works  # the parent takes chunks until the task pipe is empty
        while left:
            if not (working or open_pipes):  # cannot happen: a worker that exits cleanly sent all it took
                raise WorkerFailed(f"the worker processes ended with {left} chunks of the work unreported")
            # Between chunks of its own the parent only looks; with none left it waits.
            for reader, _ in poller.poll(0 if working else None):
                inbox = inboxes[reader]
                data = os.read(reader, _PIPE_SIZE)
                if not data:
                    poller.unregister(reader)
                    open_pipes -= 1
                    status = _exit_status(inbox.pid)
                    if status:  # whatever it had taken is lost
                        raise WorkerFailed(f"a worker process stopped before it finished (exit status "
                                           f"{status}); nothing was reported for the items it was working "
                                           "on") from None
                    continue
                inbox.buffer += data
                while len(inbox.buffer) >= _HEADER:
                    size = int.from_bytes(inbox.buffer[:_HEADER], "little")
                    if len(inbox.buffer) < _HEADER + size:
                        break
                    start, batch = _decode(inbox.buffer[_HEADER:_HEADER + size])
                    del inbox.buffer[:_HEADER + size]
                    if start == "error":
                        raise batch
                    results[start:start + len(batch)] = batch
                    left -= 1
            if working:
                index = _take(tasks)
                if index < 0:
                    working = False
                else:
                    indices = chunks[index]
                    results[indices.start:indices.stop] = [work(items[i]) for i in indices]
                    left -= 1
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
        os.close(tasks)
    return results
