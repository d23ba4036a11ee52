"""Malformed input on every parameter of every catalogue endpoint: a 400 in the endpoint's
own error shape, never a 500, and always conforming to the OpenAPI document.

The table is generated from ``openapi.json``: each parameter's schema (integer, id,
boolean, enum, list, date, free text) picks its malformed values, and every parameter
also gets the values that break any server (NUL, an encoded lone surrogate, invalid
UTF-8, 60 KB: the longest the server takes is a 64 KiB request target, see
test_connlimit_protocols) and, when it takes one value, a repeat. Requests go out with
``http.client`` so the request target is sent byte for byte as written here (httpx
normalises escapes and refuses URLs over 64 KB).

Odd but valid text (right-to-left marks, emoji, quotes) in free-text parameters must
not fail: any documented status below 500.
"""

from __future__ import annotations

import http.client
import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlsplit

import pytest

from contract import contract, load_document, resolve

DOC = load_document()


@dataclass(frozen=True)
class Raw:
    """A value already percent-encoded (sent as is)."""

    text: str


def encode(value: str | Raw) -> str:
    return value.text if isinstance(value, Raw) else quote(value, safe="")


# Values no parameter may carry, whatever its type (D-bad-bytes, D-string-length).
UNIVERSAL: list[tuple[str, str | Raw]] = [
    ("NUL", Raw("%00")),
    ("NUL inside", Raw("a%00b")),
    ("lone surrogate", Raw("%ED%A0%80")),
    ("invalid UTF-8", Raw("%C3%28")),
    ("stray continuation byte", Raw("%80abc")),
    ("60 KB", "9" * 60_000),
]

INTEGER_BAD: list[tuple[str, str | Raw]] = [
    ("word", "abc"),
    ("fraction", "1.5"),
    ("2**63", str(2**63)),
    ("1e400", "1e400"),
    ("NaN", "NaN"),
    ("Infinity", "Infinity"),
    ("hex", "0x1F"),
    ("fullwidth digit", "\uff11"),
    ("arabic-indic digit", "\u0663"),
    ("RTL mark", "\u200f1"),
    ("two values in one", "1,2"),
]
BOOLEAN_BAD: list[tuple[str, str | Raw]] = [
    ("word", "maybe"),
    ("yes", "yes"),
    ("2", "2"),
    ("-1", "-1"),
    ("1e400", "1e400"),
    ("fullwidth", "\uff54\uff52\uff55\uff45"),
    ("RTL mark", "\u200ftrue"),
    ("two values in one", "true,false"),
    ("empty", ""),
]
DATE_BAD: list[tuple[str, str | Raw]] = [
    ("word", "yesterday"),
    ("month 13", "2024-13-01"),
    ("30 February", "2024-02-30"),
    ("hour 25", "2024-01-01T25:00:00Z"),
    ("fullwidth digits", "\uff12\uff10\uff12\uff14-01-01"),
    ("number", "1700000000"),
    ("empty", ""),
]


def integer_cases(schema: dict[str, Any], *, allow_empty: bool = False) -> list[tuple[str, str | Raw]]:
    out = list(INTEGER_BAD)
    low, high = schema.get("minimum"), schema.get("maximum")
    if low is not None:
        out.append(("below minimum", str(low - 1)))
        out.append(("negative", str(min(-1, low - 1))))
    if high is not None:
        out.append(("above maximum", str(high + 1)))
    if not allow_empty:
        out.append(("empty", ""))
    return out


def enum_cases(values: list[str]) -> list[tuple[str, str | Raw]]:
    first = values[0]
    out: list[tuple[str, str | Raw]] = [("unknown value", "no-such-value"), ("RTL mark", "\u200f" + first)]
    for variant in (first.lower(), first.upper()):
        if variant not in values and variant != first:
            out.append((f"case {variant}", variant))
            break
    out.append(("two values in one", f"{first},{first}"))
    out.append(("empty", ""))
    return out


def is_date(schema: dict[str, Any]) -> bool:
    return any(s.get("format") in ("date", "date-time") for s in schema.get("anyOf", []))


def malformed_values(param: dict[str, Any]) -> list[tuple[str, str | Raw]]:
    """The malformed values for one parameter, from its schema."""
    schema = resolve(param["schema"])
    kind = schema.get("type")
    out: list[tuple[str, str | Raw]] = list(UNIVERSAL)
    if kind == "integer":
        out += integer_cases(schema, allow_empty=param["in"] == "path")
    elif kind == "boolean":
        out += BOOLEAN_BAD
    elif kind == "string" and "enum" in schema:
        out += enum_cases(schema["enum"])
    elif kind == "string" and "pattern" in schema and param["in"] == "path":  # a hash
        out += [("not hex", "xyz!xyz!"), ("too short", "ABCDEF0"), ("too long", "A" * 65),
                ("fullwidth", "\uff21" * 8), ("RTL mark", "\u200fABCDEF01")]
    elif kind == "string":  # free text: only length and bytes can break it
        if "maxLength" in schema:
            out.append(("one past maxLength", "a" * (schema["maxLength"] + 1)))
        if param["name"] == "cursor":
            out += [("not a cursor", "not-a-cursor"), ("RTL cursor", "\u200f1|2")]
    elif kind == "array":
        items = resolve(schema["items"])
        if items.get("type") == "integer":
            out += [("word", "abc"), ("one bad entry", "1,abc"), ("fraction", "1.5"), ("negative", "-1"),
                    ("zero", "0"), ("2**63 entry", f"1,{2**63}"), ("1e400", "1e400"), ("fullwidth", "\uff11"),
                    ("empty entry", "1,,2"), ("above maximum", str(items["maximum"] + 1))]
            if schema.get("minItems", 0) >= 1:
                out.append(("empty", ""))
        elif "enum" in items:
            first = items["enum"][0]
            out += [("unknown value", "NotAType"), ("one bad entry", f"{first},NotAType"),
                    ("wrong case", first.lower()), ("empty", "")]
        else:
            out.append(("entry past maxLength", "a" * (items["maxLength"] + 1)))
    elif "anyOf" in schema and is_date(schema):
        out += DATE_BAD
    elif "anyOf" in schema:  # images nsfw: a level name or a boolean
        out += [("word", "maybe"), ("lower-case level", "none"), ("unknown level", "XXX"), ("2", "2"),
                ("empty", "")]
    else:  # pragma: no cover - a new schema kind must get its own malformed values
        raise AssertionError(f"no malformed values for {param['name']}: {schema}")
    seen: set[str] = set()
    unique = []
    for label, value in out:
        if label not in seen:
            seen.add(label)
            unique.append((label, value))
    return unique


def valid_value(param: dict[str, Any]) -> str:
    """A value the parameter accepts (to fill required ones, and for repeats)."""
    schema = resolve(param["schema"])
    if "default" in schema:
        return str(schema["default"]).lower() if isinstance(schema["default"], bool) else str(schema["default"])
    kind = schema.get("type")
    if kind == "integer":
        return str(max(1, schema.get("minimum", 1)))
    if kind == "boolean":
        return "true"
    if kind == "string" and "enum" in schema:
        return str(schema["enum"][0])
    if kind == "string" and param["in"] == "path":
        return "ABCDEF01"
    if kind == "string":
        return "a"
    if kind == "array":
        items = resolve(schema["items"])
        return str(items["enum"][0]) if "enum" in items else ("1" if items.get("type") == "integer" else "a")
    if "anyOf" in schema and is_date(schema):
        return "2024-01-01"
    return "true"


def takes_one_value(param: dict[str, Any]) -> bool:
    schema = resolve(param["schema"])
    return param["in"] == "query" and schema.get("type") != "array"


@dataclass(frozen=True)
class Case:
    method: str
    path: str  # document template
    param: str
    label: str
    target: str  # the request target, encoded
    needs_token: bool

    @property
    def id(self) -> str:
        return f"{self.method.upper()} {self.path} {self.param}: {self.label}"


def _target(path: str, params: list[dict[str, Any]], name: str, value: str | Raw, repeat: bool = False) -> str:
    # The value under test goes in its slot; every other required parameter gets a valid value.
    filled = path
    query: list[str] = []
    for p in params:
        if p["in"] == "path":
            v = encode(value) if p["name"] == name else quote(valid_value(p), safe="")
            filled = filled.replace("{" + p["name"] + "}", v)
        elif p["name"] == name:
            query.append(f"{name}={encode(value)}")
            if repeat:
                query.append(f"{name}={encode(value)}")
        elif p.get("required"):
            query.append(f"{p['name']}={quote(valid_value(p), safe='')}")
    return filled + ("?" + "&".join(query) if query else "")


def _needs_token(op: dict[str, Any], param: str) -> bool:
    # Authenticated endpoints answer 401 before reading parameters, and so do models'
    # favorites and hidden: send a member's token so the parameter itself is judged.
    return op["x-blockkit-auth"] == "Authenticated" or param in ("favorites", "hidden")


def cases() -> list[Case]:
    out: list[Case] = []
    for path, item in DOC["paths"].items():
        for method, op in item.items():
            params = op.get("parameters", [])
            for p in params:
                token = _needs_token(op, p["name"])
                for label, value in malformed_values(p):
                    out.append(Case(method, path, p["name"], label, _target(path, params, p["name"], value), token))
                if takes_one_value(p):
                    out.append(Case(method, path, p["name"], "repeated", _target(path, params, p["name"], Raw(quote(valid_value(p), safe="")), repeat=True), token))
    return out


CASES = cases()


def send(base_url: str, method: str, target: str, token: str | None = None, body: bytes | None = None,
         content_type: str = "application/json") -> tuple[int, dict[str, str], bytes]:
    parts = urlsplit(base_url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    headers = {"Accept": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    if body is not None:
        headers["Content-Type"] = content_type
    try:
        connection.request(method.upper(), target, body=body, headers=headers)
        response = connection.getresponse()
        data = response.read()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, data
    finally:
        connection.close()


def check(method: str, target: str, status: int, headers: dict[str, str], body: bytes, expect: int | None) -> None:
    path = target.split("?", 1)[0]
    assert status < 500, f"{method.upper()} {target[:300]} -> {status}: {body[:300]!r}"
    if expect is not None:
        assert status == expect, f"{method.upper()} {target[:300]} -> {status} (want {expect}): {body[:300]!r}"
    problems = contract().problems(method, path, status, headers, body)
    assert not problems, "\n".join(problems)


@pytest.fixture(scope="module")
def token_of(request: pytest.FixtureRequest) -> Any:
    def get() -> str:
        return str(request.getfixturevalue("member_token"))

    return get


# Where the platform reads a value more leniently than its schema type suggests, the emulator
# answers as the platform does (review emulator-fidelity-2026-11-27, civitai/civitai@ebed661):
# (path, parameter) -> {label: expected status, None for "any documented status"}; "*" covers
# every label not named.
_COERCED = {label: 200 for label, _ in BOOLEAN_BAD} | {"60 KB": 200}   # z.coerce.boolean (model.schema.ts)
_STRINGBOOL = {"yes": 200}                                              # booleanString (zod-helpers.ts:116)
LENIENT: dict[tuple[str, str], dict[str, int | None]] = {
    ("/api/v1/models", "supportsGeneration"): _COERCED,
    ("/api/v1/models", "fromPlatform"): _COERCED,
    ("/api/v1/models", "earlyAccess"): _COERCED,
    ("/api/v1/models", "nsfw"): _STRINGBOOL,
    ("/api/v1/models", "primaryFileOnly"): _STRINGBOOL,
    ("/api/v1/models", "favorites"): _STRINGBOOL,
    ("/api/v1/models", "hidden"): _STRINGBOOL,
    # z.preprocess(Number, z.number()) ([id].ts:40): a number that is no id finds nothing.
    ("/api/v1/model-versions/{id}", "id"): {
        "60 KB": 404, "fraction": 404, "2**63": 404, "1e400": 404, "Infinity": 404, "negative": 404,
        "above maximum": 404, "hex": None},
    # z.coerce.number() (models/[id].ts, mini/[id].ts): Number("0x1F") is the id 31.
    ("/api/v1/models/{id}", "id"): {"hex": None},
    ("/api/v1/model-versions/mini/{id}", "id"): {"hex": None},
    # z.string() ([hash].ts:10): any string is looked up.
    ("/api/v1/model-versions/by-hash/{hash}", "hash"): {"*": 404},
    # A download link is a capability URL (catalogue/downloads.py): any other grant or name is
    # simply no link, as an expired one is; no value of it is malformed.
    # The download route reads as the platform's does (download/models/[modelVersionId].ts, D-downloads):
    # the id through Number() (a number that is no version finds nothing; 0x1F is 31), and it checks
    # the version (archived: 410) before fp, quantType and fileId pick a file. Its enums are zod's (400).
    ("/api/download/models/{modelVersionId}", "modelVersionId"): {"*": None},
    ("/api/download/models/{modelVersionId}", "fp"): {"*": None},
    ("/api/download/models/{modelVersionId}", "quantType"): {"*": None},
    ("/api/download/models/{modelVersionId}", "fileId"): {"*": None},
    ("/api/download/models/{modelVersionId}", "token"): {"*": None},  # a token it cannot read: anonymous
    ("/__emulator/downloads/{grant}/{name}", "grant"): {"*": 404},
    ("/__emulator/downloads/{grant}/{name}", "name"): {"*": 404},
}


def expected_status(case: Case) -> int | None:
    lenient = LENIENT.get((case.path, case.param), {})
    return lenient.get(case.label, lenient.get("*", 400))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_malformed_parameter_is_a_400(case: Case, base_url: str, token_of: Any) -> None:
    token = token_of() if case.needs_token else None
    status, headers, body = send(base_url, case.method, case.target, token)
    check(case.method, case.target, status, headers, body, expected_status(case))


# --- request bodies ------------------------------------------------------------------------

SHA = "0" * 64
BODY_CASES: list[tuple[str, bytes | None]] = [
    ("missing body", None),
    ("empty body", b""),
    ("not JSON", b"{nope"),
    ("an object", b'{"hashes": []}'),
    ("a string", json.dumps(SHA).encode()),
    ("null", b"null"),
    ("a number entry", b"[1]"),
    ("a null entry", b"[null]"),
    ("a nested array", json.dumps([[SHA]]).encode()),
    ("63 characters", json.dumps(["0" * 63]).encode()),
    ("65 characters", json.dumps(["0" * 65]).encode()),
    ("NUL inside", json.dumps(["0" * 63 + "\u0000"]).encode()),
    ("lone surrogate escape", b'["' + b"0" * 58 + b'\\ud800"]'),
    ("invalid UTF-8", b'["' + b"0" * 63 + b'\xff"]'),
    ("1e400", b"[1e400]"),
    ("deeply nested", b"[" * 100_000 + b"]" * 100_000),
]


@pytest.mark.parametrize("path,limit", [("/api/v1/model-versions/by-hash", 100), ("/api/v1/model-versions/by-hash/ids", 10_000)])
@pytest.mark.parametrize("label,body", BODY_CASES + [("one over the limit", None)], ids=[c[0] for c in BODY_CASES] + ["one over the limit"])
def test_malformed_hash_body_is_a_400(path: str, limit: int, label: str, body: bytes | None, base_url: str) -> None:
    if label == "one over the limit":
        body = json.dumps([f"{i:064X}" for i in range(limit + 1)]).encode()
    status, headers, data = send(base_url, "post", path, body=body)
    check("post", path, status, headers, data, 400)


def test_hash_body_sent_as_form_is_a_400(base_url: str) -> None:
    status, headers, data = send(base_url, "post", "/api/v1/model-versions/by-hash", body=b"hashes=" + SHA.encode(),
                                 content_type="application/x-www-form-urlencoded")
    check("post", "/api/v1/model-versions/by-hash", status, headers, data, 400)


# --- odd but valid text ------------------------------------------------------------------------

ODD_TEXT = [
    ("RTL mark", "\u200fabc"),
    ("RTL override", "\u202eabc"),
    ("emoji", "\U0001f600"),
    ("combining marks", "e\u0301\u0301"),
    ("quotes", "'\"; DROP TABLE models; --"),
    ("percent and backslash", "%\\_"),
    ("line separator", "a\u2028b"),
]


def text_params() -> list[tuple[str, str, dict[str, Any], list[dict[str, Any]]]]:
    out = []
    for path, item in DOC["paths"].items():
        for method, op in item.items():
            for p in op.get("parameters", []):
                schema = resolve(p["schema"])
                if p["in"] == "query" and schema.get("type") == "string" and "enum" not in schema and p["name"] != "cursor":
                    out.append((method, path, p, op.get("parameters", [])))
    return out


TEXT = [(m, path, p, ps, label, v) for m, path, p, ps in text_params() for label, v in ODD_TEXT]


@pytest.mark.parametrize(
    "method,path,param,params,label,value", TEXT, ids=[f"{m.upper()} {path} {p['name']}: {label}" for m, path, p, _, label, _ in TEXT]
)
def test_odd_text_is_not_an_error(method: str, path: str, param: dict[str, Any], params: list[dict[str, Any]],
                                  label: str, value: str, base_url: str, request: pytest.FixtureRequest) -> None:
    op = DOC["paths"][path][method]
    token = request.getfixturevalue("member_token") if _needs_token(op, param["name"]) else None
    target = _target(path, params, param["name"], value)
    status, headers, body = send(base_url, method, target, token)
    check(method, target, status, headers, body, None)
    # A download answers what the version is (307 to the file, 410 archived) whatever the text says.
    fine = (200, 404, 307, 410) if path.startswith("/api/download/") else (200, 404)
    assert status in fine, f"{target}: {status} {body[:200]!r}"


# --- unknown parameters are ignored (spec, general behaviour 6) -------------------------------


@pytest.mark.parametrize(
    "method,path",
    [(m, p) for p, item in DOC["paths"].items() for m in item if p.startswith("/api/v1/") and "{" not in p
     and DOC["paths"][p][m]["x-blockkit-auth"] != "Authenticated" and m == "get"
     and not any(x.get("required") for x in DOC["paths"][p][m].get("parameters", []))],
)
def test_unknown_parameter_is_ignored(method: str, path: str, base_url: str) -> None:
    plain = send(base_url, method, path)
    odd = send(base_url, method, f"{path}?noSuchParameter=%00&another=1e400&x{'y' * 50}=1")
    assert plain[0] == 200, plain
    assert odd[0] == plain[0], odd
    check(method, path, *odd, 200)
