"""Fixtures for ``blockkit dev``: fixture blocks, a real Chromium, a running host."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from blockkit.dev.session import DevOptions, DevSession
from blockkit.dev.timings import PLATFORM_TIMINGS, HostTimings

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "dev"
VIEWPORT = {"width": 1400, "height": 860}


@pytest.fixture(autouse=True)
def _platform_data(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """The local platform's store goes to a scratch folder, never into a fixture block in the tree.

    One folder for the whole session: seeding a store takes a second or two on this machine.
    """
    monkeypatch.setenv("BLOCKKIT_DEV_DATA", str(_shared_platform_dir(tmp_path_factory)))


_PLATFORM_DIR: list[Path] = []


def _shared_platform_dir(factory: pytest.TempPathFactory) -> Path:
    if not _PLATFORM_DIR:
        _PLATFORM_DIR.append(factory.mktemp("dev-platform"))
    return _PLATFORM_DIR[0]


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport=VIEWPORT)
    opened = context.new_page()
    yield opened
    context.close()


BlockMaker = Callable[..., Path]


@pytest.fixture
def make_block(tmp_path: Path) -> BlockMaker:
    """Copy a fixture block to tmp_path, changing its manifest and behaviour."""

    def make(
        fixture: str = "scripted",
        *,
        manifest: dict[str, Any] | None = None,
        iframe: dict[str, Any] | None = None,
        behaviour: dict[str, Any] | None = None,
        name: str = "block",
    ) -> Path:
        target = tmp_path / name
        shutil.copytree(FIXTURES / fixture, target)
        path = target / "block.manifest.json"
        document = json.loads(path.read_text())
        document.update(manifest or {})
        document["iframe"] = {**document.get("iframe", {}), **(iframe or {})}
        path.write_text(json.dumps(document, indent=2))
        if behaviour is not None:
            (target / "behaviour.js").write_text(f"window.BEHAVIOUR = {json.dumps(behaviour)};\n")
        return target

    return make


class HostRun:
    """A started dev session with its host page open in Chromium."""

    def __init__(self, session: DevSession, page: Any) -> None:
        self.session = session
        self.page = page

    def open(self) -> HostRun:
        self.page.goto(self.session.page_url)
        return self

    def wait_outcome(self, expected: str, timeout_ms: float | None = None) -> None:
        limit = timeout_ms or self.session.timings.give_up_after_ms(self.session.surface.kind) + 10_000
        self.page.wait_for_function(
            "() => window.__blockkit && window.__blockkit.outcome !== 'pending'", timeout=limit, polling=20
        )
        assert self.page.evaluate("() => window.__blockkit.outcome") == expected

    def settle(self, ms: float) -> list[dict[str, Any]]:
        """Let the page run ``ms`` more, then return the complete trace."""
        self.page.wait_for_timeout(ms)
        return self.events()

    def events(self) -> list[dict[str, Any]]:
        self.page.evaluate("() => window.__blockkit.flush()")
        return self.session.events()

    @property
    def frame(self) -> Any:
        handle = self.page.wait_for_selector("#block-frame", state="attached")
        frame = handle.content_frame()
        assert frame is not None
        return frame

    def iframe_height(self) -> float:
        return self.page.evaluate("() => document.querySelector('#block-frame').getBoundingClientRect().height")


@pytest.fixture
def host(page: Any, tmp_path: Path) -> Iterator[Callable[..., HostRun]]:
    """Start a dev session for a block directory and open its host page."""
    sessions: list[DevSession] = []

    def start(block_dir: Path, *, timings: HostTimings = PLATFORM_TIMINGS, consented: bool = False,
              **options: Any) -> HostRun:
        """``consented``: the viewer already granted the block every scope it declares (as an install or an
        earlier Allow records), so the page load is no first visit."""
        options.setdefault("trace_path", tmp_path / f"trace-{len(sessions)}.jsonl")
        session = DevSession(DevOptions(block_dir=block_dir, timings=timings, **options))
        session.start()
        sessions.append(session)
        if consented:
            grant_every_declared_scope(session)
        return HostRun(session, page).open()

    yield start
    for session in sessions:
        session.stop()


def grant_every_declared_scope(session: DevSession) -> None:
    """Record the session viewer's consent to every consent-gated scope the block declares."""
    assert session.platform is not None
    session.platform.grant_declared()
