"""Reading the block project: what counts as the block's code, and when a scan proves nothing.

The project-aware rules (BK316-BK319) are exercised through real folders. The
cases that expect silence carry the weight here: a scan that cannot see the
whole project must not claim that something is absent from it.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from lint_helpers import READY_JS, clean, codes, write_project

from blockkit.context import Context
from blockkit.project.code import strip_comments
from blockkit.project.scan import MAX_FILE_BYTES, Project

INDEX = '<!doctype html><body><div id="root">Loading</div><script src="./app.js"></script></body>'
QUIET = "document.title = 'hi';\n"
POST_READY = "parent.postMessage({ type: 'BLOCK_READY', payload: { height: 1 } }, origin);\n"


def ready_findings(lint, files: dict[str, str], **changes) -> list[str]:
    return [c for c in codes(lint(clean(**changes), files)) if c == "BK318"]


# --- comments and strings -------------------------------------------------------


def test_strip_comments_blanks_comments_and_keeps_lines() -> None:
    code = "a(); // BLOCK_READY\n/* BLOCK_READY\n   more */ b('//not a comment'); c(\"/*x*/\")\n"
    stripped = strip_comments(code, ".js")
    assert "BLOCK_READY" not in stripped
    assert stripped.count("\n") == code.count("\n") and len(stripped) == len(code)
    assert "'//not a comment'" in stripped and '"/*x*/"' in stripped


def test_html_comments_are_blanked_in_markup_only() -> None:
    assert "BLOCK_READY" not in strip_comments("<!-- BLOCK_READY -->", ".html")
    # In a script, "<!--" is only text (here inside strings): nothing between is lost.
    script = "var open = '<!--';\nsend('BLOCK_READY');\nvar close = '-->';\n"
    assert "BLOCK_READY" in strip_comments(script, ".js")
    # An unclosed <!-- keeps the rest of the file: blanking it could hide code.
    assert "BLOCK_READY" in strip_comments("<!-- unclosed\n<script>send('BLOCK_READY')</script>", ".html")


@pytest.mark.parametrize("code", [
    # a regex literal that holds "//" or "/*" is not a comment
    "const isAbsolute = (u) => /^https?:\\/\\//.test(u); send('BLOCK_READY');",
    "const trim = (u) => u.replace(/\\/*$/, '');\nsend('BLOCK_READY');\n/* a real comment */\n",
    "if (/[/*]/.test(s)) send('BLOCK_READY');",
    "function f(s) { return /\\/\\//g.test(s) && send('BLOCK_READY'); }",
])
def test_regex_literals_are_code_not_comments(code: str) -> None:
    assert "send('BLOCK_READY')" in strip_comments(code, ".js")


@pytest.mark.parametrize("code", [
    "x = a / b; // BLOCK_READY\n",
    "x = (a + b) / 2 / c; // BLOCK_READY\n",
    "x = a ? b / c : d / e; /* BLOCK_READY */\n",
])
def test_a_division_is_not_read_as_a_regex(code: str) -> None:
    assert "BLOCK_READY" not in strip_comments(code, ".js")


def test_block_ready_in_a_minified_bundle_after_a_url_regex(lint) -> None:
    # One line of minified code: misreading the regex as "//" blanked the whole bundle.
    bundle = ('!function(){var r=/^https?:\\/\\//i;window.addEventListener("message",function(e){'
              'r.test(e.origin)&&"BLOCK_INIT"===e.data.type&&parent.postMessage({type:"BLOCK_READY",'
              'payload:{height:1}},e.origin)})}();')
    assert ready_findings(lint, {"index.html": INDEX.replace("./app.js", "./app.min.js"),
                                 "app.min.js": bundle}) == []


@pytest.mark.parametrize("files", [
    {"index.html": INDEX, "app.js": "// we send BLOCK_READY later\n" + QUIET},
    {"index.html": INDEX, "app.js": "/*\n * BLOCK_READY goes here\n */\n" + QUIET},
    {"index.html": "<!-- post BLOCK_READY from app.js -->" + INDEX, "app.js": QUIET},
    {"index.html": INDEX, "app.js": QUIET, "README.md": "The host waits for BLOCK_READY."},
    {"index.html": INDEX, "app.js": QUIET, "node_modules/dep/index.js": POST_READY},
    {"index.html": INDEX, "app.js": QUIET, "dist/assets/index.js": POST_READY},
], ids=["line-comment", "block-comment", "html-comment", "readme", "node_modules", "dist"])
def test_block_ready_named_only_outside_the_code_is_not_sent(lint, files) -> None:
    assert ready_findings(lint, files) == ["BK318"]


@pytest.mark.parametrize("files", [
    {"index.html": INDEX, "app.js": "var docs = 'https://civitai.com/docs'; " + POST_READY},
    {"index.html": "<script>\n" + POST_READY + "</script><div id=root>x</div>"},
    {"index.html": INDEX, "src/App.vue": "<script setup>\n" + POST_READY + "</script>"},
    {"index.html": INDEX, "app.js": QUIET, "src/bridge.mjs": READY_JS},
], ids=["after-url-string", "inline-script", "vue", "other-module"])
def test_block_ready_in_code_is_found(lint, files) -> None:
    assert ready_findings(lint, files) == []


# --- what the scan covers ---------------------------------------------------------


def test_a_project_folder_named_like_a_skipped_folder_is_still_read(tmp_path: Path, lint) -> None:
    from lint_helpers import lint_file

    for name in ("build", "dist", "node_modules"):
        path = write_project(tmp_path / name, clean(), {"index.html": INDEX, "app.js": QUIET})
        assert "BK318" in codes(lint_file(path)), name
        (tmp_path / name / "app.js").write_text(READY_JS)
        assert "BK318" not in codes(lint_file(path)), name


def test_output_dir_is_left_out_but_never_the_root(lint) -> None:
    files = {"index.html": INDEX, "app.js": QUIET, "public/app.js": POST_READY, "package.json": "{}",
             "package-lock.json": "{}"}
    # Build output shows what a bundler inlined, not what the block's code does.
    assert ready_findings(lint, files, buildCommand="npm run build", outputDir="public") == ["BK318"]
    assert ready_findings(lint, files, buildCommand="npm run build", outputDir="./") == []
    assert ready_findings(lint, files, buildCommand="npm run build", outputDir="out/web") == []


def test_another_blocks_folder_is_not_this_blocks_code(lint) -> None:
    files = {"index.html": INDEX, "app.js": QUIET, "other/block.manifest.json": "{}", "other/app.js": POST_READY}
    assert ready_findings(lint, files) == ["BK318"]


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symlinks here")
def test_symlinked_source_is_followed_and_cycles_end(tmp_path: Path) -> None:
    from lint_helpers import lint_file

    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "bridge.js").write_text(READY_JS)
    path = write_project(tmp_path / "app", clean(), {"index.html": INDEX})
    os.symlink(shared, tmp_path / "app" / "src")
    os.symlink("..", shared / "loop")  # shared/loop -> tmp_path: a cycle through app/src
    assert "BK318" not in codes(lint_file(path))
    scan = Project(tmp_path / "app").scan()
    assert scan.complete and scan.files_read == 2  # index.html and bridge.js, each once
    (shared / "bridge.js").write_text(QUIET)
    assert "BK318" in codes(lint_file(path))


# --- silence when the scan proves nothing -------------------------------------------


def test_no_source_at_all_proves_nothing(lint) -> None:
    assert ready_findings(lint, {}) == []
    assert ready_findings(lint, {"README.md": "hello", "style.css": "body {}"}) == []
    # The positive control: one file of code is enough to conclude.
    assert ready_findings(lint, {"index.html": "<h1>hi</h1>"}) == ["BK318"]


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symlinks here")
def test_an_unreadable_source_file_proves_nothing(tmp_path: Path) -> None:
    from lint_helpers import lint_file

    path = write_project(tmp_path / "p", clean(), {"index.html": INDEX, "app.js": QUIET})
    assert "BK318" in codes(lint_file(path))
    os.symlink(tmp_path / "gone.js", tmp_path / "p" / "broken.js")
    assert "BK318" not in codes(lint_file(path))


def test_a_file_over_the_size_cap_proves_no_absence_but_evidence_still_counts(lint) -> None:
    files = {"a-notes.ts": "export const n = useAppStorage();\n", "z-bundle.js": "x" * (MAX_FILE_BYTES + 1)}
    found = codes(lint(clean(), files))
    assert "BK318" not in found  # an unread file might hold BLOCK_READY
    assert "BK319" in found  # but the storage call that was read is real


@pytest.mark.parametrize("package, fires", [
    ('{"dependencies": {"@civitai/blocks-react": "^0.39.0"}}', False),
    ('{"devDependencies": {"@civitai/blocks-react": "^0.39.0"}}', False),
    ('{"dependencies": {"@civitai/app-sdk": "^0.31.0"}}', True),  # the plain SDK does not send it
    ('{"dependencies": {"@civitai/blocks-react-native": "^1.0.0"}}', True),
    ('{"dependencies": {"react": "^19.0.0"}}', True),
    ('{"dependencies": {', False),  # unreadable: its dependencies might send it
], ids=["blocks-react", "dev-dependency", "app-sdk", "lookalike", "react", "broken-json"])
def test_a_dependency_that_sends_block_ready(lint, package: str, fires: bool) -> None:
    files = {"index.html": INDEX, "src/main.ts": QUIET, "package.json": package}
    assert ready_findings(lint, files) == (["BK318"] if fires else [])


def test_without_a_project_no_project_rule_runs(lint) -> None:
    files = {"index.html": '<div id="root"></div>', "app.js": "useAppStorage();\n", "package.json": "{}"}
    manifest = clean(bootSkeleton=True, buildCommand="npm run build", outputDir="dist")
    assert {"BK316", "BK317", "BK318", "BK319"} <= set(codes(lint(manifest, files)))
    assert codes(lint(manifest, files, project=False)) == []


# --- app storage ----------------------------------------------------------------------


PER_VIEWER = "const store = useAppStorage<{ text: string }>();\n"
SHARED = "const board = useSharedStorage();\n"


@pytest.mark.parametrize("scopes, code, expected", [
    (["apps:storage:shared:read", "apps:storage:shared:write"], PER_VIEWER, ["per-viewer app storage"]),
    (["apps:storage:read", "apps:storage:write"], SHARED, ["shared app storage"]),
    (["apps:storage:write"], PER_VIEWER, []),
    (["apps:storage:shared:read"], SHARED, []),
    ([], PER_VIEWER + SHARED, ["per-viewer app storage", "shared app storage"]),
    ([], "window.parent.postMessage({ type: 'APP_STORAGE_SET', payload: {} }, o);\n", ["per-viewer app storage"]),
    ([], "fetch(`${base}/api/v1/blocks/shared-storage/list`);\n", ["shared app storage"]),
    ([], "// later: persist with useAppStorage()\n/* or useSharedStorage() */\n", []),
    ([], "import { useAppStorage } from '@civitai/blocks-react';\n", []),  # imported, never called
    ([], "const storage = window.localStorage; storage.setItem('k', 'v');\n", []),
], ids=["shared-scope-not-per-viewer", "per-viewer-scope-not-shared", "write-only", "shared-read", "both",
        "message-type", "rest-route", "comments", "import-only", "local-storage"])
def test_storage_use_against_scopes(lint, scopes, code, expected) -> None:
    scopes = ["user:read:self", *scopes]
    justifications = {"apps:storage:shared:write": "Posts to the shared board."} \
        if "apps:storage:shared:write" in scopes else ...
    manifest = clean(scopes=scopes, scopeJustifications=justifications)
    files = {"package.json": '{"dependencies": {"@civitai/blocks-react": "^0.39.0"}}', "src/App.tsx": code}
    found = [f for f in lint(manifest, files) if f.code == "BK319"]
    assert [next(s for s in ("per-viewer app storage", "shared app storage") if s in f.message)
            for f in found] == expected
    assert all(f.pointer == "/scopes" for f in found)


def test_storage_hint_names_the_oauth_conflict(lint) -> None:
    manifest = clean(auth="oauth")
    (finding,) = [f for f in lint(manifest, {"app.js": PER_VIEWER + READY_JS}) if f.code == "BK319"]
    assert "oauth" in (finding.hint or "")


# --- lockfiles, index.html -------------------------------------------------------------


@pytest.mark.parametrize("command, lockfiles, missing", [
    ("npm run build", ["package-lock.json"], None),
    ("vite build", ["package-lock.json"], None),
    ("npx vite build", [], "package-lock.json"),
    ("pnpm run build", ["package-lock.json"], "pnpm-lock.yaml"),
    ("yarn run build", ["yarn.lock"], None),
    ("yarn run build", [], "yarn.lock"),
])
def test_lockfile_for_the_build_command(lint, command, lockfiles, missing) -> None:
    files = {"package.json": "{}", **{name: "" for name in lockfiles}}
    found = [f for f in lint(clean(buildCommand=command, outputDir="dist"), files) if f.code == "BK317"]
    if missing is None:
        assert found == []
    else:
        (finding,) = found
        assert f"the project has no {missing};" in finding.message and finding.pointer == "/buildCommand"


def test_lockfile_hint_points_at_the_lockfile_present(lint) -> None:
    files = {"package.json": "{}", "yarn.lock": ""}
    (finding,) = lint(clean(buildCommand="npm run build", outputDir="dist"), files)
    assert finding.code == "BK317" and "yarn.lock is there" in (finding.hint or "")


def test_a_static_block_needs_no_lockfile(lint) -> None:
    # No package.json: the platform installs nothing, whatever buildCommand says.
    assert lint(clean(buildCommand="npm run build", outputDir="dist"), {"index.html": INDEX, "app.js": READY_JS}) == []


@pytest.mark.parametrize("html, message", [
    ('<body><main id="root"> \n&nbsp;<!-- mount --></main></body>', "is empty"),
    ("<body><div id=app></div></body>", 'no element with id "root"'),
    ('<body><div id="root"/><p>Loading</p></body>', None),  # "/>" does not close a div in HTML
    ('<body><div id="root"><span class="spinner"></span></div></body>', None),
])
def test_boot_skeleton_reads_index_html(lint, html, message) -> None:
    found = [f for f in lint(clean(bootSkeleton=True), {"index.html": html, "app.js": READY_JS})
             if f.code == "BK316"]
    if message is None:
        assert found == []
    else:
        (finding,) = found
        assert message in finding.message and finding.pointer == "/bootSkeleton"


def test_boot_skeleton_is_quiet_without_index_html_or_when_false(lint) -> None:
    assert lint(clean(bootSkeleton=True), {"app.js": READY_JS}) == []
    assert lint(clean(bootSkeleton=False), {"index.html": '<div id="root"></div>', "app.js": READY_JS}) == []


# --- tier-bound sandbox tokens ------------------------------------------------------------


def test_sandbox_tier_rule_never_repeats_a_server_error(lint) -> None:
    iframe = dict(clean()["iframe"], sandbox="allow-scripts allow-popups")
    # Unverified (the default): the server layer refuses allow-popups; lint adds nothing.
    assert lint(clean(iframe=iframe)) == []
    (finding,) = lint(clean(iframe=iframe), context=Context(tier="internal"))
    assert finding.code == "BK311" and "needs the verified tier" in finding.message
    internal_only = dict(iframe, sandbox="allow-forms allow-same-origin")
    (finding,) = lint(clean(iframe=internal_only), context=Context(tier="internal"))
    assert "needs the internal tier" in finding.message


@pytest.mark.parametrize(("text", "suffix"), [("/* " * 70_000, ".js"), ("<!--" * 50_000, ".html")],
                         ids=["unclosed-block-comments", "unclosed-html-comments"])
def test_many_unclosed_comments_take_linear_time(text: str, suffix: str) -> None:
    # Each unclosed opener used to search to the end of the file again: minutes for 200 KB.
    import time

    started = time.monotonic()
    stripped = strip_comments(text, suffix)
    assert time.monotonic() - started < 5
    assert stripped == text  # unclosed comments are left as code


# --- blockkit's own bridge -------------------------------------------------------------


def _bridge_source() -> str:
    from blockkit.resources import templates_dir

    return (templates_dir() / "_shared" / "bridge.js").read_text(encoding="utf-8")


@pytest.mark.parametrize("app, expected", [
    ("import { connect } from './bridge.js';\nconnect();\n", False),
    ("const bridge = connect();\nawait bridge.storageSet('note', 'hi');\n", True),
    ("const bridge = connect();\nconst v = await bridge.storageGet ('note');\n", True),
    ("const bridge = connect();\nawait bridge.request('APP_STORAGE_LIST', {});\n", True),
], ids=["offered-not-used", "storageSet-call", "storageGet-call", "generic-request"])
def test_the_blockkit_bridge_offers_storage_without_using_it(lint, app: str, expected: bool) -> None:
    # bridge.js names every APP_STORAGE_* message; only the block's calls are a use.
    bridge = _bridge_source()
    assert "APP_STORAGE_GET" in bridge  # else this test proves nothing
    found = [f for f in lint(clean(), {"bridge.js": bridge, "app.js": app}) if f.code == "BK319"]
    assert bool(found) is expected
    assert all("app.js" in f.message for f in found)


def test_a_copy_of_the_storage_messages_outside_the_bridge_still_counts(lint) -> None:
    bridge = _bridge_source()
    found = [f for f in lint(clean(), {"bridge.js": bridge, "mine.js": "send('APP_STORAGE_SET');\n"})
             if f.code == "BK319"]
    assert found and "mine.js" in found[0].message


# --- hostile checkouts (security review 2, S08 and S11) ------------------------------------------

@pytest.mark.parametrize("kind", ["fifo", "stdin-link", "fifo-source"])
def test_a_fifo_or_device_in_the_project_is_never_opened(tmp_path: Path, kind: str) -> None:
    # A checkout may hold index.html -> /dev/stdin (git keeps symlinks) or a FIFO: lint read it
    # and waited for input for ever. Run as a process whose stdin is a pipe no one writes.
    path = write_project(tmp_path / "p", clean(bootSkeleton=True), {"app.js": READY_JS})
    target = tmp_path / "p" / ("src.js" if kind == "fifo-source" else "index.html")
    if kind == "stdin-link":
        os.symlink("/dev/stdin", target)
    else:
        os.mkfifo(target)
    if kind == "fifo-source":
        (tmp_path / "p" / "index.html").write_text(INDEX, encoding="utf-8")
    import subprocess
    import sys

    env = {**os.environ, "NO_COLOR": "1"}
    read_end, write_end = os.pipe()  # stdin: a pipe whose writer stays open and never writes
    try:
        with subprocess.Popen([sys.executable, "-m", "blockkit.cli", "lint", str(path), "--format", "json"],
                              stdin=read_end, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env) as proc:
            try:
                _out, err = proc.communicate(timeout=60)  # a hang guard, not a speed bound
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.communicate()
                pytest.fail("blockkit lint waited on a FIFO or device in the project")
    finally:
        os.close(read_end)
        os.close(write_end)
    assert proc.returncode in (0, 1), err
    assert b"Traceback" not in err


def test_read_regular_refuses_what_is_not_a_regular_file(tmp_path: Path) -> None:
    from blockkit.project.scan import read_regular

    os.mkfifo(tmp_path / "fifo")
    os.symlink("/dev/zero", tmp_path / "zero")
    (tmp_path / "file").write_bytes(b"x" * 100)
    os.symlink(tmp_path / "file", tmp_path / "link")
    for name in ("fifo", "zero"):
        with pytest.raises(OSError):
            read_regular(tmp_path / name, 10)
    assert read_regular(tmp_path / "file", 10) == b"x" * 10
    assert read_regular(tmp_path / "link", 1000) == b"x" * 100
    assert Project(tmp_path).read_text("fifo") is None
