"""Host timings: every duration the dev host waits, in one table.

The first five are the platform's (PLATFORM.md §6). The rest are blockkit's own
choices for a local host, named as such. Tests scale the whole table with
:meth:`HostTimings.scaled` so that a 37-second page failure schedule runs in a
few seconds while keeping its shape.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace


@dataclass(frozen=True)
class HostTimings:
    # Platform: BLOCK_INIT is re-posted this often until BLOCK_READY arrives.
    init_repost_ms: float = 400
    # Platform: the host gives up on one mount after this long without BLOCK_READY.
    ready_timeout_ms: float = 10_000
    # Platform: a page host retries after each of these delays, then shows the failure card.
    page_retry_delays_ms: tuple[float, ...] = (2_000, 5_000)
    # Platform: the host mints again (and pushes TOKEN_REFRESH) this long before the token expires,
    # but never sooner than token_refresh_min_ms after a mint (useBlockToken.ts:55,58,238).
    token_refresh_lead_ms: float = 2 * 60_000
    token_refresh_min_ms: float = 30_000
    # blockkit: the dev host answers every request it can at once, so a request
    # still unanswered after this long never will be.
    request_reply_timeout_ms: float = 1_000
    # blockkit: how long --check keeps watching after BLOCK_READY, to catch
    # violations and console errors that follow the handshake.
    check_settle_ms: float = 1_500

    def scaled(self, factor: float) -> HostTimings:
        """The same schedule, every duration multiplied by ``factor``."""
        if factor <= 0:
            raise ValueError("the time scale must be positive")
        return replace(
            self,
            init_repost_ms=self.init_repost_ms * factor,
            ready_timeout_ms=self.ready_timeout_ms * factor,
            page_retry_delays_ms=tuple(d * factor for d in self.page_retry_delays_ms),
            token_refresh_lead_ms=self.token_refresh_lead_ms * factor,
            token_refresh_min_ms=self.token_refresh_min_ms * factor,
            request_reply_timeout_ms=self.request_reply_timeout_ms * factor,
            check_settle_ms=self.check_settle_ms * factor,
        )

    def give_up_after_ms(self, surface_kind: str) -> float:
        """How long the host may take, from the first mount, to reach its final state."""
        if surface_kind == "slot":
            return self.ready_timeout_ms
        attempts = 1 + len(self.page_retry_delays_ms)
        return attempts * self.ready_timeout_ms + sum(self.page_retry_delays_ms)

    def token_refresh_in_ms(self, expires_in_ms: float) -> float:
        """How long after a mint the host mints again, for a token that expires ``expires_in_ms`` from now."""
        return max(expires_in_ms - self.token_refresh_lead_ms, self.token_refresh_min_ms)

    def as_json(self) -> dict[str, object]:
        """The table as the host page reads it (snake_case keys, milliseconds)."""
        return {f.name: _json_value(getattr(self, f.name)) for f in fields(self)}


def _json_value(value: object) -> object:
    return list(value) if isinstance(value, tuple) else value


PLATFORM_TIMINGS = HostTimings()
