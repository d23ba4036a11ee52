"""Buzz pools: opening balances by tier, purchase, ledger, pool order."""

from __future__ import annotations

from pathlib import Path

import pytest
from orch_env import FREE, MEMBER, make

from blockkit.emulator.services import buzz
from blockkit.emulator.services.errors import ServiceError


@pytest.fixture
def o(tmp_path: Path):
    return make(tmp_path)


def test_opening_balances_by_tier(o) -> None:
    assert buzz.balance(o.store, o.clock, FREE) == buzz.OPENING["free"]
    assert buzz.balance(o.store, o.clock, MEMBER) == buzz.OPENING["gold"]
    assert buzz.balance(o.store, o.clock, FREE) == buzz.OPENING["free"]  # opened once, not twice


def test_purchase_credits_blue_and_logs(o) -> None:
    out = buzz.purchase(o.store, o.clock, FREE, 1000)
    assert out["blue"] == buzz.OPENING["free"]["blue"] + 1000
    assert buzz.purchase(o.store, o.clock, FREE, 5, pool="green")["green"] == buzz.OPENING["free"]["green"] + 5
    items = buzz.transactions(o.store, o.clock, FREE)["items"]
    assert [(i["kind"], i["accountType"], i["amount"]) for i in items[:2]] == [("purchase", "green", 5),
                                                                                ("purchase", "blue", 1000)]
    assert items[0]["type"] == "credit"


@pytest.mark.parametrize("amount, pool", [(0, "blue"), (-5, "blue"), (1.5, "blue"), (True, "blue"),
                                          (10**9, "blue"), (5, "red"), (5, "fakeRed")])
def test_purchase_refusals(o, amount: object, pool: str) -> None:
    with pytest.raises(ServiceError) as err:
        buzz.purchase(o.store, o.clock, FREE, amount, pool)  # type: ignore[arg-type]
    assert err.value.status == 400


def test_transactions_paging(o) -> None:
    for n in range(5):
        buzz.purchase(o.store, o.clock, FREE, n + 1)
    page = buzz.transactions(o.store, o.clock, FREE, limit=3)
    assert [i["amount"] for i in page["items"]] == [5, 4, 3] and page["nextCursor"]
    rest = buzz.transactions(o.store, o.clock, FREE, limit=3, cursor=page["nextCursor"])
    assert [i["amount"] for i in rest["items"]][:2] == [2, 1]


def test_unknown_user(o) -> None:
    with pytest.raises(ServiceError) as err:
        buzz.balance(o.store, o.clock, 999)
    assert err.value.status == 404


def test_pool_order() -> None:
    assert buzz.pool_order(None, mature=False) == ("green", "blue")
    assert buzz.pool_order("blue", mature=False) == ("blue", "green")
    assert buzz.pool_order("yellow", mature=False) == ("green", "blue")
    assert buzz.pool_order("yellow", mature=True) == ("yellow", "blue")
    with pytest.raises(ServiceError):
        buzz.pool_order("purple", mature=False)
    assert buzz.largest_debit({"green": 1, "blue": 4}) == "blue" and buzz.largest_debit({}) is None
