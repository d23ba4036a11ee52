"""Human output, ruff-style: ``path:line:col: CODE message``, a snippet, and a hint."""

from __future__ import annotations

from blockkit.render.terminal import visible, visible_line
from blockkit.report import FileReport, Finding, Report, fails
from blockkit.source import split_lines

_COLORS = {"error": "\033[31m", "warning": "\033[33m", "info": "\033[36m", "bold": "\033[1m",
           "dim": "\033[2m", "reset": "\033[0m"}
_SNIPPET_WIDTH = 120


def _paint(text: str, style: str, color: bool) -> str:
    return f"{_COLORS[style]}{text}{_COLORS['reset']}" if color else text


def _snippet(lines: list[str], finding: Finding, color: bool) -> list[str]:
    if not (1 <= finding.line <= len(lines)):
        return []
    source_line = lines[finding.line - 1].rstrip("\r\n")
    start = max(finding.column - 1, 0)
    if finding.end_line == finding.line:
        end = max(finding.end_column - 1, start + 1)
    else:
        end = max(len(source_line), start + 1)
    # Keep very long lines readable: show a window around the span.
    offset = 0
    if len(source_line) > _SNIPPET_WIDTH:
        offset = max(0, min(start - 20, len(source_line) - _SNIPPET_WIDTH))
        source_line = source_line[offset: offset + _SNIPPET_WIDTH]
    # Both keep one character per character, so the carets stay under the span.
    source_line = visible_line(source_line.expandtabs(1))
    start -= offset
    end = min(end - offset, len(source_line) + 1)
    gutter = str(finding.line)
    pad = " " * len(gutter)
    carets = " " * start + "^" * max(end - start, 1)
    return [
        f"{pad} |",
        f"{gutter} | {source_line}",
        f"{pad} | {_paint(carets, finding.severity, color)}",
    ]


def render_file(file: FileReport, *, color: bool = False, show_snippets: bool = True) -> list[str]:
    out: list[str] = []
    lines = split_lines(file.text) if (show_snippets and file.text) else []
    # Paths, messages and snippets can carry a manifest's control characters: shown escaped (render.terminal).
    path = visible(file.path)
    for finding in file.findings:
        location = f"{path}:{finding.line}:{finding.column}:"
        code = _paint(finding.code, finding.severity, color)
        label = "" if finding.severity == "error" else f"[{finding.severity}] "
        out.append(f"{_paint(location, 'bold', color)} {code} {label}{visible(finding.message)}")
        out.extend(_snippet(lines, finding, color))
        if finding.hint:
            out.append(f"{' ' * len(str(finding.line))} = hint: {visible(finding.hint)}")
        if show_snippets:
            out.append("")
    return out


def severity_counts(file: FileReport) -> tuple[int, int, int]:
    """(errors, warnings, infos) among ``file``'s findings."""
    severities = [f.severity for f in file.findings]
    if not severities:
        return 0, 0, 0
    return severities.count("error"), severities.count("warning"), severities.count("info")


class Tally:
    """What the summary line counts, file by file: files, findings by severity, failing files
    (an error, or under ``strict`` a warning: FileReport.ok)."""

    __slots__ = ("strict", "files", "errors", "warnings", "infos", "failing")

    def __init__(self, strict: bool) -> None:
        self.strict = strict
        self.files = self.errors = self.warnings = self.infos = self.failing = 0

    def add(self, errors: int, warnings: int, infos: int) -> None:
        self.files += 1
        self.errors += errors
        self.warnings += warnings
        self.infos += infos
        if fails(errors, warnings, self.strict):
            self.failing += 1

    def line(self) -> str:
        files, errors, warnings, infos = self.files, self.errors, self.warnings, self.infos
        if not (errors or warnings or infos):
            return f"All checks passed ({files} file{'s' if files != 1 else ''})."
        parts = [f"{errors} error{'s' if errors != 1 else ''}", f"{warnings} warning{'s' if warnings != 1 else ''}"]
        if infos:
            parts.append(f"{infos} info")
        return f"Found {', '.join(parts)} in {files} file{'s' if files != 1 else ''} ({self.failing} failing)."


def summary_line(report: Report) -> str:
    # One pass over every finding (a thousand files' worth): the counts and the failing files.
    tally = Tally(report.strict)
    for file in report.files:
        tally.add(*severity_counts(file))
    return tally.line()


def file_block(file: FileReport, *, color: bool = False, show_snippets: bool = True) -> str:
    """One file's part of the report: its lines, each ending in a line feed ("" for no findings)."""
    lines = render_file(file, color=color, show_snippets=show_snippets)
    if not lines:
        return ""
    lines.append("")
    return "\n".join(lines)


def join_blocks(blocks: list[str], summary: str) -> str:
    """The report from each file's ``file_block``, in order, and the summary line."""
    return "".join(blocks) + summary + "\n"


def render(report: Report, *, color: bool = False, show_snippets: bool = True, **_: object) -> str:
    return join_blocks([file_block(file, color=color, show_snippets=show_snippets) for file in report.files],
                       summary_line(report))
