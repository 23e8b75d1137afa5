"""Replies without a tool call that are not an answer: judged so the run does not end as "done".

A small local model ends its turn in ways a scripted one never does (measured with
Qwen2.5-Coder-1.5B on llama.cpp): an empty reply, a reply that only repeats the last tool error
("To create a file, use Write."), a tool result it made up itself (`<tool_response>` blocks, a
fenced "output" of a Read), or the changed code printed in the chat instead of written. Each
would end the run with exit 0 and nothing done; each gets one pointed nudge instead.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from arnes.agent.madecalls import is_test_file
from arnes.host.nofollow import read_regular
from arnes.host.paths import absolute, is_inside, resolve_real
from arnes.nesting import json_loads
from arnes.tools.base import ToolContext

EMPTY = (
    "[arnes] Your reply was empty. If the task is done, say in one sentence what you changed; "
    "otherwise call the next tool now."
)
ECHO = (
    "[arnes] Your reply only repeated the last message (a tool error or a note from arnes); that does not "
    "finish the task. Do what the message says (for example Glob or Grep to find the right file, or Read "
    "it), then go on with the task."
)
FAKE = (
    "[arnes] Your reply contains a tool result you wrote yourself; only arnes runs tools, and nothing "
    "ran. Call the tool (one JSON tool call) and wait for its real result."
)
CODE = (
    "[arnes] You answered with code in the chat, but no file was changed: the user's files are as "
    "they were. Call Edit to change part of an existing file (or Write for a new file). If nothing "
    "needs to change, say so in one sentence."
)

# With the call spelled out it comes first and alone: the 1.5B model ignored it at the end of CODE.
CODE_CALL = (
    "[arnes] No file was changed: your reply only shows code. To make that change, send exactly this tool call:\n"
)
CLAIM = (
    "[arnes] No file has been changed in this session, so what your reply says was done did not happen. "
    "If a Write or Edit was refused, read why in its result and send a corrected call now."
)

UNTOUCHED = (
    "[arnes] {files} has not been changed in this session, so what your reply says was done there did not "
    "happen. If it needs the change, make it now with Edit; otherwise say what you changed."
)
# A workspace path in a reply: `shop/cart.py`, cart.py (a name with an extension, no spaces).
_PATHLIKE = re.compile(r"(?<![\w./-])((?:[\w-]+/)*[\w-]+\.[A-Za-z0-9]{1,8})(?![\w/-])")
POINTED = (
    "[arnes] No file was changed: your reply only shows line {line} of {path} as it is now. To change it, "
    "send this call with new_string corrected:\n"
)
AS_IS = (
    "[arnes] That code is what {path} holds now, so your reply changed nothing. If the last message says "
    "something fails, the code shown is the part to change: find the case it gets wrong, then send an Edit "
    "that fixes it. If nothing needs to change, say why in one sentence."
)
DESCRIBED = (
    "[arnes] No file was changed: your reply describes a change, and only a tool call makes one. To make "
    "that change, send exactly this tool call:\n"
)

_FAKE_RESULT = re.compile(r"</?(?:tool_response|tool_result|function_results?|observation)>", re.IGNORECASE)
_FENCED = re.compile(r"```[\w+-]*[ \t]*\n\s*\S")
_ECHO_MIN = 8  # characters: "ok" or "Done." repeat nothing
_ECHO_WORDS = 0.6  # a short reply whose words come this much from the error repeats it
_ECHO_MAX = 300  # characters: a longer reply says something of its own
_WORD = re.compile(r"[a-z0-9_.]+")
# "I changed README.md", "I've updated the file", "has been added": a report that a change was made.
_CLAIM = re.compile(
    r"\b(?:i|i've|i have|we|we've)\s+(?:\w+\s+)?(?:changed|updated|added|modified|created|written|wrote|fixed|"
    r"renamed|replaced|edited|implemented|applied|made the change)\b"
    r"|\b(?:has|have) been (?:changed|updated|added|modified|created|written|fixed|renamed|replaced|edited)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Seen:
    """What the session did to files, for judging a reply; each part is looked up only when needed."""

    ctx: ToolContext

    def changed_any(self) -> bool:
        return bool(self.ctx.changes.changed())

    def files(self) -> dict[str, str]:
        return read_files(self.ctx)

    def unchanged_named(self, text: str) -> list[str]:
        """Workspace files the reply says it changed (named in a clause with "I changed", "I
        updated", ...) that the session has not changed; a file named elsewhere ("the tests in
        test_x.py pass") is not a claim."""
        root = resolve_real(self.ctx.workspace)
        changed = {resolve_real(p) for p in self.ctx.changes.changed()}
        claims = [part for part in re.split(r"(?<=[.;!?])\s+|\n", text) if _CLAIM.search(part)]
        out: list[str] = []
        for name in dict.fromkeys(n for part in claims for n in _PATHLIKE.findall(part)):
            real = resolve_real(root / name)
            if is_inside(root, real) and real.is_file() and real not in changed and not self.ctx.hidden("Read", real):
                out.append(name)
        return out

    def line(self, name: str, number: int) -> str | None:
        """Line `number` of a workspace file the model may read, or None."""
        root = resolve_real(self.ctx.workspace)
        real = resolve_real(root / name)
        if not is_inside(root, real) or self.ctx.hidden("Read", real):
            return None
        try:
            lines = read_regular(real, limit=1_000_000)[0].decode("utf-8").split("\n")
        except (OSError, UnicodeDecodeError):
            return None
        return lines[number - 1].rstrip("\r") if 0 < number <= len(lines) else None

    def held(self) -> str | None:
        path = self.ctx.files.held_write()
        return self.ctx.display(path) if path is not None else None


def unfinished(text: str, last_error: str | None, wrote: bool, can_write: bool, seen: Seen | None = None) -> str | None:
    """The nudge for a tool-less reply that is not an answer, or None when it may end the run.

    With `seen` (the session's files): a reply that reports a change when no file changed
    ("I changed README.md" after its Write was refused) is not an answer, and
    code in the chat is answered with the Edit or Write call that would make it.
    """
    stripped = text.strip()
    if not stripped:
        return EMPTY
    if _FAKE_RESULT.search(stripped):
        return FAKE
    code = can_write and not wrote and _FENCED.search(stripped) is not None
    if code:  # a call that would make the change beats "you repeated the error" (which may show that code)
        call = edit_for(stripped, seen.files()) if seen is not None else None
        held = seen.held() if seen is not None and call is None else None
        call = _suggestable(call or (write_for(stripped, held) if held else None), seen)
        if call:
            return CODE_CALL + call
        pointed = pointed_edit(stripped, seen) if seen is not None else None
        if pointed is not None:
            return pointed
        held_now = shown_as_is(stripped, seen.files()) if seen is not None else None
        if held_now is not None:
            return AS_IS.format(path=held_now)
    if last_error and _echoes(stripped, last_error):
        return ECHO
    if code:
        return CODE
    described = _suggestable(described_edit(stripped, seen.files()), seen) if can_write and seen is not None else None
    if described is not None:
        return DESCRIBED + described
    if can_write and seen is not None and _CLAIM.search(stripped):
        if not seen.changed_any():
            return CLAIM
        untouched = seen.unchanged_named(stripped)
        if untouched:
            return UNTOUCHED.format(files=", ".join(untouched))
    return None


SPELLED = (CODE_CALL, DESCRIBED)  # the nudges that end with a call arnes derived from the reply


def spelled_call(text: str, seen: Seen) -> str | None:
    """The call a CODE_CALL or DESCRIBED nudge would spell out for this reply, if any."""
    stripped = text.strip()
    if _FENCED.search(stripped):
        call = edit_for(stripped, seen.files())
        held = seen.held() if call is None else None
        call = _suggestable(call or (write_for(stripped, held) if held else None), seen)
        if call:
            return call
    return _suggestable(described_edit(stripped, seen.files()), seen)


def _suggestable(call: str | None, seen: Seen | None) -> str | None:
    """A call derived from the reply, unless it would change a test file: what arnes would never
    make for the model (agent/madecalls.py) it does not spell out for it either."""
    if call is None or seen is None:
        return call
    try:
        path = json_loads(call)["arguments"]["file_path"]
    except (ValueError, KeyError, TypeError):
        return call
    workspace = seen.ctx.workspace
    return None if is_test_file(absolute(workspace, str(path)), workspace) else call


def _echoes(text: str, error: str) -> bool:
    """Whether the reply is (mostly) the error's own words: a piece of it, or a short reply whose
    words nearly all come from it ("To make the change, call Edit again, based on this content.")."""
    said = " ".join(text.lower().split()).strip(" .!`\"'")
    if len(said) < _ECHO_MIN:
        return False
    heard = " ".join(error.lower().split())
    if said in heard:
        return True
    words = _WORD.findall(said)
    if len(said) > _ECHO_MAX or len(words) < 4:
        return False
    known = set(_WORD.findall(heard))
    return sum(w in known for w in words) >= _ECHO_WORDS * len(words)


_BLOCK = re.compile(r"```[\w+-]*[ \t]*\n(.*?)(?:```|\Z)", re.DOTALL)
_NUMBER_ONLY = re.compile(r"^\s*\d+\s*$")
_MOST_CHANGED = 3  # lines: a bigger rewrite in the chat is not turned into one Edit
_MOST_WINDOWS = 2000  # places in one file a block could stand: more is no clear place for an Edit
_MOST_BLOCKS = 8  # code blocks of one reply lined up with the files (a longer reply is no small change)
_SIMILAR = 0.6  # a changed line still looks like the line it replaces
_SIMILAR_ALONE = 0.8


def edit_for(text: str, files: Mapping[str, str]) -> str | None:
    """The Edit call that makes the change a reply printed as code, when it is a small one.

    Qwen2.5-Coder-1.5B printed `def add(...):\n    return a + b` in the chat for a
    calc.py that says `return a - b`, then, told to call Edit, answered "The user's files are as
    they were." Small models copy a concrete call well: the block is lined up with the read file
    it is most like, line for line, and when it differs in 1-3 lines that still look like the
    ones they replace (and the old ones occur once in the file), that Edit is spelled out.
    """
    best: tuple[float, str] | None = None
    for block in _BLOCK.findall(text)[:_MOST_BLOCKS]:
        lines = [line.rstrip() for line in block.split("\n") if not _NUMBER_ONLY.match(line)]
        lines = _unnumbered(lines)
        while lines and not lines[-1].strip():
            lines.pop()
        while lines and not lines[0].strip():
            lines.pop(0)
        if not lines or len(lines) > 200:
            continue
        for path, content in files.items():
            found = _aligned(lines, content) or _redefined(lines, content)
            if found is not None and (best is None or found[0] > best[0]):
                old, new = found[1], found[2]
                call = {"name": "Edit", "arguments": {"file_path": path, "old_string": old, "new_string": new}}
                best = (found[0], json.dumps(call))
    return best[1] if best else None


def shown_as_is(text: str, files: Mapping[str, str]) -> str | None:
    """The file whose current text holds the reply's code block line for line (at least two lines),
    or None. A 1.5B model, told its code failed the tests, it printed the same code
    again, and "no file was changed" made it answer "No file was changed."."""
    for block in _BLOCK.findall(text):
        lines = _unnumbered([line.rstrip() for line in block.split("\n")])
        code = "\n".join(lines).strip("\n")
        if code.count("\n") < 1:
            continue
        for path, content in files.items():
            if code in "\n".join(line.rstrip() for line in content.split("\n")):
                return path
    return None


_NUMBERED = re.compile(r"^\s*(\d+)\t(.*)$")


def _unnumbered(lines: list[str]) -> list[str]:
    """Lines printed as Read shows them (`3\t    start = ...`), counting up by one: without the
    numbers. A 1.5B model, told its fix failed the tests, it printed the whole
    file that way, line 3 changed. Anything else comes back as it was."""
    found = [_NUMBERED.match(line) for line in lines if line.strip()]
    if not found or any(m is None for m in found):
        return lines
    numbers = [int(m.group(1)) for m in found if m is not None]
    if numbers != list(range(numbers[0], numbers[0] + len(numbers))):
        return lines
    return [m.group(2).rstrip() if (m := _NUMBERED.match(line)) else line for line in lines]


_HIT = re.compile(r"^((?:[\w.-]+/)*[\w.-]+\.\w+):(\d+):(.*)$")


def pointed_edit(text: str, seen: Seen) -> str | None:
    """The nudge for a reply that only shows a line as Grep found it (`billing/rates.py:2:TAX_RATE
    = 0.12`): that line as an Edit to correct. a 1.5B model printed exactly that,
    was told to call Edit, and said "No changes needed."; it copies a call and changes a part well."""
    blocks = _BLOCK.findall(text)
    lines = [line.strip() for block in blocks for line in block.split("\n") if line.strip()]
    hits = [_HIT.match(line) for line in lines]
    first = hits[0] if hits else None
    if len(blocks) != 1 or first is None or len(hits) > 3 or any(h is None for h in hits):
        return None
    path, number = first.group(1), int(first.group(2))
    line = seen.line(path, number)
    if line is None or line.strip() != first.group(3).strip() or not line.strip():
        return None
    call = {"file_path": path, "old_string": line.strip(), "new_string": line.strip()}
    return POINTED.format(line=number, path=path) + json.dumps({"name": "Edit", "arguments": call})


def write_for(text: str, path: str) -> str | None:
    """The Write of the one code block in a reply, to the file whose Write was just held back.

    a 1.5B model: its YAML for config.json was held back ("not valid JSON"),
    it printed the right JSON in the chat, and, told to call Write, repeated the nudge instead.
    """
    blocks = _BLOCK.findall(text)
    if len(blocks) != 1 or not blocks[0].strip():
        return None
    content = blocks[0].strip("\n") + "\n"
    return json.dumps({"name": "Write", "arguments": {"file_path": path, "content": content}})


def _aligned(block: list[str], content: str) -> tuple[float, str, str] | None:
    """(how well, old lines, new lines) for the file window the block lines up with, or None.

    A window may differ in at most _MOST_CHANGED lines, so one of the block's first
    _MOST_CHANGED + 1 lines is in it unchanged: only windows around those lines are looked at,
    which keeps a long file and a long reply from costing minutes."""
    file_lines = [line.rstrip() for line in content.split("\n")]
    size = len(block)
    best: tuple[float, str, str] | None = None
    starts: Iterable[int] = range(0, len(file_lines) - size + 1)
    if size > _MOST_CHANGED:
        where: dict[str, list[int]] = {}
        for n, line in enumerate(file_lines):
            where.setdefault(line, []).append(n)
        starts = sorted(
            {
                n - k
                for k in range(_MOST_CHANGED + 1)
                for n in where.get(block[k], ())
                if 0 <= n - k <= len(file_lines) - size
            }
        )
        if len(starts) > _MOST_WINDOWS:  # the block's lines repeat all over the file: no one clear place
            return None
    for start in starts:
        window = file_lines[start : start + size]
        changed = [k for k in range(size) if window[k] != block[k]]
        if not changed or len(changed) > _MOST_CHANGED or (len(changed) == size and size > 1):
            continue
        ratios = [difflib.SequenceMatcher(None, window[k].strip(), block[k].strip()).ratio() for k in changed]
        # One changed line alone (`DISCOUNT_RATE = 0.15`) has no unchanged line around it: it must be closer.
        if min(ratios) < (_SIMILAR if size > 1 else _SIMILAR_ALONE):
            continue
        first, last = changed[0], changed[-1] + 1
        old, new = "\n".join(window[first:last]), "\n".join(block[first:last])
        if not old.strip() or content.count(old) != 1:
            continue
        score = (size - len(changed)) / size + min(ratios) / 10
        if best is None or score > best[0]:
            best = (score, old, new)
    return best


_Q = r"[`\"'](.+?)[`\"']"
_DESCRIBED = [
    re.compile(rf"\breplac\w*\s+(?:the\s+\w+\s+|\d+\s+occurrences?\s+of\s+)?{_Q}\s+with\s+{_Q}", re.IGNORECASE),
    re.compile(rf"\bchang\w*\s+(?:the\s+\w+\s+)?{_Q}\s+(?:in\s+\S+\s+)?to\s+{_Q}", re.IGNORECASE),
    re.compile(rf"\bfrom\s+{_Q}\s+to\s+{_Q}", re.IGNORECASE),
]


def described_edit(text: str, files: Mapping[str, str]) -> str | None:
    """The Edit a reply describes in words ("I replaced the line `TAX_RATE = 0.12` with
    `TAX_RATE = 0.21`") when no call made it: the old text stands once in one file read this
    session and the new text is not there yet. a 1.5B model said exactly that
    twice, with no call, and the run ended with the tax still wrong."""
    for pattern in _DESCRIBED:
        for match in pattern.finditer(text):
            old, new = match.group(1).strip(), match.group(2).strip()
            if not old or old == new:
                continue
            holders = [path for path, content in files.items() if content.count(old) == 1 and new not in content]
            if len(holders) == 1 and sum(old in content for content in files.values()) == 1:
                call = {"file_path": holders[0], "old_string": old, "new_string": new}
                return json.dumps({"name": "Edit", "arguments": call})
    return None


_DEF = re.compile(r"^(\s*)(?:async\s+def|def|class)\s+(\w+)\b")


def _redefined(block: list[str], content: str) -> tuple[float, str, str] | None:
    """(score, old definition, new one) when the block is a whole new version of one function or
    class the file defines once: a 1.5B model printed the finished function
    in the chat (its stub raised NotImplementedError) and, told to call Edit, said no file needed
    a change. The file's definition runs from its `def` line to the next line indented as little."""
    head = _DEF.match(block[0])
    if head is None:
        return None
    lines = content.split("\n")
    starts = [i for i, line in enumerate(lines) if (m := _DEF.match(line)) and m.group(2) == head.group(2)]
    if len(starts) != 1:
        return None
    first = starts[0]
    indent = len(_DEF.match(lines[first]).group(1))  # type: ignore[union-attr]
    if indent != len(head.group(1)):  # a method printed at the left margin: not ours to re-indent
        return None
    last = first + 1
    while last < len(lines) and (not lines[last].strip() or len(lines[last]) - len(lines[last].lstrip()) > indent):
        last += 1
    while last > first + 1 and not lines[last - 1].strip():
        last -= 1
    old = "\n".join(line.rstrip() for line in lines[first:last])
    new = "\n".join(block)
    if old == new or content.count("\n".join(lines[first:last])) != 1:
        return None
    return 0.5, "\n".join(lines[first:last]), new


def read_files(ctx: ToolContext, most: int = 20, cap: int = 100_000) -> dict[str, str]:
    """The workspace files the model has read (or written) this session, as text, latest first."""
    root = resolve_real(ctx.workspace)
    out: dict[str, str] = {}
    for real in reversed(ctx.files.seen()):
        if len(out) >= most:
            break
        if not is_inside(root, real) or ctx.hidden("Read", real):
            continue
        try:
            data = read_regular(real, limit=cap + 1)[0]
        except OSError:
            continue
        if len(data) <= cap and b"\0" not in data[:8192]:
            out[Path(real).relative_to(root).as_posix()] = data.decode("utf-8", "replace")
    return out
