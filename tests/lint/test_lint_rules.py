"""Every lint rule: a manifest (and project) it rejects, and the nearest one it accepts.

Each case is checked end to end: the manifest is a real file, the project real
files next to it, the engine the one the CLI uses. A reject must produce exactly
the rule's own finding (so no other rule is being tested by accident), at the
expected pointer; the accept must produce no lint finding at all.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

import pytest
from lint_helpers import READY_JS, clean, codes

from blockkit.context import Context
from blockkit.rules import load_all

SKELETON = '<!doctype html><body><div id="root"><div class="skeleton">Loading…</div></div>' \
           '<script src="./app.js"></script></body>'
EMPTY_ROOT = '<!doctype html><body>\n  <div id="root">\n    <!-- the app mounts here -->\n  </div>\n' \
             '<script src="./app.js"></script></body>'
BUILD = {"buildCommand": "npm run build", "outputDir": "dist"}
PACKAGE = '{"name": "demo", "private": true, "scripts": {"build": "vite build"}}'
NPM_LOCK = '{"name": "demo", "lockfileVersion": 3, "requires": true, "packages": {}}'
USES_STORAGE = "import { useAppStorage } from '@civitai/blocks-react';\nexport const useNotes = () => useAppStorage();\n"
# The SDK answers BLOCK_INIT itself, so only the storage rule has anything to say.
REACT_STORAGE = {"package.json": '{"dependencies": {"@civitai/blocks-react": "^0.39.0"}}', "src/notes.ts": USES_STORAGE}
UNLOCK = {"id": "full", "title": "Full access", "priceBuzz": 500, "kind": "app_unlock", "justification": "Unlocks it"}
PACK = {"id": "pack", "title": "Pack", "priceBuzz": 100}


@dataclass
class Case:
    manifest: dict[str, Any]
    files: dict[str, str] = field(default_factory=dict)
    context: Optional[Context] = None


@dataclass
class RuleCases:
    code: str
    reject: Case
    pointer: str  # where the reject case's finding is
    accept: Case
    says: str = ""  # a phrase the message must contain
    besides: tuple[str, ...] = ()  # other rules the manifest cannot avoid triggering, left out of the comparison


def _goods_scopes(*extra: str) -> dict[str, Any]:
    return {"scopes": ["user:read:self", "goods:purchase:self", *extra],
            "scopeJustifications": {"goods:purchase:self": "Sells the goods below."}}


BUDGETED = {"scopes": ["ai:write:budgeted"], "scopeJustifications": {"ai:write:budgeted": "Generates images."}}

CASES = [
    RuleCases("BK301", Case(clean(scopeJustification={})), "/scopeJustification",
              Case(clean(scopeJustifications={})), 'unknown key "scopeJustification"'),
    RuleCases("BK302", Case(clean(scopes=["user:read:self", "models:read:self", "user:read:self"])), "/scopes/2",
              Case(clean(scopes=["user:read:self", "models:read:self"])), "first at scopes[0]"),
    RuleCases("BK303", Case(clean(page=..., targets=[{"slotId": "model.sidebar_top"}, {"slotId": "model.sidebar_top"}])),
              "/targets/1/slotId",
              Case(clean(page=..., targets=[{"slotId": "model.sidebar_top"}])), "first in targets[0]",
              besides=("BK310",)),  # every valid target is a model slot
    RuleCases("BK304", Case(clean(**BUDGETED)), "/page",
              Case(clean(**BUDGETED, page={"path": "/", "title": "Demo", "buzzBudgetPerGen": 200})), "10 Buzz"),
    RuleCases("BK305", Case(clean(page={"path": "/", "title": "Demo", "buzzBudgetPerGen": 200})),
              "/page/buzzBudgetPerGen",
              Case(clean(**BUDGETED, page={"path": "/", "title": "Demo", "buzzBudgetPerGen": 200})),
              "ai:write:budgeted is not declared"),
    RuleCases("BK306", Case(clean(**BUDGETED, page={"path": "/", "title": "Demo", "buzzBudgetPerGen": 1001})),
              "/page/buzzBudgetPerGen",
              Case(clean(**BUDGETED, page={"path": "/", "title": "Demo", "buzzBudgetPerGen": 1000})),
              "clamps it to 1000"),
    RuleCases("BK307", Case(clean(auth="oauth", scopes=["models:read:self"])), "/auth",
              Case(clean(auth="oauth", scopes=["models:read:self", "user:read:self"])), "block token"),
    RuleCases("BK308", Case(clean(**_goods_scopes(), goods=[PACK])), "/goods",
              Case(clean(**_goods_scopes("goods:read:self"), goods=[PACK])), "goods:read:self"),
    RuleCases("BK309", Case(clean(**_goods_scopes("goods:read:self"), goods=[UNLOCK])), "/goods/0/kind",
              Case(clean(**_goods_scopes("goods:read:self"), goods=[dict(UNLOCK, kind="good")])),
              'app_unlock good "full"'),
    RuleCases("BK310", Case(clean(page=..., targets=[{"slotId": "model.below_images"}])), "/targets/0/slotId",
              Case(clean()), "moderators"),
    RuleCases("BK311", Case(clean(iframe=dict(CLEAN_IFRAME := clean()["iframe"], sandbox="allow-scripts allow-popups")),
                            context=Context(tier="verified")), "/iframe/sandbox",
              Case(clean(), context=Context(tier="verified")), "needs the verified tier"),
    RuleCases("BK320", Case(clean(iframe=dict(CLEAN_IFRAME, sandbox="allow-scripts\u3000allow-forms"))),
              "/iframe/sandbox", Case(clean(iframe=dict(CLEAN_IFRAME, sandbox="allow-scripts\tallow-forms\n"))),
              "U+3000 IDEOGRAPHIC SPACE"),
    RuleCases("BK312", Case(clean(**{"$schema": ...})), "", Case(clean()), '"$schema"'),
    RuleCases("BK313", Case(clean(**{"$schema": "http://civitai.com/schemas/app-block/v1.json"})), "/$schema",
              Case(clean()), "not the canonical schema URL"),
    RuleCases("BK314", Case(clean(repository="https://GitHub.com/acme/demo-block.git")), "/repository",
              Case(clean(repository="https://github.com/acme/demo-block")), '"https://github.com/acme/demo-block"'),
    RuleCases("BK315", Case(clean(tagline="\u00a0Remix any image ")), "/tagline",
              Case(clean(tagline="Remix any image")), "whitespace"),
    RuleCases("BK316", Case(clean(bootSkeleton=True), {"index.html": EMPTY_ROOT, "app.js": READY_JS}), "/bootSkeleton",
              Case(clean(bootSkeleton=True), {"index.html": SKELETON, "app.js": READY_JS}), "(line 2) is empty"),
    RuleCases("BK317", Case(clean(**BUILD), {"package.json": PACKAGE, "pnpm-lock.yaml": "lockfileVersion: '9.0'\n"}),
              "/buildCommand",
              Case(clean(**BUILD), {"package.json": PACKAGE, "package-lock.json": NPM_LOCK}), "no package-lock.json"),
    RuleCases("BK323", Case(clean(**BUILD), {"package.json": PACKAGE, "package-lock.json": ""}), "/buildCommand",
              Case(clean(**BUILD), {"package.json": PACKAGE, "package-lock.json": NPM_LOCK}),
              "package-lock.json is there, but it is empty"),
    RuleCases("BK324", Case(clean(**BUILD), {"package.json": PACKAGE, "package-lock.json": NPM_LOCK,
                                             "yarn.lock": "# yarn lockfile v1\n"}), "/buildCommand",
              Case(clean(**BUILD), {"package.json": PACKAGE, "package-lock.json": NPM_LOCK}),
              "installs from package-lock.json and ignores yarn.lock"),
    RuleCases("BK318", Case(clean(), {"index.html": SKELETON, "app.js": "document.title = 'hi';\n"}), "",
              Case(clean(), {"index.html": SKELETON, "app.js": READY_JS}), "none of the block's 2 source files"),
    # Credentials in the bundle URL, percent-encoded too: the platform accepts them (BK222 ignores
    # the userinfo, as its guard does); an empty userinfo is no credential.
    RuleCases("BK321", Case(clean(assetBundleUrl="https://%75ser:pw@demo-block.civit.ai/b.js")), "/assetBundleUrl",
              Case(clean(assetBundleUrl="https://@demo-block.civit.ai/b.js")), "carries credentials"),
    # A name under .localhost is accepted by the platform (only "localhost" itself is denied).
    RuleCases("BK322", Case(clean(assetBundleUrl="https://cdn.demo-block.localhost/b.js"),
                            context=Context(allowed_origins=("cdn.demo-block.localhost",))), "/assetBundleUrl",
              Case(clean(assetBundleUrl="https://cdn.demo-block.localhost.example/b.js"),
                   context=Context(allowed_origins=("cdn.demo-block.localhost.example",))), "viewer's own machine"),
    RuleCases("BK319", Case(clean(), REACT_STORAGE), "/scopes",
              Case(clean(scopes=["user:read:self", "apps:storage:read"]), REACT_STORAGE),
              "src/notes.ts:2 uses per-viewer app storage"),
]


def test_every_lint_rule_with_a_check_has_cases() -> None:
    rules = {code for code, rule in load_all().items() if rule.layer == "lint" and rule.check is not None}
    assert rules == {case.code for case in CASES}


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.code)
def test_rule_rejects(case: RuleCases, lint) -> None:
    findings = [f for f in lint(case.reject.manifest, case.reject.files, case.reject.context)
                if f.code not in case.besides]
    assert codes(findings) == [case.code], [(f.code, f.message) for f in findings]
    (finding,) = findings
    assert finding.pointer == case.pointer
    assert case.says in finding.message
    assert finding.hint, "every lint finding says how to fix it"
    assert finding.severity == load_all()[case.code].severity


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.code)
def test_rule_accepts(case: RuleCases, lint) -> None:
    findings = [f for f in lint(case.accept.manifest, case.accept.files, case.accept.context)
                if f.code not in case.besides]
    assert findings == [], [(f.code, f.message) for f in findings]


# Lint rules are advice, except where the platform's build certainly fails: a lockfile
# that npm ci / --frozen-lockfile refuses (issue 34, item 5; the platform CLI makes it
# a hard error too).
BUILD_FAILURE_RULES = {"BK323"}


def test_lint_rules_are_advice_only() -> None:
    for code, rule in load_all().items():
        if code.startswith("BK3"):
            expected = ("error",) if code in BUILD_FAILURE_RULES else ("warning", "info")
            assert rule.layer == "lint" and rule.severity in expected, code
        else:
            assert rule.layer != "lint", code


@pytest.mark.parametrize(("key", "shown"), [
    ("blockId\u200b", '"blockId\\u200b"'),  # would read as "blockId" itself
    ("x\ny", '"x\\ny"'),  # would break the one-line message
    ("x\x00y", '"x\\u0000y"'),
    ("nämlich", '"nämlich"'),  # visible non-ASCII stays as it is
])
def test_unknown_key_message_shows_invisible_characters(key: str, shown: str, lint) -> None:
    (finding,) = [f for f in lint(clean(**{key: 1})) if f.code == "BK301"]
    assert finding.message.startswith(f"unknown key {shown}:")
    assert "\n" not in finding.message
