"""The dev host's bridge calls in the local platform's request journal (issue 36, item 6).

``blockkit dev`` runs the emulator in its own process; each block message the host page answers
is an entry with origin ``bridge``, method the message type, who the block and the viewer, and
for a refusal a status and the reason in words (a service's own words when it said why). The
messages are posted to the host's ``/api/inbound`` as host.js posts them; the journal is read at
the emulator's control route, as the console and ``blockkit emulator log`` read it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from blockkit.dev.session import DevOptions, DevSession
from blockkit.emulator.journal import REDACTED

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "dev"


@pytest.fixture
def session(tmp_path: Path) -> Iterator[DevSession]:
    with DevSession(DevOptions(block_dir=FIXTURES / "handshake", trace_path=tmp_path / "t.jsonl")) as running:
        yield running


def post(session: DevSession, path: str, document: Any) -> dict[str, Any]:
    answer = httpx.post(session.host_url + path, json=document, timeout=30,
                        headers={"Origin": session.host_url.rstrip("/"), "X-Blockkit-Dev-Key": session.dev_key})
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


def send(session: DevSession, page_id: str, message_type: str, **payload: Any) -> dict[str, Any]:
    return post(session, "api/inbound", {"data": {"type": message_type, "payload": payload}, "jsType": "object",
                                         "pageId": page_id, "origin": session.block_url.rstrip("/"), "t": 1})


def journal(session: DevSession, **params: Any) -> list[dict[str, Any]]:
    platform = session.platform
    assert platform is not None
    answer = httpx.get(platform.base_url + "/__emulator/journal", params={"limit": 2000, **params}, timeout=30,
                       headers={"X-Blockkit-Access-Key": platform.access_key})
    assert answer.status_code == 200, answer.text
    return list(answer.json()["entries"])


def test_bridge_calls_are_journalled_with_the_block_the_viewer_and_each_refusal_s_reason(session: DevSession) -> None:
    from blockkit.emulator.services import appstorage

    platform = session.platform
    assert platform is not None
    page_id = post(session, "api/page", {"subPath": None})["pageId"]
    token = send(session, page_id, "REQUEST_TOKEN", requestId="r-1")["reply"]["payload"]["token"]["raw"]
    stored = send(session, page_id, "APP_STORAGE_SET", requestId="r-2", key="k", value=1)["reply"]
    assert stored["payload"] == {"requestId": "r-2", "ok": True, "sizeBytes": 1}
    balance = send(session, page_id, "GET_BUZZ_TRANSACTIONS", requestId="r-3")["reply"]
    assert balance["payload"]["error"] == "block lacks buzz:read:self scope"
    with platform.store.write() as db:  # the block's storage full but for 10 bytes
        db.execute("INSERT INTO app_storage (block_id, user_id, key, value, size, updated_at) VALUES"
                   " (?, 0, 'big', '1', ?, ?)", (platform.manifest.block_id, appstorage.QUOTA_BYTES - 10,
                                                  platform.clock.iso()))
    full = send(session, page_id, "APP_STORAGE_SET", requestId="r-4", key="k2", value="x" * 20)["reply"]
    assert full["payload"] == {"requestId": "r-4", "ok": False, "error": "app quota exceeded"}

    entries = journal(session, origin="bridge")
    assert [(e["origin"], e["method"], e["path"], e["status"]) for e in entries] == [
        ("bridge", "REQUEST_TOKEN", "postMessage", 200), ("bridge", "APP_STORAGE_SET", "postMessage", 200),
        ("bridge", "GET_BUZZ_TRANSACTIONS", "postMessage", 403), ("bridge", "APP_STORAGE_SET", "postMessage", 400)]
    who = {"block": platform.app_block_id, "user": platform.viewer_id}
    assert platform.viewer_id is not None and all(e["who"] == who for e in entries)
    assert [e["reason"] for e in entries[:3]] == [None, None, "block lacks buzz:read:self scope"]
    used = appstorage.QUOTA_BYTES - 10 + 1  # and the viewer's 'k'
    assert entries[3]["reason"] == (f"app storage quota: block {platform.manifest.block_id}'s storage holds {used}"
                                    f" of its {appstorage.QUOTA_BYTES} bytes across its viewers; this value is 22"
                                    f" bytes, which would make {used + 22}")
    # Beside the emulator's own requests, in one ring; the filter keeps them apart.
    assert all(e["origin"] != "bridge" for e in journal(session, origin="catalogue"))
    assert [e["method"] for e in journal(session, origin="bridge", status="4xx")] == ["GET_BUZZ_TRANSACTIONS",
                                                                                     "APP_STORAGE_SET"]
    # The bodies are the message's payload and the reply; the token the host handed out is redacted.
    detailed = journal(session, origin="bridge", bodies=1)
    text = json.dumps(detailed)
    assert token not in text and REDACTED in text
    # (a field called "key" is redacted, as on the HTTP origins)
    assert json.loads(detailed[1]["request"]["body"]) == {"requestId": "r-2", "key": REDACTED, "value": 1}
    assert json.loads(detailed[1]["response"]["body"]) == stored["payload"]


def test_a_signed_out_viewer_s_refusal_is_a_401(tmp_path: Path) -> None:
    options = DevOptions(block_dir=FIXTURES / "handshake", trace_path=tmp_path / "t.jsonl", anonymous=True)
    with DevSession(options) as session:
        page_id = post(session, "api/page", {"subPath": None})["pageId"]
        reply = send(session, page_id, "APP_STORAGE_SET", requestId="r-1", key="k", value=1)["reply"]
        assert reply["payload"]["ok"] is False
        (entry,) = journal(session, origin="bridge")
        assert platform_block(session) == entry["who"]["block"] and "user" not in entry["who"]
        assert (entry["method"], entry["status"]) == ("APP_STORAGE_SET", 400)
        assert entry["reason"] == reply["payload"]["error"]


def platform_block(session: DevSession) -> str:
    assert session.platform is not None
    return str(session.platform.app_block_id)
