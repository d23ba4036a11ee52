"""Regenerate the lockfiles the built templates ship, with the real package managers.

A maintainer's tool, run after changing a template's package.json::

    python -m blockkit.scaffold.relock            # every template and package manager
    python -m blockkit.scaffold.relock react pnpm # one pair

The platform installs strictly from the lockfile, so each one is written by the
package manager it belongs to (pnpm and yarn at the versions package.json pins),
never by hand. Needs node, npm and the npm registry.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from blockkit.resources import templates_dir
from blockkit.scaffold.catalog import TEMPLATES
from blockkit.scaffold.options import Answers
from blockkit.scaffold.package_managers import PACKAGE_MANAGERS, PackageManager
from blockkit.scaffold.render import LOCKFILE_NAME_PLACEHOLDER, LOCKFILES, render_one

NPM_REGISTRY = "https://registry.npmjs.org/"


def lock_command(manager: PackageManager) -> list[str]:
    if manager.name == "npm":
        return ["npm", "install", "--package-lock-only", "--ignore-scripts", "--no-audit", "--no-fund"]
    assert manager.package_manager_field, manager.name
    tool = ["npm", "exec", "--yes", f"--package={manager.package_manager_field}", "--", manager.name]
    if manager.name == "pnpm":
        return [*tool, "install", "--lockfile-only", "--ignore-scripts"]
    # Yarn classic has no lockfile-only mode; it installs, then the folder is thrown away.
    return [*tool, "install", "--ignore-scripts", "--non-interactive", "--registry", NPM_REGISTRY]


def relock(template: str, manager_name: str) -> Path:
    manager = PACKAGE_MANAGERS[manager_name]
    answers = Answers(
        name="Lockfile", block_id=LOCKFILE_NAME_PLACEHOLDER, template=template, package_manager=manager_name
    )
    package_json = render_one(answers, f"{template}/package.json.j2")
    destination = templates_dir() / template / LOCKFILES / manager_name / manager.lockfile
    with tempfile.TemporaryDirectory(prefix="blockkit-relock-") as work:
        folder = Path(work)
        (folder / "package.json").write_bytes(package_json)
        subprocess.run(lock_command(manager), cwd=folder, check=True)
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(folder / manager.lockfile, destination)
    return destination


def main(argv: list[str]) -> int:
    templates = [argv[0]] if argv else [t.name for t in TEMPLATES.values() if t.builds]
    managers = [argv[1]] if len(argv) > 1 else list(PACKAGE_MANAGERS)
    for template in templates:
        for manager in managers:
            print(f"relock: {template} / {manager}", flush=True)
            print(f"  wrote {relock(template, manager)}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
