"""Issue 25: the data directory survives crashes, retries, a second server, bad files and a round trip.

Rows of reliability-2026-11-27 (the ranked problems 3-6, and 7, 9, 10 of its bad-state table) and
security-emulator-2026-11-27 E18; each test is that row's reproduction:

- 4.17: a second server on one ``--data`` (``emulator start`` and ``blockkit dev``) is refused,
  naming the holder's pid; a kill -9 leaves no stale lock;
- 1.8, 2.2, 3.3, E18: an ``idempotencyKey`` is kept in the store: concurrent retries get the one
  stored answer, the answer survives kill -9, and keys expire;
- 5.4: export and import carry blobs, the signing key, the clock and dev's files; the copy answers
  as the original did (blob and media bytes, earlier block tokens);
- 4.3, 4.8, 4.13, 4.14, 4.16: a zero-byte database, a read-only database, a full disk (at start
  and while running), an empty or garbled signing key: one line and exit 2, or 503, never a
  traceback, and the user's file unchanged;
- 1.1-1.5 with idempotency keys: kill -9 under concurrent writers (``crash_harness``).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from emulator_helpers import blockkit, subprocess_env

from blockkit.emulator.services import blocktokens, consent, goods
from blockkit.emulator.store.clock import Clock
from blockkit.emulator.datadir import DataDirInUse
from blockkit.emulator.options import EmulatorOptions
from blockkit.emulator.runtime import Emulator
from blockkit.emulator.seed import landmarks
from blockkit.emulator.store import DB_FILENAME, Store

CATALOGUE = [{"id": f"g-{n:03d}", "title": f"Good {n}", "priceBuzz": 5} for n in range(200)]
SCOPES = ["goods:purchase:self", "goods:read:self", "apps:storage:read", "apps:storage:write"]
PURCHASE = "/api/v1/blocks/goods/purchase"
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def _one_line_exit_2(result: subprocess.CompletedProcess[str], *words: str) -> str:
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    line = result.stderr.strip()
    assert "Traceback" not in line and len(line.splitlines()) == 1, line
    for word in words:
        assert word in line, line
    return line


def _digest(path: Path) -> tuple[int, str]:
    data = path.read_bytes()
    return len(data), hashlib.sha256(data).hexdigest()


def _setup_app(store: Store, clock: Clock, app: str = "app-d") -> tuple[int, str]:
    """Register a catalogue and a block instance; (buyer id, instance id)."""
    marks = landmarks(store)
    goods.register_catalogue(store, clock, app, "blk-d", CATALOGUE, owner_user_id=int(marks["free_user"]["id"]))
    instance = f"inst-{app}"
    blocktokens.register_block_instance(store, clock.iso(), instance_id=instance, block_id="blk-d", app_id=app,
                                        scopes=SCOPES)
    consent.grant_declared(store, clock, int(marks["member"]["id"]), instance)  # the buyer consented (an install)
    return int(marks["member"]["id"]), instance


def _mint(data: Path, instance: str, user_id: int) -> str:
    with Store.open(data, check=False) as store:
        state = types.SimpleNamespace(store=store, clock=Clock(store))
        minted = blocktokens.mint_block_token(state, instance_id=instance, user_id=user_id)  # type: ignore[arg-type]
        return minted.token


def _prepared(data: Path) -> tuple[int, str]:
    from blockkit.emulator.seed import ensure_seeded

    with Store.open(data) as store:
        ensure_seeded(store, 1, "small")
        return _setup_app(store, Clock(store))


# --- 4.17: one server per data directory -----------------------------------------------------------

def test_a_second_server_on_one_data_directory_names_the_holder_and_exits_2(tmp_path: Path, start_emulator) -> None:
    data = tmp_path / "data"
    first = start_emulator("--data", str(data))
    # Before: the second started silently, and the two kept separate clocks over one store.
    line = _one_line_exit_2(blockkit("emulator", "start", "--data", str(data), "--port", "0", timeout=30),
                            str(data), f"pid {first.info['pid']}", "in use")
    assert line.startswith("blockkit emulator: ")
    block = tmp_path / "block"
    shutil.copytree(FIXTURES / "dev" / "wired", block)
    dev = blockkit("dev", str(block), "--trace", str(tmp_path / "trace.jsonl"), timeout=30,
                   env=subprocess_env(BLOCKKIT_DEV_DATA=str(data)))
    _one_line_exit_2(dev, f"pid {first.info['pid']}")
    rc, _, _ = first.stop()
    assert rc == 0
    second = start_emulator("--data", str(data))  # a clean stop frees it
    second.process.send_signal(signal.SIGKILL)
    second.process.communicate(timeout=30)
    start_emulator("--data", str(data))  # and so does kill -9: the kernel drops the lock


def test_two_in_process_emulators_on_one_directory(tmp_path: Path) -> None:
    with Emulator(EmulatorOptions(data=tmp_path / "d")):
        with pytest.raises(DataDirInUse, match=f"pid {os.getpid()}"):
            Emulator(EmulatorOptions(data=tmp_path / "d")).start()
    with Emulator(EmulatorOptions(data=tmp_path / "d")):  # released at stop
        pass


def test_removing_the_lock_file_does_not_let_a_second_server_start(tmp_path: Path) -> None:
    """R11 (reliability review 2): ``rm <data>/emulator.lock`` under a running server let a second one
    lock a new file and serve the same store (their clocks an hour apart)."""
    data = tmp_path / "d"
    with Emulator(EmulatorOptions(data=data)):
        (data / "emulator.lock").unlink()
        with pytest.raises(DataDirInUse, match="in use by another blockkit emulator .*emulator.lock was removed"):
            Emulator(EmulatorOptions(data=data)).start()
        assert not (data / "emulator.lock").exists()  # the refused start made none
        (data / "emulator.lock").write_text("")  # an empty one in its place (or one replaced by another)
        with pytest.raises(DataDirInUse, match="in use by another blockkit emulator"):
            Emulator(EmulatorOptions(data=data)).start()
    with Emulator(EmulatorOptions(data=data)):  # released at stop, whatever became of the file
        pass


def test_a_start_that_meets_an_import_on_a_fresh_directory_serves_the_import(tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """R12 (reliability review 2): an import that fills a new directory between a start's first look
    (empty) and its seeding made the start fail with 'UNIQUE constraint failed: base_models.position'.
    The import is run exactly there: just after the start has read that no seed is stored."""
    from blockkit.emulator import seed as seed_package
    from blockkit.emulator.store import meta
    from blockkit.emulator.transfer import export, import_export

    with Emulator(EmulatorOptions(data=tmp_path / "src", seed=2)) as emu:
        assert emu.store is not None
        export(emu.store, tmp_path / "export")
    monkeypatch.setenv("BLOCKKIT_SEED_CACHE", "0")  # no template: the start seeds by generating
    fresh = tmp_path / "fresh"
    start_store = Store.open(fresh)
    real_get = meta.get
    injected: list[bool] = []

    def get_then_import(db: sqlite3.Connection, key: str, default: Any = None) -> Any:
        value = real_get(db, key, default)
        if key == meta.SEED and not injected:
            injected.append(True)
            with Store.open(fresh, check=False) as importer:  # `blockkit emulator import EXPORT --data fresh`
                import_export(importer, tmp_path / "export")
        return value

    monkeypatch.setattr(seed_package.meta, "get", get_then_import)
    try:
        notes = seed_package.ensure_seeded(start_store, 1, "small")
        assert injected
        assert len(notes) == 1 and "another process (an import?) filled this new data directory" in notes[0]
        monkeypatch.setattr(seed_package.meta, "get", real_get)
        with start_store.read() as db:
            assert meta.get(db, meta.SEED) == 2  # the import's data, whole
            assert db.execute("PRAGMA foreign_key_check").fetchone() is None
    finally:
        start_store.close()


# --- 1.8, 2.2, E18: idempotency keys in the store -------------------------------------------------

def test_concurrent_retries_with_one_key_all_get_the_first_answer(live_emulator: Emulator) -> None:
    emu = live_emulator
    assert emu.store is not None and emu.clock is not None
    buyer, instance = _setup_app(emu.store, emu.clock)
    auth = {"Authorization": f"Bearer {blocktokens.mint_block_token(emu, instance_id=instance, user_id=buyer).token}"}
    url = emu.urls.base_url.rstrip("/") + PURCHASE
    bad_rounds = []
    for round_ in range(12):
        body = {"goodId": CATALOGUE[round_]["id"], "idempotencyKey": f"round-{round_}"}
        barrier = threading.Barrier(6)
        answers: list[tuple[int, Any]] = []

        def buy(client: httpx.Client, body: dict[str, Any] = body, barrier: threading.Barrier = barrier) -> None:
            barrier.wait()
            r = client.post(url, json=body, headers=auth)
            answers.append((r.status_code, r.json()))

        clients = [httpx.Client(timeout=30) for _ in range(6)]
        for client in clients:  # warm each connection, so the six requests leave together
            client.get(emu.urls.base_url.rstrip("/") + "/api/v1/enums")
        threads = [threading.Thread(target=buy, args=(c,)) for c in clients]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        retry = clients[0].post(url, json=body, headers=auth)
        answers.append((retry.status_code, retry.json()))
        for client in clients:
            client.close()
        if len({json.dumps(a, sort_keys=True) for a in answers}) != 1 or answers[0][0] != 200:
            bad_rounds.append((round_, sorted({(s, b.get("reason")) for s, b in answers})))
    assert bad_rounds == []  # before: (200, 409) mixes, then 409 replayed to the caller who was charged
    ledger = goods.ledger(emu.store, buyer, "app-d")
    assert sorted(row["goodId"] for row in ledger) == [g["id"] for g in CATALOGUE[:12]]  # one purchase each


def test_a_keys_answer_survives_kill_9(tmp_path: Path, start_emulator) -> None:
    data = tmp_path / "data"
    buyer, instance = _prepared(data)
    started = start_emulator("--data", str(data))
    auth = {"Authorization": f"Bearer {_mint(data, instance, buyer)}"}
    body = {"goodId": "g-007", "idempotencyKey": "after-restart"}
    first = httpx.post(started.info["base_url"].rstrip("/") + PURCHASE, json=body, headers=auth, timeout=30)
    assert first.status_code == 200, first.text
    started.process.send_signal(signal.SIGKILL)
    started.process.communicate(timeout=30)
    again = start_emulator("--data", str(data))
    base = again.info["base_url"].rstrip("/")
    replay = httpx.post(base + PURCHASE, json=body, headers=auth, timeout=30)
    assert (replay.status_code, replay.json()) == (200, first.json())  # before: 409 already_owned
    other = httpx.post(base + PURCHASE, json={"goodId": "g-008", "idempotencyKey": "after-restart"}, headers=auth,
                       timeout=30)
    assert other.status_code == 422
    plain = httpx.post(base + PURCHASE, json={"goodId": "g-007"}, headers=auth, timeout=30)
    assert plain.status_code == 409 and plain.json()["reason"] == "already_owned"


def _refusal(exc: Any) -> tuple[int, dict[str, Any]]:
    return exc.status, {"ok": False, "error": exc.detail, "reason": exc.code}


def test_keys_expire_and_are_freed_and_an_answer_is_never_overwritten(live_emulator: Emulator) -> None:
    from blockkit.emulator.store import goods as goods_store

    emu = live_emulator
    store, clock = emu.store, emu.clock
    assert store is not None and clock is not None
    buyer, _ = _setup_app(store, clock)
    caller = goods.GoodsCaller(buyer, "app-d", "blk-d")

    def buy(good: str, key: str) -> tuple[int, dict[str, Any]]:
        return goods.purchase_once(store, clock, caller, good, idempotency_key=key, refusal=_refusal)

    def keys() -> list[str]:
        with store.read() as db:
            return [r[0] for r in db.execute("SELECT key FROM idempotency_keys ORDER BY key")]

    status, first = buy("g-001", "k-old")
    assert status == 200 and buy("g-001", "k-old") == (200, first)
    refused = buy("g-001", "k-refused")  # a refusal is an answer too, stored and replayed
    assert refused[0] == 409 and buy("g-001", "k-refused") == refused
    clock.advance(goods.IDEMPOTENCY_TTL_SECONDS - 60)
    assert buy("g-001", "k-old") == (200, first)  # still live
    clock.advance(120)
    status, fresh = buy("g-002", "k-new")  # any keyed request frees the expired keys
    assert status == 200 and keys() == ["k-new"]
    assert buy("g-001", "k-old")[0] == 409  # an expired key is a new request: the good is owned
    with store.write() as db, pytest.raises(sqlite3.IntegrityError):
        goods_store.store_key(db, goods.KEY_SCOPE, buyer, "app-d", "k-new", "x", 500, "{}", clock.iso(), clock.iso())
    assert buy("g-002", "k-new") == (200, fresh)


def test_a_good_not_for_sale_is_not_stored_and_a_new_price_is_another_payload(live_emulator: Emulator) -> None:
    emu = live_emulator
    store, clock = emu.store, emu.clock
    assert store is not None and clock is not None
    buyer, _ = _setup_app(store, clock)
    caller = goods.GoodsCaller(buyer, "app-d", "blk-d")
    assert goods.purchase_once(store, clock, caller, "nope", idempotency_key="k-404", refusal=_refusal)[0] == 404
    with store.read() as db:
        assert db.execute("SELECT count(*) FROM idempotency_keys").fetchone()[0] == 0  # 404 before the key
    assert goods.purchase_once(store, clock, caller, "g-010", idempotency_key="k-p", refusal=_refusal)[0] == 200
    repriced = [{**g, "priceBuzz": 6} if g["id"] == "g-010" else g for g in CATALOGUE]
    goods.register_catalogue(store, clock, "app-d", "blk-d", repriced)
    assert goods.purchase_once(store, clock, caller, "g-010", idempotency_key="k-p", refusal=_refusal)[0] == 422


# --- 5.4: export and import copy everything ---------------------------------------------------------

def _get(url: str, headers: dict[str, str] | None = None) -> tuple[int, bytes]:
    r = httpx.get(url, headers=headers, timeout=30)
    return r.status_code, r.content


def test_an_imported_copy_answers_as_the_original(tmp_path: Path) -> None:
    from PIL import Image

    from blockkit.emulator.services import usersettings
    from blockkit.emulator.services.orchestration import media

    source, copy, export, again = tmp_path / "a", tmp_path / "b", tmp_path / "export", tmp_path / "export2"
    with Emulator(EmulatorOptions(data=source)) as emu:
        assert emu.store is not None and emu.clock is not None
        buyer, instance = _setup_app(emu.store, emu.clock)
        emu.clock.advance(3600.5)
        token = blocktokens.mint_block_token(emu, instance_id=instance, user_id=buyer).token
        goods.purchase_good(emu.store, emu.clock, goods.GoodsCaller(buyer, "app-d", "blk-d"), CATALOGUE, "g-003")
        blob = media.save_blob(emu.store, emu.clock.iso(), buyer, Image.new("RGB", (40, 30), (10, 200, 30)))
        usersettings.set_checkpoint(source, emu.clock, "blk-d", buyer, 42)
        with emu.store.read() as db:
            image_url = db.execute("SELECT url FROM images ORDER BY id LIMIT 1").fetchone()[0]
        blob_path = f"/__emulator/blobs/{blob.filename}"
        original = {
            "blob": _get(emu.urls.orchestration_url + blob_path),
            "image": _get(emu.urls.base_url + image_url),
            "entitlements": _get(emu.urls.base_url + "/api/v1/blocks/entitlements",
                                 {"Authorization": f"Bearer {token}"}),
            "jwks": _get(emu.urls.base_url + "/api/v1/block-tokens/jwks"),
        }
        assert all(status == 200 for status, _ in original.values()), original
        done = blockkit("emulator", "export", str(export), "--data", str(source))  # while it serves
        assert done.returncode == 0, done.stderr
    assert blockkit("emulator", "import", str(export), "--data", str(copy)).returncode == 0
    with Emulator(EmulatorOptions(data=copy)) as emu:
        assert emu.clock is not None and emu.clock.offset == pytest.approx(3600.5)
        imported = {
            "blob": _get(emu.urls.orchestration_url + blob_path),
            "image": _get(emu.urls.base_url + image_url),
            "entitlements": _get(emu.urls.base_url + "/api/v1/blocks/entitlements",
                                 {"Authorization": f"Bearer {token}"}),  # a token minted before the export
            "jwks": _get(emu.urls.base_url + "/api/v1/block-tokens/jwks"),
        }
        # before: the blob 404 (no blobs/ in the export) and the earlier token 401 (no key)
        assert imported == original
        assert usersettings.checkpoint(copy, "blk-d", buyer) == 42
    assert blockkit("emulator", "export", str(again), "--data", str(copy)).returncode == 0
    first = sorted(p.relative_to(export) for p in export.rglob("*") if p.is_file())
    assert first == sorted(p.relative_to(again) for p in again.rglob("*") if p.is_file())
    assert all((export / p).read_bytes() == (again / p).read_bytes() for p in first)  # byte-identical round trip
    assert (export / "files" / "block-token-key.pem").stat().st_mode & 0o077 == 0


def test_an_edited_export_changes_nothing(tmp_path: Path) -> None:
    export, data = tmp_path / "export", tmp_path / "data"
    with Emulator(EmulatorOptions(data=tmp_path / "src")) as emu:
        assert emu.store is not None
        blocktokens.signing_key(emu.store)
    assert blockkit("emulator", "export", str(export), "--data", str(tmp_path / "src")).returncode == 0
    key = export / "files" / "block-token-key.pem"
    key.write_bytes(key.read_bytes()[:-10] + b"tampered\n")
    _one_line_exit_2(blockkit("emulator", "import", str(export), "--data", str(data)), "sha256")
    assert not (data / "block-token-key.pem").exists()
    manifest = json.loads((export / "manifest.json").read_text())
    manifest["files"] = {"../../evil.pem": {"bytes": 1, "sha256": "0" * 64}}
    (export / "manifest.json").write_text(json.dumps(manifest))
    _one_line_exit_2(blockkit("emulator", "import", str(export), "--data", str(data)), "'files'")


def test_a_refused_import_and_a_failed_export_leave_nothing_behind(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """R15b (reliability review 2): a refused import into a new directory left an empty store and, in the
    foreign-key case, a blobs/ folder of copied files; a failed export left its partial files."""
    from PIL import Image

    from blockkit.emulator import transfer
    from blockkit.emulator.services.orchestration import media

    source, export = tmp_path / "src", tmp_path / "export"
    with Emulator(EmulatorOptions(data=source)) as emu:
        assert emu.store is not None and emu.clock is not None
        buyer, _instance = _setup_app(emu.store, emu.clock)
        media.save_blob(emu.store, emu.clock.iso(), buyer, Image.new("RGB", (8, 8), (1, 2, 3)))
        transfer.export(emu.store, export)
    # A model version pointing at a model that is not there, the manifest's sha256 made to agree.
    rows = export / "model_versions.jsonl"
    rows.write_text(rows.read_text().replace('"model_id":1,', '"model_id":999999,', 1))
    manifest = json.loads((export / "manifest.json").read_text())
    manifest["tables"]["model_versions"]["sha256"] = hashlib.sha256(rows.read_bytes()).hexdigest()
    (export / "manifest.json").write_text(json.dumps(manifest))
    assert any(name.startswith("blobs/") for name in manifest["files"])

    fresh = tmp_path / "fresh"
    _one_line_exit_2(blockkit("emulator", "import", str(export), "--data", str(fresh)), "missing")
    assert not fresh.exists()
    with Store.open(tmp_path / "empty") as store:  # in process, into a store that was there
        with pytest.raises(transfer.TransferError, match="missing"):
            transfer.import_export(store, export)
        assert not (tmp_path / "empty" / "blobs").exists()

    def full_disk(*args: Any) -> Any:
        raise transfer.TransferError(f"{tmp_path}/out/files/x: cannot write: No space left on device")

    monkeypatch.setattr(transfer, "_export_files", full_disk)  # after every table was written
    with Store.open(source) as store:
        with pytest.raises(transfer.TransferError, match="No space left"):
            transfer.export(store, tmp_path / "out" / "deeper")
        assert not (tmp_path / "out").exists()
        (tmp_path / "there").mkdir()
        with pytest.raises(transfer.TransferError):
            transfer.export(store, tmp_path / "there")
        assert list((tmp_path / "there").iterdir()) == []  # an empty directory it was given stays, empty


def test_import_replace_under_a_running_server_swaps_the_signing_key(tmp_path: Path) -> None:
    with Emulator(EmulatorOptions(data=tmp_path / "a")) as emu:
        assert emu.store is not None and emu.clock is not None
        buyer, instance = _setup_app(emu.store, emu.clock)
        token = blocktokens.mint_block_token(emu, instance_id=instance, user_id=buyer).token
    assert blockkit("emulator", "export", str(tmp_path / "x"), "--data", str(tmp_path / "a")).returncode == 0
    with Emulator(EmulatorOptions(data=tmp_path / "b")) as emu:
        assert emu.store is not None
        blocktokens.signing_key(emu.store)  # b's own key, different from a's
        url = emu.urls.base_url + "/api/v1/blocks/entitlements"
        assert _get(url, {"Authorization": f"Bearer {token}"})[0] == 401
        done = blockkit("emulator", "import", str(tmp_path / "x"), "--data", str(tmp_path / "b"), "--replace")
        assert done.returncode == 0, done.stderr
        assert _get(url, {"Authorization": f"Bearer {token}"})[0] == 200  # the new key is read again


# --- bad state at start: one line, exit 2, the file untouched -------------------------------------------

def test_a_zero_byte_database_is_refused_not_seeded(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / DB_FILENAME).touch()
    _one_line_exit_2(blockkit("emulator", "start", "--data", str(data), "--port", "0", timeout=30), "zero-byte")
    assert (data / DB_FILENAME).stat().st_size == 0  # before: seeded (1.8 MB) with no note


@pytest.mark.parametrize("content, words", [(b"", "empty"), (b"-----BEGIN NONSENSE-----\nabc\n", "not a PEM RSA")])
def test_a_damaged_signing_key_is_refused_at_start(tmp_path: Path, content: bytes, words: str) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "block-token-key.pem").write_bytes(content)
    _one_line_exit_2(blockkit("emulator", "start", "--data", str(data), "--port", "0", timeout=30),
                     "block-token-key.pem", words)
    assert (data / "block-token-key.pem").read_bytes() == content  # before: started, then 500 on every block route


def test_a_read_only_database_in_a_writable_directory_is_refused_at_start(tmp_path: Path) -> None:
    # As root a 0444 file is still writable, so the start runs as nobody (the review's 4.8).
    home = Path(tempfile.mkdtemp(prefix="bk-ro-", dir="/tmp"))
    try:
        os.chmod(home, 0o777)
        data = home / "data"
        _prepared(data)  # a seeded store, as the review's
        os.chmod(data, 0o777)
        os.chmod(data / DB_FILENAME, 0o444)
        before = _digest(data / DB_FILENAME)
        argv = [sys.executable, "-m", "blockkit", "emulator", "start", "--data", str(data), "--port", "0"]
        prefix = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] if os.geteuid() == 0 else []
        env = subprocess_env(HOME=str(home), PYTHONDONTWRITEBYTECODE="1")
        if prefix:
            env = _readable_to_nobody(prefix, env, home)
        result = subprocess.run([*prefix, *argv], capture_output=True, text=True, timeout=30, env=env, cwd=home)
        _one_line_exit_2(result, "read-only")  # before: started; every write then a 500 with a traceback
        assert _digest(data / DB_FILENAME) == before
    finally:
        shutil.rmtree(home, ignore_errors=True)


def _readable_to_nobody(prefix: list[str], env: dict[str, str], scratch: Path) -> dict[str, str]:
    """The environment in which ``nobody`` can import blockkit, or a skip that says why it cannot.

    A checkout in a private home directory (mode 0700, as on many systems) is unreadable to
    another account: then blockkit's source is copied to ``scratch`` (world-readable) and put
    first on PYTHONPATH. The interpreter and its installed packages must be reachable as they are.
    """
    import blockkit

    mine = Path(blockkit.__file__).parent
    probe = [*prefix, sys.executable, "-c", "import blockkit, blockkit.emulator.runtime; print(blockkit.__file__)"]

    def importable(environment: dict[str, str], expected: Path) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(probe, capture_output=True, text=True, timeout=60, env=environment, cwd=scratch)
        # Python passes over a PYTHONPATH entry it cannot read: it may find *another* blockkit (an
        # editable install elsewhere); only this checkout's, or its copy, will do.
        if done.returncode == 0 and Path(done.stdout.strip()).parent != expected:
            done.returncode = 1
        return done

    if importable(env, mine).returncode == 0:
        return env
    interpreter = subprocess.run([*prefix, sys.executable, "-c", "import starlette, uvicorn"], capture_output=True,
                                 text=True, timeout=60, cwd=scratch)
    if interpreter.returncode != 0:
        pytest.skip(f"another account cannot run this test's Python and its packages ({sys.executable}): "
                    "they sit in a directory only this account can read; run the suite from a venv others can read")
    copy = scratch / "src"
    shutil.copytree(mine, copy / "blockkit",
                    ignore=shutil.ignore_patterns("__pycache__"))
    for root, dirs, files in os.walk(copy):
        os.chmod(root, 0o755)
        for name in files:
            os.chmod(os.path.join(root, name), 0o644)
    os.chmod(scratch, 0o777)
    copied = {**env, "PYTHONPATH": os.pathsep.join([str(copy), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)}
    done = importable(copied, copy / "blockkit")
    if done.returncode != 0:
        pytest.skip(f"another account cannot import blockkit even from a readable copy: {done.stderr.strip()[-300:]}")
    return copied


@contextlib.contextmanager
def _small_disk(where: Path, size: str) -> Iterator[Path]:
    """A tmpfs of ``size`` mounted at ``where`` (root can mount here; elsewhere the test cannot run)."""
    where.mkdir(parents=True)
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a small tmpfs needs root")
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def test_a_full_disk_at_first_start_says_the_disk_is_full(tmp_path: Path) -> None:
    # 1 MiB: smaller than the small seed, whether it is generated or copied from a cached template
    with _small_disk(tmp_path / "disk", "1m") as disk:
        _one_line_exit_2(blockkit("emulator", "start", "--data", str(disk / "data"), "--port", "0", timeout=60),
                         "the disk is full")  # before: "the store is closed"


def test_a_full_disk_while_running_is_a_503_and_writes_resume(tmp_path: Path, start_emulator) -> None:
    with _small_disk(tmp_path / "disk", "16m") as disk:
        data = disk / "data"
        buyer, instance = _prepared(data)
        started = start_emulator("--data", str(data))
        auth = {"Authorization": f"Bearer {_mint(data, instance, buyer)}"}
        base = started.info["base_url"].rstrip("/")
        filler = disk / "filler"
        with open(filler, "wb") as handle:  # take every free byte but about 256 KB
            free = os.statvfs(disk).f_bavail * os.statvfs(disk).f_frsize
            handle.write(b"\0" * max(0, free - 256 * 1024))
        statuses: dict[int, int] = {}
        with httpx.Client(timeout=30) as client:
            for n in range(120):
                r = client.post(base + "/api/v1/blocks/app-storage/set", headers=auth,
                                json={"key": f"k{n}", "value": "v" * 60_000})
                statuses[r.status_code] = statuses.get(r.status_code, 0) + 1
                if r.status_code == 503:
                    assert "disk is full" in r.json()["error"] and r.headers["retry-after"]
                if statuses.get(503, 0) >= 3:
                    break
            assert set(statuses) <= {200, 503} and statuses.get(503), statuses  # before: 500s and dropped connections
            assert client.get(base + "/api/v1/enums").status_code == 200  # reads go on, on the same connection
            filler.unlink()
            r = client.post(base + "/api/v1/blocks/app-storage/set", headers=auth, json={"key": "after", "value": 1})
            assert r.status_code == 200, r.text
        rc, _, err = started.stop()
        assert rc == 0 and "Traceback" not in err and "503, the disk is full" in err


# --- 1.1-1.5: kill -9 under concurrent writers ---------------------------------------------------------

def test_kill_9_under_concurrent_writers_keeps_every_acknowledged_write(tmp_path: Path) -> None:
    import crash_harness

    figures = crash_harness.run(tmp_path, 3, seed=25)
    assert figures["problems"] == []
    assert figures["acknowledged"] > 0 and figures["keyed_purchases"] > 0 and figures["deposits_acked"] > 0



def test_an_export_taken_while_writers_run_is_one_snapshot_that_imports(tmp_path: Path) -> None:
    """R13 (reliability review 2, held): ``blockkit emulator export`` of a running server's data
    directory while writers keep moving Buzz is one consistent snapshot. The import's own checks
    (each table's sha256, every pool equal to its ledger) pass on it, and every write acknowledged
    before the export began is in it."""
    from blockkit.emulator import running
    from blockkit.emulator.store import Store as _Store
    from blockkit.emulator.transfer import import_export

    stop = threading.Event()
    acknowledged: list[int] = []
    errors: list[BaseException] = []
    with running(data=tmp_path / "data") as platform:
        users = [user.username for user in platform.users()[:4]]

        def write(username: str) -> None:
            amount = 0
            try:
                while not stop.is_set():
                    amount = (amount + 7) % 1000 + 1
                    platform.set_balance(username, "blue", amount)
                    acknowledged.append(1)
            except BaseException as exc:  # noqa: BLE001 - handed to the test's thread
                errors.append(exc)

        writers = [threading.Thread(target=write, args=(name,)) for name in users]
        for thread in writers:
            thread.start()
        try:
            while len(acknowledged) < 50 and not errors:
                stop.wait(0.01)
            before = len(acknowledged)
            result = blockkit("emulator", "export", str(tmp_path / "e"), "--data", str(tmp_path / "data"))
        finally:
            stop.set()
            for thread in writers:
                thread.join()
        assert not errors, errors
        assert result.returncode == 0, result.stderr
        assert len(acknowledged) > before  # the writers did run during the export
    with _Store.open(tmp_path / "copy") as copy:
        import_export(copy, tmp_path / "e")
        with copy.read() as db:
            (entries,) = db.execute("SELECT COUNT(*) FROM buzz_transactions WHERE kind = 'adjustment'").fetchone()
    assert entries >= before
