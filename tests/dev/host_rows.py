"""Every row of review dev-host-fidelity-2026-12-02 (67 rows, measured on 795a075), and what became of it.

The rows are kept where they were worked on (``host_rows_consent.py``, ``host_rows_replies.py``,
``host_rows_transport.py``); ``ROWS`` is their union, keyed by the review's row number. Each row is

- ``fixed``: ``blockkit dev`` now answers as the platform's host page does; ``tests`` names the
  tests (``file.py::function`` under ``tests/dev/``) built from the row's reproduction;
- ``same``: the review found no difference; ``tests`` names the test that holds it;
- ``spec``: the spec states the behaviour and the platform differs, so the spec stands;
- ``deviation``: kept as it is, deliberately; ``why`` gives the reason (and docs/dev.md,
  "What differs from the platform", says it where a developer looks).

``test_host_rows.py`` checks that every row is there once, that every named test exists, and
that every row without a test has a reason.
"""

from __future__ import annotations

from typing import Any

import host_rows_consent
import host_rows_replies
import host_rows_transport

PARTS = (host_rows_consent, host_rows_replies, host_rows_transport)
REVIEW_ROWS = range(1, 68)


def _union() -> dict[int, Any]:
    rows: dict[int, Any] = {}
    for part in PARTS:
        for number, row in part.ROWS.items():
            if number in rows:
                raise AssertionError(f"row {number} is in two parts")
            rows[number] = row
    return rows


ROWS = _union()
