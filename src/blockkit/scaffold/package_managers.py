"""The package managers a built template can use, as a table.

Each one decides the manifest's ``buildCommand``, the lockfile the platform
builds from, and the commands the next-steps text and the README show.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Mapping

from blockkit.platform import LOCKFILES

BUILD_SCRIPT = "build"
DEV_SCRIPT = "dev"
OUTPUT_DIR = "dist"


@dataclass(frozen=True)
class PackageManager:
    name: str
    install: str
    # Installs strictly from the lockfile, as the platform's builder does.
    frozen_install: str
    # package.json "packageManager": pins the tool that wrote the lockfile, so
    # corepack and the platform use the same major version. npm has no such pin.
    package_manager_field: str | None

    @property
    def lockfile(self) -> str:
        return LOCKFILES[self.name]

    def run(self, script: str) -> str:
        return f"{self.name} run {script}"

    @property
    def build_command(self) -> str:
        return self.run(BUILD_SCRIPT)


PACKAGE_MANAGERS: Mapping[str, PackageManager] = MappingProxyType(
    {
        "npm": PackageManager("npm", "npm install", "npm ci", None),
        "pnpm": PackageManager("pnpm", "pnpm install", "pnpm install --frozen-lockfile", "pnpm@10.34.9"),
        # Yarn classic: the only yarn the npm registry serves as a plain package.
        "yarn": PackageManager("yarn", "yarn install", "yarn install --frozen-lockfile", "yarn@1.22.22"),
    }
)
DEFAULT_PACKAGE_MANAGER = "npm"
