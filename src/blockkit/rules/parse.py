"""Rules of the parse layer: reading the file as one JSON object."""

from __future__ import annotations

from blockkit.rules.base import declare


def _doc(summary: str, what: str, why: str, example: str, fix: str) -> str:
    return f"{summary}\n\n## What it does\n{what}\n\n## Why it matters\n{why}\n\n## Example\n{example}\n\n## Fix\n{fix}"


declare("BK000", "internal-error", layer="parse", severity="error", stage="submit", doc=_doc(
    "blockkit failed while checking this file.",
    "Reports an unexpected failure inside one of blockkit's own checks, with the rule that failed.",
    "A verdict with a silent gap would let a bad manifest through; the failure is an error so it is never missed.",
    "(any input that trips a bug)", "Report the bug with the manifest attached; other rules still ran."))
declare("BK002", "invalid-json", layer="parse", severity="error", stage="submit", doc=_doc(
    "The file is not valid JSON.",
    "Reports the first syntax error: trailing commas, comments, single quotes, unquoted names, NaN or Infinity, unterminated strings, or content after the object.",
    "The platform parses manifests with JSON.parse, which accepts none of these; the submission is refused.",
    '{"blockId": "demo",}', '{"blockId": "demo"}'))
declare("BK003", "byte-order-mark", layer="parse", severity="error", stage="submit", fixable="safe", doc=_doc(
    "The file starts with a byte order mark.",
    "Reports a U+FEFF character at the start of the file (blockkit still checks the rest).",
    "JSON.parse rejects a leading BOM, so the platform cannot read the manifest.",
    "EF BB BF 7B ... (a UTF-8 BOM before '{')", "Save as UTF-8 without BOM; `blockkit fix` removes it."))
declare("BK004", "nesting-too-deep", layer="parse", severity="error", stage="submit", doc=_doc(
    "The document nests arrays or objects too deeply.",
    "Reports the first bracket past the nesting limit (256 levels).",
    "No manifest needs this depth; deeply nested input is how recursive consumers are crashed.",
    "[[[[[[ ... 300 levels ... ]]]]]]", "Flatten the structure."))
declare("BK005", "not-utf8", layer="parse", severity="error", stage="submit", doc=_doc(
    "The file is not UTF-8.",
    "Reports the first byte that is not valid UTF-8 (blockkit checks the rest with the byte replaced), or a UTF-16 or UTF-32 file, with or without a byte order mark.",
    "The platform reads manifests as UTF-8; other encodings garble names and taglines or fail outright.",
    "a tagline saved as Latin-1: 0xE9 for é", "Save the file as UTF-8."))
declare("BK006", "file-too-large", layer="parse", severity="error", stage="submit", doc=_doc(
    "The file is larger than 1 MiB.",
    "Reports a manifest file over 1 MiB without reading the rest of it.",
    "Manifests are a few kilobytes; a huge file is the wrong file or an attack on the validator.",
    "a 5 MB block.manifest.json", "Check that the path names the manifest; move data out of it."))
declare("BK007", "binary-file", layer="parse", severity="error", stage="submit", doc=_doc(
    "The file is binary, not text.",
    "Reports a file that contains NUL bytes.",
    "It cannot be a manifest.", "a PNG saved as block.manifest.json", "Point blockkit at the manifest."))
declare("BK008", "not-an-object", layer="parse", severity="error", stage="submit", doc=_doc(
    "The document is not a JSON object.",
    "Reports a manifest whose top-level value is a list, string, number, boolean or null.",
    "The platform requires one JSON object.", '["blockId", "demo"]', '{"blockId": "demo", ...}'))
declare("BK009", "duplicate-key", layer="parse", severity="warning", doc=_doc(
    "An object has the same key twice.",
    "Reports every repeated key; the platform keeps the last value, and so does blockkit.",
    "Which value wins is easy to misread: the first one, the one a reader sees, is thrown away.",
    '{"version": "1.0.0", "version": "1.0.1"}', "Keep one of the keys."))
declare("BK010", "findings-not-listed", layer="parse", severity="info", stage="submit", doc=_doc(
    "A rule found more problems than blockkit lists in one file.",
    "Lists at most 100 findings of one rule per file (the first ones in the file) and says, at the first of the "
    "others, how many more there are. In a list or object far longer than any manifest needs, the schema's "
    "findings are explained for the first 100 items that fail, and the other failing items are counted. A "
    "server or lint rule stops after 1,000 findings; the count then says \"at least\".",
    "A file of a few hundred kilobytes can hold hundreds of thousands of the same mistake; listing each one would "
    "cost the validator seconds and gigabytes, and no reader needs more than the first hundred to see the problem.",
    '"scopes": ["x", "x", ... 200,000 times]', "Fix the findings that are listed; the rest are the same mistake."))
