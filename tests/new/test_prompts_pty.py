"""Answering the prompts through a real pseudo-terminal, as a person would."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pexpect
import pytest
from new_helpers import BLOCKKIT, subprocess_env

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")


def _spawn(tmp_path: Path, *args: str) -> pexpect.spawn:
    child = pexpect.spawn(
        BLOCKKIT[0],
        [*BLOCKKIT[1:], "new", *args],
        cwd=str(tmp_path),
        env=subprocess_env(),
        encoding="utf-8",
        timeout=20,
        dimensions=(50, 200),
        # poll(), not select(): late in a full run descriptor numbers pass FD_SETSIZE (1024),
        # where select() fails with "filedescriptor out of range".
        use_poll=True,
    )
    child.logfile_read = sys.stdout  # shown by pytest on failure
    return child


def _answer(child: pexpect.spawn, prompt: str, reply: str) -> None:
    child.expect_exact(prompt)
    child.sendline(reply)


def test_every_prompt_answered_on_a_terminal(tmp_path: Path) -> None:
    child = _spawn(tmp_path, "prompted")
    _answer(child, "Name [Prompted]:", "Prompt Demo")
    _answer(child, "Block id [prompt-demo]:", "")
    _answer(child, "Template (static, vite, react, generation) [vite]:", "react")
    _answer(child, "Surface (page, model.sidebar_top, model.below_images, model.actions_extra) [page]:", "")
    _answer(child, "Package manager (npm, pnpm, yarn) [npm]:", "pnpm")
    _answer(child, "Content rating (g, pg, pg13, r, x) [g]:", "PG13")
    _answer(child, "Category (optional)", "utility")
    _answer(child, "Tagline (optional):", "Made at a prompt")
    # A bad answer is explained and asked again, not fatal.
    _answer(child, "Repository URL (optional):", "http://github.com/me/demo")
    child.expect_exact("must start with https://")
    _answer(child, "Repository URL (optional):", "https://github.com/me/demo")
    _answer(child, "Auth (block-token, oauth) [block-token]:", "")
    _answer(child, "Start a goods catalogue? [y/N]:", "y")
    child.expect_exact("buzz:read:self  (sensitive: needs a justification)")
    # Issue 21: the prompt said "Scopes [none]" and the manifest then declared three; it names them.
    _answer(child, "More scopes, comma-separated (user:read:self, goods:purchase:self, goods:read:self declared"
                   " already) [none]:", "buzz:read:self, made:up")
    child.expect_exact("unknown scope(s): made:up")
    _answer(child, "More scopes, comma-separated (user:read:self, goods:purchase:self, goods:read:self declared"
                   " already) [none]:", "buzz:read:self")
    _answer(child, "Justification for buzz:read:self:", "Shows viewers how much Buzz they have left.")
    # The catalogue's justification has a default; Enter takes it.
    _answer(child, "Justification for goods:purchase:self [Sells the items", "")
    _answer(child, "Loading skeleton in index.html? [Y/n]:", "")
    child.expect_exact("Next steps:")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0

    manifest = json.loads((tmp_path / "prompted" / "block.manifest.json").read_text())
    assert manifest["blockId"] == "prompt-demo" and manifest["name"] == "Prompt Demo"
    assert manifest["contentRating"] == "pg13" and manifest["category"] == "utility"
    assert manifest["repository"] == "https://github.com/me/demo"
    assert manifest["scopes"] == ["user:read:self", "buzz:read:self", "goods:purchase:self", "goods:read:self"]
    assert manifest["scopeJustifications"]["buzz:read:self"] == "Shows viewers how much Buzz they have left."
    assert manifest["buildCommand"] == "pnpm run build"
    assert (tmp_path / "prompted" / "pnpm-lock.yaml").is_file()


def test_flags_answer_before_prompts_and_an_underivable_name_asks_for_an_id(tmp_path: Path) -> None:
    child = _spawn(
        tmp_path, "emoji", "--template", "static", "--content-rating", "g", "--surface", "model.below_images"
    )
    _answer(child, "Name [Emoji]:", "🎨🖌️")
    child.expect_exact("cannot derive a blockId")
    _answer(child, "Block id:", "Bad Id")
    child.expect_exact("must start with a lowercase letter")
    _answer(child, "Block id:", "paint-box")
    # Template, surface and rating came as flags; static has no package manager.
    _answer(child, "Category (optional)", "")
    _answer(child, "Tagline (optional):", "")
    _answer(child, "Repository URL (optional):", "")
    _answer(child, "Auth (block-token, oauth) [block-token]:", "oauth")
    _answer(child, "Start a goods catalogue? [y/N]:", "")
    _answer(child, "More scopes, comma-separated (user:read:self declared already) [none]:", "apps:storage:write")
    child.expect_exact("cannot be combined with app storage scopes")
    _answer(child, "More scopes, comma-separated (user:read:self declared already) [none]:", "")
    _answer(child, "Loading skeleton in index.html? [Y/n]:", "n")
    child.expect_exact("model slots are open to moderators' apps only at launch")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    manifest = json.loads((tmp_path / "emoji" / "block.manifest.json").read_text())
    assert manifest["blockId"] == "paint-box" and manifest["targets"] == [{"slotId": "model.below_images"}]
    assert manifest["auth"] == "oauth" and manifest["scopes"] == ["user:read:self"]
    assert manifest["bootSkeleton"] is False


def test_defaults_on_a_terminal_never_prompt(tmp_path: Path) -> None:
    child = _spawn(tmp_path, "quiet-block", "--defaults")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    output = child.before
    assert "Next steps:" in output and "Name [" not in output and "Template (" not in output


@pytest.mark.parametrize("key", ["\x03", "\x04"], ids=["ctrl-c", "ctrl-d"])
def test_interrupting_a_prompt_exits_130_and_writes_nothing(tmp_path: Path, key: str) -> None:
    child = _spawn(tmp_path, "halfway")
    _answer(child, "Name [Halfway]:", "")
    _answer(child, "Block id [halfway]:", "")
    child.expect_exact("Template (static, vite, react, generation) [vite]:")
    child.send(key)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 130
    after = child.before.strip().splitlines()
    assert after[-1].strip() == "blockkit: interrupted" and "Traceback" not in child.before
    assert not (tmp_path / "halfway").exists()
