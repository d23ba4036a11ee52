"""The templates ``blockkit new`` can write, as a table.

The template files themselves live in the top-level ``templates/`` folder
(``blockkit/_data/templates`` in a wheel): ``_shared/`` goes into every block,
``<name>/`` into blocks of that template.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Mapping

from blockkit.platform import BUDGET_SCOPE


@dataclass(frozen=True)
class Template:
    name: str
    summary: str
    # A template that builds has package.json, a lockfile per package manager,
    # and a buildCommand/outputDir in its manifest.
    builds: bool
    # Where the files of templates/_shared that the code imports land.
    code_dir: str
    # What index.html loads.
    entry_script: str
    stylesheet: str | None
    # The file a developer opens first; named in the README and next steps.
    main_source: str
    # Scopes the template's own code uses, declared whatever else is chosen, and the justification
    # review reads for each sensitive one (the developer's own text replaces it).
    scopes: tuple[str, ...] = ()
    justifications: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    # Surfaces it is written for (None: any).
    surfaces: tuple[str, ...] | None = None

    def place(self, shared_name: str) -> str:
        """Where a code file of ``_shared/`` goes in a block of this template."""
        return f"{self.code_dir}/{shared_name}" if self.code_dir else shared_name


TEMPLATES: Mapping[str, Template] = MappingProxyType(
    {
        "static": Template(
            "static",
            "plain HTML, CSS and JavaScript; no build step",
            builds=False,
            code_dir="",
            entry_script="./app.js",
            stylesheet="./style.css",
            main_source="app.js",
        ),
        "vite": Template(
            "vite",
            "Vite with vanilla TypeScript",
            builds=True,
            code_dir="src",
            entry_script="/src/main.ts",
            stylesheet=None,
            main_source="src/main.ts",
        ),
        "react": Template(
            "react",
            "Vite with React and TypeScript",
            builds=True,
            code_dir="src",
            entry_script="/src/main.tsx",
            stylesheet=None,
            main_source="src/App.tsx",
        ),
        "generation": Template(
            "generation",
            "the money path in plain JavaScript: pick a checkpoint, estimate, ask consent, submit, poll, show the images",
            builds=False,
            code_dir="",
            entry_script="./app.js",
            stylesheet="./style.css",
            main_source="app.js",
            scopes=(BUDGET_SCOPE, "buzz:read:self"),
            justifications=MappingProxyType({
                BUDGET_SCOPE: "Generates the images the viewer asks for, within the page's per-generation budget.",
                "buzz:read:self": "Shows the viewer's Buzz before a generation, so they know what it will cost them.",
            }),
            surfaces=("page",),
        ),
    }
)
DEFAULT_TEMPLATE = "vite"

# The page surface, or one of platform.MODEL_SLOTS.
PAGE_SURFACE = "page"

# Files of _shared/ that belong next to the code rather than at the root.
SHARED_CODE_FILES: frozenset[str] = frozenset({"bridge.js", "style.css"})

# Ports the dev server binds. A different port is a different origin, so Vite
# is told to fail rather than drift to the next free port.
DEV_PORT = 5173
