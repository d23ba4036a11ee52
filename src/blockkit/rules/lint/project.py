"""Lint rules that read the block's project: index.html, package.json, lockfiles, source.

Each stays silent when lint runs on a manifest without its project (a file not
named block.manifest.json, or the library's plain ``validate``), and when what
it would need to read is missing or unreadable: no finding is better than a
guess about files we could not see.
"""

from __future__ import annotations

import json
from pathlib import PurePosixPath
from typing import Any, Iterator, Optional

from blockkit.project.code import is_source
from blockkit.project.html import ROOT_ID, find_root
from blockkit.project.scan import Project, read_regular
from blockkit.platform import (
    LOCKFILES,
    NPM_LOCKFILE_MIN_VERSION,
    READY_MESSAGE,
    READY_SENDING_PACKAGES,
    SENSITIVE_SCOPES,
    STORAGE_STORES,
)
from blockkit.rules.base import Hit, RuleContext, rule

INDEX_HTML = "index.html"
# Lockfiles are read up to this size. Over it, no verdict on the content (a generated
# lockfile of a large tree; an empty or hand-made one is never that big).
MAX_LOCKFILE_BYTES = 16 * 1024 * 1024
# pnpm and yarn lockfiles only need their first line of content: this much is read.
TEXT_LOCKFILE_PREFIX_BYTES = 64 * 1024


def project_of(ctx: RuleContext) -> Optional[Project]:
    """The project of the manifest being checked, or None when lint runs without one."""
    if ctx.project_dir is None:
        return None
    project = ctx.cache.get("lint.project")
    if project is None:
        project = ctx.cache["lint.project"] = Project(ctx.project_dir)
    return project

def _build_lockfile(manifest: dict[str, Any], ctx: RuleContext) -> Optional[tuple[Project, str, str]]:
    """(the project, the package manager `buildCommand` runs, its lockfile) when the project has a
    `package.json` and that lockfile; None otherwise (nothing for the lockfile rules to read)."""
    command = manifest.get("buildCommand")
    project = project_of(ctx)
    if project is None or not isinstance(command, str) or not project.has_file("package.json"):
        return None
    words = command.split()
    manager = words[0] if words else ""
    lockfile = LOCKFILES.get(manager)
    if lockfile is None or not project.has_file(lockfile):
        return None
    return project, manager, lockfile


@rule("BK316", "boot-skeleton-empty-root", layer="lint", severity="warning")
def boot_skeleton_empty_root(manifest: dict[str, Any], ctx: RuleContext) -> Iterator[Hit]:
    """`bootSkeleton` is true but index.html has nothing in `#root` to show.

    ## What it does
    When `bootSkeleton` is `true`, reads the project's `index.html` and reports a
    `#root` element with no child elements and no text (whitespace and comments
    do not count), or no `#root` at all.

    ## Why it matters
    `bootSkeleton: true` tells the full-page host to drop its loading overlay and
    show the iframe at once, trusting `index.html` to paint a loading state inside
    `#root`. Over an empty `#root` viewers get a blank frame until the block has
    loaded and rendered; the platform does not check this.

    ## Example
    "bootSkeleton": true, with index.html holding <div id="root"></div>

    ## Fix
    Put a lightweight skeleton inside `#root` (markup and inline styles, no
    script), or set "bootSkeleton": false.
    """
    if manifest.get("bootSkeleton") is not True:
        return
    project = project_of(ctx)
    html = project.read_text(INDEX_HTML) if project is not None else None
    if html is None:
        return
    root = find_root(html)
    if root is None:
        yield Hit("/bootSkeleton", f"bootSkeleton is true but {INDEX_HTML} has no element with id \"{ROOT_ID}\" "
                                   "to paint a loading state in",
                  hint=f"add <div id=\"{ROOT_ID}\"> with a skeleton inside to {INDEX_HTML}, or set "
                       "\"bootSkeleton\": false")
    elif root.empty:
        yield Hit("/bootSkeleton", f"bootSkeleton is true but #{ROOT_ID} in {INDEX_HTML} (line {root.line}) is "
                                   "empty, so the host shows a blank frame until the block renders",
                  hint=f"put a loading skeleton inside #{ROOT_ID}, or set \"bootSkeleton\": false")


@rule("BK317", "lockfile-missing", layer="lint", severity="warning")
def lockfile_missing(manifest: dict[str, Any], ctx: RuleContext) -> Iterator[Hit]:
    """The package manager `buildCommand` runs has no lockfile in the project.

    ## What it does
    When the project has a `package.json`, reads the package manager from the first
    word of `buildCommand` and reports a missing lockfile for it: `package-lock.json`
    for `npm`, `npx` and `vite`, `pnpm-lock.yaml` for `pnpm`, `yarn.lock` for
    `yarn`. A lockfile of another package manager is named in the hint.

    ## Why it matters
    The platform builds strictly from the committed lockfile of the package manager
    `buildCommand` names. Without it the build fails after review, although the
    same command works on your machine.

    ## Example
    "buildCommand": "npm run build", in a project that commits pnpm-lock.yaml

    ## Fix
    "buildCommand": "pnpm run build" to match the lockfile you have, or run
    `npm install` and commit package-lock.json.
    """
    command = manifest.get("buildCommand")
    project = project_of(ctx)
    if project is None or not isinstance(command, str) or not project.has_file("package.json"):
        return
    words = command.split()
    manager = words[0] if words else ""
    lockfile = LOCKFILES.get(manager)
    if lockfile is None or project.has_file(lockfile):
        return
    others = sorted({name for name in LOCKFILES.values() if name != lockfile and project.has_file(name)})
    installer = "npm" if lockfile == LOCKFILES["npm"] else manager
    if others:
        other_manager = next(m for m, name in LOCKFILES.items() if name == others[0])
        hint = (f"{others[0]} is there: use \"{other_manager} run <script>\" as buildCommand, or run "
                f"`{installer} install` and commit {lockfile}")
    else:
        hint = f"run `{installer} install` and commit {lockfile}"
    yield Hit("/buildCommand", f"buildCommand runs {manager} but the project has no {lockfile}; the platform "
                               "installs strictly from that lockfile, so the build fails", hint=hint)


@rule("BK323", "lockfile-invalid", layer="lint", severity="error")
def lockfile_invalid(manifest: dict[str, Any], ctx: RuleContext) -> Iterator[Hit]:
    """The lockfile the build installs from is empty or not a lockfile.

    ## What it does
    When the project has a `package.json` and the lockfile of the package
    manager `buildCommand` names (see BK317), reads it and reports one the
    package manager cannot install from: a `package-lock.json` that is empty,
    not a JSON object, or whose `lockfileVersion` is missing, not a number or
    below 1; a `pnpm-lock.yaml` or `yarn.lock` with nothing but blank lines and
    comments (a `yarn.lock` of only its header is right when `package.json`
    declares no dependencies). A lockfile over 16 MiB is not judged.

    ## Why it matters
    The platform installs strictly from that lockfile (`npm ci`,
    `pnpm install --frozen-lockfile`, `yarn install --frozen-lockfile`), and
    each refuses such a file: the build fails after review. A file created with
    `touch`, or left broken by a merge, passes every check that only looks for
    its name.

    ## Example
    "buildCommand": "npm run build", with an empty package-lock.json

    ## Fix
    Delete the file and let the package manager write it: `npm install` (or
    `pnpm install`, `yarn install`), then commit the lockfile it generated.
    """
    found = _build_lockfile(manifest, ctx)
    if found is None:
        return
    project, manager, lockfile = found
    defect = _lockfile_defect(project, lockfile)
    if defect is None:
        return
    installer = "npm" if lockfile == LOCKFILES["npm"] else manager
    yield Hit("/buildCommand", f"buildCommand runs {manager} and {lockfile} is there, but {defect}: it is not a "
                               "lockfile the platform's build can install from, so the build fails",
              hint=f"a lockfile is generated, never written by hand: delete {lockfile}, run `{installer} install` "
                   "and commit the file it writes")


def _lockfile_defect(project: Project, lockfile: str) -> Optional[str]:
    """What makes ``lockfile`` unusable, or None when it is fine or could not be judged."""
    json_lockfile = lockfile == LOCKFILES["npm"]
    limit = MAX_LOCKFILE_BYTES if json_lockfile else TEXT_LOCKFILE_PREFIX_BYTES
    try:
        raw = read_regular(project.root / lockfile, limit + 1)
    except (OSError, ValueError):
        return None  # unreadable: no verdict
    text = raw.decode("utf-8", errors="replace").lstrip("\ufeff")
    if not json_lockfile:
        if any(line.strip() and not line.lstrip().startswith("#") for line in text.splitlines()):
            return None
        if len(raw) > limit:
            return None  # only comments in the part read: no verdict on the rest
        if not text.strip():
            return "it is empty" if not text else "it holds only blank lines"
        if lockfile == LOCKFILES["yarn"] and not project.dependencies():
            return None  # yarn 1 writes just its header for a project without dependencies
        return "it holds only comments, no package"
    if len(raw) > limit:
        return None
    if not text.strip():
        return "it is empty" if not text else "it holds only blank lines"
    try:
        data = json.loads(text)
    except ValueError as exc:
        return f"it is not valid JSON ({exc})"
    except RecursionError:
        return "it is nested too deeply to read"
    if not isinstance(data, dict):
        return "it is not a JSON object"
    if "lockfileVersion" not in data:
        return "it has no \"lockfileVersion\""
    version = data["lockfileVersion"]
    if isinstance(version, bool) or not isinstance(version, (int, float)):
        return f"its \"lockfileVersion\" is {json.dumps(version)[:40]}, not a number"
    if version < NPM_LOCKFILE_MIN_VERSION:
        return f"its \"lockfileVersion\" is {json.dumps(version)}, below {NPM_LOCKFILE_MIN_VERSION}"
    return None


@rule("BK324", "lockfile-unused", layer="lint", severity="warning")
def lockfile_unused(manifest: dict[str, Any], ctx: RuleContext) -> Iterator[Hit]:
    """A lockfile of another package manager lies beside the one the build uses.

    ## What it does
    When the project has a `package.json` and the lockfile of the package
    manager `buildCommand` names, reports the lockfiles of the other package
    managers (`package-lock.json`, `pnpm-lock.yaml`, `yarn.lock`) that are there
    too. (Without the right lockfile, BK317 reports the missing one and names
    the others in its hint.)

    ## Why it matters
    The platform installs only from the lockfile of the package manager
    `buildCommand` names and ignores the rest. An unused lockfile drifts out of
    date, and whoever runs the other package manager next builds something the
    platform does not.

    ## Example
    "buildCommand": "pnpm run build", in a project that commits pnpm-lock.yaml
    and package-lock.json

    ## Fix
    Delete the lockfiles of the package managers the block does not use, or set
    `buildCommand` to the one it does.
    """
    found = _build_lockfile(manifest, ctx)
    if found is None:
        return
    project, manager, lockfile = found
    others = sorted({name for name in LOCKFILES.values() if name != lockfile and project.has_file(name)})
    if not others:
        return
    listed = " and ".join(others)
    yield Hit("/buildCommand", f"buildCommand runs {manager}, so the platform installs from {lockfile} and ignores "
                               f"{listed}, which will drift out of date",
              hint=f"delete {listed} if the block does not use {'them' if len(others) > 1 else 'it'}")


@rule("BK318", "block-ready-never-sent", layer="lint", severity="warning")
def block_ready_never_sent(manifest: dict[str, Any], ctx: RuleContext) -> Iterator[Hit]:
    """Nothing the block loads sends `BLOCK_READY`.

    ## What it does
    Unless `package.json` depends on `@civitai/blocks-react` or `@civitai/sdk`
    (which send it for you), follows what `index.html` loads, as the browser and
    Vite do: `<script src>` of local paths, the imports of inline scripts and of
    every module reached (`import`, `export … from`, `import()`, `require()` of
    relative or `/`-rooted paths, with Vite's extensions and `/index` files).
    With comments removed, it reports two things: an emitter that names
    `BLOCK_READY` but that nothing `index.html` loads reaches, and a project in
    which no source file names it at all. When the graph cannot be followed (a
    URL off the project, a computed `import()`, a bundler alias, a file that is
    not there), it falls back to reading every source file (not `node_modules`,
    build folders, `outputDir` or other blocks' folders) and says so. It stays
    silent when it could not read the whole project: too many or too large
    files, an unreadable file, or no source file at all.

    ## Why it matters
    The host posts `BLOCK_INIT` until the block answers `BLOCK_READY {height}`,
    and gives up after 10 seconds: a page shows a failure card and a model slot
    collapses. The block works when opened on its own, so nothing shows the
    problem before it is live.

    ## Example
    window.addEventListener("message", (event) => render(event.data.payload));

    ## Fix
    Answer `BLOCK_INIT` with
    `parent.postMessage({type: "BLOCK_READY", payload: {height}}, hostOrigin)`
    in code `index.html` loads (import the emitter from the entry module), or use
    the bridge `blockkit new` writes, or `@civitai/blocks-react`.
    """
    project = project_of(ctx)
    if project is None:
        return
    package = project.package_json
    if package.exists and not package.usable:
        return  # its dependencies may well send the message: we cannot tell
    if any(project.depends_on(name) for name in READY_SENDING_PACKAGES):
        return
    scan = project.scan(manifest.get("outputDir"))
    if not scan.complete:
        return  # a tree we could not read proves nothing, about wiring either
    graph = project.entry_graph()
    if graph.ready is not None:
        return  # a file index.html loads sends it (evidence counts, whatever could not be followed)
    if scan.ready is not None:
        if not graph.complete:
            return  # the text is there and we cannot tell whether it is loaded
        loads = next((name for name in graph.files[1:] if is_source(PurePosixPath(name))), None)
        yield Hit("", f"{scan.ready} sends {READY_MESSAGE} but nothing {INDEX_HTML} loads reaches it, so the host "
                      "never receives it and gives up after 10 s (a page shows a failure card)", at="open",
                  hint=(f"import {scan.ready.path} from the module {INDEX_HTML} loads ({loads})" if loads else
                        f"load {scan.ready.path} from {INDEX_HTML} with <script type=\"module\" src=...>")
                       + f"; {INDEX_HTML} loads {_count(len(graph.files) - 1, 'file')} in all")
        return
    message = (f"none of the block's {_count(scan.files_read, 'source file')} sends {READY_MESSAGE}, so the "
               "host gives up after 10 s (a page shows a failure card)")
    if not graph.complete:
        message += f" (a text scan of every source file, as the files {INDEX_HTML} loads could not be followed: " \
                   f"{graph.gap})"
    yield Hit("", message, at="open",
              hint=f"answer BLOCK_INIT with postMessage({{type: \"{READY_MESSAGE}\", payload: {{height}}}}) to the "
                   f"host, or use {READY_SENDING_PACKAGES[0]}, which sends it for you")


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'s' if number != 1 else ''}"


@rule("BK319", "storage-scope-missing", layer="lint", severity="warning")
def storage_scope_missing(manifest: dict[str, Any], ctx: RuleContext) -> Iterator[Hit]:
    """The block's code uses app storage that the manifest never asks for.

    ## What it does
    Reads the block's own source files (as BK318 does, comments removed) for the
    two app stores: per-viewer storage (calls of `useAppStorage()`, type arguments
    of up to 256 characters included, the `APP_STORAGE_*` messages, the
    `blocks/app-storage/` routes, calls of `storageGet`, `storageSet` and
    `storageDelete`, the helpers of the bridge `blockkit new` writes, whose own
    message names do not count) and shared storage
    (calls of `useSharedStorage()`, the `SHARED_*` messages, the
    `blocks/shared-storage/` routes). Reports each store the code uses while `scopes` declares none of its
    scopes: `apps:storage:read` / `apps:storage:write`, or
    `apps:storage:shared:read` / `apps:storage:shared:write`. A shared scope does
    not open per-viewer storage, nor the reverse.

    ## Why it matters
    The platform gates each store by the declared scopes. Without them every
    storage call is refused in production (403), while the dev host and tests keep
    working, and viewers only see saves that fail.

    ## Example
    const notes = useAppStorage(); with "scopes": ["ai:write:budgeted"]

    ## Fix
    "scopes": ["ai:write:budgeted", "apps:storage:read", "apps:storage:write"]
    (declare only what the code does: read, write or both).
    """
    scopes = manifest.get("scopes")
    project = project_of(ctx)
    if project is None or not isinstance(scopes, list):
        return
    declared = {s for s in scopes if isinstance(s, str)}
    missing = [store for store in STORAGE_STORES if not declared.intersection(store.scopes)]
    if not missing:
        return
    scan = project.scan(manifest.get("outputDir"))
    for store in missing:
        use = scan.storage.get(store.name)
        if use is None:
            continue
        wanted = " nor ".join(store.scopes)
        hint = f"add {' and/or '.join(json.dumps(s) for s in store.scopes)} to scopes (read, write)"
        sensitive = [s for s in store.scopes if s in SENSITIVE_SCOPES]
        if sensitive:
            hint += f"; {', '.join(sensitive)} also needs a scopeJustifications entry"
        if manifest.get("auth") == "oauth":
            hint += "; the platform refuses storage scopes together with \"auth\": \"oauth\", so drop \"auth\""
        yield Hit("/scopes", f"{use} uses {store.name} ({use.text}) but scopes declares neither {wanted}, so every "
                             "storage call is refused in production", at="key", hint=hint)
