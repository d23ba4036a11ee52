"""Talking to the platform's submission routes: submit a bundle, list submissions, withdraw one.

The commands ``blockkit submit``, ``blockkit submissions`` and ``blockkit withdraw`` are thin
over this module. It speaks HTTP with the standard library only (``urllib.request``), reads the
personal API key from ``BLOCKKIT_API_KEY`` or from a file only its owner can read, and turns every
failure into :class:`SubmissionFailed`, which carries the exit status the platform's own CLI gives
for it (``EXIT_*``) and a one-line message that never holds the key.
"""

from __future__ import annotations

import base64
import os
import stat
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

# The platform CLI's exit statuses (civitai/cli main.go).
EXIT_OK = 0
EXIT_GENERIC = 1
EXIT_USAGE = 2        # a usage error, or the server's 400 (the request itself was refused)
EXIT_AUTH = 3         # 401 / 403
EXIT_NOT_FOUND = 4    # 404
EXIT_NETWORK = 5      # no answer: refused, reset, timed out, DNS
EXIT_RATE_LIMITED = 6  # 429

DEFAULT_BASE_URL = "https://civitai.com"
ENV_BASE_URL = "BLOCKKIT_BASE_URL"   # what 'blockkit emulator exec' sets
ENV_API_KEY = "BLOCKKIT_API_KEY"
TIMEOUT_SECONDS = 120.0
SUBMIT_PATH = "/api/v1/blocks/submit-version"
SUBMISSIONS_PATH = "/api/v1/blocks/submissions"
WITHDRAW_PATH = "/api/v1/blocks/withdraw"


class SubmissionFailed(Exception):
    """A call that did not succeed: ``exit_code`` (the platform CLI's) and a one-line ``message``."""

    def __init__(self, exit_code: int, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.exit_code = exit_code
        self.message = message
        self.status = status


def exit_code_for(status: int) -> int:
    if status == 400 or status == 422:
        return EXIT_USAGE
    if status in (401, 403):
        return EXIT_AUTH
    if status == 404:
        return EXIT_NOT_FOUND
    if status == 429:
        return EXIT_RATE_LIMITED
    return EXIT_GENERIC


# --- the key ---------------------------------------------------------------------------------------

def read_api_key(token_file: Path | None, environ: dict[str, str] | None = None) -> str:
    """The personal API key: from ``token_file`` (mode 0600 or stricter), else ``BLOCKKIT_API_KEY``."""
    environ = dict(os.environ) if environ is None else environ
    if token_file is not None:
        try:
            info = token_file.stat()
            if not stat.S_ISREG(info.st_mode):
                raise SubmissionFailed(EXIT_USAGE, f"--token-file {token_file}: not a regular file")
            if info.st_mode & 0o077:
                raise SubmissionFailed(EXIT_USAGE, f"--token-file {token_file}: other users can read it (mode"
                                                   f" {stat.S_IMODE(info.st_mode):04o}); chmod 600 it first")
            text = token_file.read_text(encoding="utf-8")
        except OSError as exc:
            raise SubmissionFailed(EXIT_USAGE, f"--token-file {token_file}: {exc.strerror or exc}") from None
        except UnicodeDecodeError:
            raise SubmissionFailed(EXIT_USAGE, f"--token-file {token_file}: not UTF-8 text") from None
        key = text.strip().splitlines()[0].strip() if text.strip() else ""
        if not key:
            raise SubmissionFailed(EXIT_USAGE, f"--token-file {token_file}: the file is empty")
        return key
    key = environ.get(ENV_API_KEY, "").strip()
    if not key:
        raise SubmissionFailed(EXIT_AUTH, f"no API key: set {ENV_API_KEY}, or name a file of mode 0600 with"
                                          " --token-file ('blockkit emulator apikey add' mints one locally)")
    return key


def base_url(option: str | None, environ: dict[str, str] | None = None) -> str:
    environ = dict(os.environ) if environ is None else environ
    url = (option or environ.get(ENV_BASE_URL) or DEFAULT_BASE_URL).rstrip("/")
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise SubmissionFailed(EXIT_USAGE, f"--base-url {url!r}: give an http(s) URL such as {DEFAULT_BASE_URL}")
    return url


# --- HTTP --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Client:
    base_url: str
    api_key: str
    timeout: float = TIMEOUT_SECONDS

    def call(self, method: str, path: str, body: Any = None, query: dict[str, str] | None = None) -> Any:
        """The decoded JSON answer of a 2xx, else SubmissionFailed with the server's message."""
        url = self.base_url + path
        if query:
            url += "?" + urllib.parse.urlencode(query)
        data = orjson.dumps(body) if body is not None else None
        headers = {"Authorization": f"Bearer {self.api_key}", "Accept": "application/json"}
        if data is not None:
            headers["Content-Type"] = "application/json"
        request = urllib.request.Request(url, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:  # noqa: S310 - http(s) only
                raw = response.read()
        except urllib.error.HTTPError as exc:
            status = exc.code
            message = _message(exc.read(), exc.reason)
            retry = exc.headers.get("Retry-After") if exc.headers else None
            if status == 429 and retry:
                message += f" (retry after {retry} s)"
            raise SubmissionFailed(exit_code_for(status), f"{status}: {message}", status) from None
        except urllib.error.URLError as exc:
            reason = getattr(exc.reason, "strerror", None) or str(exc.reason)
            raise SubmissionFailed(EXIT_NETWORK, f"cannot reach {self.base_url}: {reason}") from None
        except (TimeoutError, ConnectionError, OSError) as exc:
            raise SubmissionFailed(EXIT_NETWORK, f"cannot reach {self.base_url}:"
                                                 f" {getattr(exc, 'strerror', None) or exc or 'timed out'}") from None
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError:
            raise SubmissionFailed(EXIT_GENERIC, f"{url}: the answer is not JSON") from None

    def submit(self, bundle: bytes) -> dict[str, Any]:
        return dict(self.call("POST", SUBMIT_PATH, {"bundleBase64": base64.b64encode(bundle).decode("ascii")}))

    def submissions(self, request_id: str | None = None, block_id: str | None = None) -> list[dict[str, Any]]:
        query = {k: v for k, v in (("id", request_id), ("blockId", block_id)) if v is not None}
        answer = self.call("GET", SUBMISSIONS_PATH, query=query)
        if "submission" in answer:
            return [answer["submission"]]
        return list(answer.get("submissions", []))

    def withdraw(self, request_id: str) -> None:
        self.call("POST", WITHDRAW_PATH, {"publishRequestId": request_id})


def _message(raw: bytes, reason: str) -> str:
    try:
        body = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return str(reason or "error")
    if isinstance(body, dict):
        for key in ("message", "error", "detail"):
            if isinstance(body.get(key), str):
                return " ".join(str(body[key]).split())
    return str(reason or "error")
