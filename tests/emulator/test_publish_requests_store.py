"""Publish requests in the store: an export carries them (the bundle too) and an import restores them."""

from __future__ import annotations

from pathlib import Path

from submit_env import manifest_bundle

from blockkit.emulator.seed import ensure_seeded
from blockkit.emulator.services import publish_requests as service
from blockkit.emulator.store import Store
from blockkit.emulator.store import publish_requests as store_requests
from blockkit.emulator.store.clock import Clock
from blockkit.emulator.transfer import export, import_export


def _moderator(store: Store) -> service.Submitter:
    from blockkit.emulator.store import users

    with store.read() as db:
        user = next(u for u in users.list_users(db) if u.id > 0 and u.is_moderator and not u.deleted)
    return service.Submitter(user.id, user.username, user.status, True, "apiKey", "test-key")


def test_an_export_carries_the_requests_and_their_bundles(tmp_path: Path) -> None:
    data = manifest_bundle("exported-block", "2.0.0")
    with Store.open(tmp_path / "a") as store:
        ensure_seeded(store, 1, "small")
        created = service.submit_version(store, Clock(store), _moderator(store), data)
        service.approve(store, Clock(store), created["publishRequestId"], "ok")
        export(store, tmp_path / "export")
    assert (tmp_path / "export" / "publish_requests.jsonl").is_file()

    with Store.open(tmp_path / "b") as fresh:
        import_export(fresh, tmp_path / "export", replace=True)
        with fresh.read() as db:
            row = store_requests.get(db, created["publishRequestId"])
            bundle = store_requests.bundle_of(db, created["publishRequestId"])
        assert row is not None and (row.slug, row.version, row.status, row.approval_notes) == (
            "exported-block", "2.0.0", "approved", "ok")
        assert bundle == data
        served = service.approved_bundle(fresh, "exported-block")
        assert served is not None and served[1] == data
