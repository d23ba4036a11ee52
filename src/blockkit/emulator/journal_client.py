"""``blockkit emulator log``: read a running emulator's request journal (``GET /__emulator/journal``).

The server is found as the other commands find their emulator: ``--ready-file PATH`` (the file
``start --ready-file`` wrote) or ``--data DIR`` (the ``server.json`` a server keeps in its data
directory while it runs); either holds base_url and the access key, sent as
``X-Blockkit-Access-Key``. Standard library HTTP only: the command runs without the server extra.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Callable
from urllib.parse import urlencode

from blockkit.emulator.errors import EmulatorError

FOLLOW_WAIT_S = 25
PAGE = 500


def find_server(data: Path | None, ready_file: Path | None) -> dict[str, Any]:
    """The running server's ready info (base_url, access_key, pid), from --ready-file or --data."""
    from blockkit.emulator.runtime import SERVER_FILE, _alive

    if (data is None) == (ready_file is None):
        raise EmulatorError("log needs --data DIR or --ready-file PATH (one of them): the running emulator's")
    path = ready_file if ready_file is not None else Path(data) / SERVER_FILE  # type: ignore[arg-type]
    try:
        info = json.loads(path.read_bytes())
    except FileNotFoundError:
        where = f"--ready-file {path}: no such file" if ready_file is not None else (
            f"--data {data}: no emulator is running on it (start it with 'blockkit emulator start --data {data}')")
        raise EmulatorError(where) from None
    except (OSError, ValueError) as exc:
        raise EmulatorError(f"{path}: cannot read it: {getattr(exc, 'strerror', None) or exc}") from None
    if not isinstance(info, dict) or not isinstance(info.get("base_url"), str):
        raise EmulatorError(f"{path}: not an emulator's ready file (no base_url)")
    pid = info.get("pid")
    if isinstance(pid, int) and not _alive(pid):
        raise EmulatorError(f"{path}: the emulator that wrote it (process {pid}) is not running")
    return info


def fetch(info: dict[str, Any], params: dict[str, Any], timeout: float,
          body: dict[str, Any] | None = None) -> dict[str, Any]:
    """GET the journal with ``params``; with ``body``, POST it instead (pause or resume)."""
    query = urlencode({k: v for k, v in params.items() if v is not None})
    url = f"{str(info['base_url']).rstrip('/')}/__emulator/journal" + (f"?{query}" if query else "")
    headers = {"Accept": "application/json"}
    if info.get("access_key"):
        headers["X-Blockkit-Access-Key"] = str(info["access_key"])
    data = None
    if body is not None:
        headers["Content-Type"] = "application/json"
        data = json.dumps(body).encode()
    request = urllib.request.Request(url, headers=headers, data=data, method="POST" if data else "GET")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:  # noqa: S310 - our own loopback server
            return json.loads(answer.read())  # type: ignore[no-any-return]
    except urllib.error.HTTPError as exc:
        try:
            message = json.loads(exc.read()).get("error")
        except (ValueError, AttributeError):
            message = None
        raise EmulatorError(f"{url.split('?')[0]}: {exc.code} {message or exc.reason}") from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise EmulatorError(f"{info['base_url']}: cannot reach the emulator: {reason}") from None


def line_of(entry: dict[str, Any]) -> str:
    """One entry as text: id, time, origin, method, path?query, status, duration, who; the reason below."""
    who = entry.get("who") or {}
    named = " ".join(f"{k} {who[k]}" for k in ("user", "client", "block") if k in who)
    target = entry["path"] + (f"?{entry['query']}" if entry.get("query") else "")
    clock = str(entry.get("time", ""))[11:23]
    text = (f"#{entry['id']:<5} {clock} {entry['origin']:<13} {entry['method']:<6} {entry['status']} "
            f"{entry['duration_ms']:>8.1f} ms  {target}" + (f"  [{named}]" if named else ""))
    if entry.get("reason"):
        text += f"\n        reason: {entry['reason']}"
    return text


def set_recording(*, data: Path | None, ready_file: Path | None, recording: bool) -> str:
    """Pause the running emulator's journal (``recording=False``) or resume it; the line to print."""
    info = find_server(data, ready_file)
    answer = fetch(info, {}, timeout=30, body={"recording": recording})
    if answer.get("recording"):
        return f"the request journal records again (it holds entries up to #{answer.get('last_id', 0)})"
    return (f"the request journal is paused: requests are answered but not recorded"
            f" ('blockkit emulator log --resume' records again)")


def run(*, data: Path | None, ready_file: Path | None, follow: bool, status: str | None, origin: str | None,
        client: str | None, user: int | None, limit: int, bodies: bool, fmt: str,
        echo: Callable[[str], None], warn: Callable[[str], None] | None = None) -> None:
    info = find_server(data, ready_file)
    filters = {"status": status, "origin": origin, "client": client, "user": user,
               "bodies": "1" if bodies and fmt == "json" else None}

    def show(entries: list[dict[str, Any]]) -> None:
        for entry in entries:
            echo(json.dumps(entry, ensure_ascii=False) if fmt == "json" else line_of(entry))

    answer = fetch(info, {**filters, "limit": limit}, timeout=30)
    if not answer.get("enabled", True):
        raise EmulatorError("the request journal is off in this emulator (started with --journal-size 0)")
    if answer.get("recording") is False and warn is not None:
        warn("the request journal is paused: new requests are not recorded ('blockkit emulator log --resume')")
    show(answer["entries"])
    if not follow:
        return
    since = answer["entries"][-1]["id"] if answer["entries"] else answer.get("last_id", 0)
    while True:
        answer = fetch(info, {**filters, "since": since, "limit": PAGE, "wait": FOLLOW_WAIT_S},
                       timeout=FOLLOW_WAIT_S + 15)
        show(answer["entries"])
        if answer["entries"]:
            since = answer["entries"][-1]["id"]
