"""CreateFund, fund expiry on the emulator clock, deposits and the mature-content rule, API keys."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from datetime import timedelta
from pathlib import Path

import pytest
from orch_env import BANNED, FREE, MEMBER, MUTED, make, problem

from blockkit.emulator.store.clock import parse_timestamp
from blockkit.emulator.services.orchestration import funds


@pytest.fixture
def o(tmp_path: Path):
    return make(tmp_path)


def test_create_fund_defaults(o) -> None:
    r = o.orch.post("/v2/consumer/funds", headers=o.auth())
    assert r.status_code == 201
    body = r.json()
    uuid.UUID(body["id"])
    assert body["allowMatureContent"] is False and "description" not in body
    assert parse_timestamp(body["expiresAt"]) - parse_timestamp(body["createdAt"]) == timedelta(hours=24)
    assert body["balance"] == 0 and body["balances"] == {"yellow": 0, "blue": 0, "green": 0, "fakeRed": 0}


@pytest.mark.parametrize("ctype", ["application/json", "text/json", "application/problem+json"])
def test_create_fund_content_types_and_fields(o, ctype: str) -> None:
    body = json.dumps({"ttl": "2.03:00:00", "allowMatureContent": True, "description": "contest pot"})
    r = o.orch.post("/v2/consumer/funds", headers={**o.auth(), "Content-Type": ctype}, content=body)
    assert r.status_code == 201, r.text
    fund = r.json()
    assert fund["allowMatureContent"] is True and fund["description"] == "contest pot"
    assert parse_timestamp(fund["expiresAt"]) - parse_timestamp(fund["createdAt"]) == timedelta(days=2, hours=3)


@pytest.mark.parametrize("ttl, span", [("12:00:00", timedelta(hours=12)), ("7.00:00:00", timedelta(days=7)),
                                       ("PT36H", timedelta(hours=36)), ("P1D", timedelta(days=1)),
                                       ("00:30", timedelta(minutes=30)), (None, timedelta(hours=24))])
def test_ttl_forms(ttl: str | None, span: timedelta) -> None:
    assert funds.parse_ttl(ttl) == span


@pytest.mark.parametrize("body", [
    {"ttl": "7.00:00:01"}, {"ttl": "8.00:00:00"}, {"ttl": "24:00:00"}, {"ttl": "00:00:00"}, {"ttl": "soon"},
    {"ttl": 3600}, {"allowMatureContent": "yes"}, {"description": 5}, {"colour": "red"}, [1, 2],
])
def test_create_fund_400(o, body: object) -> None:
    problem(o.orch.post("/v2/consumer/funds", headers=o.auth(), json=body), 400)


def test_create_fund_400_bad_json_and_type(o) -> None:
    problem(o.orch.post("/v2/consumer/funds", headers={**o.auth(), "Content-Type": "application/json"},
                        content=b"{nope"), 400)
    problem(o.orch.post("/v2/consumer/funds", headers={**o.auth(), "Content-Type": "text/plain"}, content=b"{}"), 400)


@pytest.mark.parametrize("headers", [{}, {"Authorization": "Bearer not-a-key"}, {"Authorization": "Basic eDp5"}])
def test_create_fund_401(o, headers: dict[str, str]) -> None:
    problem(o.orch.post("/v2/consumer/funds", headers=headers), 401)


@pytest.mark.parametrize("user", [BANNED, MUTED])
def test_create_fund_403_plain_string(o, user: int) -> None:
    r = o.orch.post("/v2/consumer/funds", headers=o.auth(user))
    assert r.status_code == 403 and r.headers["content-type"].startswith("application/json")
    assert isinstance(r.json(), str) and "may not create funds" in r.json()


def test_fund_gone_after_expiry_on_clock(o) -> None:
    fund = o.orch.post("/v2/consumer/funds", headers=o.auth(), json={"ttl": "01:00:00"}).json()
    assert o.orch.get(f"/__emulator/funds/{fund['id']}", headers=o.auth()).status_code == 200
    o.advance(3599)
    assert o.orch.get(f"/__emulator/funds/{fund['id']}", headers=o.auth()).status_code == 200
    o.advance(2)
    problem(o.orch.get(f"/__emulator/funds/{fund['id']}", headers=o.auth()), 404)
    problem(o.orch.post(f"/__emulator/funds/{fund['id']}/deposits", headers=o.auth(),
                        json={"accountType": "blue", "amount": 5}), 404)


def test_deposit_moves_buzz(o) -> None:
    fund = o.orch.post("/v2/consumer/funds", headers=o.auth()).json()
    r = o.orch.post(f"/__emulator/funds/{fund['id']}/deposits", headers=o.auth(FREE),
                    json={"accountType": "green", "amount": 50})
    assert r.status_code == 201 and r.json()["balances"]["green"] == 50 and r.json()["balance"] == 50
    from blockkit.emulator.services import buzz
    assert buzz.balance(o.store, o.clock, FREE)["green"] == 200 - 50


@pytest.mark.parametrize("user, pool, status", [(FREE, "yellow", 400), (FREE, "blue", 403), (FREE, "green", 403),
                                                (MEMBER, "blue", 201), (MEMBER, "yellow", 201),
                                                (MEMBER, "green", 403)])
def test_mature_fund_deposit_rule(o, user: int, pool: str, status: int) -> None:
    # FREE holds no yellow: the rule lets yellow through, the balance refuses it (400).
    fund = o.orch.post("/v2/consumer/funds", headers=o.auth(), json={"allowMatureContent": True}).json()
    r = o.orch.post(f"/__emulator/funds/{fund['id']}/deposits", headers=o.auth(user),
                    json={"accountType": pool, "amount": 10})
    assert r.status_code == status, r.text


def test_apikey_cli(tmp_path: Path) -> None:
    o = make(tmp_path)
    o.store.close()
    done = subprocess.run([sys.executable, "-m", "blockkit", "emulator", "apikey", "add", "--user", "free_fiona",
                           "--data", str(tmp_path)], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["user_id"] == FREE and len(out["api_key"]) > 40
    raw = (tmp_path / "emulator.sqlite3").read_bytes()
    assert out["api_key"].encode() not in raw  # stored hashed
    bad = subprocess.run([sys.executable, "-m", "blockkit", "emulator", "apikey", "add", "--user", "nobody",
                          "--data", str(tmp_path)], capture_output=True, text=True, timeout=60, check=False)
    assert bad.returncode == 2 and "no such user" in bad.stderr and "Traceback" not in bad.stderr
