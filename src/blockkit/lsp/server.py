"""The language server: pygls and lsprotocol around blockkit.lsp's plain parts.

Every open manifest is checked on open and on every change, in this process with the rules
and validators kept warm, as ``blockkit lint - --stdin-filename PATH`` would check it. The
server keeps its own copy of each document, and pygls keeps none: pygls's copy breaks lines
at every character ``str.splitlines`` knows (U+2028 included, which a JSON string may hold
raw) where LSP breaks them at LF, CR and CRLF only, and applying a change to it clamps the
change's position to its shorter line *in the client's own message* (pygls 2.1,
position_codec.py), so that every handler after it reads a wrong range.
"""

from __future__ import annotations

import fnmatch
import logging
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Optional

from lsprotocol import types
from pygls.capabilities import ServerCapabilitiesBuilder
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method
from pygls.uris import to_fs_path

from blockkit._version import __version__
from blockkit.lsp import knowledge
from blockkit.lsp.checking import Checked, Projects, Settings, SettingsError, check_text
from blockkit.lsp.cursor import locate
from blockkit.lsp.positions import UTF16, LineIndex
from blockkit.report import Edit, Finding

logger = logging.getLogger(__name__)

FIX_ALL = "source.fixAll.blockkit"
# The same, with the fixes `blockkit fix --unsafe` adds: offered only when asked for by name
# (or in the full list), never to an editor's "fix all on save" (source.fixAll).
FIX_ALL_UNSAFE = "source.fixAll.blockkit.unsafe"
QUICK_FIX_UNSAFE = "quickfix.blockkit.unsafe"
SOURCE = "blockkit"
# The files checked, by name, unless the editor passes initializationOptions.manifestNames.
MANIFEST_NAMES: tuple[str, ...] = ("block.manifest.json", "*.manifest.json")
CONFIG_NAMES: tuple[str, ...] = ("blockkit.toml", "pyproject.toml")
_SEVERITY = {"error": types.DiagnosticSeverity.Error, "warning": types.DiagnosticSeverity.Warning,
             "info": types.DiagnosticSeverity.Information}


@dataclass
class Document:
    uri: str
    path: Path
    text: str
    version: Optional[int]
    index: LineIndex
    checked: Optional[Checked] = None
    diagnostics: list[types.Diagnostic] = field(default_factory=list)
    # (finding, its diagnostic) of the last check, for code actions and hover
    findings: list[tuple[Finding, types.Diagnostic]] = field(default_factory=list)
    # The last text that parsed and its non-parse diagnostics with their character offsets.
    last_good: Optional[tuple[str, list[tuple[int, int, types.Diagnostic]]]] = None


class _Protocol(LanguageServerProtocol):
    """pygls's protocol without its own copy of the documents (see the module's docstring):
    open, change and close go straight to our handlers.

    Plain functions, not generators as pygls's own are: pygls 2.1 files the future of every
    generator-run notification under a fresh id and never removes it, so each keystroke kept
    about 1 KB alive for good (benchmarks/bench_lsp.py measured the growth).
    """

    def _ours(self, method: str, params: Any) -> None:
        handler = self.fm.features.get(method)
        if handler is not None:
            handler(params)

    @lsp_method(types.TEXT_DOCUMENT_DID_OPEN)
    def lsp_text_document__did_open(self, params: types.DidOpenTextDocumentParams) -> None:
        self._ours(types.TEXT_DOCUMENT_DID_OPEN, params)

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams) -> None:
        self._ours(types.TEXT_DOCUMENT_DID_CHANGE, params)

    @lsp_method(types.TEXT_DOCUMENT_DID_CLOSE)
    def lsp_text_document__did_close(self, params: types.DidCloseTextDocumentParams) -> None:
        self._ours(types.TEXT_DOCUMENT_DID_CLOSE, params)


class BlockkitServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("blockkit", __version__, protocol_cls=_Protocol)
        self.documents: dict[str, Document] = {}
        self.settings = Settings()
        self.encoding = UTF16
        self.docs_template: Optional[str] = None
        self.manifest_names: tuple[str, ...] = MANIFEST_NAMES
        self._docs_uris: dict[str, Optional[str]] = {}
        self.projects = Projects()

    # --- documents -----------------------------------------------------------------

    def wants(self, path: Path) -> bool:
        return any(fnmatch.fnmatch(path.name, pattern) for pattern in self.manifest_names)

    def open(self, uri: str, text: str, version: Optional[int]) -> None:
        path = Path(to_fs_path(uri) or uri)
        if not self.wants(path):
            return
        self.documents[uri] = Document(uri, path, text, version, LineIndex(text, self.encoding))
        self.check(self.documents[uri])

    def change(self, uri: str, version: Optional[int],
               changes: list[types.TextDocumentContentChangeEvent]) -> None:
        document = self.documents.get(uri)
        if document is None:
            return
        text, index = document.text, document.index
        for change in changes:
            if isinstance(change, types.TextDocumentContentChangePartial):
                start = index.offset(change.range.start.line, change.range.start.character)
                end = index.offset(change.range.end.line, change.range.end.character)
                text = text[:start] + change.text + text[max(start, end):]
            else:
                text = change.text
            index = LineIndex(text, self.encoding)
        document.text, document.index, document.version = text, index, version
        self.check(document)

    def check(self, document: Document) -> None:
        checked = check_text(document.path, document.text, self.settings, self.projects)
        document.checked = checked
        index = document.index
        if checked.problem is not None:
            # What the CLI says before exiting 2: the config cannot be used, so nothing is checked.
            diagnostic = types.Diagnostic(
                range=types.Range(types.Position(0, 0), types.Position(0, 0)),
                message=f"blockkit: error: {checked.problem}", severity=types.DiagnosticSeverity.Error,
                source=SOURCE)
            document.findings = []
            document.diagnostics = [diagnostic]
            self.publish(document)
            return
        pairs = [(finding, self.diagnostic(finding, index)) for finding in checked.findings]
        document.findings = pairs
        diagnostics = [d for _, d in pairs]
        if checked.fatal is None:
            document.last_good = (document.text, [
                (*self._offsets(f, index), d) for f, d in pairs if f.layer != "parse"])
        elif document.last_good is not None:
            diagnostics += self._kept(document, checked.fatal)
        document.diagnostics = diagnostics
        self.publish(document)

    @staticmethod
    def _offsets(finding: Finding, index: LineIndex) -> tuple[int, int]:
        def offset(line: int, column: int) -> int:
            line0 = max(line - 1, 0)
            if line0 >= len(index.starts):
                return len(index.text)
            return min(index.starts[line0] + max(column - 1, 0), len(index.text))

        return offset(finding.line, finding.column), offset(finding.end_line, finding.end_column)

    def _kept(self, document: Document, fatal: Finding) -> list[types.Diagnostic]:
        """The last good check's diagnostics that lie before both the parse error and the first
        character changed since: their text is as it was, so they still hold there."""
        assert document.last_good is not None
        old_text, old = document.last_good
        text = document.text
        same = 0
        limit = min(len(old_text), len(text))
        step = 4096
        while same < limit and old_text[same:same + step] == text[same:same + step]:
            same += step
        same = min(same, limit)
        while same < limit and old_text[same] == text[same]:
            same += 1
        error_at = self._offsets(fatal, document.index)[0]
        cut = min(same, error_at)
        return [d for start, end, d in old if end <= cut and start < cut]

    def diagnostic(self, finding: Finding, index: LineIndex) -> types.Diagnostic:
        start = index.from_column(finding.line, finding.column)
        end = index.from_column(finding.end_line, finding.end_column)
        if end < start:
            end = start
        message = finding.message if not finding.hint else f"{finding.message}\nhint: {finding.hint}"
        href = self.docs_uri(finding.code)
        from blockkit.fix.registry import finding_fixability

        return types.Diagnostic(
            range=types.Range(types.Position(*start), types.Position(*end)),
            message=message, severity=_SEVERITY.get(finding.severity, types.DiagnosticSeverity.Warning),
            code=finding.code, source=SOURCE,
            code_description=types.CodeDescription(href=href) if href else None,
            data={"pointer": finding.pointer, "layer": finding.layer, "fixable": finding_fixability(finding)})

    def docs_uri(self, code: str) -> Optional[str]:
        if code not in self._docs_uris:
            self._docs_uris[code] = knowledge.rule_docs_uri(code, self.docs_template)
        return self._docs_uris[code]

    def publish(self, document: Document) -> None:
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
            uri=document.uri, version=document.version, diagnostics=document.diagnostics))

    def recheck_all(self) -> None:
        for document in list(self.documents.values()):
            self.check(document)

    # --- code actions ----------------------------------------------------------------

    def text_edits(self, document: Document, edits: list[Edit]) -> list[types.TextEdit]:
        index = document.index
        result = []
        for edit in sorted(edits, key=lambda e: (e.start, e.end)):
            start, end = index.position(edit.start), index.position(edit.end)
            result.append(types.TextEdit(range=types.Range(types.Position(*start), types.Position(*end)),
                                         new_text=edit.replacement))
        return result

    def workspace_edit(self, document: Document, edits: list[types.TextEdit]) -> types.WorkspaceEdit:
        return types.WorkspaceEdit(document_changes=[types.TextDocumentEdit(
            text_document=types.OptionalVersionedTextDocumentIdentifier(uri=document.uri, version=document.version),
            edits=edits)])

    def quick_fixes(self, document: Document, wanted: types.Range) -> list[types.CodeAction]:
        from blockkit.fix import load_fixers
        from blockkit.fix.registry import FixTarget
        from blockkit.fix.runner import fixable_document
        from blockkit.fix.textedit import JsonText, apply_edits

        checked = document.checked
        if checked is None or checked.source is None or fixable_document(checked.source) is not None:
            return []
        fixers = load_fixers()
        source = checked.source
        actions: list[types.CodeAction] = []
        by_code: dict[str, list[Finding]] = {}
        for finding, diagnostic in document.findings:
            fixer = fixers.get(finding.code)
            if fixer is None:
                continue
            by_code.setdefault(finding.code, []).append(finding)
            if not _overlaps(diagnostic.range, wanted):
                continue
            try:
                edits = list(fixer.apply(FixTarget(source, source.data, JsonText(source)), [finding]))
            except Exception as exc:  # a fixer's bug must not take the server down
                logger.error("the fix for %s failed: %s", finding.code, exc)
                continue
            _, accepted = apply_edits(source.text or "", edits)
            if not accepted:
                continue
            safe = fixer.safety == "safe"
            title = (f"{finding.code} at {finding.pointer or '/'}: {fixer.title_for(finding)}"
                     + ("" if safe else " (unsafe: review the result)"))
            actions.append(types.CodeAction(
                title=title, kind=types.CodeActionKind.QuickFix if safe else QUICK_FIX_UNSAFE,
                diagnostics=[diagnostic], is_preferred=safe,
                edit=self.workspace_edit(document, self.text_edits(document, list(accepted)))))
        return actions

    def fix_all(self, document: Document, unsafe: bool) -> Optional[types.CodeAction]:
        """What ``blockkit fix`` (``--unsafe``) would write, as one edit of the changed part."""
        from blockkit.fix import fix_source
        from blockkit.lint.policy import LintPolicy

        checked = document.checked
        if checked is None or checked.source is None or checked.config is None:
            return None
        policy = LintPolicy()
        policy.prepare(document.path, checked.config)
        outcome = fix_source(checked.source, checked.context, unsafe=unsafe, project_dir=checked.project_dir,
                             review=partial(policy.review, document.path, checked.config))
        if not outcome.changed or outcome.text is None:
            return None
        old, new = document.text, outcome.text
        prefix = 0
        limit = min(len(old), len(new))
        while prefix < limit and old[prefix] == new[prefix]:
            prefix += 1
        suffix = 0
        while suffix < limit - prefix and old[len(old) - 1 - suffix] == new[len(new) - 1 - suffix]:
            suffix += 1
        edit = Edit(prefix, len(old) - suffix, new[prefix:len(new) - suffix])
        count = len(outcome.fixed)
        title = (f"Fix all with blockkit{' (unsafe fixes too: review the result)' if unsafe else ''}: "
                 f"{count} finding{'s' if count != 1 else ''}")
        return types.CodeAction(title=title, kind=FIX_ALL_UNSAFE if unsafe else FIX_ALL,
                                edit=self.workspace_edit(document, self.text_edits(document, [edit])))

    # --- hover and completion -----------------------------------------------------------

    def tier(self, document: Document) -> str:
        from blockkit.platform import DEFAULT_TIER

        if document.checked is not None and document.checked.context is not None:
            return str(document.checked.context.tier)
        return self.settings.tier or DEFAULT_TIER

    def hover(self, document: Document, position: types.Position) -> Optional[types.Hover]:
        offset = document.index.offset(position.line, position.character)
        place = locate(document.text, offset)
        tier = self.tier(document)
        parts: list[str] = []
        if place.token is not None:
            if place.role == "key":
                said = knowledge.key_hover(place.path, tier)
            elif place.role == "value" and place.is_string:
                said = knowledge.value_hover(place.path, place.text, tier)
            else:
                said = None
            if said:
                parts.append(said)
        seen: set[str] = set()
        for finding, diagnostic in document.findings:
            if finding.code in seen or not _contains(diagnostic.range, position):
                continue
            seen.add(finding.code)
            explained = knowledge.explain_markdown(finding.code)
            if explained:
                parts.append(explained)
        if not parts:
            return None
        return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown,
                                                        value="\n\n---\n\n".join(parts)))

    def complete(self, document: Document, position: types.Position) -> list[types.CompletionItem]:
        from blockkit.lsp.completion import items_at

        offset = document.index.offset(position.line, position.character)
        return items_at(document.text, offset, document.index, self.tier(document))


def watched_globs() -> list[str]:
    """The files whose change may change a finding: the config, and the block project lint reads
    (package.json, the lockfiles, the source files)."""
    from blockkit.project.code import SOURCE_SUFFIXES
    from blockkit.platform import LOCKFILES

    names = sorted({*CONFIG_NAMES, "package.json", *LOCKFILES.values()})
    suffixes = ",".join(sorted(suffix.lstrip(".") for suffix in SOURCE_SUFFIXES))
    return [f"**/{name}" for name in names] + [f"**/*.{{{suffixes}}}"]


def _overlaps(a: types.Range, b: types.Range) -> bool:
    def key(p: types.Position) -> tuple[int, int]:
        return (p.line, p.character)

    return key(a.start) <= key(b.end) and key(b.start) <= key(a.end)


def _contains(r: types.Range, p: types.Position) -> bool:
    return (r.start.line, r.start.character) <= (p.line, p.character) <= (r.end.line, r.end.character)


def _value(kind: Any) -> str:
    """A protocol string, whether lsprotocol gives it as its enum or as a plain string
    (``str()`` of an enum member is its name in Python 3.11, not its value)."""
    return str(getattr(kind, "value", kind))


def _wants_kind(only: Optional[list[str]], kind: str, explicit: bool = False) -> bool:
    """Whether a client that asked for ``only`` kinds wants an action of ``kind`` (kinds are
    dotted hierarchies: asking for "source.fixAll" asks for "source.fixAll.blockkit")."""
    if only is None:
        return True
    for asked in only:
        if kind == asked:
            return True
        if not explicit and kind.startswith(asked + "."):
            return True
    return False


def build() -> BlockkitServer:
    server = BlockkitServer()

    @server.feature(types.INITIALIZE)
    def initialize(ls: BlockkitServer, params: types.InitializeParams) -> None:
        ls.encoding = _value(ServerCapabilitiesBuilder.choose_position_encoding(params.capabilities))
        options = params.initialization_options
        try:
            ls.settings = Settings.from_options(options)
        except SettingsError as exc:
            ls.window_show_message(types.ShowMessageParams(type=types.MessageType.Error,
                                                           message=f"blockkit: {exc}; using the defaults"))
        if isinstance(options, dict):
            template = options.get("ruleDocsUrl")
            if isinstance(template, str) and template:
                ls.docs_template = template
            names = options.get("manifestNames")
            if isinstance(names, list) and names and all(isinstance(n, str) for n in names):
                ls.manifest_names = tuple(names)

    @server.feature(types.INITIALIZED)
    def initialized(ls: BlockkitServer, params: types.InitializedParams) -> None:
        from pygls.lsp._capabilities import get_capability

        from blockkit.engine import ALL_LAYERS, warm_up

        # Load the rules and build the validators now, while the editor has yet to open a
        # manifest (when it has, this is work its first check would do anyway).
        warm_up(ALL_LAYERS)

        if get_capability(ls.client_capabilities,
                          "workspace.did_change_watched_files.dynamic_registration", False):
            watchers = [types.FileSystemWatcher(glob_pattern=glob) for glob in watched_globs()]
            ls.client_register_capability(types.RegistrationParams(registrations=[types.Registration(
                id="blockkit-config", method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                register_options=types.DidChangeWatchedFilesRegistrationOptions(watchers=watchers))]))

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: BlockkitServer, params: types.DidOpenTextDocumentParams) -> None:
        item = params.text_document
        ls.open(item.uri, item.text, item.version)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: BlockkitServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.change(params.text_document.uri, params.text_document.version, list(params.content_changes))

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: BlockkitServer, params: types.DidSaveTextDocumentParams) -> None:
        # The project beside the manifest (index.html, package.json, code) may have changed too.
        document = ls.documents.get(params.text_document.uri)
        if document is not None:
            ls.check(document)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: BlockkitServer, params: types.DidCloseTextDocumentParams) -> None:
        document = ls.documents.pop(params.text_document.uri, None)
        if document is not None:
            ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=document.uri, diagnostics=[]))

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def watched_files(ls: BlockkitServer, params: types.DidChangeWatchedFilesParams) -> None:
        ls.recheck_all()

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def configuration(ls: BlockkitServer, params: types.DidChangeConfigurationParams) -> None:
        settings = params.settings
        if isinstance(settings, dict) and isinstance(settings.get("blockkit"), dict):
            try:
                ls.settings = Settings.from_options(settings["blockkit"])
            except SettingsError as exc:
                ls.window_show_message(types.ShowMessageParams(type=types.MessageType.Error,
                                                               message=f"blockkit: {exc}"))
                return
        ls.recheck_all()

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(
        code_action_kinds=[types.CodeActionKind.QuickFix, QUICK_FIX_UNSAFE, FIX_ALL, FIX_ALL_UNSAFE]))
    def code_action(ls: BlockkitServer, params: types.CodeActionParams) -> list[types.CodeAction]:
        document = ls.documents.get(params.text_document.uri)
        if document is None:
            return []
        only = list(params.context.only) if params.context.only is not None else None
        actions: list[types.CodeAction] = []
        if _wants_kind(only, types.CodeActionKind.QuickFix) or _wants_kind(only, QUICK_FIX_UNSAFE):
            for action in ls.quick_fixes(document, params.range):
                if _wants_kind(only, _value(action.kind)):
                    actions.append(action)
        # Fixing all runs blockkit fix (checks until nothing changes): not for the automatic
        # requests an editor sends as the cursor moves without naming a kind (lightbulbs).
        asked = only is not None or params.context.trigger_kind == types.CodeActionTriggerKind.Invoked
        if asked and _wants_kind(only, FIX_ALL):
            action = ls.fix_all(document, unsafe=False)
            if action is not None:
                actions.append(action)
        if asked and (only is None or _wants_kind(only, FIX_ALL_UNSAFE, explicit=True) or "source" in only):
            action = ls.fix_all(document, unsafe=True)
            if action is not None:
                actions.append(action)
        return actions

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(ls: BlockkitServer, params: types.HoverParams) -> Optional[types.Hover]:
        document = ls.documents.get(params.text_document.uri)
        return None if document is None else ls.hover(document, params.position)

    @server.feature(types.TEXT_DOCUMENT_COMPLETION,
                    types.CompletionOptions(trigger_characters=['"', ":", " "]))
    def completion(ls: BlockkitServer, params: types.CompletionParams) -> types.CompletionList:
        document = ls.documents.get(params.text_document.uri)
        items = [] if document is None else ls.complete(document, params.position)
        return types.CompletionList(is_incomplete=False, items=items)

    return server


class _OneLine(logging.Formatter):
    """Log records as one line each on standard error (the editor's log for the server); the
    traceback of an error only with BLOCKKIT_DEBUG set, as everywhere in blockkit."""

    def format(self, record: logging.LogRecord) -> str:
        import os

        line = f"blockkit lsp: {record.levelname.lower()}: {record.getMessage()}"
        if record.exc_info and os.environ.get("BLOCKKIT_DEBUG"):
            line += "\n" + self.formatException(record.exc_info)
        elif record.exc_info and record.exc_info[1] is not None:
            line += f" ({type(record.exc_info[1]).__name__}: {record.exc_info[1]})"
        return line.replace("\n", "\n  ") if not os.environ.get("BLOCKKIT_DEBUG") else line


def serve() -> None:
    handler = logging.StreamHandler()
    handler.setFormatter(_OneLine())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.WARNING)
    build().start_io()
