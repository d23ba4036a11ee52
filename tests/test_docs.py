"""The README and the user guide (docs/, mkdocs.yml) as a new user meets them (issue 21).

- The guide builds with ``mkdocs build --strict``: a broken link, a missing anchor or a page
  left out of the nav fails.
- Every ``sh`` block of a guide page runs, as written, in a scratch folder holding a copy of
  ``examples/`` (the blocks of one page in order, as one script, with ``set -eu``: a pipe into
  ``head`` may end its writer with 141, as in any shell):
  the OAuth walkthrough runs top to bottom against a real local platform.
- Every ``$ blockkit ...`` line of a ``console`` block (a session shown with its output, not
  run) names a command and options that exist.
- The README stays a front door: at most 200 lines, the two commands, every command listed.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import click
import pytest

from blockkit.commands._run import COMMANDS

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"
README = REPO / "README.md"
# Other helpers' reference page: shapes, not commands to run.
NOT_RUN = {"platform-shapes.md"}
FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```", re.S | re.M)


def blocks(page: Path, kind: str) -> list[str]:
    return [body for lang, body in FENCE.findall(page.read_text(encoding="utf-8")) if lang == kind]


def pages() -> list[Path]:
    return sorted(p for p in DOCS.glob("*.md") if p.name not in NOT_RUN)


def test_the_guide_builds_in_strict_mode(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file",
                           str(REPO / "mkdocs.yml"), "--site-dir", str(tmp_path / "site")],
                          capture_output=True, text=True, timeout=300, cwd=REPO,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert done.returncode == 0, done.stdout + done.stderr
    built = {p.relative_to(tmp_path / "site").as_posix() for p in (tmp_path / "site").rglob("index.html")}
    for page in DOCS.glob("*.md"):
        assert ("index.html" if page.stem == "index" else f"{page.stem}/index.html") in built, page.name


def test_a_broken_link_fails_the_strict_build(tmp_path: Path) -> None:
    # The check above can fail: a copy of the guide with one dead link does not build.
    docs = tmp_path / "docs"
    shutil.copytree(DOCS, docs)
    (docs / "fix.md").write_text((docs / "fix.md").read_text() + "\nSee [nothing](no-such-page.md).\n")
    config = (REPO / "mkdocs.yml").read_text()
    (tmp_path / "mkdocs.yml").write_text(config)
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert done.returncode != 0
    assert "no-such-page.md" in done.stdout + done.stderr


def _scratch(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    work = tmp_path / "work"
    shutil.copytree(REPO / "examples", work / "examples")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    # `blockkit` is this interpreter's blockkit (the tree under test), wherever the tests run.
    shim = bin_dir / "blockkit"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m blockkit "$@"\n')
    shim.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}", "NO_COLOR": "1",
           "HOME": str(tmp_path / "home")}
    env.pop("BLOCKKIT_DEBUG", None)
    return work, env


RUNNABLE = [page for page in pages() if blocks(page, "sh")]


def test_the_runnable_pages_are_the_ones_expected() -> None:
    names = {p.name for p in RUNNABLE}
    assert {"oauth.md", "local-platform.md", "validate-and-lint.md", "fix.md", "new.md", "editor.md",
            "test-against-the-local-platform.md"} <= names


@pytest.mark.parametrize("page", RUNNABLE, ids=lambda p: p.name)
def test_every_sh_block_of_a_page_runs_as_written(page: Path, tmp_path: Path) -> None:
    work, env = _scratch(tmp_path)
    script = "set -eu\ntrap 'kill $(jobs -p) 2>/dev/null || true' EXIT\n" + "\n".join(blocks(page, "sh"))
    done = subprocess.run(["bash", "-c", script], cwd=work, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"{page.name}: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    assert "Traceback" not in done.stderr


def test_the_oauth_walkthrough_signs_in_consents_exchanges_and_refreshes(tmp_path: Path) -> None:
    # The walkthrough's own lines, then a look at what they produced: a code from the consent
    # form, a token pair, userinfo for the signed-in user, and a refreshed pair.
    work, env = _scratch(tmp_path)
    script = ("set -eu\ntrap 'kill $(jobs -p) 2>/dev/null || true' EXIT\n"
              + "\n".join(blocks(DOCS / "oauth.md", "sh"))
              + '\necho "CODE=$CODE"; echo "WHO=$WHO"; echo "CSRF=$CSRF"\n')
    done = subprocess.run(["bash", "-c", script], cwd=work, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert re.search(r"^CODE=\S{20,}$", out, re.M) and re.search(r"^CSRF=\S{20,}$", out, re.M), out
    who = re.search(r"^WHO=(\S+)$", out, re.M)
    assert who is not None
    assert f'"username":"{who.group(1)}"' in out.replace(" ", "")  # userinfo
    assert out.count('"token_type":"Bearer"') == 1 and out.count('"refresh_token"') >= 1  # the refresh's answer
    for word in ("open ", "jq "):  # Linux, no extra tools: no macOS `open`, no jq
        assert not any(line.lstrip().startswith(word) or f"| {word}" in line
                       for block in blocks(DOCS / "oauth.md", "sh") for line in block.splitlines())


START = "blockkit emulator start --data D --ready-file emulator.json &"


@pytest.mark.parametrize("name", ["local-platform.md", "oauth.md"])
def test_a_failing_start_ends_the_documented_wait_at_once(name: str, tmp_path: Path) -> None:
    # Issue 37: with a bad D the start's error printed once and `until [ -s emulator.json ]` never
    # ended. The page's own lines, with D a file: the start fails, the wait after it fails at once
    # (the timeout only stops a hang), and the script ends there.
    page = DOCS / name
    script_lines = "\n".join(blocks(page, "sh")).splitlines()
    assert START in script_lines and "wait --ready-file emulator.json --pid $!" in script_lines[
        script_lines.index(START) + 1]
    work, env = _scratch(tmp_path)
    (work / "D").write_text("a file, not a directory\n")
    script = "set -eu\ntrap 'kill $(jobs -p) 2>/dev/null || true' EXIT\n" + "\n".join(script_lines) + "\necho REACHED\n"
    done = subprocess.run(["bash", "-c", script], cwd=work, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, f"{name}: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    assert "REACHED" not in done.stdout and "Traceback" not in done.stderr
    assert "ended before it was ready" in done.stderr and "'D'" in done.stderr, done.stderr
    assert not (work / "emulator.json").exists()


def _console_commands() -> list[tuple[str, str]]:
    found = []
    for page in [*DOCS.glob("*.md"), README]:
        for block in blocks(page, "console"):
            for line in block.splitlines():
                if line.startswith("$ blockkit "):
                    found.append((page.name, line[2:]))
    return found


def _command_of(tokens: list[str]) -> tuple[click.Command, list[str]]:
    from blockkit.cli import _group

    group = _group()
    command: click.Command = group
    ctx = click.Context(group)
    rest = tokens[1:]
    while isinstance(command, click.Group) and rest and not rest[0].startswith("-"):
        sub = command.get_command(ctx, rest[0])
        assert sub is not None, f"no command {' '.join(tokens[: len(tokens) - len(rest) + 1])!r}"
        command, rest = sub, rest[1:]
    return command, rest


@pytest.mark.parametrize("page, line", _console_commands(), ids=lambda v: v if len(v) < 40 else v[:40])
def test_every_command_shown_names_options_that_exist(page: str, line: str) -> None:
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    tokens = []
    for token in lexer:
        if token in ("|", "||", "&&", ";", "&", ">", ">>", "<", "--") or token.startswith("#"):
            break  # ("--": what follows is another program's command line, as in `emulator exec -- CMD`)
        tokens.append(token)
    command, rest = _command_of(tokens)
    options = {name for param in command.params for name in (*param.opts, *param.secondary_opts)}
    unknown = [t.split("=")[0] for t in rest if t.startswith("-") and t.split("=")[0] not in options]
    assert not unknown, f"{page}: {line}: no such option(s) {unknown}"


def test_the_readme_is_a_front_door() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 200
    first = blocks(README, "sh")[0].splitlines()
    assert first[0].startswith("python3 -m venv .venv && . .venv/bin/activate && pip install -e '.[server]'")
    assert first[0].endswith("blockkit validate examples/hello-block")
    assert first[1] == "bash scripts/test.sh"
    # .ci/run runs exactly the second command.
    assert (REPO / ".ci" / "run").read_text().rstrip().splitlines()[-1] == first[1]
    for name in COMMANDS:
        assert f"\nblockkit {name} " in text, f"the README's Commands block leaves out {name}"
    for link in re.findall(r"\]\((docs/[^)#]+)", text):
        assert (REPO / link).is_file(), link
    assert "shared/corpus" in text


def test_the_license_is_the_one_pyproject_names() -> None:
    assert 'license = "MIT"' in (REPO / "pyproject.toml").read_text()
    text = (REPO / "LICENSE").read_text()
    assert text.startswith("MIT License") and "the blockkit authors" in text


def test_no_wheel_or_archive_is_tracked_at_the_top() -> None:
    tracked = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True)
    if tracked.returncode != 0:  # pragma: no cover - not a git checkout (an sdist)
        pytest.skip("not a git checkout")
    top = [name for name in tracked.stdout.splitlines() if "/" not in name]
    assert not [name for name in top if name.endswith((".whl", ".tar.gz", ".zip"))], top


# --- issue 37: a newcomer's install, command list and shell completion ---------------------------


def _extras() -> dict[str, list[str]]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    return tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]


def _names(lines: list[str]) -> set[str]:
    from packaging.requirements import Requirement

    return {str(Requirement(line).name) + "".join(f"[{e}]" for e in sorted(Requirement(line).extras))
            for line in lines}


def test_the_readme_and_the_guide_tell_one_install_story() -> None:
    # Issue 37: the README said `pip install -e '.[server]'`, the guide's index `pip install -e .`
    # (then `dev` and `emulator` exit 2), and nothing said which extra brings what.
    extras = _extras()
    readme_first = blocks(README, "sh")[0].splitlines()[0]
    index = (DOCS / "index.md").read_text(encoding="utf-8")
    assert f"$ {readme_first}\n" in blocks(DOCS / "index.md", "console")[0]
    # Every extra named anywhere exists, and the index's table says what each one brings.
    named = set()
    for page in [README, *DOCS.glob("*.md")]:
        for found in re.findall(r"pip install [^`\n]*?(?:blockkit|\.)\[([a-z,]+)\]", page.read_text(encoding="utf-8")):
            named.update(found.split(","))
    assert named and named <= set(extras), named - set(extras)
    table = index[index.index("| install | brings | for |"):]
    for extra in extras:
        assert f"\n| `{extra}` |" in table, f"the index's install table leaves out {extra}"
    assert "| `pip install blockkit` (no extra) | the lean core |" in table
    assert "docs/index.md#install" in README.read_text(encoding="utf-8")
    # The pieces a newcomer adds: --check's Playwright with the platform it runs, the testing page's packages.
    assert {"blockkit[server]", "playwright"} <= _names(extras["browser"])
    assert {"blockkit[server]", "pytest", "httpx"} <= _names(extras["testing"])
    testing_page = DOCS / "test-against-the-local-platform.md"
    assert blocks(testing_page, "console")[0] == "$ python3 -m pip install 'blockkit[testing]'\n"


@pytest.fixture(scope="module")
def testing_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with nothing but what the testing page's own install line brings, from this tree's wheel."""
    import venv

    line = blocks(DOCS / "test-against-the-local-platform.md", "console")[0].strip()
    assert line == "$ python3 -m pip install 'blockkit[testing]'"
    root = tmp_path_factory.mktemp("testing-extra")
    wheels = root / "wheels"
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                            "-w", str(wheels), str(REPO)], capture_output=True, text=True, timeout=300)
    assert build.returncode == 0, build.stderr
    wheel = next(wheels.glob("blockkit-*.whl"))
    env_dir = root / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    # The page's line, with this tree's wheel for `blockkit` (and the pinned versions the tests use).
    install = subprocess.run([str(env_dir / "bin" / "python3"), "-m", "pip", "install", "-q",
                              "--disable-pip-version-check", "-c", str(REPO / "requirements" / "test.txt"),
                              f"blockkit[testing] @ {wheel.as_uri()}"], capture_output=True, text=True, timeout=900)
    if install.returncode != 0 and "No matching distribution" in install.stderr:
        pytest.skip(f"the package index is not reachable: {install.stderr.strip().splitlines()[-1]}")
    assert install.returncode == 0, install.stderr
    return env_dir


def test_the_testing_page_runs_as_written_after_its_own_install(testing_venv: Path, tmp_path: Path) -> None:
    # Issue 37: after the page's `pip install 'blockkit[server]'`, its example failed with
    # `No module named pytest` (and then httpx). Its sh blocks, in the fresh venv, with nothing else.
    work = tmp_path / "work"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "BLOCKKIT_DEBUG", "VIRTUAL_ENV")}
    env.update(PATH=f"{testing_venv / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}", NO_COLOR="1",
               HOME=str(tmp_path / "home"), VIRTUAL_ENV=str(testing_venv))
    script = "set -eu\ntrap 'kill $(jobs -p) 2>/dev/null || true' EXIT\n" + "\n".join(
        blocks(DOCS / "test-against-the-local-platform.md", "sh"))
    done = subprocess.run(["bash", "-c", script], cwd=work, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "3 passed" in done.stdout, done.stdout


def _command_list(page: Path) -> str:
    text = page.read_text(encoding="utf-8")
    start = text.index("\nblockkit validate [PATH ...]")
    return text[start:text.index("```", start)]


@pytest.mark.parametrize("page", [README, DOCS / "validate-and-lint.md"], ids=lambda p: p.name)
def test_the_command_lists_name_every_command_and_emulator_subcommand(page: Path) -> None:
    # Issue 37: the validate page's list left out `lsp`, and `exec` among the emulator's commands.
    from blockkit.commands.emulator import emulator

    listing = _command_list(page)
    for name in COMMANDS:
        assert f"\nblockkit {name} " in listing, f"{page.name}: the command list leaves out {name}"
    (line,) = [line for line in listing.splitlines() if line.startswith("blockkit emulator COMMAND")]
    listed = {word.strip(" ,") for word in line.split("the local platform:")[1].split(",")}
    assert listed == set(emulator.commands), f"{page.name}: {sorted(set(emulator.commands) ^ listed)}"


def test_shell_completion_is_in_the_guide_and_each_shell_gets_a_script(tmp_path: Path) -> None:
    # Issue 37: click's completion was there and no page said so.
    index = (DOCS / "index.md").read_text(encoding="utf-8")
    _work, env = _scratch(tmp_path)
    for shell, line in (("bash", 'eval "$(_BLOCKKIT_COMPLETE=bash_source blockkit)"'),
                        ("zsh", 'eval "$(_BLOCKKIT_COMPLETE=zsh_source blockkit)"'),
                        ("fish", "_BLOCKKIT_COMPLETE=fish_source blockkit > ~/.config/fish/completions/blockkit.fish")):
        assert f"`{line}`" in index, shell
        made = subprocess.run(["blockkit"], env={**env, "_BLOCKKIT_COMPLETE": f"{shell}_source"},
                              capture_output=True, text=True, timeout=60)
        assert made.returncode == 0 and made.stderr == "", made.stderr
        assert f"_BLOCKKIT_COMPLETE={shell}_complete" in made.stdout, made.stdout
        if shutil.which(shell) and shell != "bash":
            assert subprocess.run([shell, "-n"], input=made.stdout, text=True, timeout=60).returncode == 0
    # bash runs its script: the documented line, then a completion as the shell would ask for it.
    asked = ('eval "$(_BLOCKKIT_COMPLETE=bash_source blockkit)"\n'
             "complete -p blockkit\n"
             "COMP_WORDS=(blockkit emulator w); COMP_CWORD=2; _blockkit_completion blockkit; echo \"WORDS=${COMPREPLY[*]}\"\n")
    done = subprocess.run(["bash", "-c", asked], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "complete -o nosort -F _blockkit_completion blockkit" in done.stdout, done.stdout
    assert "WORDS=wait" in done.stdout, done.stdout
