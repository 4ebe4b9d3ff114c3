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
- Every request gets a response or a JSON-RPC error, also a malformed one (:class:`CheckedProtocol`),
  and the server exits when the client process named in ``initialize`` ends
  (:mod:`validator.lsp.watch`).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import cattrs
from cattrs.v import format_exception
from lsprotocol import types
from pygls.io_ import StdinAsyncReader, StdoutWriter
from pygls.lsp.server import LanguageServer
from pygls.protocol import JsonRPCNotification, JsonRPCRequestMessage, LanguageServerProtocol
from pygls.uris import to_fs_path
from pygls.workspace.position_codec import ServerTextPosition, ServerTextRange

from .. import __version__
from ..diagnostic import Diagnostic
from ..errors import AmllabError
from ..loader import parse
from . import analysis, edits
from .watch import watch_process

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


def is_message_id(value: Any) -> bool:
    """Whether ``value`` may be a request's id: LSP's ``integer | string``
    (https://microsoft.github.io/language-server-protocol/specifications/lsp/3.17/specification/#requestMessage);
    JSON's true and false are no integers."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def envelope_problem(message: Any) -> str | None:
    """Why the decoded JSON ``message`` is no JSON-RPC 2.0 request, notification or response
    (https://www.jsonrpc.org/specification#request_object), or None. Its answer is an Invalid
    Request error.

    A batch (an array of messages) is refused as a whole, with one error: JSON-RPC 2.0 lets a
    server answer an array it does not recognise as a batch with "a single Response object"
    (https://www.jsonrpc.org/specification#batch), and the Language Server Protocol has no
    batches: its content part is one request, response or notification
    (https://microsoft.github.io/language-server-protocol/specifications/lsp/3.17/specification/#contentPart).
    Running its requests would send an array back, which no LSP client reads."""
    if isinstance(message, list):
        return ("a batch (a JSON array of messages) is not part of the Language Server Protocol: "
                "send each message on its own")
    if not isinstance(message, dict):
        return "a message must be a JSON object"
    if message.get("jsonrpc") != "2.0":
        return 'a message must carry "jsonrpc": "2.0"'
    if "method" in message:
        if not isinstance(message["method"], str):
            return "a message's method must be a string"
        if "id" in message and not is_message_id(message["id"]):
            return "a request's id must be an integer or a string"
        return None
    if "result" in message or "error" in message:
        return None  # a response to a request of the server's
    return "a message must have a method (a request or a notification), or a result or an error (a response)"


def _why_invalid(error: BaseException, kind: type | None) -> str:
    # lsprotocol's validators say what is wrong ("Position.line should be in range [0:2147483647],
    # but was -1."); cattrs' default for them is only "invalid value".
    return str(error) if isinstance(error, ValueError) else format_exception(error, kind)


def invalid_params_text(method: str, error: Exception) -> str:
    """What is wrong with a ``method`` message that lsprotocol's types could not hold."""
    if isinstance(error, (cattrs.ClassValidationError, cattrs.IterableValidationError)):
        details = cattrs.transform_error(error, format_exception=_why_invalid)
    else:
        details = [f"{type(error).__name__}: {error}"]
    return f"invalid params for {method}: " + "; ".join(details)


class CheckedProtocol(LanguageServerProtocol):
    """pygls' protocol with each message checked before it is dispatched, so that a faulty
    client is answered rather than left waiting: pygls logs a message it cannot structure and
    drops it, request or not, and drops every request after shutdown. :func:`read_messages`
    hands :meth:`handle_message` the decoded JSON, as it came."""

    def __init__(self, server: "AmlLintServer", converter: cattrs.Converter) -> None:
        super().__init__(server, converter)
        self.lint_server = server
        self.converter = converter

    def structured(self, message: dict[str, Any]) -> Any:
        """``message`` as lsprotocol's type for its method (pygls' generic one for a method it
        does not know); raises what cattrs raises. Not through pygls' structure_message, which
        logs a traceback for every message it cannot read: here each gets an answer instead."""
        method = message.get("method")
        if method is None:
            if "error" in message:
                return self.converter.structure(message, types.ResponseErrorMessage)
            return super().structure_message(message)  # pygls knows the result type of its requests
        if method not in types.METHOD_TO_TYPES:
            # JSON-RPC's params are optional; pygls' class for a method it does not know wants them.
            return self.converter.structure({"params": None, **message},
                                            JsonRPCRequestMessage if "id" in message else JsonRPCNotification)
        return self.converter.structure(message, self.get_message_type(method))

    def reply_error(self, ident: Any, code: types.ErrorCodes, text: str) -> None:
        """A JSON-RPC error response. Written here, not through pygls' converter, which leaves
        out an id of null, and JSON-RPC requires it: "If there was an error in detecting the id
        in the Request object (e.g. Parse error/Invalid Request), it MUST be Null"."""
        if self.writer is None:
            return
        body = json.dumps({"jsonrpc": "2.0", "id": ident, "error": {"code": int(code), "message": text}})
        self.writer.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body.encode("ascii")))

    def handle_message(self, message: Any) -> None:
        problem = envelope_problem(message)
        if problem is not None:
            ident = message.get("id") if isinstance(message, dict) else None
            self.reply_error(ident if is_message_id(ident) else None, types.ErrorCodes.InvalidRequest, problem)
            return
        method = message.get("method")
        ident = message.get("id")
        is_request = method is not None and "id" in message
        if method is None:
            if not is_message_id(ident):
                logging.getLogger(__name__).warning("a response without a usable id, ignored: %.200r", message)
                return
        elif not self.lint_server.initialized and method not in (types.INITIALIZE, types.EXIT):
            # LSP: before initialize, a request gets ServerNotInitialized; notifications are dropped.
            if is_request:
                self.reply_error(ident, types.ErrorCodes.ServerNotInitialized,
                                 f"{method}: the server is not initialized yet: send initialize first")
            return
        elif self.lint_server.shut_down and method != types.EXIT:
            # LSP: "If a server receives requests after a shutdown request those requests should
            # error with InvalidRequest"; notifications other than exit are dropped.
            if is_request:
                self.reply_error(ident, types.ErrorCodes.InvalidRequest,
                                 f"{method}: the server has been asked to shut down; only exit is accepted now")
            return
        elif is_request and method in types.METHOD_TO_TYPES and types.METHOD_TO_TYPES[method][1] is None:
            # pygls would run it as the notification and answer nothing.
            self.reply_error(ident, types.ErrorCodes.MethodNotFound,
                             f"{method} is a notification, not a request: send it without an id")
            return
        try:
            structured = self.structured(message)
        except Exception as error:
            if is_request:
                self.reply_error(ident, types.ErrorCodes.InvalidParams, invalid_params_text(method, error))
            else:  # a notification is never answered (JSON-RPC): say it in the client's log
                logging.getLogger(__name__).warning("%s", invalid_params_text(method or "a response", error))
            return
        try:
            super().handle_message(structured)
        except (BrokenPipeError, SystemExit):
            raise
        except Exception as error:  # pygls answers its handlers' errors; this is a last resort
            logging.getLogger(__name__).error("%s failed: %s: %s", method, type(error).__name__, error)
            if is_request:
                self.reply_error(ident, types.ErrorCodes.InternalError,
                                 f"{method} failed: {type(error).__name__}: {error}")


class AmlLintServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("aml-lint", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
                         protocol_cls=CheckedProtocol)
        self.configs = analysis.ConfigFinder()
        self.baselines = analysis.Baselines()
        self.open: dict[str, Open] = {}
        # Configuration problems already shown: each is said once, not at every keystroke (nor
        # at every save, which lints every open file, some under a sound configuration).
        self.told: set[str] = set()
        self.shut_down = False  # the client asked to shut down before it said exit
        self.initialized = False  # the client sent initialize

    def client_gone(self, pid: int) -> None:
        """The client process named in initialize has ended: exit, as the exit notification
        would (LSP: 0 after a shutdown request, else 1). Called from the watching thread, while
        the main one may be blocked reading standard input: os._exit, since a normal exit would
        wait for that read."""
        sys.stderr.write(f"aml-lint --lsp: the client process {pid} has ended; exiting\n")
        sys.stderr.flush()
        os._exit(0 if self.shut_down else 1)

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


@server.feature(types.INITIALIZE)
def initialize(ls: AmlLintServer, params: types.InitializeParams) -> None:
    ls.initialized = True
    pid = params.process_id
    if pid is not None and not watch_process(pid, lambda: ls.client_gone(pid)):
        logging.getLogger(__name__).warning(
            "the client process %s named in initialize is not watched: no such process is visible "
            "here, or this system has no way to watch one", pid)


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


# A header line that gives the body's length. Searched for, not matched whole: after a message
# whose header had none, its body and the next header share a line, and the next message is kept.
CONTENT_LENGTH = re.compile(rb"Content-Length:[ \t]*([0-9]+)[ \t]*\r?\n?$", re.IGNORECASE)
BODY_CHUNK = 1 << 20


async def read_messages(reader: StdinAsyncReader, protocol: CheckedProtocol) -> None:
    """Read messages (the LSP base protocol: headers, an empty line, a body of Content-Length
    bytes) until the input ends, and hand each to ``protocol``. pygls' own loop
    (``pygls.io_.run_async``) drops a body that is not JSON with a traceback and no answer, and
    reads a body in one allocation of its announced length: a bogus Content-Length of 100 TB
    ended the server with a MemoryError. Here a body is read a chunk at a time, so memory
    follows the bytes that arrive, and one that is not JSON gets a Parse error."""
    while True:
        length = None
        headers = False
        while True:
            line = await reader.readline()
            if not line:
                return
            if line.strip():
                headers = True
                match = CONTENT_LENGTH.search(line)
                if match:
                    length = int(match.group(1))
            elif length is not None:
                break
            elif headers:  # a header without a length: its body cannot be told from what follows
                protocol.reply_error(None, types.ErrorCodes.ParseError,
                                     "a message without a valid Content-Length header (the LSP base protocol requires one)")
                headers = False
        chunks = []
        while length > 0:
            chunk = await reader.readexactly(min(length, BODY_CHUNK))
            if not chunk:
                return
            chunks.append(chunk)
            length -= len(chunk)
        try:
            message = json.loads(b"".join(chunks))
        except (ValueError, RecursionError) as error:  # not JSON, not UTF-8, or nested too deep
            protocol.reply_error(None, types.ErrorCodes.ParseError,
                                 f"the message is not JSON in UTF-8: {type(error).__name__}: {error}")
            continue
        protocol.handle_message(message)


def serve() -> int:
    """Serve over stdin and stdout until the client says exit (or closes the pipe); the exit
    status the protocol asks for: 0 after a shutdown request, else 1."""
    # pygls logs to stderr; a client shows it in its log, so keep it to problems.
    logging.basicConfig(level=logging.WARNING)
    server.protocol.set_writer(StdoutWriter(sys.stdout.buffer))
    try:
        asyncio.run(read_messages(StdinAsyncReader(sys.stdin.buffer, server.thread_pool), server.protocol))
    except BrokenPipeError:  # the client left while a message was being written to it
        pass
    except SystemExit:  # the exit notification: pygls' handler exits
        pass
    finally:
        server.shutdown()
    return 0 if server.shut_down else 1
