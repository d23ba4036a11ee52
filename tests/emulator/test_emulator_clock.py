"""The one clock: real time plus a persisted offset; /__emulator/clock reads and advances it."""

from __future__ import annotations

import math
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from emulator_helpers import get_json, post_json

from blockkit.emulator.store.clock import Clock, ClockError, format_timestamp, parse_timestamp
from blockkit.emulator.store import Store


def test_timestamps_have_one_form() -> None:
    moment = datetime(2026, 3, 4, 5, 6, 7, 891234, tzinfo=timezone.utc)
    assert format_timestamp(moment) == "2026-03-04T05:06:07.891Z"
    assert parse_timestamp("2026-03-04T05:06:07.891Z") == moment.replace(microsecond=891000)


def test_clock_is_real_time_plus_the_offset() -> None:
    clock = Clock(wall=lambda: 1_000_000.0)
    assert clock.timestamp() == 1_000_000.0
    clock.advance(90)
    clock.advance(0)
    clock.advance(1.5)
    assert clock.timestamp() == 1_000_091.5
    assert clock.iso() == format_timestamp(datetime.fromtimestamp(1_000_091.5, tz=timezone.utc))


@pytest.mark.parametrize("bad", [-1, -0.001, math.inf, -math.inf, math.nan, "60", None, True, [60], {"s": 1}])
def test_advance_takes_only_finite_numbers_of_zero_or_more(bad: Any) -> None:
    clock = Clock(wall=lambda: 0.0)
    with pytest.raises(ClockError):
        clock.advance(bad)
    assert clock.offset == 0


def test_advance_past_the_year_9999_is_refused() -> None:
    clock = Clock(wall=lambda: 0.0)
    with pytest.raises(ClockError):
        clock.advance(1e20)
    assert clock.offset == 0


def test_the_offset_is_persisted_in_the_store(tmp_path: Path) -> None:
    with Store.open(tmp_path) as store:
        Clock(store, wall=lambda: 100.0).advance(3600)
    with Store.open(tmp_path) as store:
        again = Clock(store, wall=lambda: 100.0)
        assert again.offset == 3600 and again.timestamp() == 3700.0


# Advancing changes the emulator's state: these tests use their own (in-process) emulator,
# never the session-wide subprocess other tests share.
@pytest.fixture
def clock_url(live_emulator: Any) -> str:
    return f"{live_emulator.urls.base_url}/__emulator/clock"


def test_get_clock_on_the_shared_emulator_is_real_time(emulator: dict[str, Any]) -> None:
    status, body = get_json(f"{emulator['base_url']}/__emulator/clock")
    assert status == 200 and set(body) == {"now"}
    assert abs((parse_timestamp(body["now"]) - datetime.now(timezone.utc)).total_seconds()) < 60


def test_get_and_post_clock_over_http(clock_url: str) -> None:
    url = clock_url
    status, body = get_json(url)
    assert status == 200 and set(body) == {"now"}
    before = parse_timestamp(body["now"])
    assert abs((before - datetime.now(timezone.utc)).total_seconds()) < 60
    status, body = post_json(url, {"advance": 7200})
    assert status == 200
    after = parse_timestamp(body["now"])
    assert 7200 <= (after - before).total_seconds() < 7200 + 30
    status, body = get_json(url)
    assert parse_timestamp(body["now"]) >= after


@pytest.mark.parametrize("payload", [{"advance": -5}, {"advance": "10"}, {"advance": None}, {"advance": True},
                                     {"wait": 5}, [5], 5, "advance"])
def test_post_clock_rejects_bad_input_with_400(clock_url: str, payload: Any) -> None:
    url = clock_url
    _, before = get_json(url)
    status, body = post_json(url, payload)
    assert status == 400 and isinstance(body["error"], str)
    _, after = get_json(url)
    assert (parse_timestamp(after["now"]) - parse_timestamp(before["now"])).total_seconds() < 30


@pytest.mark.parametrize("raw", [b"", b"{", b'{"advance": NaN}', b'{"advance": 1e999}', b"\xff\xfe"])
def test_post_clock_rejects_non_json_and_non_finite_numbers(clock_url: str, raw: bytes) -> None:
    status, body = post_json(clock_url, raw=raw)
    assert status == 400 and "error" in body


def test_the_clock_is_shared_by_every_origin_in_process(live_emulator: Any) -> None:
    # The apps of all three origins hold the same clock object (and so the same time).
    from blockkit.emulator.http.server import build_apps

    apps = build_apps(live_emulator.store, live_emulator.clock, live_emulator.options, live_emulator.urls)
    clocks = {id(app.state.emulator.clock) for app in apps}
    assert clocks == {id(live_emulator.clock)}
    post_json(f"{live_emulator.urls.base_url}/__emulator/clock", {"advance": 60})
    assert live_emulator.clock.offset == 60
    with live_emulator.store.read() as db:
        from blockkit.emulator.store import meta

        assert meta.get(db, meta.CLOCK_OFFSET) == 60


def test_an_import_while_it_runs_moves_the_running_clock_to_the_imported_one(tmp_path: Path) -> None:
    """R03 (reliability review 2): after ``import --replace`` on the running data directory the server
    kept its own offset (a year ahead), refused a token the CLI had just printed by the store's clock,
    and wrote its stale offset + 1 s over the imported one at the next advance."""
    import httpx

    from blockkit.emulator import running
    from blockkit.emulator.store import meta, tokens
    from blockkit.emulator.transfer import export, import_export

    with running(data=tmp_path / "data") as platform:
        export(platform.store, tmp_path / "e0")  # the clock's offset is 0 in it
        platform.advance_clock(31_536_000)
        assert platform.clock.offset == 31_536_000
        cli = Store.open(tmp_path / "data", check=False)  # what `blockkit emulator import --replace` opens
        try:
            import_export(cli, tmp_path / "e0", replace=True)
            assert platform.clock.offset == 0.0
            user = platform.users()[0]
            with cli.write() as db:  # `blockkit emulator token`: minted by the store's clock
                token = tokens.issue_access_token(db, user_id=user.id, scope=1, now=Clock(cli).now(),
                                                  ttl_seconds=3600)
            me = httpx.get(f"{platform.api_url}/me", headers={"Authorization": f"Bearer {token}"})
            assert me.status_code == 200, me.text
            platform.advance_clock(1)
            with cli.read() as db:
                assert meta.get(db, meta.CLOCK_OFFSET) == 1.0
        finally:
            cli.close()


def test_an_advance_adds_to_the_offset_the_store_holds(tmp_path: Path) -> None:
    clock_store = Store.open(tmp_path / "d", check=False)
    try:
        mine, other = Clock(clock_store), Clock(clock_store)
        other.advance(100)
        mine.advance(1)  # mine still holds 0 in memory: it must not write 1 over 100
        assert Clock(clock_store).offset == 101
    finally:
        clock_store.close()
