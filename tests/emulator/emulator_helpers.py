"""Helpers for the emulator tests: run blockkit, start the emulator, speak HTTP (stdlib only)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SRC = Path(__file__).resolve().parents[2] / "src"
READY_TIMEOUT_S = 30


def subprocess_env(**extra: str) -> dict[str, str]:
    """The environment for a blockkit subprocess: this checkout's package first."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(SRC), env.get("PYTHONPATH", "")) if p)
    env.update(extra)
    return env


def blockkit(*args: str, timeout: float = 60, env: dict[str, str] | None = None,
             input: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``python -m blockkit ARGS`` and return the finished process."""
    return subprocess.run([sys.executable, "-m", "blockkit", *args], capture_output=True, text=True,
                          timeout=timeout, env=env or subprocess_env(), input=input)


@dataclass
class Started:
    process: subprocess.Popen[str]
    info: dict[str, Any]
    ready_file: Path

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 20) -> tuple[int, str, str]:
        """Send ``sig``; return (exit status, stdout, stderr)."""
        if self.process.poll() is None:
            self.process.send_signal(sig)
        try:
            out, err = self.process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            out, err = self.process.communicate()
            raise AssertionError(f"the emulator did not stop within {timeout} s after signal {sig}") from None
        return self.process.returncode, out, err


def start_process(ready_file: Path, *args: str, env: dict[str, str] | None = None) -> Started:
    """Start the emulator and wait for its ready file (or its early death)."""
    ready_file.unlink(missing_ok=True)
    # The tests' emulators ask for no access key unless a test gives one (test_emulator_access.py).
    keyed = any(arg.startswith("--access-key") for arg in args)
    process = subprocess.Popen(
        [sys.executable, "-m", "blockkit", "emulator", "start", "--port", "0", "--ready-file", str(ready_file),
         *([] if keyed else ["--no-access-key"]), *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env or subprocess_env())
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        if ready_file.exists():
            return Started(process, json.loads(ready_file.read_text()), ready_file)
        if process.poll() is not None:
            out, err = process.communicate()
            raise AssertionError(f"the emulator exited with {process.returncode} before ready:\n{out}\n{err}")
        time.sleep(0.02)
    process.kill()
    out, err = process.communicate()
    raise AssertionError(f"the emulator was not ready within {READY_TIMEOUT_S} s:\n{out}\n{err}")


def request_json(url: str, *, method: str = "GET", body: bytes | None = None,
                 headers: dict[str, str] | None = None) -> tuple[int, Any]:
    request = urllib.request.Request(url, data=body, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"null")


def get_json(url: str, headers: dict[str, str] | None = None) -> tuple[int, Any]:
    return request_json(url, headers=headers)


def post_json(url: str, payload: Any = None, *, raw: bytes | None = None) -> tuple[int, Any]:
    body = raw if raw is not None else json.dumps(payload).encode()
    return request_json(url, method="POST", body=body, headers={"Content-Type": "application/json"})


def asgi_request(app: Any, method: str, path: str, *, query: str = "", headers: dict[str, str] | None = None,
                 body: bytes = b"") -> tuple[int, dict[str, str], Any]:
    """Drive an ASGI app directly (no sockets): (status, headers, JSON body or raw bytes)."""
    import asyncio

    messages: list[dict[str, Any]] = []
    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": method, "scheme": "http",
        "path": path, "raw_path": path.encode(), "query_string": query.encode(), "root_path": "",
        "headers": [(k.lower().encode(), v.encode()) for k, v in (headers or {}).items()],
        "client": ("127.0.0.1", 50000), "server": ("127.0.0.1", 80),
    }

    async def run() -> None:
        delivered = False

        async def receive() -> dict[str, Any]:
            nonlocal delivered
            if not delivered:
                delivered = True
                return {"type": "http.request", "body": body, "more_body": False}
            await asyncio.sleep(3600)
            return {"type": "http.disconnect"}

        async def send(message: dict[str, Any]) -> None:
            messages.append(message)

        try:
            await app(scope, receive, send)
        except Exception:  # starlette re-raises a route's error after sending the 500 (for the server's log)
            if not any(m["type"] == "http.response.start" for m in messages):
                raise

    outside_loop(asyncio.run)(run())
    start = next(m for m in messages if m["type"] == "http.response.start")
    raw = b"".join(m.get("body", b"") for m in messages if m["type"] == "http.response.body")
    response_headers = {k.decode(): v.decode() for k, v in start["headers"]}
    parsed: Any = raw
    if response_headers.get("content-type", "").startswith("application/json"):
        parsed = json.loads(raw)
    return start["status"], response_headers, parsed


def outside_loop(fn: Any) -> Any:
    """``fn`` run on a fresh thread when this thread already has a running event loop.

    The project's session-wide Chromium (Playwright's sync API) leaves its loop registered as
    running on the main thread once any browser test has run, and ``asyncio.run`` (ours, or a
    client library's) then refuses to start. A thread of its own has no running loop.
    """
    import asyncio
    import functools
    import threading

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return fn(*args, **kwargs)
        outcome: dict[str, Any] = {}

        def target() -> None:
            try:
                outcome["value"] = fn(*args, **kwargs)
            except BaseException as exc:  # noqa: BLE001 - re-raised on the caller's thread
                outcome["error"] = exc

        worker = threading.Thread(target=target)
        worker.start()
        worker.join()
        if "error" in outcome:
            raise outcome["error"]
        return outcome.get("value")

    return wrapper


def store_row(emulator: dict[str, Any], query: str, *args: Any) -> tuple[Any, ...]:
    """One row of a running emulator's store (read without the schema check a second opener needs)."""
    from blockkit.emulator.store import Store

    store = Store.open(Path(emulator["data"]), check=False)
    try:
        with store.read() as db:
            return tuple(db.execute(query, args).fetchone())
    finally:
        store.close()


def stored_media(store: Any, path: str, *, width: int | None = None, height: int | None = None) -> str:
    """Make ``/__emulator/media/<path>`` a stored image row (the emulator draws only stored paths); its URL path."""
    url = f"/__emulator/media/{path}"
    kind = "video" if path.endswith(".mp4") else "audio" if path.endswith(".mp3") else "image"
    with store.write() as db:
        if not db.execute("SELECT 1 FROM users LIMIT 1").fetchone():
            db.execute("INSERT INTO users (id, username, created_at) VALUES (1, 'media_owner',"
                       " '2025-01-01T00:00:00.000Z')")
        if not db.execute("SELECT 1 FROM images WHERE url = ?", (url,)).fetchone():
            db.execute("INSERT INTO images (user_id, type, url, width, height, created_at)"
                       " SELECT min(id), ?, ?, ?, ?, '2025-01-01T00:00:00.000Z' FROM users",
                       (kind, url, width, height))
    return url
