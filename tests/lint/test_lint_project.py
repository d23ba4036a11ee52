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
    {"index.html": INDEX, "app.js": "import './src/bridge.mjs';\n" + QUIET, "src/bridge.mjs": READY_JS},
], ids=["after-url-string", "inline-script", "vue", "imported-module"])
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
    # A script from a CDN: the entry graph cannot be followed, so the text scan decides.
    index = INDEX.replace("<body>", '<body><script src="https://cdn.example/lib.js"></script>')
    files = {"index.html": index, "app.js": QUIET, "public/app.js": POST_READY, "package.json": "{}",
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
    assert lint(clean(bootSkeleton=False), {"index.html": '<div id="root"></div><script src="app.js"></script>',
                                            "app.js": READY_JS}) == []


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


# --- BK323: a lockfile that is not one ------------------------------------------------------

TEMPLATES = Path(__file__).resolve().parents[2] / "templates"
NPM_BUILD = {"buildCommand": "npm run build", "outputDir": "dist"}
DEPENDENT = '{"name": "demo", "devDependencies": {"vite": "^7.0.0"}}'
YARN_HEADER = "# THIS IS AN AUTOGENERATED FILE. DO NOT EDIT THIS FILE DIRECTLY.\n# yarn lockfile v1\n\n\n"


def lockfile_findings(lint, command: str, files: dict[str, str]) -> list:
    manifest = clean(buildCommand=command, outputDir="dist")
    return [f for f in lint(manifest, {"index.html": INDEX, "app.js": READY_JS, **files})
            if f.code in ("BK317", "BK323", "BK324")]


@pytest.mark.parametrize("body, defect", [
    ("", "it is empty"),
    ("  \n\t\r\n", "it holds only blank lines"),
    ("{}", 'it has no "lockfileVersion"'),
    ('{"name": "demo", "packages": {}}', 'it has no "lockfileVersion"'),
    ('{"lockfileVersion": 0}', 'its "lockfileVersion" is 0, below 1'),
    ('{"lockfileVersion": "3"}', 'its "lockfileVersion" is "3", not a number'),
    ('{"lockfileVersion": true}', 'its "lockfileVersion" is true, not a number'),
    ('[{"lockfileVersion": 3}]', "it is not a JSON object"),
    ("lockfileVersion: 3\n", "it is not valid JSON"),
    ('<<<<<<< HEAD\n{"lockfileVersion": 3}\n=======\n{"lockfileVersion": 2}\n>>>>>>> main\n', "it is not valid JSON"),
    ("\ufeff", "it is empty"),
], ids=["empty", "whitespace", "empty-object", "no-version", "version-0", "version-string", "version-bool",
        "array", "yaml", "merge-conflict", "bom-only"])
def test_an_npm_lockfile_that_npm_ci_refuses_is_an_error(lint, body: str, defect: str) -> None:
    (finding,) = lockfile_findings(lint, "npm run build", {"package.json": DEPENDENT, "package-lock.json": body})
    assert finding.code == "BK323" and finding.severity == "error" and finding.pointer == "/buildCommand"
    assert f"package-lock.json is there, but {defect}" in finding.message, finding.message
    assert "run `npm install`" in (finding.hint or "") and "delete package-lock.json" in (finding.hint or "")


@pytest.mark.parametrize("body", [
    '{"lockfileVersion": 1}',
    '{"lockfileVersion": 3}',
    '\ufeff{"name": "demo", "lockfileVersion": 3, "packages": {}}',
    (TEMPLATES / "vite" / "lockfiles" / "npm" / "package-lock.json").read_text(encoding="utf-8"),
], ids=["version-1", "version-3", "bom", "template"])
def test_a_real_npm_lockfile_is_clean(lint, body: str) -> None:
    for command in ("npm run build", "vite build", "npx vite build"):
        assert lockfile_findings(lint, command, {"package.json": DEPENDENT, "package-lock.json": body}) == []


@pytest.mark.parametrize("manager, lockfile, body, defect", [
    ("pnpm", "pnpm-lock.yaml", "", "it is empty"),
    ("pnpm", "pnpm-lock.yaml", "\n   \n\t\n", "it holds only blank lines"),
    ("pnpm", "pnpm-lock.yaml", "# generated\n\n", "it holds only comments"),
    ("yarn", "yarn.lock", "", "it is empty"),
    ("yarn", "yarn.lock", " \n", "it holds only blank lines"),
    ("yarn", "yarn.lock", YARN_HEADER, "it holds only comments"),  # the project has dependencies
])
def test_an_empty_pnpm_or_yarn_lockfile_is_an_error(lint, manager, lockfile, body, defect) -> None:
    (finding,) = lockfile_findings(lint, f"{manager} run build", {"package.json": DEPENDENT, lockfile: body})
    assert finding.code == "BK323" and f"{lockfile} is there, but {defect}" in finding.message, finding.message
    assert f"run `{manager} install`" in (finding.hint or "")


@pytest.mark.parametrize("manager, lockfile, package, body", [
    ("pnpm", "pnpm-lock.yaml", DEPENDENT, (TEMPLATES / "vite" / "lockfiles" / "pnpm" / "pnpm-lock.yaml").read_text()),
    ("pnpm", "pnpm-lock.yaml", DEPENDENT, "lockfileVersion: '9.0'\n"),
    ("pnpm", "pnpm-lock.yaml", DEPENDENT, "{}\n"),  # npm's rule is not pnpm's: any content will do
    ("yarn", "yarn.lock", DEPENDENT, (TEMPLATES / "vite" / "lockfiles" / "yarn" / "yarn.lock").read_text()),
    ("yarn", "yarn.lock", '{"name": "demo"}', YARN_HEADER),  # what yarn 1 writes without dependencies
    ("yarn", "yarn.lock", '{"name": "demo", "dependencies": {}}', YARN_HEADER),
])
def test_a_real_pnpm_or_yarn_lockfile_is_clean(lint, manager, lockfile, package, body) -> None:
    assert lockfile_findings(lint, f"{manager} run build", {"package.json": package, lockfile: body}) == []


def test_only_the_lockfile_the_build_uses_is_judged(lint) -> None:
    files = {"package.json": DEPENDENT, "pnpm-lock.yaml": "lockfileVersion: '9.0'\n", "package-lock.json": ""}
    assert codes(lockfile_findings(lint, "pnpm run build", files)) == ["BK324"]
    assert codes(lockfile_findings(lint, "npm run build", files)) == ["BK323", "BK324"]


def test_a_static_block_is_never_judged_for_its_lockfile(lint) -> None:
    assert lockfile_findings(lint, "npm run build", {"package-lock.json": ""}) == []


def test_a_lockfile_over_the_size_cap_gets_no_verdict(lint, monkeypatch: pytest.MonkeyPatch) -> None:
    from blockkit.rules.lint import project as project_rules

    files = {"package.json": DEPENDENT, "package-lock.json": "{" + " " * 64}
    assert codes(lockfile_findings(lint, "npm run build", files)) == ["BK323"]
    monkeypatch.setattr(project_rules, "MAX_LOCKFILE_BYTES", 32)
    assert lockfile_findings(lint, "npm run build", files) == []


def test_an_invalid_lockfile_fails_lint(tmp_path: Path) -> None:
    from lint_helpers import run_cli

    write_project(tmp_path, clean(**NPM_BUILD), {"index.html": INDEX, "app.js": READY_JS, "package.json": DEPENDENT,
                                                 "package-lock.json": ""})
    result = run_cli("lint", str(tmp_path))
    assert result.returncode == 1 and "BK323 buildCommand runs npm" in result.stdout, result.stdout
    assert "Found 1 error" in result.stdout
    (tmp_path / "package-lock.json").write_text('{"lockfileVersion": 3}')
    assert run_cli("lint", str(tmp_path)).returncode == 0


# --- BK324: a lockfile of another package manager --------------------------------------------


def test_an_unused_lockfile_beside_the_right_one_is_a_warning(lint) -> None:
    files = {"package.json": DEPENDENT, "pnpm-lock.yaml": "lockfileVersion: '9.0'\n",
             "package-lock.json": '{"lockfileVersion": 3}', "yarn.lock": YARN_HEADER + "a@1:\n  version 1\n"}
    (finding,) = lockfile_findings(lint, "pnpm run build", files)
    assert finding.code == "BK324" and finding.severity == "warning"
    assert "installs from pnpm-lock.yaml and ignores package-lock.json and yarn.lock" in finding.message
    # Without the right lockfile it is BK317's case, whose hint names the other one, as before.
    del files["pnpm-lock.yaml"]
    (finding,) = lockfile_findings(lint, "pnpm run build", files)
    assert finding.code == "BK317" and "package-lock.json is there" in (finding.hint or "")


# --- BK318: the entry graph from index.html ----------------------------------------------------

HOST_JS = READY_JS  # an emitter: answers BLOCK_INIT with BLOCK_READY


def ready_messages(lint, files: dict[str, str], **changes) -> list[str]:
    return [f.message for f in lint(clean(**changes), files) if f.code == "BK318"]


def test_an_emitter_nothing_loads_is_reported_as_an_orphan(lint) -> None:
    files = {"index.html": INDEX, "app.js": QUIET, "src/host.js": HOST_JS}
    (message,) = ready_messages(lint, files)
    assert message.startswith("src/host.js:3 sends BLOCK_READY but nothing index.html loads reaches it"), message
    # The positive control: the same emitter, imported, answers the host.
    files["app.js"] = "import './src/host.js';\n" + QUIET
    assert ready_messages(lint, files) == []


def test_an_emitter_reached_through_script_src_and_an_import_chain(lint) -> None:
    files = {"index.html": INDEX, "app.js": "import { boot } from './lib/boot.js';\nboot();\n",
             "lib/boot.js": "export { connect as boot } from '../host';\n",  # no extension: host.js
             "host.js": "export function connect() {}\n" + HOST_JS}
    assert ready_messages(lint, files) == []
    files["lib/boot.js"] = "export const boot = () => {};\n"  # the chain is broken: host.js is an orphan
    (message,) = ready_messages(lint, files)
    assert "host.js:4 sends BLOCK_READY but nothing index.html loads reaches it" in message


def test_a_commented_out_import_does_not_load_the_emitter(lint) -> None:
    files = {"index.html": INDEX, "app.js": "// import './host.js';\n/* import('./host.js') */\n" + QUIET,
             "host.js": HOST_JS}
    (message,) = ready_messages(lint, files)
    assert "nothing index.html loads reaches it" in message


@pytest.mark.parametrize("app", [
    "button.onclick = async () => { const m = await import('./host.js'); m.start(); };\n",
    "import(`./host.js`).then((m) => m.start());\n",
    "const m = require('./host.js');\n",
    "import * as host from \"./host.js\"\n",
], ids=["dynamic-import", "template-literal", "require", "namespace"])
def test_dynamic_imports_and_require_are_followed(lint, app: str) -> None:
    files = {"index.html": INDEX, "app.js": app, "host.js": HOST_JS}
    assert ready_messages(lint, files) == []
    files["app.js"] = QUIET
    assert len(ready_messages(lint, files)) == 1  # the control: without the reference it is an orphan


def test_a_vite_project_whose_index_html_points_at_src_main_ts(lint) -> None:
    files = {"index.html": '<!doctype html><div id="root">…</div><script type="module" src="/src/main.ts"></script>',
             "src/main.ts": "import './style.css';\nimport { connect } from './bridge.js';\nconnect();\n",
             "src/style.css": "body {}", "src/bridge.ts": "export function connect() {}\n" + HOST_JS,
             "package.json": '{"devDependencies": {"vite": "^7.0.0", "typescript": "^5.0.0"}}',
             "package-lock.json": '{"lockfileVersion": 3}'}
    assert ready_messages(lint, files, **NPM_BUILD) == []  # ./bridge.js from TypeScript is bridge.ts
    files["src/main.ts"] = "import './style.css';\n"
    (message,) = ready_messages(lint, files, **NPM_BUILD)
    assert message.startswith("src/bridge.ts:4 sends BLOCK_READY but nothing index.html loads reaches it")


@pytest.mark.parametrize("files", [
    {"index.html": '<script type="module">import "./host.js";</script>', "host.js": HOST_JS},
    {"index.html": '<script type="module" src="./main.tsx"></script>', "main.tsx": "import './host';\n",
     "host/index.ts": HOST_JS},
    {"index.html": '<script src="/bridge.js"></script>', "public/bridge.js": HOST_JS},  # Vite's public/
    {"index.html": '<script src="a.js"></script>', "a.js": "import './b.js';\n",
     "b.js": "import './a.js';\n" + HOST_JS},  # a cycle ends
], ids=["inline-module", "index-file", "public-folder", "cycle"])
def test_more_ways_index_html_loads_the_emitter(lint, files) -> None:
    assert ready_messages(lint, files) == []


def test_a_declared_package_is_accounted_for_and_an_alias_is_not(lint) -> None:
    files = {"index.html": INDEX, "app.js": "import { h } from 'preact';\n" + QUIET, "src/host.js": HOST_JS,
             "package.json": '{"dependencies": {"preact": "^10.0.0"}}'}
    (message,) = ready_messages(lint, files)  # the graph is complete: preact is a package
    assert "nothing index.html loads reaches it" in message
    # "@/host.js" is a bundler alias (no such dependency): the graph cannot be followed, and the
    # text scan finds the emitter, so nothing is said.
    files["app.js"] = "import '@/host.js';\n" + QUIET
    assert ready_messages(lint, files) == []


@pytest.mark.parametrize("index, app, reason", [
    ('<script src="https://cdn.example/lib.js"></script><script src="app.js"></script>', QUIET,
     "loads 'https://cdn.example/lib.js', which is not a file of the project"),
    (INDEX, "const page = await import(`./pages/${name}.js`);\n", "app.js (line 1) has an import() of a computed"),
    (INDEX, "import '@/boot';\n", "a bare specifier that names no dependency"),
    ('<script src="missing.js"></script>', None, "which names no file of the project"),
    (INDEX, "import '../../outside.js';\n", "which is outside the project"),
], ids=["cdn", "computed-import", "alias", "missing-file", "outside"])
def test_a_graph_that_cannot_be_followed_falls_back_to_the_text_scan(lint, index, app, reason) -> None:
    files = {"index.html": index, "src/util.js": QUIET}
    if app is not None:
        files["app.js"] = app
    (message,) = ready_messages(lint, files)  # no emitter anywhere: the text scan still concludes
    assert message.startswith("none of the block's") and "(a text scan of every source file" in message, message
    assert reason in message, message
    files["src/util.js"] = HOST_JS  # an emitter the graph may reach through what it could not follow
    assert ready_messages(lint, files) == []


@pytest.mark.parametrize("package, fires", [
    ('{"dependencies": {"@civitai/sdk": "^1.0.0"}}', False),  # initialize() answers BLOCK_INIT
    ('{"devDependencies": {"@civitai/sdk": "^1.0.0"}}', False),
    ('{"dependencies": {"@civitai/sdk-extra": "^1.0.0"}}', True),
    ('{"dependencies": {"@civitai/theme": "^0.2.0", "@civitai/components": "^0.3.0"}}', True),
], ids=["sdk", "sdk-dev", "lookalike", "theme-components"])
def test_the_newer_sdk_sends_block_ready(lint, package: str, fires: bool) -> None:
    files = {"index.html": '<script type="module" src="/src/main.ts"></script>',
             "src/main.ts": "import { initialize } from '@civitai/sdk';\ninitialize();\n", "package.json": package}
    assert len(ready_messages(lint, files)) == (1 if fires else 0)


def test_the_entry_graph_reads_each_file_once_and_stops_at_its_budget(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from blockkit.project import entry

    chain = {f"m{i}.js": f"import './m{i + 1}.js';\n" for i in range(10)}
    chain["m10.js"] = HOST_JS
    write_project(tmp_path, clean(), {"index.html": '<script src="m0.js"></script>', **chain})
    graph = Project(tmp_path).entry_graph()
    assert graph.complete and graph.files == ["index.html", *(f"m{i}.js" for i in range(11))]
    assert graph.ready == ("m10.js", 3)
    monkeypatch.setattr(entry, "MAX_GRAPH_FILES", 5)
    graph = Project(tmp_path).entry_graph()
    assert not graph.complete and "more than 5 files" in (graph.gap or "") and graph.ready is None


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symlinks here")
def test_the_entry_graph_follows_a_linked_folder_as_the_scan_does(tmp_path: Path) -> None:
    from lint_helpers import lint_file

    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "bridge.js").write_text(HOST_JS)
    path = write_project(tmp_path / "app", clean(), {"index.html": INDEX, "app.js": "import './src/bridge.js';\n"})
    os.symlink(shared, tmp_path / "app" / "src")
    assert "BK318" not in codes(lint_file(path))
    assert Project(tmp_path / "app").entry_graph().files == ["index.html", "app.js", "src/bridge.js"]
    (tmp_path / "app" / "app.js").write_text(QUIET)
    (finding,) = [f for f in lint_file(path) if f.code == "BK318"]
    assert finding.message.startswith("src/bridge.js:3 sends BLOCK_READY but nothing index.html loads")


def test_evidence_in_a_loaded_file_counts_though_the_rest_cannot_be_followed(lint) -> None:
    # dist/ is left out of the source scan, but index.html loads it: the graph's evidence counts.
    files = {"index.html": '<script src="dist/host.js"></script><script src="https://cdn.example/x.js"></script>',
             "dist/host.js": HOST_JS, "app.js": QUIET}
    assert ready_messages(lint, files) == []
    files["dist/host.js"] = QUIET
    assert len(ready_messages(lint, files)) == 1


def test_the_orphan_hint_names_the_entry_module(lint) -> None:
    files = {"index.html": '<link rel="stylesheet" href="s.css"><script type="module" src="/src/main.ts"></script>',
             "src/main.ts": "import './style.css';\n", "src/style.css": "", "src/host.js": HOST_JS}
    (finding,) = [f for f in lint(clean(), files) if f.code == "BK318"]
    assert finding.hint.startswith("import src/host.js from the module index.html loads (src/main.ts)"), finding.hint
