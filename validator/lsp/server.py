"""The language server: pygls over stdio, speaking for :mod:`validator.lsp.analysis` and
:mod:`validator.lsp.edits`. Started by ``aml-lint --lsp``; the only module that imports pygls.

- Diagnostics are published on open, on every change and on save, for YAML documents that are
  Azure ML specs (other YAML gets an empty list, so nothing shows).
- A saved or changed file that is not open (a training script, a component a pipeline uses) may
  change what its users report: every open document is linted again (the client is asked to
  watch *.py and *.yml files where it can register watchers).
- Hover on a finding shows its rule's documentation; on a key, what the schema says of it.
- Completion offers the keys the schema allows in the mapping at the cursor.
- Code actions offer the fixes of :func:`validator.lsp.edits.fixes_for`.
- A document over the configuration's ``max-file-size`` gets one finding (AML009, worded for an
  editor) and no other work: no lint, hover, completion or fix over its text.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path
from pygls.workspace.position_codec import ServerTextPosition, ServerTextRange

from .. import __version__
from ..diagnostic import Diagnostic
from ..errors import AmllabError
from ..loader import parse
from . import analysis, edits

SOURCE = "aml-lint"
YAML_SUFFIXES = (".yml", ".yaml")


@dataclass
class Open:
    """What the server remembers of an open document: its last findings (for hover and code
    actions) and its last kind and data (for completion while the text does not parse)."""

    diagnostics: list[Diagnostic] = field(default_factory=list)
    kind: str | None = None
    is_spec: bool | None = None  # None: not known yet (the file has not parsed)
    data: Any = None
    data_is_stale: bool = False
    # Over max-file-size: nothing is computed over the text until it is back under.
    too_large: bool = False

    def data_of(self, text: str, path: Path) -> Any:
        """The document's data, from ``text`` where it parses, else as it last parsed."""
        if self.data_is_stale:
            parsed, _ = parse(str(path), text, path.parent)
            if parsed.data is not None:
                self.data = parsed.data
            self.data_is_stale = False
        return self.data


class AmlLintServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("aml-lint", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Incremental)
        self.configs = analysis.ConfigFinder()
        self.baselines = analysis.Baselines()
        self.open: dict[str, Open] = {}
        # Configuration problems already shown: each is said once, not at every keystroke (nor
        # at every save, which lints every open file, some under a sound configuration).
        self.told: set[str] = set()
        self.shut_down = False  # the client asked to shut down before it said exit

    def path_of(self, uri: str) -> Path:
        path = to_fs_path(uri)
        return Path(path) if path else Path.cwd() / Path(uri).name

    def is_yaml(self, uri: str, language_id: str | None = None) -> bool:
        return (language_id or "").lower() == "yaml" or uri.lower().endswith(YAML_SUFFIXES)

    def lint(self, uri: str) -> None:
        document = self.workspace.get_text_document(uri)
        state = self.open.setdefault(uri, Open())
        path = self.path_of(uri)
        config = self.configs.for_file(path)
        text = document.source
        size = analysis.utf8_size(text)
        problem = self.configs.problem
        try:
            report = analysis.lint_document(text, path, config, self.baselines, size)
        except AmllabError as error:  # a broken AMLLAB_WORKSPACE or baseline: lint without them
            problem = str(error)
            report = analysis.lint_document(text, path, replace(config, workspace=None, baseline=None), size=size)
        if problem and problem not in self.told:
            self.told.add(problem)
            self.window_show_message(types.ShowMessageParams(
                types.MessageType.Warning, f"aml-lint: {problem} (until then, findings are shown as if it were absent)"))
        state.too_large = size > config.max_file_size
        if state.too_large:
            # Shown whatever the document was before: too large to tell. Its range is worked out
            # from the first line alone; document.lines would split the whole text.
            state.diagnostics = []
            self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
                uri=uri, version=document.version,
                diagnostics=[self.to_lsp(document, d, self.first_line(document, text)) for d in report.diagnostics]))
            return
        found = analysis.shown(report, state.is_spec)
        state.diagnostics = found
        if report.kind is not None:
            state.kind = report.kind
            state.is_spec = True
            state.data_is_stale = True  # parsed again when a completion needs it, not per keystroke
        elif report.skipped is not None:
            state.kind = None
            state.is_spec = False
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
            uri=uri, version=document.version, diagnostics=[self.to_lsp(document, d) for d in found]))

    def to_lsp(self, document: Any, diagnostic: Diagnostic, where: types.Range | None = None) -> types.Diagnostic:
        message = diagnostic.message + (f"\nfix: {diagnostic.hint}" if diagnostic.hint else "")
        return types.Diagnostic(
            range=where or self.range_of(document, diagnostic), message=message,
            severity=types.DiagnosticSeverity(analysis.severity_rank(diagnostic.severity)),
            code=diagnostic.code, source=SOURCE, data={"pointer": diagnostic.pointer})

    def range_of(self, document: Any, diagnostic: Diagnostic) -> types.Range:
        """The diagnostic's span (1-based, end exclusive, in characters) in the client's units."""
        lines = document.lines
        line = max(0, min(diagnostic.line - 1, max(len(lines) - 1, 0)))
        start = max(0, diagnostic.column - 1)
        end = diagnostic.end_column - 1 if diagnostic.end_column > diagnostic.column else start + 1
        if lines:
            width = len(lines[line].rstrip("\r\n"))
            start, end = min(start, width), min(end, max(width, start))
        return document.range_to_client_units(ServerTextRange(
            ServerTextPosition(line, start), ServerTextPosition(line, end)))

    def first_line(self, document: Any, text: str, longest: int = 200) -> types.Range:
        """The first line of ``text`` (at most ``longest`` characters of it), in the client's units."""
        end = text.find("\n", 0, longest)
        line = text[:end if end >= 0 else longest].rstrip("\r")
        return types.Range(start=types.Position(line=0, character=0),
                           end=types.Position(line=0, character=document.position_codec.client_num_units(line)))

    def relint_open(self) -> None:
        for uri in list(self.open):
            try:
                self.lint(uri)
            except KeyError:  # closed meanwhile
                self.open.pop(uri, None)


server = AmlLintServer()


@server.feature(types.INITIALIZED)
def initialized(ls: AmlLintServer, params: types.InitializedParams) -> None:
    capabilities = ls.client_capabilities.workspace
    watch = capabilities and capabilities.did_change_watched_files
    if watch and watch.dynamic_registration:
        # Scripts and components on disk change what the specs that use them report.
        ls.client_register_capability(types.RegistrationParams(registrations=[types.Registration(
            id="aml-lint-watch", method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
            register_options=types.DidChangeWatchedFilesRegistrationOptions(watchers=[
                types.FileSystemWatcher(glob_pattern=pattern)
                for pattern in ("**/*.py", "**/*.yml", "**/*.yaml", "**/*.json", "**/pyproject.toml")]))]))


@server.feature(types.SHUTDOWN)
def shutdown(ls: AmlLintServer, params: None) -> None:
    ls.shut_down = True


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: AmlLintServer, params: types.DidOpenTextDocumentParams) -> None:
    item = params.text_document
    if ls.is_yaml(item.uri, item.language_id):
        ls.open[item.uri] = Open()
        ls.lint(item.uri)


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: AmlLintServer, params: types.DidChangeTextDocumentParams) -> None:
    if params.text_document.uri in ls.open:
        ls.lint(params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_SAVE)
def did_save(ls: AmlLintServer, params: types.DidSaveTextDocumentParams) -> None:
    # Any saved file (a spec, a script, a component) may change what the open specs report.
    ls.relint_open()


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: AmlLintServer, params: types.DidCloseTextDocumentParams) -> None:
    if ls.open.pop(params.text_document.uri, None) is not None:
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
            uri=params.text_document.uri, diagnostics=[]))


@server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
def did_change_watched_files(ls: AmlLintServer, params: types.DidChangeWatchedFilesParams) -> None:
    ls.relint_open()


def _position(ls: AmlLintServer, uri: str, position: types.Position) -> tuple[Any, int, int]:
    document = ls.workspace.get_text_document(uri)
    server_position = document.position_from_client_units(position)
    return document, server_position.line, server_position.character


def _under(diagnostics: list[Diagnostic], line: int, character: int) -> list[Diagnostic]:
    out = []
    for diagnostic in diagnostics:
        if diagnostic.line - 1 != line:
            continue
        start = diagnostic.column - 1
        end = diagnostic.end_column - 1 if diagnostic.end_column > diagnostic.column else start + 1
        if start <= character <= end:
            out.append(diagnostic)
    return out


@server.feature(types.TEXT_DOCUMENT_HOVER)
def hover(ls: AmlLintServer, params: types.HoverParams) -> types.Hover | None:
    uri = params.text_document.uri
    state = ls.open.get(uri)
    if state is None or state.too_large:
        return None
    document, line, character = _position(ls, uri, params.position)
    findings = _under(state.diagnostics, line, character)
    if findings:
        text = "\n\n---\n\n".join(analysis.rule_text(d) for d in findings)
        return types.Hover(contents=types.MarkupContent(types.MarkupKind.Markdown, text),
                           range=ls.range_of(document, findings[0]))
    if state.kind is None:
        return None
    found = analysis.key_at(document.source, line, character)
    if found is None:
        return None
    where, (key_line, start, end) = found
    data = state.data_of(document.source, ls.path_of(uri))
    schemas = analysis.schemas_at(state.kind, where, data)
    if not schemas:
        return None
    text = analysis.describe(state.kind, where, schemas)
    return types.Hover(contents=types.MarkupContent(types.MarkupKind.Markdown, text),
                       range=document.range_to_client_units(ServerTextRange(
                           ServerTextPosition(key_line, start), ServerTextPosition(key_line, end))))


@server.feature(types.TEXT_DOCUMENT_COMPLETION, types.CompletionOptions())
def completion(ls: AmlLintServer, params: types.CompletionParams) -> types.CompletionList | None:
    uri = params.text_document.uri
    state = ls.open.get(uri)
    if state is None or state.kind is None or state.too_large:
        return None
    document, line, character = _position(ls, uri, params.position)
    items = [types.CompletionItem(
        label=c.key, kind=types.CompletionItemKind.Property, detail=c.detail or None,
        documentation=types.MarkupContent(types.MarkupKind.Markdown, c.documentation),
        insert_text=f"{c.key}: ") for c in analysis.completions(state.kind, document.source, line, character,
                                      state.data_of(document.source, ls.path_of(uri)))]
    return types.CompletionList(is_incomplete=False, items=items)


@server.feature(types.TEXT_DOCUMENT_CODE_ACTION,
                types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]))
def code_action(ls: AmlLintServer, params: types.CodeActionParams) -> list[types.CodeAction]:
    uri = params.text_document.uri
    state = ls.open.get(uri)
    if state is None or state.too_large:
        return []
    document = ls.workspace.get_text_document(uri)
    wanted = document.range_from_client_units(params.range)
    actions = []
    for diagnostic in state.diagnostics:
        line = diagnostic.line - 1
        if not wanted.start.line <= line <= wanted.end.line:
            continue
        for fix in edits.fixes_for(diagnostic, document.source):
            text_edits = [types.TextEdit(range=document.range_to_client_units(ServerTextRange(
                ServerTextPosition(e.line - 1, e.column - 1), ServerTextPosition(e.end_line - 1, e.end_column - 1))),
                new_text=e.new_text) for e in fix.edits]
            actions.append(types.CodeAction(
                title=fix.title, kind=types.CodeActionKind.QuickFix,
                diagnostics=[ls.to_lsp(document, diagnostic)], is_preferred=fix.preferred,
                edit=types.WorkspaceEdit(changes={uri: text_edits})))
    return actions


def serve() -> int:
    """Serve over stdin and stdout until the client says exit (or closes the pipe); the exit
    status the protocol asks for: 0 after a shutdown request, else 1."""
    # pygls logs to stderr; a client shows it in its log, so keep it to problems.
    logging.basicConfig(level=logging.WARNING)
    server.start_io()
    return 0 if server.shut_down else 1
