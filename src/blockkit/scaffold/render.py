"""Turn answers into the files of a block: a mapping of relative path to bytes.

Layout of the templates folder:

- ``_shared/``: files every block gets;
- ``<template>/``: files of that template, except ``lockfiles/<pm>/``, of which
  only the chosen package manager's lockfile is written, at the block's root.

A name ending in ``.j2`` is rendered with Jinja and loses the suffix; a name
starting with ``dot-`` is written with a leading ``.`` instead (dotfiles are
easy to lose when packaging). Anything else is copied byte for byte.
"""

from __future__ import annotations

import json
from pathlib import Path, PurePosixPath
from typing import Any

from blockkit.platform import PAGE_SLOT
from blockkit.resources import templates_dir
from blockkit.scaffold.catalog import DEV_PORT, SHARED_CODE_FILES, TEMPLATES
from blockkit.scaffold.manifest import build_manifest, manifest_text
from blockkit.scaffold.options import OAUTH, Answers, sensitive
from blockkit.scaffold.package_managers import DEV_SCRIPT, OUTPUT_DIR, PACKAGE_MANAGERS

SHARED = "_shared"
LOCKFILES = "lockfiles"
MANIFEST_PATH = "block.manifest.json"
_SKIP_NAMES = {"__pycache__", ".DS_Store"}
# The package name the committed lockfiles were generated under (see templates/relock.py).
LOCKFILE_NAME_PLACEHOLDER = "blockkit-block-id-placeholder"


def _output_name(name: str) -> str:
    if name.endswith(".j2"):
        name = name[: -len(".j2")]
    if name.startswith("dot-"):
        name = "." + name[len("dot-") :]
    return name


def _walk(root: Path) -> list[tuple[PurePosixPath, Path]]:
    """(path inside the block, source file) for every template file under ``root``."""
    found: list[tuple[PurePosixPath, Path]] = []
    for source in sorted(root.rglob("*")):
        relative = source.relative_to(root)
        if not source.is_file() or _SKIP_NAMES & set(relative.parts):
            continue
        if relative.parts[0] == LOCKFILES:
            continue
        parts = [_output_name(part) for part in relative.parts]
        found.append((PurePosixPath(*parts), source))
    return found


def template_context(answers: Answers) -> dict[str, Any]:
    template = TEMPLATES[answers.template]
    manager = PACKAGE_MANAGERS[answers.package_manager] if answers.package_manager else None
    manifest = build_manifest(answers)
    commands: dict[str, str | None]
    if manager is not None:
        commands = {
            "install": manager.install,
            "dev": manager.run(DEV_SCRIPT),
            # blockkit dev frames the running dev server in a host that behaves like the platform.
            "host": f"blockkit dev --proxy http://localhost:{DEV_PORT}",
            "build": manager.build_command,
        }
    else:
        commands = {"install": None, "dev": None, "host": "blockkit dev", "build": None}
    commands["lint"] = "blockkit lint"
    return {
        "answers": answers,
        "name": answers.name,
        "block_id": answers.block_id,
        "tagline": answers.tagline,
        "template": template,
        "package_manager": manager,
        "on_page": answers.on_page,
        "surface": answers.surface,
        "scopes": answers.all_scopes,
        "sensitive_scopes": sensitive(answers.all_scopes),
        "oauth": answers.auth == OAUTH,
        "goods": answers.goods,
        "boot_skeleton": answers.boot_skeleton,
        "dev_port": DEV_PORT,
        "output_dir": OUTPUT_DIR,
        "commands": commands,
        "goods_catalogue": manifest.get("goods", []),
        "manifest": manifest,
        "slot_id": PAGE_SLOT if answers.on_page else answers.surface,
    }


def _environment(root: Path) -> Any:
    import jinja2

    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(root)),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        # Escaping is chosen per place (|e in HTML, |tojson in code), because
        # one template set writes HTML, TypeScript, JSON, YAML and Markdown.
        autoescape=False,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def render(answers: Answers) -> dict[str, bytes]:
    root = templates_dir()
    template = TEMPLATES[answers.template]
    context = template_context(answers)
    env = _environment(root)
    files: dict[str, bytes] = {}
    for folder in (SHARED, template.name):
        for target, source in _walk(root / folder):
            if folder == SHARED and target.as_posix() in SHARED_CODE_FILES:
                target = PurePosixPath(template.place(target.as_posix()))
            if source.name.endswith(".j2"):
                relative = source.relative_to(root).as_posix()
                files[target.as_posix()] = env.get_template(relative).render(context).encode()
            else:
                files[target.as_posix()] = source.read_bytes()
    if answers.package_manager:
        manager = PACKAGE_MANAGERS[answers.package_manager]
        lockfile = (root / template.name / LOCKFILES / manager.name / manager.lockfile).read_bytes()
        # Lockfiles are the package manager's own output, copied, not templated;
        # npm's records the package name, written as a placeholder by relock.
        files[manager.lockfile] = lockfile.replace(
            json.dumps(LOCKFILE_NAME_PLACEHOLDER).encode(), json.dumps(answers.block_id).encode()
        )
    files[MANIFEST_PATH] = manifest_text(build_manifest(answers)).encode()
    return dict(sorted(files.items()))


def render_one(answers: Answers, relative: str) -> bytes:
    """Render one template file (``"vite/package.json.j2"``) alone."""
    env = _environment(templates_dir())
    text: str = env.get_template(relative).render(template_context(answers))
    return text.encode()
