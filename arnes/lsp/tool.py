"""The LSP tool, as Claude Code names and shapes it: code intelligence from a plugin's language
server. Its file is judged as a Read; locations in files the Read rules hide are left out."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field

from arnes.lsp.hub import MOST_BYTES, LspHub, file_text, path_of
from arnes.lsp.wire import LspError
from arnes.permissions.types import Target
from arnes.tools.base import BaseTool, ToolArgs, ToolContext, ToolError

Operation = Literal[
    "goToDefinition",
    "findReferences",
    "hover",
    "documentSymbol",
    "workspaceSymbol",
    "goToImplementation",
    "prepareCallHierarchy",
    "incomingCalls",
    "outgoingCalls",
]
METHODS = {
    "goToDefinition": "textDocument/definition",
    "findReferences": "textDocument/references",
    "hover": "textDocument/hover",
    "documentSymbol": "textDocument/documentSymbol",
    "goToImplementation": "textDocument/implementation",
    "prepareCallHierarchy": "textDocument/prepareCallHierarchy",
}
KINDS = {
    1: "file", 2: "module", 3: "namespace", 4: "package", 5: "class", 6: "method", 7: "property", 8: "field",
    9: "constructor", 10: "enum", 11: "interface", 12: "function", 13: "variable", 14: "constant", 15: "string",
    16: "number", 17: "boolean", 18: "array", 19: "object", 20: "key", 21: "null", 22: "enum member",
    23: "struct", 24: "event", 25: "operator", 26: "type parameter",
}  # fmt: skip
MOST = 100


class LspArgs(ToolArgs):
    operation: Operation = Field(description="What to ask the language server.")
    filePath: str = Field(description="The file the position is in (relative to the workspace or absolute).")  # noqa: N815
    line: int = Field(1, ge=1, description="1-based line of the symbol.")
    character: int = Field(1, ge=1, description="1-based column of the symbol.")
    query: str | None = Field(None, description="workspaceSymbol: the name to look for (else the word there).")


class LspTool(BaseTool[LspArgs]):
    name: ClassVar[str] = "LSP"
    description: ClassVar[str] = (
        "Ask the language server about code: goToDefinition, findReferences, hover (type and docs), "
        "documentSymbol (a file's outline), workspaceSymbol, goToImplementation, prepareCallHierarchy, "
        "incomingCalls, outgoingCalls. Give the file and the 1-based line and character of the symbol."
    )
    args_model: ClassVar[type[ToolArgs]] = LspArgs
    read_only: ClassVar[bool] = True

    def __init__(self, hub: LspHub):
        self.hub = hub

    def targets(self, args: LspArgs, ctx: ToolContext) -> list[Target]:
        return [Target(ctx.path(args.filePath), "read")]

    def run(self, args: LspArgs, ctx: ToolContext) -> str:
        path = ctx.path(args.filePath)
        if not self.hub.handles(path):
            raise ToolError(
                f"No language server here serves {path.suffix or 'files without a suffix'} files "
                f"(servers: {', '.join(self.hub.names())}). Use Grep or Read instead."
            )
        text = file_text(ctx.real_of(path) or path)
        if text is None:
            raise ToolError(
                f"Cannot ask about {ctx.display(path)}: it is not a regular file arnes can read, or it is over "
                f"{MOST_BYTES >> 20} MB. Check the path."
            )
        position = {"line": args.line - 1, "character": args.character - 1}
        document = {"textDocument": {"uri": path.absolute().as_uri()}}
        try:
            if args.operation == "workspaceSymbol":
                query = args.query or _word_at(text, args.line, args.character)
                self.hub.request(path, "textDocument/documentSymbol", document, text)  # the file is open first
                found = [r for _, r in self.hub.workspace_request("workspace/symbol", {"query": query})]
                return self._symbols([s for r in found if isinstance(r, list) for s in r], ctx, f"{query!r}")
            if args.operation in ("incomingCalls", "outgoingCalls"):
                at = {**document, "position": position}
                items = self.hub.request(path, METHODS["prepareCallHierarchy"], at, text)
                if not items:
                    return "No function or method at that position."
                calls = self.hub.request(path, f"callHierarchy/{args.operation}", {"item": items[0]}, text)
                return self._calls(calls or [], args.operation, ctx)
            params: dict[str, Any] = {**document, "position": position}
            if args.operation == "findReferences":
                params["context"] = {"includeDeclaration": True}
            if args.operation == "documentSymbol":
                params = document
            result = self.hub.request(path, METHODS[args.operation], params, text)
        except LspError as exc:
            raise ToolError(f"The language server could not answer: {exc}") from None
        if args.operation == "hover":
            return _hover(result) or "Nothing known at that position."
        if args.operation == "documentSymbol":
            return _outline(result or [], ctx.display(path)) or "The server lists no symbols in this file."
        if args.operation == "prepareCallHierarchy":
            return self._items(result or [], ctx) or "No function or method at that position."
        return self._locations(result, ctx) or "None found."

    # -- rendering ----------------------------------------------------------------------------
    def _place(self, uri: Any, start: Any, ctx: ToolContext) -> str | None:
        """`path:line:col`, or None for a file the Read rules hide."""
        path = path_of(uri) if isinstance(uri, str) else None
        if path is None:
            return None
        if ctx.hidden("Read", path):
            return None
        line = int(start.get("line", 0)) + 1 if isinstance(start, dict) else 1
        col = int(start.get("character", 0)) + 1 if isinstance(start, dict) else 1
        return f"{ctx.display(path)}:{line}:{col}"

    def _locations(self, result: Any, ctx: ToolContext) -> str:
        found = result if isinstance(result, list) else [result] if isinstance(result, dict) else []
        lines, left_out = [], 0
        for item in found[:MOST]:
            if not isinstance(item, dict):
                continue
            uri = item.get("uri", item.get("targetUri"))
            where = item.get("range", item.get("targetSelectionRange", {}))
            place = self._place(uri, where.get("start", {}) if isinstance(where, dict) else {}, ctx)
            if place is None:
                left_out += 1
            else:
                lines.append(place)
        return _with_left_out(lines, left_out, len(found))

    def _symbols(self, found: list[Any], ctx: ToolContext, query: str) -> str:
        lines, left_out = [], 0
        for item in found[:MOST]:
            if not isinstance(item, dict):
                continue
            location = item.get("location", {})
            start = location.get("range", {}).get("start", {}) if isinstance(location, dict) else {}
            place = self._place(location.get("uri") if isinstance(location, dict) else None, start, ctx)
            if place is None:
                left_out += 1
                continue
            lines.append(f"{KINDS.get(item.get('kind', 0), 'symbol')} {item.get('name', '?')} - {place}")
        return _with_left_out(lines, left_out, len(found)) or f"No symbol matches {query}."

    def _items(self, items: list[Any], ctx: ToolContext) -> str:
        lines = []
        for item in items[:MOST]:
            if isinstance(item, dict) and (place := self._place(item.get("uri"), _start(item), ctx)):
                lines.append(f"{KINDS.get(item.get('kind', 0), 'symbol')} {item.get('name', '?')} - {place}")
        return "\n".join(lines)

    def _calls(self, calls: list[Any], operation: str, ctx: ToolContext) -> str:
        key = "from" if operation == "incomingCalls" else "to"
        items = [c.get(key) for c in calls if isinstance(c, dict)]
        shown = self._items(items, ctx)
        if not shown:
            return "No callers found." if operation == "incomingCalls" else "It calls nothing the server knows."
        return ("Called from:\n" if operation == "incomingCalls" else "Calls:\n") + shown


def _start(item: dict[str, Any]) -> Any:
    where = item.get("selectionRange", item.get("range", {}))
    return where.get("start", {}) if isinstance(where, dict) else {}


def _with_left_out(lines: list[str], left_out: int, total: int) -> str:
    if left_out:
        lines.append(f"({left_out} in files your Read rules hide or outside any file, left out)")
    if total > MOST:
        lines.append(f"(first {MOST} of {total})")
    return "\n".join(lines)


def _hover(result: Any) -> str:
    contents = result.get("contents") if isinstance(result, dict) else None
    parts = contents if isinstance(contents, list) else [contents]
    texts = []
    for part in parts:
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, dict) and isinstance(part.get("value"), str):
            texts.append(part["value"])
    return "\n\n".join(t.strip() for t in texts if t and t.strip())


def _outline(symbols: list[Any], shown: str, depth: int = 0) -> str:
    lines = []
    for item in symbols[:MOST] if isinstance(symbols, list) else []:
        if not isinstance(item, dict):
            continue
        start = (
            _start(item)
            if "selectionRange" in item or "range" in item
            else item.get("location", {}).get("range", {}).get("start", {})
        )
        line = int(start.get("line", 0)) + 1 if isinstance(start, dict) else 1
        lines.append(f"{'  ' * depth}{KINDS.get(item.get('kind', 0), 'symbol')} {item.get('name', '?')} (line {line})")
        if isinstance(item.get("children"), list) and depth < 6:
            inner = _outline(item["children"], shown, depth + 1)
            if inner:
                lines.append(inner)
    return "\n".join(lines)


def _word_at(text: str, line: int, character: int) -> str:
    lines = text.splitlines()
    if not 0 < line <= len(lines):
        return ""
    row = lines[line - 1]
    at = min(max(character - 1, 0), len(row))
    left = at
    while left > 0 and (row[left - 1].isalnum() or row[left - 1] == "_"):
        left -= 1
    right = at
    while right < len(row) and (row[right].isalnum() or row[right] == "_"):
        right += 1
    return row[left:right]
