"""Fixtures for the `blockkit new` tests; shared helpers live in new_helpers.py."""

from __future__ import annotations

from typing import Callable

import pytest
from click.testing import Result
from new_helpers import invoke


@pytest.fixture
def run_new() -> Callable[..., Result]:
    """Run `blockkit new` in-process (no terminal): run_new(DIR, *flags)."""
    return lambda *args, **kw: invoke([str(a) for a in args], **kw)
