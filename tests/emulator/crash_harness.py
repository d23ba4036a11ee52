"""A Jepsen-style crash check of the emulator's store: concurrent writers, kill -9, restart, verify.

Used by ``test_durable.py`` (a few cycles) and ``benchmarks/crash_store.py`` (30 or more). Each cycle:

1. start (or restart) a real ``blockkit emulator start --data DIR`` subprocess;
2. check everything acknowledged so far (``verify``);
3. run the writers for a random 0.4-2.5 s, then SIGKILL the server while they write.

The writers (threads, each request on its own connection): goods purchases, half of them with an
``idempotencyKey``; app-storage ``set`` of a few keys over and over; fund deposits of 1 Buzz. A write
is *acknowledged* when its 2xx answer arrived, and *indeterminate* when it was in flight at the kill
(the check accepts it present or absent). Workflows are not written here (their own tests cover them).

``verify`` checks, straight from the database file and over HTTP:

- every acknowledged purchase is a row, and its idempotency key replays the same purchase (200);
- the entitlements served over HTTP are exactly the purchases in the store;
- every app-storage key holds its last acknowledged value or the one in flight after it;
- the deposits of the fund number at least the acknowledged ones and at most those plus the in-flight;
- Buzz is conserved: each pool's balance is the sum of its ledger, no balance is negative, each
  purchase was charged its price once (its ledger legs equal its recorded debits) and paid the owner
  its share, no goods charge lacks its purchase, each stored key's 200 answer names a purchase that
  exists, the fund's deposits equal their debits;
- ``PRAGMA integrity_check`` is ``ok``.
"""

from __future__ import annotations

import http.client
import json
import random
import signal
import sqlite3
import threading
import time
import types
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from emulator_helpers import Started, start_process

APP = "crash-app"
BLOCK = "crash-block"
INSTANCE = "crash-instance"
GOODS = 4000  # one-time goods, each bought once (the catalogue is read on every purchase: keep it small)
# What a request cut by the kill raises: a reset, a refused connection, a body cut short.
IN_FLIGHT = (OSError, http.client.HTTPException, ValueError)
SCOPES = ["goods:purchase:self", "goods:read:self", "apps:storage:read", "apps:storage:write"]


@dataclass
class Ledger:
    """What the clients were told, across every cycle."""

    purchases: dict[str, str] = field(default_factory=dict)       # good id -> purchase id (acknowledged)
    keys: dict[str, str] = field(default_factory=dict)            # good id -> idempotency key it was sent with
    keyed_at: dict[str, float] = field(default_factory=dict)      # good id -> when its keyed 200 arrived
    refused: dict[str, int] = field(default_factory=dict)         # status -> count of refusals
    storage: dict[str, int] = field(default_factory=dict)         # key -> last acknowledged n
    storage_inflight: dict[str, int] = field(default_factory=dict)  # key -> n in flight at a kill
    deposits_acked: int = 0
    deposits_inflight: int = 0
    indeterminate: int = 0
    acknowledged: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


@dataclass
class World:
    data: Path
    buyer: int
    owner: int
    depositor: int
    api_key: str
    fund_id: str = ""
    base_url: str = ""
    orchestration_url: str = ""
    token: str = ""
    next_good: int = 0


def _post(url: str, body: Any, headers: dict[str, str], timeout: float = 15) -> tuple[int, Any]:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json", **headers})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as exc:
        raw = exc.read()
        try:
            return exc.code, json.loads(raw or b"null")
        except ValueError:
            return exc.code, raw.decode("utf-8", "replace")


def prepare(data: Path) -> World:
    """Register the app's catalogue and block instance, an API key and plenty of Buzz (before the first start)."""
    from blockkit.emulator.services import blocktokens, buzz, goods
    from blockkit.emulator.store.clock import Clock
    from blockkit.emulator.services.orchestration.funds import create_api_key
    from blockkit.emulator.seed import ensure_seeded, landmarks
    from blockkit.emulator.store import Store

    with Store.open(data) as store:
        ensure_seeded(store, 1, "small")
        clock = Clock(store)
        marks = landmarks(store)
        buyer, owner = int(marks["member"]["id"]), int(marks["free_user"]["id"])
        depositor_name = str(marks["member"]["username"])
        catalogue = [{"id": f"g-{n:05d}", "title": f"Good {n}", "priceBuzz": 1 + n % 3} for n in range(GOODS)]
        goods.register_catalogue(store, clock, APP, BLOCK, catalogue, owner_user_id=owner)
        blocktokens.register_block_instance(store, clock.iso(), instance_id=INSTANCE, block_id=BLOCK, app_id=APP,
                                            scopes=SCOPES)
        key = create_api_key(store, clock, depositor_name)["api_key"]
        for user in (buyer, owner):
            buzz.purchase(store, clock, user, 1_000_000)
    return World(data, buyer, owner, buyer, key)


def _mint(world: World) -> str:
    from blockkit.emulator.services import blocktokens, consent
    from blockkit.emulator.store.clock import Clock
    from blockkit.emulator.store import Store

    with Store.open(world.data, check=False) as store:
        state = types.SimpleNamespace(store=store, clock=Clock(store))
        consent.grant_declared(store, state.clock, world.buyer, INSTANCE)  # the buyer consented (as an install does)
        minted = blocktokens.mint_block_token(state, instance_id=INSTANCE, user_id=world.buyer)  # type: ignore[arg-type]
        return minted.token


def connect(world: World, started: Started) -> None:
    world.base_url = str(started.info["base_url"]).rstrip("/")
    world.orchestration_url = str(started.info["orchestration_url"]).rstrip("/")
    world.token = _mint(world)
    if not world.fund_id:
        status, fund = _post(f"{world.orchestration_url}/v2/consumer/funds", {},
                             {"Authorization": f"Bearer {world.api_key}"})
        assert status == 201, (status, fund)
        world.fund_id = str(fund["id"])


# --- writers ------------------------------------------------------------------------------------

def _purchase_writer(world: World, ledger: Ledger, stop: threading.Event, with_keys: bool) -> None:
    auth = {"Authorization": f"Bearer {world.token}"}
    while not stop.is_set():
        with ledger.lock:
            good = f"g-{world.next_good % GOODS:05d}"
            world.next_good += 1
        body: dict[str, Any] = {"goodId": good}
        if with_keys:
            body["idempotencyKey"] = f"key-{good}"
        try:
            status, answer = _post(f"{world.base_url}/api/v1/blocks/goods/purchase", body, auth)
        except IN_FLIGHT:
            with ledger.lock:
                ledger.indeterminate += 1
            return
        with ledger.lock:
            if status == 200:
                ledger.purchases[good] = str(answer["purchase"]["id"])
                ledger.acknowledged += 1
                if with_keys:
                    ledger.keys[good] = body["idempotencyKey"]
                    ledger.keyed_at[good] = time.monotonic()
            else:
                ledger.refused[str(status)] = ledger.refused.get(str(status), 0) + 1


def _storage_writer(world: World, ledger: Ledger, stop: threading.Event, name: str) -> None:
    auth = {"Authorization": f"Bearer {world.token}"}
    n = 0
    while not stop.is_set():
        key = f"{name}-{n % 5}"
        n += 1
        value = {"n": n, "pad": "x" * random.randrange(10, 2000)}
        try:
            status, _ = _post(f"{world.base_url}/api/v1/blocks/app-storage/set", {"key": key, "value": value}, auth)
        except IN_FLIGHT:
            with ledger.lock:
                ledger.indeterminate += 1
                ledger.storage_inflight[key] = n
            return
        with ledger.lock:
            if status == 200:
                ledger.storage[key] = n
                ledger.storage_inflight.pop(key, None)
                ledger.acknowledged += 1
            else:
                ledger.refused[str(status)] = ledger.refused.get(str(status), 0) + 1


def _deposit_writer(world: World, ledger: Ledger, stop: threading.Event) -> None:
    auth = {"Authorization": f"Bearer {world.api_key}"}
    while not stop.is_set():
        try:
            status, _ = _post(f"{world.orchestration_url}/__emulator/funds/{world.fund_id}/deposits",
                              {"accountType": "blue", "amount": 1}, auth)
        except IN_FLIGHT:
            with ledger.lock:
                ledger.indeterminate += 1
                ledger.deposits_inflight += 1
            return
        with ledger.lock:
            if status == 201:
                ledger.deposits_acked += 1
                ledger.acknowledged += 1
            else:
                ledger.refused[str(status)] = ledger.refused.get(str(status), 0) + 1


def load_and_kill(world: World, ledger: Ledger, started: Started, seconds: float, cycle: int) -> None:
    """Run every writer for ``seconds``, then SIGKILL the server while they write."""
    stop = threading.Event()
    threads = [threading.Thread(target=_purchase_writer, args=(world, ledger, stop, keyed), daemon=True)
               for keyed in (True, True, False)]
    threads += [threading.Thread(target=_storage_writer, args=(world, ledger, stop, f"c{cycle}w{i}"), daemon=True)
                for i in range(2)]
    threads.append(threading.Thread(target=_deposit_writer, args=(world, ledger, stop), daemon=True))
    for thread in threads:
        thread.start()
    time.sleep(seconds)
    started.process.send_signal(signal.SIGKILL)
    started.process.communicate(timeout=30)
    stop.set()
    for thread in threads:
        thread.join(timeout=30)


# --- the check ----------------------------------------------------------------------------------

def verify(world: World, ledger: Ledger) -> dict[str, Any]:
    """Every check of the module docstring; returns the problems found (empty lists when all hold)."""
    db = sqlite3.connect(f"file:{world.data / 'emulator.sqlite3'}?mode=ro", uri=True)
    try:
        problems: dict[str, list[Any]] = {}
        rows = dict(db.execute("SELECT good_id, id FROM goods_purchases WHERE app_id = ?", (APP,)).fetchall())
        problems["missing_purchases"] = [g for g, pid in ledger.purchases.items() if rows.get(g) != pid]
        stored = {k: json.loads(v)["n"] for k, v in db.execute(
            "SELECT key, value FROM app_storage WHERE block_id = ? AND user_id = ?", (BLOCK, world.buyer))}
        problems["storage"] = [
            (k, n, stored.get(k)) for k, n in ledger.storage.items()
            if stored.get(k) not in {n, ledger.storage_inflight.get(k)}]
        deposits = db.execute("SELECT count(*) FROM fund_deposits WHERE fund_id = ?", (world.fund_id,)).fetchone()[0]
        if not ledger.deposits_acked <= deposits <= ledger.deposits_acked + ledger.deposits_inflight:
            problems["deposits"] = [(ledger.deposits_acked, deposits, ledger.deposits_inflight)]
        problems["balance_ne_ledger"] = db.execute(
            "SELECT a.user_id, a.pool, a.balance, coalesce(sum(t.amount), 0) FROM buzz_accounts a LEFT JOIN"
            " buzz_transactions t ON t.user_id = a.user_id AND t.pool = a.pool GROUP BY a.user_id, a.pool"
            " HAVING a.balance != coalesce(sum(t.amount), 0) OR a.balance < 0").fetchall()
        problems["purchase_charge_mismatch"] = []
        for pid, price, debits, owner_amount in db.execute(
                "SELECT id, price, debits, owner_amount FROM goods_purchases WHERE refund_state = 'none'"):
            legs = {p: -a for p, a in db.execute("SELECT pool, sum(amount) FROM buzz_transactions WHERE kind = 'good'"
                                                 " AND reference = ? GROUP BY pool", (pid,))}
            paid = db.execute("SELECT coalesce(sum(amount), 0) FROM buzz_transactions WHERE kind = 'good_sale'"
                              " AND reference = ?", (pid,)).fetchone()[0]
            if legs != json.loads(debits) or sum(legs.values()) != price or paid != owner_amount:
                problems["purchase_charge_mismatch"].append((pid, price, legs, paid))
        problems["charge_without_purchase"] = db.execute(
            "SELECT t.reference FROM buzz_transactions t LEFT JOIN goods_purchases p ON p.id = t.reference"
            " WHERE t.kind IN ('good', 'good_sale') AND p.id IS NULL").fetchall()
        problems["key_answer_without_purchase"] = [
            key for key, status, answer in db.execute(
                "SELECT key, status, answer FROM idempotency_keys WHERE app_id = ?", (APP,))
            if status == 200 and json.loads(answer)["purchase"]["id"] not in set(rows.values())]
        debited = -db.execute("SELECT coalesce(sum(amount), 0) FROM buzz_transactions WHERE kind = 'fund_deposit'"
                              " AND reference = ?", (world.fund_id,)).fetchone()[0]
        held = db.execute("SELECT coalesce(sum(amount), 0) FROM fund_deposits WHERE fund_id = ?",
                          (world.fund_id,)).fetchone()[0]
        if debited != held:
            problems["fund_deposit_mismatch"] = [(held, debited)]
        integrity = db.execute("PRAGMA integrity_check").fetchone()[0]
        if integrity != "ok":
            problems["integrity"] = [integrity]
    finally:
        db.close()
    # Over HTTP: a few acknowledged keyed purchases replay their first answer after the restart.
    auth = {"Authorization": f"Bearer {world.token}"}
    # Only keys well inside their lifetime (goods.IDEMPOTENCY_TTL_SECONDS): an expired key is a new request.
    from blockkit.emulator.services.goods import IDEMPOTENCY_TTL_SECONDS

    live = time.monotonic() - IDEMPOTENCY_TTL_SECONDS + 60
    keyed = [g for g in ledger.purchases if g in ledger.keys and ledger.keyed_at[g] > live]
    replays = []
    for good in random.sample(keyed, min(5, len(keyed))):
        status, answer = _post(f"{world.base_url}/api/v1/blocks/goods/purchase",
                               {"goodId": good, "idempotencyKey": ledger.keys[good]}, auth)
        if status != 200 or answer["purchase"]["id"] != ledger.purchases[good]:
            replays.append((good, status, answer))
    problems["replay_mismatch"] = replays
    # The entitlements the viewer is served are exactly the purchases in the store (each acknowledged one among them).
    request = urllib.request.Request(f"{world.base_url}/api/v1/blocks/entitlements", headers=auth)
    with urllib.request.urlopen(request, timeout=15) as response:
        served = {e["goodId"] for e in json.loads(response.read())["entitlements"]}
    if served != set(rows) or not set(ledger.purchases) <= served:
        problems["entitlements"] = [sorted(served ^ set(rows))[:10], sorted(set(ledger.purchases) - served)[:10]]
    return {k: v for k, v in problems.items() if v}


def run(workdir: Path, cycles: int, *, seed: int = 1, min_s: float = 0.4, max_s: float = 2.5,
        say: Any = None) -> dict[str, Any]:
    """``cycles`` kill/restart cycles in ``workdir``; the figures and every problem found."""
    random.seed(seed)
    data = workdir / "data"
    world = prepare(data)
    ledger = Ledger()
    figures: dict[str, Any] = {"cycles": cycles, "problems": [], "restart_s": []}
    started: Started | None = None
    try:
        for cycle in range(cycles + 1):
            began = time.monotonic()
            started = start_process(workdir / f"ready-{cycle}.json", "--data", str(data))
            figures["restart_s"].append(round(time.monotonic() - began, 2))
            connect(world, started)
            problems = verify(world, ledger)
            if problems:
                figures["problems"].append({"cycle": cycle, **problems})
            if say:
                say(f"cycle {cycle}: acknowledged {ledger.acknowledged}, indeterminate {ledger.indeterminate},"
                    f" problems {problems or 'none'}")
            if cycle == cycles:
                break
            load_and_kill(world, ledger, started, random.uniform(min_s, max_s), cycle)
            started = None
    finally:
        if started is not None and started.process.poll() is None:
            started.stop()
    figures.update(acknowledged=ledger.acknowledged, indeterminate=ledger.indeterminate,
                   purchases=len(ledger.purchases), keyed_purchases=sum(1 for g in ledger.purchases
                                                                        if g in ledger.keys),
                   storage_keys=len(ledger.storage), deposits_acked=ledger.deposits_acked, refused=ledger.refused)
    return figures
