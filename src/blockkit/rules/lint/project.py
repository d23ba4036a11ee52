"""Lint rules that read the block's project: index.html, package.json, lockfiles, source.

Each stays silent when lint runs on a manifest without its project (a file not
named block.manifest.json, or the library's plain ``validate``), and when what
it would need to read is missing or unreadable: no finding is better than a
guess about files we could not see.
"""

from __future__ import annotations

import json
from typing import Any, Iterator, Optional

from blockkit.project.html import ROOT_ID, find_root
from blockkit.project.scan import Project
from blockkit.platform import (
    LOCKFILES,
    READY_MESSAGE,
    READY_SENDING_PACKAGES,
    SENSITIVE_SCOPES,
    STORAGE_STORES,
)
from blockkit.rules.base import Hit, RuleContext, rule

INDEX_HTML = "index.html"


def project_of(ctx: RuleContext) -> Optional[Project]:
    """The project of the manifest being checked, or None when lint runs without one."""
    if ctx.project_dir is None:
        return None
    project = ctx.cache.get("lint.project")
    if project is None:
        project = ctx.cache["lint.project"] = Project(ctx.project_dir)
    return project


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


@rule("BK318", "block-ready-never-sent", layer="lint", severity="warning")
def block_ready_never_sent(manifest: dict[str, Any], ctx: RuleContext) -> Iterator[Hit]:
    """The block's code never sends `BLOCK_READY`.

    ## What it does
    Reads the block's own source files (`.js`, `.mjs`, `.cjs`, `.jsx`, `.ts`,
    `.tsx`, `.html`, `.vue`, `.svelte`; not `node_modules`, build folders,
    `outputDir` or other blocks' folders), with comments removed, and reports a
    project in which none of them names `BLOCK_READY` and `package.json` does not
    depend on `@civitai/blocks-react` (which sends it for you). It stays silent
    when it could not read the whole project: too many or too large files, an
    unreadable file, or no source file at all.

    ## Why it matters
    The host posts `BLOCK_INIT` until the block answers `BLOCK_READY {height}`,
    and gives up after 10 seconds: a page shows a failure card and a model slot
    collapses. The block works when opened on its own, so nothing shows the
    problem before it is live.

    ## Example
    window.addEventListener("message", (event) => render(event.data.payload));

    ## Fix
    Answer `BLOCK_INIT` with
    `parent.postMessage({type: "BLOCK_READY", payload: {height}}, hostOrigin)`,
    or use the bridge `blockkit new` writes, or `@civitai/blocks-react`.
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
    if scan.ready is not None or not scan.complete:
        return
    yield Hit("", f"none of the block's {scan.files_read} source file{'s' if scan.files_read != 1 else ''} sends "
                  f"{READY_MESSAGE}, so the host gives up after 10 s (a page shows a failure card)", at="open",
              hint=f"answer BLOCK_INIT with postMessage({{type: \"{READY_MESSAGE}\", payload: {{height}}}}) to the "
                   f"host, or use {READY_SENDING_PACKAGES[0]}, which sends it for you")


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
