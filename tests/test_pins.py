"""requirements/test.txt pins every package the tests install (issue 21: a fresh machine
resolved pytest 9.2.0 with schemathesis 4.32.5, which do not work together, while CI passed
on older packages already installed). scripts/test.sh installs the test extra with that file
as constraints; `bash scripts/lock.sh` refreshes it. This test fails when pyproject.toml gains
or changes a dependency and the file was not refreshed."""

from __future__ import annotations

import sys
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[1]
PINS = REPO / "requirements" / "test.txt"


def _pins() -> dict[str, Version]:
    pins: dict[str, Version] = {}
    for line in PINS.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        requirement = Requirement(line)
        (spec,) = requirement.specifier  # one exact pin per line
        assert spec.operator == "==", line
        pins[canonicalize_name(requirement.name)] = Version(spec.version)
    return pins


def _wanted() -> list[Requirement]:
    """The core dependencies and the test extra's, with the project's own extras it names
    (``blockkit[server]``) expanded into theirs."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = project["optional-dependencies"]
    lines = list(project["dependencies"])
    pending, seen = ["test"], set()
    while pending:
        extra = pending.pop()
        if extra in seen:
            continue
        seen.add(extra)
        for line in extras[extra]:
            requirement = Requirement(line)
            if canonicalize_name(requirement.name) == canonicalize_name(project["name"]):
                pending.extend(requirement.extras)
            else:
                lines.append(line)
    wanted = []
    for line in lines:
        requirement = Requirement(line)
        if requirement.marker is None or requirement.marker.evaluate({"extra": "test"}):
            wanted.append(requirement)
    return wanted


def test_every_dependency_of_the_tests_is_pinned_within_what_pyproject_asks() -> None:
    pins = _pins()
    unpinned = [str(r) for r in _wanted() if canonicalize_name(r.name) not in pins]
    assert not unpinned, f"not in {PINS.name}: {unpinned}; run: bash scripts/lock.sh"
    outside = [f"{r.name}=={pins[canonicalize_name(r.name)]} vs {r}" for r in _wanted()
               if pins[canonicalize_name(r.name)] not in r.specifier]
    assert not outside, f"pins outside pyproject.toml's ranges: {outside}; run: bash scripts/lock.sh"


def test_the_pins_keep_the_pytest_that_schemathesis_works_with() -> None:
    pins = _pins()
    assert pins["pytest"] < Version("9.1"), "pytest 9.2.0 breaks schemathesis 4.32.5's plugin"


def test_test_sh_installs_with_the_pins_into_a_venv_never_the_system_python() -> None:
    script = (REPO / "scripts" / "test.sh").read_text(encoding="utf-8")
    assert "-c requirements/test.txt -e '.[test]'" in script
    assert "python3 -m venv" in script
    assert "python3 -m pip install" not in script  # PEP 668: the system Python refuses it
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert "rm -rf .venv" in ci and ci.rstrip().endswith("bash scripts/test.sh")
    assert "BLOCKKIT_REQUIRE_TOOLS=1" in ci
