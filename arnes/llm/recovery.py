"""Recover tool calls that a local model printed as text instead of structured calls.

Qwen2.5-Coder and its friends, on llama.cpp and Ollama, almost never return a native `tool_calls`
field: they print `<tool_call>{...}</tool_call>`, `<tools>...</tools>`, a fenced ```json block,
doubled braces `{{...}}}`, a call followed by a sentence, arguments as a JSON string, or Python's
`\"\"\"` inside a JSON string. Absorbing those quirks is the harness's job, not the user's.

A block that clearly tries to be a call but cannot be read becomes an *unreadable* call (its input
holds `UNREADABLE` and `REASON`): the loop answers it with a parse error the model can fix, instead
of taking the text as the final answer. Prose that merely shows JSON is left alone.
"""

from __future__ import annotations

import ast
import json
import re
import uuid
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from arnes.messages import ToolCall
from arnes.nesting import MAX_DEPTH, within

UNREADABLE = "__invalid_json__"  # the registry answers a call carrying this key with a parse error
REASON = "__reason__"

_TAG = r"(?:tool_call|tools?|function_?call)"
_BLOCK = re.compile(rf"<{_TAG}>(.*?)(?:</{_TAG}>|(?=<{_TAG}>)|\Z)", re.DOTALL)
_FUNCTION = re.compile(r"<function=([\w.-]+)>(.*?)(?:</function>|(?=<function=)|(?=</?tool_call>)|\Z)", re.DOTALL)
_PARAMETER = re.compile(r"<parameter=([\w.-]+)>\n?(.*?)\n?(?:</parameter>|(?=<parameter=)|\Z)", re.DOTALL)
_FENCE = re.compile(r"```[\w-]*[ \t]*\n(.*?)(?:```|\Z)", re.DOTALL)
_BARE = re.compile(r"[\[{]\s*\{?\s*[\"'](?:name|function|type)[\"']\s*:")
_LOOKS = re.compile(
    r"^[\[{]\s*\{?\s*[\"']name[\"']\s*:\s*[\"'][\w.-]+[\"']\s*,\s*[\"'](?:arguments|parameters)[\"']\s*:"
)
_NAME = re.compile(r"[\"']name[\"']\s*:\s*[\"']([\w.-]+)[\"']")
_ARG_KEYS = ("arguments", "parameters", "input", "args")
_PLAIN_KEYS = {"name", "id", "type", *_ARG_KEYS}


@dataclass(frozen=True)
class Recovered:
    """One call found in the text: real arguments, or the UNREADABLE marker and why."""

    name: str
    input: dict[str, Any]


def cut_input(raw: str, cap: int) -> dict[str, Any]:
    """The input of a call cut off by the output cap: it does not run, and the model learns why."""
    why = (
        f"the reply was cut off at the output limit ({cap} tokens) or the end of the context window before "
        "this call was complete, so it did not run. Make it shorter: write a long file in parts (Write the "
        "first part, then Edit to add the rest)"
    )
    return {UNREADABLE: raw, REASON: why}


def cut_call(call: ToolCall, cap: int) -> ToolCall:
    """The last call of a cut reply is where the cut fell: it does not run, the model learns why.

    Even when its JSON could be closed, the arguments may miss what came after the cut.
    """
    raw = call.input.get(UNREADABLE)
    return ToolCall(call.id, call.name, cut_input(str(raw) if raw is not None else json.dumps(call.input), cap))


def cut_in_last(calls: list[ToolCall], from_text: bool) -> bool:
    """Whether a reply cut at the output cap was cut inside its last call.

    A native call's arguments stream in pieces, so the last one is cut. A call read from text
    that parsed is whole (a cut string never parses): the cap fell after it. Qwen2.5-Coder-1.5B
    on rename printed the same whole Edit 52 times until the cap; the one it meant must run,
    not come back as "cut off".
    """
    return not from_text or UNREADABLE in calls[-1].input


def call_id() -> str:
    """A fresh id for a call the server did not number: every call needs its own."""
    return "call_" + uuid.uuid4().hex[:12]


def parse_arguments(raw: str) -> dict[str, Any]:
    """A call's arguments string as an object; else the UNREADABLE marker, kept for the model to fix."""
    text = raw.strip() or "{}"
    value, error = _loads(text, not _span(text, 0)[1])
    if error is None and isinstance(value, dict):
        return value
    return {UNREADABLE: raw, REASON: error or "its arguments must be a JSON object"}


def split_tool_calls(text: str, known_tools: Collection[str]) -> tuple[str, list[Recovered]]:
    """(prose, calls) found in the text; (text, []) when it holds no call and nothing like one."""
    found = _found(text, known_tools)
    if not any(block for _, _, block in found):
        return text, []
    found.sort(key=lambda item: item[0])
    prose, last = [], 0
    for start, end, _ in found:
        prose.append(text[last:start])
        last = max(last, end)
    prose.append(text[last:])
    cleaned = re.sub(r"\n{3,}", "\n\n", "".join(prose)).strip()
    unique: list[Recovered] = []
    for call in (call for _, _, calls in found for call in calls):
        if call not in unique:  # a small model repeating itself never means to run a call twice
            unique.append(call)
    return cleaned, unique


RUNAWAY_TAIL = 400  # characters after the last whole call, holding no other call: the model plays the tool
_NEXT_CALL = re.compile(rf"<{_TAG}>|<function=|```[\w-]*[ \t]*\n\s*[\[{{]|{_BARE.pattern}")


def runaway(text: str, known_tools: Collection[str]) -> int | None:
    """Where a streamed reply should have stopped: the end of its last readable call, once the
    model has written RUNAWAY_TAIL characters after it that start no other call; else None.

    Qwen2.5-Coder-1.5B printed a Read call, then 2,048 tokens of a made-up result for it (three
    minutes on a CPU, then the output cap); what follows a call is the tool's to say. Calls after
    calls (a plan of several) and a short sentence after a call are left alone.
    """
    ends = [
        end for _, end, calls in _found(text, known_tools) if calls and not any(UNREADABLE in c.input for c in calls)
    ]
    if not ends:
        return None
    end = max(ends)
    tail = text[end:]
    if len(tail) < RUNAWAY_TAIL or _NEXT_CALL.search(tail):
        return None
    return end


def _found(text: str, known_tools: Collection[str]) -> list[tuple[int, int, list[Recovered]]]:
    """(start, end, calls) of every block in the text that is, or tries to be, a call."""
    found: list[tuple[int, int, list[Recovered]]] = []
    for match in _BLOCK.finditer(text):
        found.append((match.start(), match.end(), _read_block(match.group(1), known_tools)))
    taken = [(s, e) for s, e, _ in found]
    for match in _FUNCTION.finditer(text):  # Llama 3.1 and Qwen3-Coder, outside <tool_call> tags
        if not _overlaps(match.start(), match.end(), taken):
            found.append((match.start(), match.end(), _read_functions(match.group(0))))
            taken.append((match.start(), match.end()))
    for match in _FENCE.finditer(text):
        if _overlaps(match.start(), match.end(), taken):
            continue
        calls, end = _read_fence(match.group(1), known_tools), match.end()
        if calls and all(UNREADABLE in c.input for c in calls):
            calls, end = _past_inner_fence(text, match.start(1), known_tools) or (calls, end)
        if calls:
            found.append((match.start(), end, calls))
            taken.append((match.start(), end))
    pos = 0
    while (bare := _BARE.search(text, pos)) is not None:
        start = bare.start()
        if _overlaps(start, start + 1, taken):
            pos = start + 1
            continue
        end, closed = _span(text, start)
        read = _read_one(text[start:end], known_tools, strong=False, unclosed=not closed)
        if read is None:
            pos = start + 1
            continue
        end = _swallow_braces(text, end)
        found.append((start, end, read))
        taken.append((start, end))
        pos = end
    return found


def _overlaps(start: int, end: int, spans: list[tuple[int, int]]) -> bool:
    return any(start < e and s < end for s, e in spans)


def _read_block(body: str, known: Collection[str]) -> list[Recovered]:
    """Inside <tool_call> tags every object is meant as a call: unreadable ones are reported."""
    inner = body.strip()
    fence = _FENCE.match(inner)
    if fence:
        inner = fence.group(1).strip()
    if not inner:
        return []
    if inner.startswith("<function="):
        return _read_functions(inner)
    calls: list[Recovered] = []
    pos = 0
    while pos < len(inner):
        while pos < len(inner) and inner[pos] in " \t\r\n,":
            pos += 1
        if pos >= len(inner) or inner[pos] not in "{[":
            break
        end, closed = _span(inner, pos)
        calls += _read_one(inner[pos:end], known, strong=True, unclosed=not closed) or []
        pos = _swallow_braces(inner, end)
    if not calls:
        return [_unreadable(inner, "it is not a JSON object with a name and arguments")]
    return calls


def _read_functions(body: str) -> list[Recovered]:
    """`<function=Write><parameter=file_path>a.py</parameter>...</function>`, or JSON inside the tag.

    Parameter values stay text: the tool's argument model turns "10" or "true" into its type.
    """
    calls: list[Recovered] = []
    for match in _FUNCTION.finditer(body):
        name, inner = match.group(1), match.group(2).strip()
        if inner.startswith("{"):
            calls.append(Recovered(name, parse_arguments(inner)))
        else:
            calls.append(Recovered(name, {p.group(1): p.group(2) for p in _PARAMETER.finditer(inner)}))
    return calls


def _read_fence(body: str, known: Collection[str]) -> list[Recovered]:
    """A fenced block is a call only when what it holds is call-shaped; code stays prose."""
    inner = body.strip()
    if not inner.startswith(("{", "[")):
        return []
    calls: list[Recovered] = []
    pos = 0
    while pos < len(inner) and inner[pos] in "{[":
        end, closed = _span(inner, pos)
        found = _read_one(inner[pos:end], known, strong=False, unclosed=not closed)
        if found is None:
            return []
        calls += found
        pos = _swallow_braces(inner, end)
        while pos < len(inner) and inner[pos] in " \t\r\n,":
            pos += 1
    return calls if pos >= len(inner) else []


def _past_inner_fence(text: str, body: int, known: Collection[str]) -> tuple[list[Recovered], int] | None:
    """A fenced call whose JSON string holds a fence of its own (a README's ```bash example).

    The fence pattern ends at the inner ```, cutting the call; the value's own span, read over
    the whole text, ends where the call does. The fence that closes the block after it is swallowed.
    """
    while body < len(text) and text[body] in " \t\r\n":
        body += 1
    end, closed = _span(text, body)
    if not closed:
        return None
    calls = _read_fence(text[body:end], known)
    if not calls or any(UNREADABLE in c.input for c in calls):
        return None
    pos = end
    while pos < len(text) and text[pos] in " \t\r\n}":
        pos += 1
    return calls, pos + 3 if text.startswith("```", pos) else end


def _read_one(chunk: str, known: Collection[str], *, strong: bool, unclosed: bool) -> list[Recovered] | None:
    """One JSON value (or a list of calls) as calls; None when it is not meant as one."""
    value, error = _loads(chunk, unclosed)
    if error is None:
        items = value if isinstance(value, list) else [value]
        calls = [_as_call(item, known, strong) for item in items]
        if calls and all(c is not None for c in calls):
            return [c for c in calls if c is not None]
        return [_unreadable(chunk, "it is not a JSON object with a name and arguments")] if strong else None
    if strong or _LOOKS.match(chunk):
        return [_unreadable(chunk, error)]
    return None


def _as_call(obj: Any, known: Collection[str], strong: bool) -> Recovered | None:
    if not isinstance(obj, dict):
        return None
    if isinstance(obj.get("function"), dict):
        obj = obj["function"]
    name = obj.get("name")
    if not isinstance(name, str) or not name:
        return None
    key = next((k for k in _ARG_KEYS if k in obj), None)
    if key is None:
        if name not in known:  # {"name": "my-package", "version": ...} is data, not a call
            return None
        args: Any = {k: v for k, v in obj.items() if k not in _PLAIN_KEYS}
    else:
        if not strong and not set(obj) <= _PLAIN_KEYS:
            return None
        args = obj[key]
    if isinstance(args, str):
        raw = args.strip() or "{}"
        parsed, error = _loads(raw, not _span(raw, 0)[1])
        if error is not None:
            return Recovered(name, {UNREADABLE: args, REASON: f"its arguments are a string that is not JSON: {error}"})
        args = parsed
    if args is None:
        args = {}
    if not isinstance(args, dict):
        return Recovered(name, {UNREADABLE: json.dumps(args), REASON: "its arguments must be a JSON object"})
    return Recovered(name, args)


def _unreadable(chunk: str, reason: str) -> Recovered:
    match = _NAME.search(chunk)
    return Recovered(match.group(1) if match else "", {UNREADABLE: chunk, REASON: reason})


def _loads(chunk: str, unclosed: bool) -> tuple[Any, str | None]:
    """The value, repaired if it must be; else (None, why it could not be read)."""
    first_error: str | None = None
    bases = [chunk.strip()]
    while bases[-1].startswith("{{") and bases[-1].endswith("}}"):
        bases.append(bases[-1][1:-1].strip())  # {{"name": ..., "arguments": {...}}}
    if unclosed:
        bases += [chunk.rstrip() + "}" * n for n in (1, 2)]
    for base in bases:
        for fixed in (base, _escape_inner_triples(base), _triple_values(base)):
            try:
                value, end = json.JSONDecoder(strict=False).raw_decode(fixed)
            except json.JSONDecodeError as exc:
                first_error = first_error or f"{exc.msg} (line {exc.lineno}, column {exc.colno})"
                continue
            except (RecursionError, ValueError):  # nested past Python's limit, a 5000-digit number
                first_error = first_error or "nested too deep, or a number too long"
                continue
            if not within(value):
                first_error = first_error or f"nested more than {MAX_DEPTH} levels deep"
                continue
            if fixed[end:].strip(" \t\r\n}") == "":
                return value, None
    if "'" in chunk:  # {'name': 'Read', 'arguments': {...}}: a Python literal, read safely
        try:
            literal = ast.literal_eval(chunk.strip())
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            pass
        else:
            if within(literal):
                return literal, None
    if unclosed:
        return None, 'it ends before its closing brace (cut off, or a quote inside a string not written as \\")'
    return None, f"not valid JSON: {first_error}"


def _escape_inner_triples(text: str) -> str:
    """`"def f():\\n    \"\"\"Doc.\"\"\""` written without escaping the inner quotes."""
    return text.replace('"""', '\\"\\"\\"')


def _triple_values(text: str) -> str:
    """`"content": \"\"\"...\"\"\"` (a Python triple-quoted string as a value) -> a JSON string."""
    return re.sub(r'(:\s*)"""(.*?)"""', lambda m: m.group(1) + json.dumps(m.group(2)), text, flags=re.DOTALL)


def _span(text: str, start: int) -> tuple[int, bool]:
    """Where the bracketed value starting at `start` ends, and whether it closes at all.

    Strings are skipped; a triple quote inside a string is taken as content, and `\"\"\"` outside
    one opens a Python triple-quoted string, so code in arguments does not confuse the count.
    """
    depth, i, n = 0, start, len(text)
    while i < n:
        ch = text[i]
        if text.startswith('"""', i):
            close = text.find('"""', i + 3)
            i = n if close < 0 else close + 3
            continue
        if ch == '"':
            i += 1
            while i < n:
                if text[i] == "\\":
                    i += 2
                    continue
                if text.startswith('"""', i):
                    i += 3
                    continue
                if text[i] == '"':
                    break
                i += 1
        elif ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
            if depth <= 0:
                return i + 1, True
        i += 1
    return n, False


def _swallow_braces(text: str, end: int) -> int:
    """Skip the stray `}` a doubled-brace call leaves behind."""
    while end < len(text) and text[end] == "}":
        end += 1
    return end
