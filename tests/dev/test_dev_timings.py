from __future__ import annotations

import pytest

from blockkit.dev.timings import PLATFORM_TIMINGS


def test_the_platform_schedule() -> None:
    assert PLATFORM_TIMINGS.init_repost_ms == 400
    assert PLATFORM_TIMINGS.ready_timeout_ms == 10_000
    assert PLATFORM_TIMINGS.page_retry_delays_ms == (2_000, 5_000)
    # Three mounts of 10 s with 2 s and 5 s between them.
    assert PLATFORM_TIMINGS.give_up_after_ms("page") == 37_000
    assert PLATFORM_TIMINGS.give_up_after_ms("slot") == 10_000


def test_scaling_keeps_the_shape() -> None:
    fast = PLATFORM_TIMINGS.scaled(0.1)
    assert fast.init_repost_ms == pytest.approx(40)
    assert fast.page_retry_delays_ms == pytest.approx((200, 500))
    assert fast.give_up_after_ms("page") == pytest.approx(3_700)
    assert fast.as_json()["page_retry_delays_ms"] == pytest.approx([200, 500])
    with pytest.raises(ValueError):
        PLATFORM_TIMINGS.scaled(0)


def test_the_token_is_refreshed_two_minutes_before_it_expires_and_not_sooner_than_30_s() -> None:
    # useBlockToken.ts: REFRESH_LEAD_MS 2 min, MIN_REFRESH_MS 30 s, delay = max(exp - now - lead, min).
    assert PLATFORM_TIMINGS.token_refresh_in_ms(15 * 60_000) == 13 * 60_000
    assert PLATFORM_TIMINGS.token_refresh_in_ms(5 * 60_000) == 3 * 60_000
    assert PLATFORM_TIMINGS.token_refresh_in_ms(100_000) == 30_000
