"""The catalogue part of the spec as rows: endpoints, their parameters, and the error table.

Read from ``../shared/spec/catalogue-and-oauth.md`` when it is there (the authority);
otherwise from the frozen copy ``spec_rows.json`` beside this file, which a test keeps
equal to the parse while the spec is present. OAuth rows are out of scope here (the
OAuth provider has its own tests).

Row keys are plain strings, used by ``spec_coverage.py``:

- endpoint: ``"GET /models"``
- parameter: ``"GET /models ?limit"`` (a path parameter: ``"GET /models/{id} {id}"``)
- error: ``"ERR models, images | 429 | page * limit above 1000; ..."`` (group | status | condition)
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
# shared/ sits beside the checkout (CI, /work/main); a worktree one level deeper finds it one up.
_CANDIDATES = [REPO.parent / "shared", REPO.parent.parent / "shared"]
SPEC = next(
    (c / "spec" / "catalogue-and-oauth.md" for c in _CANDIDATES if (c / "spec" / "catalogue-and-oauth.md").is_file()),
    _CANDIDATES[0] / "spec" / "catalogue-and-oauth.md",
)
FROZEN = HERE / "spec_rows.json"
API_PREFIX = "/api/v1"


@dataclass
class Param:
    name: str
    where: str  # query | path
    type: str  # the spec's words
    default: str = ""
    notes: str = ""


@dataclass
class Endpoint:
    method: str
    path: str  # relative to /api/v1, as the spec writes it
    auth: str  # Public | Mixed | Authenticated
    params: list[Param] = field(default_factory=list)

    @property
    def key(self) -> str:
        return f"{self.method} {self.path}"

    @property
    def api_path(self) -> str:
        return API_PREFIX + self.path


@dataclass
class ErrorRow:
    group: str
    status: str
    condition: str

    @property
    def key(self) -> str:
        return f"ERR {self.group} | {self.status} | {self.condition}"


@dataclass
class SpecRows:
    endpoints: list[Endpoint]
    errors: list[ErrorRow]
    source: str

    def param_key(self, endpoint: Endpoint, param: Param) -> str:
        return f"{endpoint.key} {'{' + param.name + '}' if param.where == 'path' else '?' + param.name}"

    def keys(self) -> list[str]:
        out: list[str] = []
        for e in self.endpoints:
            out.append(e.key)
            out.extend(self.param_key(e, p) for p in e.params)
        out.extend(r.key for r in self.errors)
        return out


def _cells(line: str) -> list[str]:
    # Split a markdown table row on unescaped pipes.
    inner = line.strip().strip("|")
    return [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", inner)]


def _section(text: str, start: str, end: str) -> str:
    a = text.index(start)
    b = text.index(end, a)
    return text[a:b]


_ENDPOINT = re.compile(r"^\*\*(GET|POST)(?: or POST)? (/[^*]+)\*\*(.*)$")
_AUTH = re.compile(r"^[:\s]*\((Public|Mixed|Authenticated)\b")
_PATH_PARAM = re.compile(r"(?:^|\. )`(\w+)` (integer|string)([^.]*)")
_QUERY_CLAUSE = re.compile(r"\b[Qq]uery:? (`.+?)(?:\. |$)")
_QUERY_PARAM = re.compile(r"`(\w+)` \(?([^;`]*)")


def parse(text: str) -> SpecRows:
    endpoints: list[Endpoint] = []
    body = _section(text, "## Endpoints", "### OAuth")
    section_auth = ""
    current: Endpoint | None = None
    lines = body.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("### "):
            section_auth = "Authenticated" if "bearer token" in line else ""
            current = None
        m = _ENDPOINT.match(line)
        if m:
            method, path, rest = m.group(1), m.group(2).strip(), m.group(3)
            a = _AUTH.match(rest)
            auth = a.group(1) if a else section_auth
            current = Endpoint(method, path, auth)
            endpoints.append(current)
            for name in re.findall(r"\{(\w+)\}", path):
                pm = next((x for x in _PATH_PARAM.finditer(rest) if x.group(1) == name), None)
                kind = f"{pm.group(2)}{pm.group(3)}".strip() if pm else ""
                current.params.append(Param(name, "path", kind))
            for clause in _QUERY_CLAUSE.finditer(rest):
                for q in _QUERY_PARAM.finditer(clause.group(1)):
                    words = q.group(2).strip().rstrip(")").strip()
                    default = ""
                    dm = re.search(r"\bdefault (\S+)", words)
                    if dm:
                        default = dm.group(1)
                    current.params.append(Param(q.group(1), "query", words, default))
        elif current is not None and line.startswith("| Param |"):
            header = _cells(line)
            i += 2  # the header's separator row
            while i < len(lines) and lines[i].startswith("|"):
                row = dict(zip(header, _cells(lines[i])))
                names = [n.strip().strip("`") for n in row["Param"].split(",")]
                for name in names:
                    current.params.append(
                        Param(name, "query", row.get("Type", ""), row.get("Default", ""), row.get("Notes", ""))
                    )
                i += 1
            continue
        i += 1

    errors: list[ErrorRow] = []
    table = _section(text, "## Errors", "## Limits")
    rows = [ln for ln in table.splitlines() if ln.startswith("|")][2:]
    for ln in rows:
        group, status, condition = _cells(ln)
        if group.startswith("OAuth"):
            continue
        errors.append(ErrorRow(group, status, condition))
    return SpecRows(endpoints, errors, str(SPEC))


def to_json(rows: SpecRows) -> str:
    data = {"endpoints": [asdict(e) for e in rows.endpoints], "errors": [asdict(r) for r in rows.errors]}
    return json.dumps(data, indent=1, ensure_ascii=False) + "\n"


def from_json(text: str, source: str) -> SpecRows:
    data = json.loads(text)
    endpoints = [
        Endpoint(e["method"], e["path"], e["auth"], [Param(**p) for p in e["params"]]) for e in data["endpoints"]
    ]
    return SpecRows(endpoints, [ErrorRow(**r) for r in data["errors"]], source)


def load() -> SpecRows:
    if SPEC.is_file():
        return parse(SPEC.read_text(encoding="utf-8"))
    return from_json(FROZEN.read_text(encoding="utf-8"), str(FROZEN))


if __name__ == "__main__":  # refresh the frozen copy: python3 tests/emulator/spec_rows.py
    FROZEN.write_text(to_json(parse(SPEC.read_text(encoding="utf-8"))), encoding="utf-8")
    print(f"wrote {FROZEN}")
