"""One row of the dev-host fidelity review's table (``host_rows.py``), and what became of it."""

from __future__ import annotations

from typing import NamedTuple


class Row(NamedTuple):
    outcome: str                 # fixed | same | spec | deviation
    tests: tuple[str, ...] = ()  # "test_file.py::test_name" under tests/dev/
    why: str = ""                # required for spec/deviation: the reason
