"""Answers: blockId derivation, per-answer checks and the rules between answers,
through the real command where a person would meet them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

import pytest
from click.testing import Result

from blockkit.jsstr import utf16_len
from blockkit.scaffold.naming import NamingError, derive_block_id

RunNew = Callable[..., Result]


@pytest.mark.parametrize(
    "name, block_id",
    [
        ("My Cool Block!", "my-cool-block"),
        ("Ça va déjà", "ca-va-deja"),
        ("  spaced__out  ", "spaced-out"),
        ("x" * 20 + " " + "y" * 19, "x" * 20 + "-" + "y" * 19),  # 40: the longest
        ("Paint 🎨 Studio", "paint-studio"),  # an emoji is a separator
    ],
)
def test_derive_block_id(name: str, block_id: str) -> None:
    assert derive_block_id(name) == block_id


@pytest.mark.parametrize("name", ["🎨🎨", "日本語", "ab", "3D Viewer", "-"])
def test_underivable_names_suggest_block_id(name: str) -> None:
    with pytest.raises(NamingError, match="--block-id"):
        derive_block_id(name)


@pytest.mark.parametrize("name, lost", [
    ("Tokyo 東京 Gallery", "東, 京"),  # was 'tokyo-gallery', as for 'Tokyo 大阪 Gallery'
    ("Москва Block", "М, о, с, к, в, а"),
    ("Straße Viewer", "ß"),  # ß has no ASCII base letter: 'strae-viewer' would be a new word
])
def test_a_name_whose_letters_a_block_id_would_lose_is_refused(name: str, lost: str) -> None:
    with pytest.raises(NamingError) as caught:
        derive_block_id(name)
    message = str(caught.value)
    assert f"its letters {lost} would be lost" in message and "--block-id" in message


def test_a_name_longer_than_a_block_id_is_refused_not_cut() -> None:
    # Was cut to 40 characters: two names that differ after the 40th got one id.
    name = "x" * 30 + " " + "y" * 30
    with pytest.raises(NamingError) as caught:
        derive_block_id(name)
    assert "would be 61 characters long, and a blockId is at most 40" in str(caught.value)
    assert "--block-id" in str(caught.value)


def _manifest(block: Path) -> dict:
    return json.loads((block / "block.manifest.json").read_text())


def test_underivable_name_refuses_and_writes_nothing(tmp_path: Path, run_new: RunNew) -> None:
    block = tmp_path / "art"
    result = run_new(block, "--defaults", "--name", "🎨")
    assert result.exit_code == 2
    assert "cannot derive a blockId" in result.output and "--block-id" in result.output
    assert "Traceback" not in result.output
    assert not block.exists()
    assert run_new(block, "--defaults", "--name", "🎨", "--block-id", "art-block").exit_code == 0
    assert _manifest(block)["blockId"] == "art-block"
    assert _manifest(block)["name"] == "🎨"


@pytest.mark.parametrize("name", ["Tokyo 東京 Gallery", "A " * 25 + "block"])
def test_a_name_that_would_lose_letters_or_length_refuses_and_writes_nothing(
        tmp_path: Path, run_new: RunNew, name: str) -> None:
    block = tmp_path / "gallery"
    result = run_new(block, "--defaults", "--name", name)
    assert result.exit_code == 2, result.output
    assert "cannot derive a blockId" in result.output and "--block-id" in result.output
    assert not block.exists()
    assert run_new(block, "--defaults", "--name", name, "--block-id", "tokyo-gallery").exit_code == 0
    assert _manifest(block)["blockId"] == "tokyo-gallery"


def test_name_defaults_from_directory(tmp_path: Path, run_new: RunNew) -> None:
    block = tmp_path / "gallery_of-things"
    assert run_new(block, "--defaults").exit_code == 0
    assert (_manifest(block)["name"], _manifest(block)["blockId"]) == ("Gallery Of Things", "gallery-of-things")


def test_sensitive_scope_takes_justification_flag(tmp_path: Path, run_new: RunNew) -> None:
    block = tmp_path / "tipper"
    result = run_new(
        block,
        "--defaults",
        "--scope",
        "social:tip:self,models:read:self",
        "--justify",
        "social:tip:self=Lets viewers tip the creator of the model they are looking at.",
    )
    assert result.exit_code == 0, result.output
    manifest = _manifest(block)
    # user:read:self too: every template reads the viewer (GET_VIEWER needs it).
    assert manifest["scopes"] == ["models:read:self", "user:read:self", "social:tip:self"]
    assert manifest["scopeJustifications"] == {
        "social:tip:self": "Lets viewers tip the creator of the model they are looking at."
    }


def test_budgeted_scope_on_a_page_gets_a_budget(tmp_path: Path, run_new: RunNew) -> None:
    args = ["--defaults", "--scope", "ai:write:budgeted", "--justify", "ai:write:budgeted=Runs generations."]
    assert run_new(tmp_path / "gen-default", *args).exit_code == 0
    assert _manifest(tmp_path / "gen-default")["page"]["buzzBudgetPerGen"] == 10
    assert run_new(tmp_path / "gen-fifty", *args, "--buzz-budget", "50").exit_code == 0
    assert _manifest(tmp_path / "gen-fifty")["page"]["buzzBudgetPerGen"] == 50
    refused = run_new(tmp_path / "gen-huge", *args, "--buzz-budget", "5000")
    assert refused.exit_code == 2 and "1-1000" in refused.output


@pytest.mark.parametrize(
    "flags, message",
    [
        (["--auth", "oauth", "--scope", "apps:storage:read"], "cannot be combined with app storage"),
        (["--template", "static", "-p", "pnpm"], "static template has no build step"),
        (["--scope", "models:write:everything"], "unknown scope"),
        (["--tagline", "🎨" * 71], "the limit is 140"),
        (["--tagline", "   "], None),
        (["--justify", "buzz:read:self=Reads it."], "undeclared scope"),
        (["--justify", "nonsense"], "SCOPE=TEXT"),
        (["--buzz-budget", "5"], "only to a page"),
        (["--repository", "http://github.com/a/b"], "must start with https://"),
        (["--repository", "https://github.com/owner/repo/tree/main"], "https://github.com/owner/repo/tree/main"),
        (["--repository", "https://example.com/owner/repo"], "example.com"),
    ],
)
def test_bad_answers_refuse_cleanly(tmp_path: Path, run_new: RunNew, flags: list[str], message: str | None) -> None:
    block = tmp_path / "bad-answers"
    result = run_new(block, "--defaults", *flags)
    if message is None:  # a blank optional answer is no answer
        assert result.exit_code == 0, result.output
        return
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert "Traceback" not in result.output
    assert not block.exists()


def test_emoji_tagline_counts_like_javascript(tmp_path: Path, run_new: RunNew) -> None:
    tagline = "🎨" * 70  # 140 UTF-16 units: exactly the cap
    assert utf16_len(tagline) == 140
    assert run_new(tmp_path / "emoji-ok", "--defaults", "--tagline", tagline).exit_code == 0


def test_repository_is_written_in_its_stored_form(tmp_path: Path, run_new: RunNew) -> None:
    block = tmp_path / "repo-block"
    assert run_new(block, "--defaults", "--repository", "https://GitHub.com/acme/demo-block.git/").exit_code == 0
    assert _manifest(block)["repository"] == "https://github.com/acme/demo-block"


def test_app_page_is_the_page_surface(tmp_path: Path, run_new: RunNew) -> None:
    assert run_new(tmp_path / "page-alias", "--defaults", "--surface", "app.page").exit_code == 0
    assert "page" in _manifest(tmp_path / "page-alias")


def test_no_boot_skeleton_leaves_root_empty(tmp_path: Path, run_new: RunNew) -> None:
    block = tmp_path / "bare-block"
    assert run_new(block, "--defaults", "--no-boot-skeleton").exit_code == 0
    assert _manifest(block)["bootSkeleton"] is False
    assert '<div id="root"></div>' in (block / "index.html").read_text()


def test_answers_are_escaped_for_each_file(tmp_path: Path, run_new: RunNew) -> None:
    block = tmp_path / "escape-block"
    name = "</title><script>alert('x')</script> \"Q\""
    assert (
        run_new(block, "--defaults", "--name", name, "--block-id", "escape-block", "--template", "react").exit_code == 0
    )
    html = (block / "index.html").read_text()
    assert "<script>alert" not in html and "&lt;/title&gt;" in html
    app = (block / "src" / "App.tsx").read_text()
    assert "<script>" not in app and "\\u003c/title\\u003e" in app
    assert _manifest(block)["name"] == name
