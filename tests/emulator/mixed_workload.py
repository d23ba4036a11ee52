"""Issue 27's mixed workload: N clients of interleaved reads and writes against a real emulator, and the check.

Shared by ``tests/emulator/test_concurrency_mixed.py`` (16 clients, correctness only) and
``benchmarks/bench_mixed.py`` (1 and 16 clients, the timings). The emulator is a real
``blockkit emulator start`` process (its ready file gives the URLs, the data directory and the
access key); this module only speaks HTTP to it, except to set up what a host would have made
beforehand (a goods catalogue, a block instance and its tokens, API keys, OAuth clients, Buzz),
which it writes through the store's own functions, as ``blockkit emulator client add`` does
while the server runs, and to read the store read-only afterwards.

Each client is one seeded user with its own ``httpx.Client`` (keep-alive), and runs a fixed
number of operations (``plan``: the same list for the same seed), each one of ``KINDS``:

- reads: the catalogue (``/api/v1/models``, ``/models/{id}``, ``/images``), OAuth ``userinfo``,
  the block's Buzz balance, its app storage (read-your-writes), its workflows;
- writes: OAuth tokens (client_credentials, and authorization codes with PKCE on a remembered
  consent), app-storage sets and deletes, shared-storage appends and votes (on any client's
  entries), goods purchases and workflow submissions (the orchestration
  origin with an API key, the block route with a block token), each plain, retried with the same
  idempotency key, or (purchases and orchestration submissions) sent twice at once with one key,
  and workflow cancels (a refund).

A write is *acknowledged* when its success answer arrived. ``verify`` then checks, from the
server's own view (HTTP reads, and the SQLite file opened read-only), that every acknowledged
write is there exactly once, that retries with one key were applied once and answered alike,
that no write is there that no one was told about, that every balance moved by exactly the
acknowledged charges, refunds and sales and equals its ledger, and that nothing answered 5xx,
dropped a connection or served a malformed read.
"""

from __future__ import annotations

import json
import random
import sqlite3
import statistics
import threading
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable
from urllib.parse import parse_qs, urlsplit

import httpx

APP = "mixed-app"
BLOCK = "mixed-block"
INSTANCE = "mixed-instance"
SCOPES = ["goods:purchase:self", "goods:read:self", "apps:storage:read", "apps:storage:write",
          "apps:storage:shared:read", "apps:storage:shared:write", "ai:write:budgeted", "buzz:read:self"]
REDIRECT = "http://127.0.0.1:9/callback"
START_BUZZ = 100_000          # blue Buzz each client is given before the run (a ledger entry, before the baseline)
TOKENS_PER_CLIENT = 15        # the provider allows 20 token requests a minute per OAuth client
CODE_FLOWS_MAX = 6            # and 10 authorization requests a minute per user (one is the setup's consent)
STORAGE_KEYS = 4
OWNER_PERCENT = 70            # a good's owner is paid 70% of its price, floored (docs/orchestration-and-goods.md)
ACCESS_KEY_HEADER = "X-Blockkit-Access-Key"
TIMEOUT = httpx.Timeout(60.0)

# The operation kinds and their weights in a client's plan.
KINDS: dict[str, int] = {
    "models list": 10, "model detail": 10, "images list": 8, "userinfo": 5, "buzz balance": 4,
    "storage get": 5, "workflow get": 4,
    "token client_credentials": 4, "token authorization_code": 2, "storage set": 8, "storage delete": 2,
    "shared append": 3, "shared vote": 3,
    "purchase": 4, "purchase keyed retry": 4, "purchase keyed twin": 3,
    "orch submit": 4, "orch submit keyed retry": 4, "orch submit keyed twin": 3,
    "block submit": 4, "block submit keyed retry": 4, "orch cancel": 4,
}
WORKFLOW_STATUSES = {"unassigned", "preparing", "scheduled", "processing", "succeeded", "failed", "expired",
                     "canceled"}


# --- the world a run needs ------------------------------------------------------------------------

@dataclass
class Actor:
    """One client: a seeded user and its credentials."""

    index: int
    user_id: int
    username: str
    api_key: str = ""
    block_token: str = ""
    token_clients: list[tuple[str, str]] = field(default_factory=list)  # confidential clients it owns
    code_client: tuple[str, str] = ("", "")                             # a client it consented to
    session: str = ""                                                    # its bk_session cookie
    access_token: str = ""                                               # for userinfo before it gets its own


@dataclass
class World:
    base_url: str
    auth_url: str
    orchestration_url: str
    access_key: str | None
    data: Path
    actors: list[Actor]
    owner_id: int
    model_ids: list[int]
    version_ids: list[int]
    prices: dict[str, int]
    baseline_ledger_id: int = 0
    baseline_balances: dict[int, int] = field(default_factory=dict)  # user id -> total Buzz before the run
    baseline_workflows: set[str] = field(default_factory=set)       # the clients' workflows before the run
    baseline_purchases: set[str] = field(default_factory=set)       # the app's purchases before the run
    baseline_tokens: set[str] = field(default_factory=set)          # hashes of the clients' tokens before the run
    baseline_entry: int = 0                                         # the last shared entry before the run
    run: int = 0                                                    # which run (names keys and goods apart)
    # Shared entries appended so far in this run, by any client (the others vote on them).
    entries: list[str] = field(default_factory=list)
    entries_lock: threading.Lock = field(default_factory=threading.Lock)


def _store(data: Path) -> Any:
    from blockkit.emulator.store import Store

    return Store.open(data, check=False)  # a second opener of the running server's file


def _goods_of(actor: int, ops: int, runs: int) -> list[dict[str, Any]]:
    """A good for each operation of each run (an operation buys at most one good, once)."""
    return [{"id": f"a{actor}-r{run}-g{n}", "title": f"Good {actor}.{run}.{n}", "priceBuzz": 2 + (actor + n) % 4}
            for run in range(1, runs + 1) for n in range(1, ops + 1)]


def prepare(info: dict[str, Any], clients: int, ops: int, runs: int = 1) -> World:
    """Set up ``clients`` actors on a running emulator (``info``: its ready file) for ``runs`` runs of ``ops``
    operations each."""
    from blockkit.emulator.services import blocktokens, buzz, consent, goods
    from blockkit.emulator.store.clock import Clock
    from blockkit.emulator.services.oauth.clients import register_client
    from blockkit.emulator.services.orchestration.funds import create_api_key
    from blockkit.emulator.store import users as users_store

    data = Path(info["data"])
    with _store(data) as store:
        clock = Clock(store)
        with store.read() as db:
            people = [u for u in users_store.list_users(db)
                      if u.id > 0 and not u.deleted and u.status == "active" and not u.is_moderator]
        if len(people) < clients + 1:
            raise AssertionError(f"the seed has {len(people)} active users; {clients} clients and an owner need more")
        actors = [Actor(i, p.id, p.username) for i, p in enumerate(people[:clients])]
        owner = people[clients]
        catalogue = [good for a in actors for good in _goods_of(a.index, ops, runs)]
        goods.register_catalogue(store, clock, APP, BLOCK, catalogue, owner_user_id=owner.id)
        blocktokens.register_block_instance(store, clock.iso(), instance_id=INSTANCE, block_id=BLOCK, app_id=APP,
                                            scopes=SCOPES)
        buzz.balance(store, clock, owner.id)  # its accounts open now, not during the run
        state = _State(store, clock)
        for actor in actors:
            actor.api_key = str(create_api_key(store, clock, actor.username)["api_key"])
            consent.grant_declared(store, clock, actor.user_id, INSTANCE)  # the actor consented (as an install does)
            actor.block_token = blocktokens.mint_block_token(state, instance_id=INSTANCE,  # type: ignore[arg-type]
                                                             user_id=actor.user_id).token
            buzz.purchase(store, clock, actor.user_id, START_BUZZ)
            for n in range(ops // TOKENS_PER_CLIENT + 2):  # the last one gives the setup's token
                reg = register_client(store, clock, name=f"mixed {actor.index}.{n}", redirect_uris=[REDIRECT],
                                      confidential=True, owner=actor.username)
                actor.token_clients.append((reg.client_id, str(reg.client_secret)))
            reg = register_client(store, clock, name=f"mixed code {actor.index}", redirect_uris=[REDIRECT],
                                  confidential=True)
            actor.code_client = (reg.client_id, str(reg.client_secret))
    world = World(base_url=str(info["base_url"]).rstrip("/"), auth_url=str(info["auth_url"]).rstrip("/"),
                  orchestration_url=str(info["orchestration_url"]).rstrip("/"), access_key=info.get("access_key"),
                  data=data, actors=actors, owner_id=owner.id, model_ids=[], version_ids=[],
                  prices={g["id"]: g["priceBuzz"] for g in catalogue})
    with httpx.Client(timeout=TIMEOUT) as http:
        page = http.get(f"{world.base_url}/api/v1/models", params={"limit": 50})
        page.raise_for_status()
        for item in page.json()["items"]:
            world.model_ids.append(int(item["id"]))
            world.version_ids.extend(int(v["id"]) for v in item.get("modelVersions", [])[:1])
        for actor in actors:
            client_id, secret = actor.token_clients.pop()
            actor.access_token = _client_credentials(http, world, client_id, secret).json()["access_token"]
            actor.session = _sign_in(world, actor)
            _consent(http, world, actor)
    return world


class _State:
    """What ``blocktokens.mint_block_token`` reads: a store and a clock."""

    def __init__(self, store: Any, clock: Any) -> None:
        self.store, self.clock = store, clock


def _client_credentials(http: httpx.Client, world: World, client_id: str, secret: str) -> httpx.Response:
    return http.post(f"{world.auth_url}/api/auth/oauth/token",
                     data={"grant_type": "client_credentials", "client_id": client_id, "client_secret": secret})


def _sign_in(world: World, actor: Actor) -> str:
    from blockkit.emulator.http.oauth.web import SESSION_COOKIE

    headers = {ACCESS_KEY_HEADER: world.access_key} if world.access_key else {}
    with httpx.Client(timeout=TIMEOUT) as browser:
        answer = browser.post(f"{world.auth_url}/login", data={"username": actor.username, "returnUrl": "/"},
                              headers=headers)
        if answer.status_code != 302 or SESSION_COOKIE not in browser.cookies:
            raise AssertionError(f"sign-in of {actor.username}: {answer.status_code} {answer.text[:200]}")
        return str(browser.cookies[SESSION_COOKIE])


def _pkce() -> tuple[str, str]:
    import secrets

    from authlib.oauth2.rfc7636 import create_s256_code_challenge

    verifier = secrets.token_urlsafe(48)
    return verifier, create_s256_code_challenge(verifier)


def _authorize(http: httpx.Client, world: World, actor: Actor, challenge: str, state: str) -> httpx.Response:
    params = {"response_type": "code", "client_id": actor.code_client[0], "redirect_uri": REDIRECT, "scope": "1",
              "state": state, "code_challenge": challenge, "code_challenge_method": "S256"}
    answer = http.get(f"{world.auth_url}/api/auth/oauth/authorize", params=params,
                      headers={"Accept": "text/html", "Cookie": f"bk_session={actor.session}"})
    http.cookies.clear()  # the session goes only where it is sent on purpose
    return answer


def _consent(http: httpx.Client, world: World, actor: Actor) -> None:
    """Approve the code client once, remembered, as a person on the consent page would."""
    import html
    import re

    first = _authorize(http, world, actor, _pkce()[1], "setup")
    if first.status_code != 303:
        raise AssertionError(f"authorize for {actor.username}: {first.status_code} {first.text[:200]}")
    cookie = {"Cookie": f"bk_session={actor.session}", "Accept": "text/html"}
    page = http.get(world.auth_url + first.headers["location"], headers=cookie)
    form = {k: html.unescape(v) for k, v in re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)">',
                                                         page.text)}
    form.update(approved="true", remember="true")
    done = http.post(f"{world.auth_url}/api/auth/oauth/authorize", data=form, headers=cookie)
    http.cookies.clear()
    if done.status_code != 302:
        raise AssertionError(f"consent for {actor.username}: {done.status_code} {done.text[:200]}")


def baseline(world: World) -> None:
    """Start a run: what the store holds before it (the ledger's last row, every client's and the owner's
    total, the workflows, purchases and tokens already there)."""
    world.run += 1
    world.entries = []
    with _readonly(world.data) as db:
        world.baseline_entry = db.execute("SELECT coalesce(max(id), 0) FROM shared_entries").fetchone()[0]
        world.baseline_purchases = {r[0] for r in db.execute("SELECT id FROM goods_purchases WHERE app_id = ?",
                                                             (APP,))}
        world.baseline_tokens = set(_token_hashes(db, world.actors))
        world.baseline_ledger_id = db.execute("SELECT coalesce(max(id), 0) FROM buzz_transactions").fetchone()[0]
        world.baseline_balances = _totals(db, [a.user_id for a in world.actors] + [world.owner_id])
        users = [a.user_id for a in world.actors]
        world.baseline_workflows = {r[0] for r in db.execute(
            f"SELECT id FROM workflows WHERE user_id IN ({','.join('?' * len(users))})", users)}


def _token_hashes(db: sqlite3.Connection, actors: list[Actor]) -> list[str]:
    clients = [c for a in actors for c in (*[t[0] for t in a.token_clients], a.code_client[0])]
    return [r[0] for r in db.execute(
        f"SELECT token_hash FROM oauth_access_tokens WHERE client_id IN ({','.join('?' * len(clients))})", clients)]


@contextmanager
def _readonly(data: Path) -> Iterator[sqlite3.Connection]:
    """The running server's database, read-only (closed on exit).

    ``query_only`` rather than ``mode=ro``: a ``mode=ro`` connection cannot open a WAL database
    at a moment its ``-shm`` file is missing, and fails now and then with "unable to open".
    """
    db = sqlite3.connect(data / "emulator.sqlite3", timeout=30)
    db.execute("PRAGMA query_only = ON")
    try:
        yield db
    finally:
        db.close()


def _totals(db: sqlite3.Connection, users: list[int]) -> dict[int, int]:
    marks = ",".join("?" * len(users))
    found = dict(db.execute(f"SELECT user_id, sum(balance) FROM buzz_accounts WHERE user_id IN ({marks})"
                            " GROUP BY user_id", users).fetchall())
    return {u: int(found.get(u, 0)) for u in users}


# --- what the clients were told -----------------------------------------------------------------

@dataclass
class Told:
    """One client's record: what it was answered, and how long each operation took."""

    workflows: dict[str, int] = field(default_factory=dict)      # acknowledged workflow id -> cost
    keyed_workflows: dict[str, str] = field(default_factory=dict)  # externalId -> the workflow answered
    orch_workflows: list[str] = field(default_factory=list)      # submitted with the API key (cancellable)
    canceled: set[str] = field(default_factory=set)              # 204 to a cancel
    purchases: dict[str, str] = field(default_factory=dict)      # purchase id -> good id
    storage: dict[str, Any] = field(default_factory=dict)        # key -> last acknowledged value
    entries: dict[str, Any] = field(default_factory=dict)        # shared entry key -> the value appended
    votes: set[str] = field(default_factory=set)                 # shared entry keys it voted for
    tokens: list[str] = field(default_factory=list)              # access tokens issued to it
    problems: list[str] = field(default_factory=list)
    timings: list[tuple[str, float]] = field(default_factory=list)
    statuses: dict[int, int] = field(default_factory=lambda: defaultdict(int))


def plan(index: int, ops: int, seed: int = 27) -> list[str]:
    """Client ``index``'s operations: each kind its share of ``ops`` by weight (largest remainders round),
    in an order shuffled by the seed. Every client runs the same mix, so 1 and 16 clients compare."""
    total = sum(KINDS.values())
    shares = {kind: ops * weight / total for kind, weight in KINDS.items()}
    counts = {kind: int(share) for kind, share in shares.items()}
    for kind in sorted(shares, key=lambda k: counts[k] - shares[k])[:ops - sum(counts.values())]:
        counts[kind] += 1
    chosen = [kind for kind, count in counts.items() for _ in range(count)]
    random.Random(seed * 1000 + index).shuffle(chosen)
    flows = 0
    for n, kind in enumerate(chosen):  # the provider's per-user authorization limit
        if kind == "token authorization_code":
            flows += 1
            if flows > CODE_FLOWS_MAX:
                chosen[n] = "token client_credentials"
    return chosen


class Client:
    """One client's thread of work: ``run`` performs its plan, recording into ``told``."""

    def __init__(self, world: World, actor: Actor, kinds: list[str],
                 conform: Callable[[httpx.Response], list[str]] | None = None) -> None:
        self.world, self.actor, self.kinds, self.conform = world, actor, kinds, conform
        self.told = Told()
        self.http = httpx.Client(timeout=TIMEOUT)
        self.twin = httpx.Client(timeout=TIMEOUT)  # the second connection of a request sent twice at once
        self.rng = random.Random(actor.index)
        self.n = 0
        self.tag = f"r{world.run}"  # keys and goods of this run only
        self.token_uses = 0

    # --- plumbing -----------------------------------------------------------------------------
    def request(self, http: httpx.Client, what: str, method: str, url: str, **kwargs: Any) -> httpx.Response | None:
        try:
            answer = http.request(method, url, **kwargs)
        except httpx.HTTPError as exc:
            self.told.problems.append(f"{what}: {type(exc).__name__}: {exc}")
            return None
        self.told.statuses[answer.status_code] += 1
        if answer.status_code >= 500:
            self.told.problems.append(f"{what}: {answer.status_code} {answer.text[:300]}")
            return None
        return answer

    def expect(self, answer: httpx.Response | None, what: str, status: int = 200) -> Any:
        """The JSON of an answer with ``status``; None (and a problem) otherwise."""
        if answer is None:
            return None
        if answer.status_code != status:
            self.told.problems.append(f"{what}: {answer.status_code} (wanted {status}) {answer.text[:300]}")
            return None
        if status == 204:
            return True
        try:
            return answer.json()
        except ValueError:
            self.told.problems.append(f"{what}: the body is not JSON: {answer.content[:200]!r}")
            return None

    def malformed(self, what: str, body: Any) -> None:
        self.told.problems.append(f"{what}: malformed answer {json.dumps(body)[:300]}")

    def block(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.actor.block_token}"}

    def key(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.actor.api_key}"}

    def twice_at_once(self, what: str, method: str, url: str, **kwargs: Any) -> list[httpx.Response | None]:
        answers: list[httpx.Response | None] = [None, None]

        def other() -> None:
            answers[1] = self.request(self.twin, what, method, url, **kwargs)

        thread = threading.Thread(target=other)
        thread.start()
        answers[0] = self.request(self.http, what, method, url, **kwargs)
        thread.join()
        return answers

    # --- the run ------------------------------------------------------------------------------
    def run(self, start: threading.Barrier | None = None) -> Told:
        try:
            if start is not None:
                start.wait()
            for kind in self.kinds:
                self.n += 1
                began = time.perf_counter()
                done = getattr(self, "op_" + kind.replace(" ", "_"))() or kind  # an op may stand in another
                self.told.timings.append((done, time.perf_counter() - began))
        finally:
            self.http.close()
            self.twin.close()
        return self.told

    # --- reads --------------------------------------------------------------------------------
    def catalogue_read(self, what: str, path: str, params: dict[str, Any]) -> Any:
        answer = self.request(self.http, what, "GET", self.world.base_url + path, params=params)
        body = self.expect(answer, what)
        if answer is not None and body is not None and self.conform is not None:
            self.told.problems.extend(f"{what}: {p}" for p in self.conform(answer))
        return body

    def op_models_list(self) -> None:
        params: dict[str, Any] = {"limit": self.rng.choice([5, 20, 100])}
        if self.rng.random() < 0.5:
            params["sort"] = self.rng.choice(["Highest Rated", "Most Downloaded", "Newest"])
        body = self.catalogue_read("models list", "/api/v1/models", params)
        if body is not None and not (isinstance(body.get("items"), list) and isinstance(body.get("metadata"), dict)
                                     and len(body["items"]) <= params["limit"]):
            self.malformed("models list", body)

    def op_model_detail(self) -> None:
        wanted = self.rng.choice(self.world.model_ids)
        body = self.catalogue_read("model detail", f"/api/v1/models/{wanted}", {})
        if body is not None and not (body.get("id") == wanted and isinstance(body.get("modelVersions"), list)):
            self.malformed("model detail", body)

    def op_images_list(self) -> None:
        params: dict[str, Any] = {"limit": self.rng.choice([10, 50, 100])}
        if self.rng.random() < 0.3:
            params["modelId"] = self.rng.choice(self.world.model_ids)
        body = self.catalogue_read("images list", "/api/v1/images", params)
        if body is not None and not (isinstance(body.get("items"), list) and isinstance(body.get("metadata"), dict)):
            self.malformed("images list", body)

    def op_userinfo(self) -> None:
        token = self.told.tokens[-1] if self.told.tokens else self.actor.access_token
        answer = self.request(self.http, "userinfo", "GET", f"{self.world.auth_url}/api/auth/oauth/userinfo",
                              headers={"Authorization": f"Bearer {token}"})
        body = self.expect(answer, "userinfo")
        if body is not None and body.get("sub") != str(self.actor.user_id):
            self.malformed("userinfo", body)

    def op_buzz_balance(self) -> None:
        body = self.expect(self.request(self.http, "buzz balance", "GET",
                                        f"{self.world.base_url}/api/v1/blocks/buzz", headers=self.block()),
                           "buzz balance")
        if body is not None and not (set(body) == {"blue", "green", "yellow"} and all(
                isinstance(v, int) and v >= 0 for v in body.values())):
            self.malformed("buzz balance", body)

    def op_storage_get(self) -> None:
        key = f"{self.tag}-k{self.rng.randrange(STORAGE_KEYS)}"
        body = self.expect(self.request(self.http, "storage get", "POST",
                                        f"{self.world.base_url}/api/v1/blocks/app-storage/get", json={"key": key},
                                        headers=self.block()), "storage get")
        if body is not None and body != {"value": self.told.storage.get(key)}:  # this client is the key's only writer
            self.told.problems.append(f"storage get {key}: read {body!r} after writing"
                                      f" {self.told.storage.get(key)!r}")

    def op_workflow_get(self) -> str | None:
        if not self.told.workflows:
            self.op_models_list()
            return "models list"
        wanted = self.rng.choice(sorted(self.told.orch_workflows or self.told.workflows))
        body = self.expect(self.request(self.http, "workflow get", "GET",
                                        f"{self.world.orchestration_url}/v2/consumer/workflows/{wanted}",
                                        headers=self.key()), "workflow get")
        if body is not None and not (body.get("id") == wanted and body.get("status") in WORKFLOW_STATUSES):
            self.malformed("workflow get", body)
        return None

    # --- writes -------------------------------------------------------------------------------
    def op_token_client_credentials(self) -> None:
        client_id, secret = self.actor.token_clients[self.token_uses // TOKENS_PER_CLIENT]
        self.token_uses += 1
        answer = self.request(self.http, "token", "POST", f"{self.world.auth_url}/api/auth/oauth/token",
                              data={"grant_type": "client_credentials", "client_id": client_id,
                                    "client_secret": secret})
        body = self.expect(answer, "token client_credentials")
        if body is not None:
            if isinstance(body.get("access_token"), str):
                self.told.tokens.append(body["access_token"])
            else:
                self.malformed("token client_credentials", body)

    def op_token_authorization_code(self) -> None:
        verifier, challenge = _pkce()
        state = f"s{self.n}"
        try:
            answer = _authorize(self.http, self.world, self.actor, challenge, state)
        except httpx.HTTPError as exc:
            self.told.problems.append(f"authorize: {type(exc).__name__}: {exc}")
            return
        self.told.statuses[answer.status_code] += 1
        location = answer.headers.get("location", "")
        query = parse_qs(urlsplit(location).query)
        if answer.status_code != 302 or not location.startswith(REDIRECT) or query.get("state") != [state]:
            self.told.problems.append(f"authorize: {answer.status_code} {location[:200]} {answer.text[:200]}")
            return
        client_id, secret = self.actor.code_client
        body = self.expect(self.request(
            self.http, "token authorization_code", "POST", f"{self.world.auth_url}/api/auth/oauth/token",
            data={"grant_type": "authorization_code", "code": query["code"][0], "code_verifier": verifier,
                  "redirect_uri": REDIRECT, "client_id": client_id, "client_secret": secret}),
            "token authorization_code")
        if body is not None:
            if isinstance(body.get("access_token"), str):
                self.told.tokens.append(body["access_token"])
            else:
                self.malformed("token authorization_code", body)

    def op_storage_set(self) -> None:
        key = f"{self.tag}-k{self.rng.randrange(STORAGE_KEYS)}"
        value = {"client": self.actor.index, "n": self.n, "pad": "x" * self.rng.randrange(0, 400)}
        body = self.expect(self.request(self.http, "storage set", "POST",
                                        f"{self.world.base_url}/api/v1/blocks/app-storage/set",
                                        json={"key": key, "value": value}, headers=self.block()), "storage set")
        if body is not None:
            if body.get("ok") is True:
                self.told.storage[key] = value
            else:
                self.malformed("storage set", body)

    def op_storage_delete(self) -> None:
        key = f"{self.tag}-k{self.rng.randrange(STORAGE_KEYS)}"
        body = self.expect(self.request(self.http, "storage delete", "POST",
                                        f"{self.world.base_url}/api/v1/blocks/app-storage/delete", json={"key": key},
                                        headers=self.block()), "storage delete")
        if body is not None:
            if body == {"ok": True, "deleted": key in self.told.storage}:
                self.told.storage.pop(key, None)
            else:
                self.told.problems.append(f"storage delete {key}: {body!r}, holding {self.told.storage.get(key)!r}")

    def op_shared_append(self) -> None:
        value = {"title": f"entry {self.actor.index}.{self.n}", "data": {"n": self.n}}
        body = self.expect(self.request(self.http, "shared append", "POST",
                                        f"{self.world.base_url}/api/v1/blocks/shared-storage/append",
                                        json={"value": value}, headers=self.block()), "shared append")
        if body is not None:
            if isinstance(body.get("key"), str) and body["key"] not in self.told.entries:
                self.told.entries[body["key"]] = value
                with self.world.entries_lock:
                    self.world.entries.append(body["key"])
            else:
                self.malformed("shared append", body)

    def op_shared_vote(self) -> str | None:
        with self.world.entries_lock:
            choices = [e for e in self.world.entries if e not in self.told.votes]
        if not choices:
            self.op_shared_append()
            return "shared append"
        key = self.rng.choice(choices)
        body = self.expect(self.request(self.http, "shared vote", "POST",
                                        f"{self.world.base_url}/api/v1/blocks/shared-storage/vote", json={"key": key},
                                        headers=self.block()), "shared vote")
        if body is not None:
            if isinstance(body.get("count"), int) and body["count"] >= 1:
                self.told.votes.add(key)
            else:
                self.malformed("shared vote", body)
        return None

    def _good(self) -> str:
        return f"a{self.actor.index}-{self.tag}-g{self.n}"

    def _purchased(self, what: str, answer: httpx.Response | None, good: str) -> str | None:
        body = self.expect(answer, what)
        if body is None:
            return None
        purchase = body.get("purchase") if isinstance(body, dict) else None
        if not (body.get("ok") is True and isinstance(purchase, dict) and purchase.get("goodId") == good
                and purchase.get("priceBuzz") == self.world.prices[good]):
            self.malformed(what, body)
            return None
        self.told.purchases[str(purchase["id"])] = good
        return str(purchase["id"])

    def op_purchase(self) -> None:
        good = self._good()
        self._purchased("purchase", self.request(self.http, "purchase", "POST",
                                                 f"{self.world.base_url}/api/v1/blocks/goods/purchase",
                                                 json={"goodId": good}, headers=self.block()), good)

    def op_purchase_keyed_retry(self) -> None:
        good = self._good()
        body = {"goodId": good, "idempotencyKey": f"buy-{self.actor.index}-{self.tag}-{self.n}"}
        url = f"{self.world.base_url}/api/v1/blocks/goods/purchase"
        first = self._purchased("purchase keyed", self.request(self.http, "purchase keyed", "POST", url, json=body,
                                                               headers=self.block()), good)
        again = self._purchased("purchase keyed retry", self.request(self.http, "purchase keyed retry", "POST", url,
                                                                     json=body, headers=self.block()), good)
        if first is not None and again is not None and first != again:
            self.told.problems.append(f"purchase retry with one key: two purchases {first} and {again}")

    def op_purchase_keyed_twin(self) -> None:
        good = self._good()
        body = {"goodId": good, "idempotencyKey": f"twin-{self.actor.index}-{self.tag}-{self.n}"}
        answers = self.twice_at_once("purchase keyed twin", "POST",
                                     f"{self.world.base_url}/api/v1/blocks/goods/purchase", json=body,
                                     headers=self.block())
        ids = {self._purchased("purchase keyed twin", answer, good) for answer in answers}
        if len(ids) != 1:
            self.told.problems.append(f"purchase twins with one key: answered {sorted(map(str, ids))}")

    def _template(self, external_id: str | None = None) -> dict[str, Any]:
        template: dict[str, Any] = {"steps": [{"$type": "textToImage", "name": "gen", "input": {
            "prompt": f"mixed {self.actor.index} {self.n}", "width": 64, "height": 64, "seed": self.n}}]}
        if external_id is not None:
            template["externalId"] = external_id
        return template

    def _submitted(self, what: str, answer: httpx.Response | None) -> str | None:
        body = self.expect(answer, what)
        if body is None:
            return None
        cost = (body.get("cost") or {}).get("total") if isinstance(body, dict) else None
        if not (isinstance(body.get("id"), str) and isinstance(cost, int) and cost > 0):
            self.malformed(what, body)
            return None
        seen = self.told.workflows.setdefault(body["id"], cost)
        if seen != cost:
            self.told.problems.append(f"{what}: workflow {body['id']} cost {cost}, earlier {seen}")
        if body["id"] not in self.told.orch_workflows:
            self.told.orch_workflows.append(body["id"])
        return str(body["id"])

    def _orch_submit(self, what: str, template: dict[str, Any], http: httpx.Client | None = None
                     ) -> httpx.Response | None:
        return self.request(http or self.http, what, "POST", f"{self.world.orchestration_url}/v2/consumer/workflows",
                            json=template, headers=self.key())

    def op_orch_submit(self) -> None:
        self._submitted("orch submit", self._orch_submit("orch submit", self._template()))

    def op_orch_submit_keyed_retry(self) -> None:
        key = f"wf-{self.actor.index}-{self.tag}-{self.n}"
        template = self._template(key)
        first = self._submitted("orch submit keyed", self._orch_submit("orch submit keyed", template))
        again = self._submitted("orch submit keyed retry", self._orch_submit("orch submit keyed retry", template))
        self._same_key(key, "orch submit retry", [first, again], external=True)

    def op_orch_submit_keyed_twin(self) -> None:
        key = f"wt-{self.actor.index}-{self.tag}-{self.n}"
        answers = self.twice_at_once("orch submit keyed twin", "POST",
                                     f"{self.world.orchestration_url}/v2/consumer/workflows",
                                     json=self._template(key), headers=self.key())
        self._same_key(key, "orch submit twins", [self._submitted("orch submit keyed twin", a) for a in answers],
                       external=True)

    def _same_key(self, key: str, what: str, ids: list[str | None], *, external: bool = False) -> None:
        """Every answer to one key names one workflow (the store check of ``externalId`` keys is ``verify``'s)."""
        if None in ids:
            return
        if len(set(ids)) != 1:
            self.told.problems.append(f"{what} with one key {key}: answered workflows {ids}")
        if external:
            self.told.keyed_workflows[key] = str(ids[0])

    def _block_submit(self, what: str, key: str | None) -> str | None:
        version = self.rng.choice(self.world.version_ids)
        body: dict[str, Any] = {"body": {"kind": "textToImage", "modelId": self.rng.choice(self.world.model_ids),
                                         "modelVersionId": version,
                                         "params": {"prompt": f"block {self.actor.index} {self.n}", "width": 64,
                                                    "height": 64, "seed": self.n}}}
        if key is not None:
            body["idempotencyKey"] = key
        answer = self.expect(self.request(self.http, what, "POST",
                                          f"{self.world.base_url}/api/v1/blocks/workflows/submit", json=body,
                                          headers=self.block()), what)
        if answer is None:
            return None
        snapshot = answer.get("snapshot") if isinstance(answer, dict) else None
        cost = ((snapshot or {}).get("cost") or {}).get("total")
        if not (isinstance(snapshot, dict) and isinstance(snapshot.get("workflowId"), str)
                and snapshot.get("status") != "failed" and isinstance(cost, int) and cost > 0):
            self.malformed(what, answer)
            return None
        seen = self.told.workflows.setdefault(snapshot["workflowId"], cost)
        if seen != cost:
            self.told.problems.append(f"{what}: workflow {snapshot['workflowId']} cost {cost}, earlier {seen}")
        return str(snapshot["workflowId"])

    def op_block_submit(self) -> None:
        self._block_submit("block submit", None)

    def op_block_submit_keyed_retry(self) -> None:
        key = f"bk-{self.actor.index}-{self.tag}-{self.n}"
        first = self._block_submit("block submit keyed", key)
        again = self._block_submit("block submit keyed retry", key)
        self._same_key(key, "block submit retry", [first, again])

    def op_orch_cancel(self) -> str | None:
        open_ones = [w for w in self.told.orch_workflows if w not in self.told.canceled]
        if not open_ones:
            self.op_orch_submit()
            return "orch submit"
        wanted = open_ones[-1]
        answer = self.request(self.http, "orch cancel", "PUT",
                              f"{self.world.orchestration_url}/v2/consumer/workflows/{wanted}",
                              json={"status": "canceled"}, headers=self.key())
        if answer is None:
            return None
        if answer.status_code == 204:
            self.told.canceled.add(wanted)
        elif answer.status_code == 400 and "already" in answer.text:
            self.told.orch_workflows.remove(wanted)  # it finished first: nothing refunded, nothing to record
        else:
            self.told.problems.append(f"orch cancel: {answer.status_code} {answer.text[:300]}")
        return None


# --- running and checking -----------------------------------------------------------------------

def run(world: World, clients: int, ops: int, *, seed: int = 27,
        conform: Callable[[httpx.Response], list[str]] | None = None) -> tuple[list[Told], float]:
    """Run ``clients`` clients of ``ops`` operations each, all at once; (their records, wall seconds)."""
    baseline(world)
    workers = [Client(world, world.actors[i], plan(i, ops, seed), conform) for i in range(clients)]
    start = threading.Barrier(clients + 1)
    results: list[Told | None] = [None] * clients

    def work(i: int) -> None:
        results[i] = workers[i].run(start)

    threads = [threading.Thread(target=work, args=(i,), name=f"mixed-{i}") for i in range(clients)]
    for thread in threads:
        thread.start()
    start.wait()
    began = time.perf_counter()
    for thread in threads:
        thread.join()
    wall = time.perf_counter() - began
    missing = [i for i, r in enumerate(results) if r is None]
    if missing:
        raise AssertionError(f"clients {missing} died (see the thread's traceback above)")
    return [r for r in results if r is not None], wall


def verify(world: World, told: list[Told]) -> dict[str, list[Any]]:
    """Every check of the module docstring; the problems found, by check (empty when all hold)."""
    problems: dict[str, list[Any]] = defaultdict(list)
    for record in told:
        problems["during the run (5xx, dropped connections, malformed reads, retries answered apart)"].extend(
            record.problems)
    actors = world.actors[:len(told)]
    workflows = {w: c for r in told for w, c in r.workflows.items()}
    canceled = {w for r in told for w in r.canceled}
    purchases = {p: g for r in told for p, g in r.purchases.items()}
    with _readonly(world.data) as db:
        users = [a.user_id for a in actors]
        marks = ",".join("?" * len(users))
        # Workflows: every acknowledged one is a row, once; no row that no one was told about.
        rows = {w: c for w, c in db.execute(f"SELECT id, cost FROM workflows WHERE user_id IN ({marks})", users)
                if w not in world.baseline_workflows}
        problems["acknowledged workflows missing or with another cost"] = [
            (w, c, rows.get(w)) for w, c in workflows.items() if rows.get(w) != c]
        problems["workflows no one was told about"] = sorted(set(rows) - set(workflows))
        for actor, record in zip(actors, told):
            for key, wid in record.keyed_workflows.items():
                found = [r[0] for r in db.execute("SELECT id FROM workflows WHERE user_id = ? AND external_id = ?",
                                                  (actor.user_id, key))]
                if found != [wid]:
                    problems["a key's retries applied more than once"].append((key, wid, found))
        # Purchases: the same, for the app's purchase rows.
        bought = {p: g for p, g in db.execute("SELECT id, good_id FROM goods_purchases WHERE app_id = ?", (APP,))
                  if p not in world.baseline_purchases}
        problems["acknowledged purchases missing"] = [(p, g) for p, g in purchases.items() if bought.get(p) != g]
        problems["purchases no one was told about"] = sorted(set(bought) - set(purchases))
        owned = defaultdict(int)
        for good in bought.values():
            owned[good] += 1
        problems["a good bought twice"] = sorted(g for g, n in owned.items() if n > 1)
        # The ledger since the baseline: each row belongs to an acknowledged write, and each write has its rows.
        legs: dict[tuple[str, str], int] = defaultdict(int)
        for kind, reference, amount, user in db.execute(
                "SELECT kind, reference, amount, user_id FROM buzz_transactions WHERE id > ?",
                (world.baseline_ledger_id,)):
            if kind == "good_sale" and user != world.owner_id:
                problems["ledger rows no write explains"].append((kind, reference, amount, user))
            legs[(kind, str(reference))] += amount
        shares = dict(db.execute("SELECT id, owner_amount FROM goods_purchases WHERE app_id = ?", (APP,)).fetchall())
        expected: dict[tuple[str, str], int] = {}
        for wid, cost in workflows.items():
            expected[("workflow", wid)] = -cost
            if wid in canceled:
                expected[("refund", wid)] = cost
        for pid, good in purchases.items():
            expected[("good", pid)] = -world.prices[good]
            share = world.prices[good] * OWNER_PERCENT // 100  # the owner's 70%, floored; the platform keeps the rest
            if share:
                expected[("good_sale", pid)] = share
            if shares.get(pid) != share:
                problems["purchases whose owner's share is not 70% of the price"].append((pid, shares.get(pid), share))
        problems["acknowledged writes whose ledger rows are missing or wrong"] = [
            (k, v, legs.get(k)) for k, v in expected.items() if legs.get(k) != v]
        problems["ledger rows no write explains"].extend((k, v) for k, v in legs.items() if k not in expected)
        # Balances: each equals its ledger, none negative, and each moved by exactly what its owner was told.
        problems["balance differs from its ledger"] = db.execute(
            "SELECT a.user_id, a.pool, a.balance, coalesce(sum(t.amount), 0) FROM buzz_accounts a LEFT JOIN"
            " buzz_transactions t ON t.user_id = a.user_id AND t.pool = a.pool GROUP BY a.user_id, a.pool"
            " HAVING a.balance != coalesce(sum(t.amount), 0) OR a.balance < 0").fetchall()
        after = _totals(db, users + [world.owner_id])
        moved: dict[int, int] = defaultdict(int)
        for actor, record in zip(actors, told):
            moved[actor.user_id] -= sum(record.workflows.values())
            moved[actor.user_id] += sum(record.workflows[w] for w in record.canceled)
            moved[actor.user_id] -= sum(world.prices[g] for g in record.purchases.values())
        moved[world.owner_id] += sum(world.prices[g] * OWNER_PERCENT // 100 for g in purchases.values())
        problems["balances that moved by other than the acknowledged writes"] = [
            (u, world.baseline_balances[u], after[u], moved[u]) for u in after
            if after[u] - world.baseline_balances[u] != moved[u]]
        # App storage: each key holds the last value its only writer was told was stored.
        for actor, record in zip(actors, told):
            stored = {k: json.loads(v) for k, v in db.execute(
                "SELECT key, value FROM app_storage WHERE block_id = ? AND user_id = ? AND key LIKE ?",
                (BLOCK, actor.user_id, f"r{world.run}-%"))}
            if stored != record.storage:
                problems["app storage differs from the acknowledged sets"].append(
                    (actor.index, sorted(set(stored) ^ set(record.storage)),
                     [k for k in record.storage if stored.get(k) != record.storage[k]]))
        # Tokens: each issued token is stored once; no token was stored that no one received.
        from blockkit.emulator.store.tokens import hash_token

        stored_tokens = [h for h in _token_hashes(db, actors) if h not in world.baseline_tokens]
        issued = [hash_token(t) for r in told for t in r.tokens]
        counts: dict[str, int] = defaultdict(int)
        for h in stored_tokens:
            counts[h] += 1
        problems["issued tokens not stored exactly once"] = [h[:12] for h in issued if counts.get(h) != 1]
        problems["stored tokens no one received"] = [h[:12] for h in set(stored_tokens) - set(issued)]
    # Shared storage: the entries appended in this run are exactly the acknowledged ones, each with its value,
    # and each carries exactly the acknowledged votes.
    from blockkit.emulator.services.appstorage import entry_key

    with _readonly(world.data) as db:
        rows = db.execute("SELECT id, created_at, user_id, value FROM shared_entries WHERE block_id = ? AND id > ?",
                          (BLOCK, world.baseline_entry)).fetchall()
        entries = {entry_key(i, created): (user, json.loads(value)) for i, created, user, value in rows}
        voted = {(entry_key(i, created), user) for i, created, user in db.execute(
            "SELECT e.id, e.created_at, v.user_id FROM shared_votes v JOIN shared_entries e ON e.id = v.entry_id"
            " WHERE e.block_id = ? AND e.id > ?", (BLOCK, world.baseline_entry))}
    appended = {k: (a.user_id, v) for a, r in zip(actors, told) for k, v in r.entries.items()}
    problems["shared entries missing or changed"] = [k for k, v in appended.items() if entries.get(k) != v]
    problems["shared entries no one was told about"] = sorted(set(entries) - set(appended))
    cast = {(k, a.user_id) for a, r in zip(actors, told) for k in r.votes}
    problems["votes missing"] = sorted(cast - voted)
    problems["votes no one cast"] = sorted(voted - cast)
    # Over HTTP: every token answers userinfo for its user; every balance the block reads is the store's.
    with httpx.Client(timeout=TIMEOUT) as http:
        for actor, record in zip(actors, told):
            for token in record.tokens:
                answer = http.get(f"{world.auth_url}/api/auth/oauth/userinfo",
                                  headers={"Authorization": f"Bearer {token}"})
                if answer.status_code != 200 or answer.json().get("sub") != str(actor.user_id):
                    problems["tokens the provider does not honour"].append((actor.index, answer.status_code))
            answer = http.get(f"{world.base_url}/api/v1/blocks/buzz",
                              headers={"Authorization": f"Bearer {actor.block_token}"})
            if answer.status_code != 200 or sum(answer.json().values()) != after[actor.user_id]:
                problems["a balance served over HTTP that is not the store's"].append(
                    (actor.index, answer.status_code, answer.text[:100], after[actor.user_id]))
    return {k: v for k, v in problems.items() if v}


def acknowledged(told: list[Told]) -> dict[str, int]:
    """How many writes of each family were acknowledged (for a report, and to show the run did something)."""
    return {"workflows": sum(len(r.workflows) for r in told), "cancels": sum(len(r.canceled) for r in told),
            "purchases": sum(len(r.purchases) for r in told), "tokens": sum(len(r.tokens) for r in told),
            "storage keys": sum(len(r.storage) for r in told), "shared entries": sum(len(r.entries) for r in told),
            "votes": sum(len(r.votes) for r in told),
            "keyed workflows": sum(len(r.keyed_workflows) for r in told)}


def figures(told: list[Told], wall: float) -> list[tuple[str, int, float, float, float]]:
    """Per operation kind: (kind, count, ops/s over the run's wall time, p50 ms, p99 ms); 'all' first."""
    by_kind: dict[str, list[float]] = defaultdict(list)
    for record in told:
        for kind, seconds in record.timings:
            by_kind[kind].append(seconds * 1000)
    everything = [ms for values in by_kind.values() for ms in values]
    rows = [("all", len(everything), len(everything) / wall, *_percentiles(everything))]
    for kind in KINDS:
        if by_kind.get(kind):
            rows.append((kind, len(by_kind[kind]), len(by_kind[kind]) / wall, *_percentiles(by_kind[kind])))
    return rows


def _percentiles(values: list[float]) -> tuple[float, float]:
    if len(values) == 1:
        return values[0], values[0]
    cuts = statistics.quantiles(values, n=100, method="inclusive")
    return cuts[49], cuts[98]
