"""Glob and Grep on ripgrep (from the `ripgrep` PyPI package): fast, and .gitignore is honoured."""

from __future__ import annotations

import heapq
import itertools
import operator
import os
import re
import stat
import subprocess
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, ConfigDict, Field, field_validator

from arnes.host.nofollow import LinkRefused, open_real
from arnes.host.paths import resolve_real
from arnes.host.ripgrep import NO_IGNORE_DOT, printable, ripgrep
from arnes.permissions.types import Target
from arnes.tools.base import ESSENTIAL, BaseTool, ToolArgs, ToolContext, ToolError
from arnes.tools.rgstream import RgRun, stream_rg

GLOB_LIMIT = 100
# Up to this many matches Glob shows the newest first; past it, the first by path. Newest first
# needs one stat per match, which on 25,000 matches costs as much as ripgrep's whole walk (the
# kernel's stat, ~2 us each here, not Python's): the bounded page then comes in path order.
GLOB_ORDER_CAP = 1000
GREP_LINE_LIMIT = 250
# Lines read past the limit only to say how many more there are; then rg is killed. Few: each
# line rg must still find costs, and "over 100 more" tells the model enough to narrow.
OVERFLOW_LINES = 100
# Search hidden files too (dotfiles are files), but never the repository's internals. Only git's
# ignore files count: a repository's `.ignore`/`.rgignore` could un-hide what the user's
# .git/info/exclude or global excludes hide (ripgrep ranks them above those).
_BASE = ["--no-require-git", "--hidden", NO_IGNORE_DOT, "--color", "never", "--no-messages"]
# Last among the globs: ripgrep lets the last matching glob win, so a caller's `*` cannot re-include .git.
_NO_GIT = ["--glob", "!.git"]


def _run_rg(args: list[str], where: _Root, paths: list[str] | None = None) -> tuple[int, str, str]:
    command = [ripgrep(), *_BASE, *args, *_NO_GIT, "--", *(paths or [where.target])]
    stdin = subprocess.DEVNULL if where.stdin is None else where.stdin
    proc = subprocess.run(
        command, cwd=where.cwd, stdin=stdin, pass_fds=where.keep, capture_output=True, text=True, errors="replace",
        check=False,
    )  # fmt: skip
    return proc.returncode, proc.stdout, proc.stderr


@contextmanager
def _stream(args: list[str], where: _Root, sep: bytes = b"\n") -> Iterator[RgRun]:
    """rg's output record by record (cut at `sep`); rg is killed when the caller stops reading early."""
    command = [ripgrep(), *_BASE, *args, *_NO_GIT, "--", where.target]
    with stream_rg(command, where.cwd, where.stdin, where.keep, sep) as run:
        yield run


@dataclass(frozen=True)
class _Root:
    """Where ripgrep searches: the judged real folder, opened through no link, as its working
    folder (`/proc/self/fd/N`), or the judged real file fed on stdin. ripgrep follows a link
    given as an argument, so it is never given a path that a swap could turn into one."""

    cwd: str
    target: str  # "." or "-" (stdin)
    stdin: int | None = None
    keep: tuple[int, ...] = ()


@contextmanager
def _opened(ctx: ToolContext, root: Path) -> Iterator[_Root]:
    real = ctx.real_of(root) or resolve_real(root)
    try:
        fd = open_real(real, os.O_RDONLY | os.O_NONBLOCK)
    except LinkRefused as exc:
        shown = ctx.display(root)
        raise ToolError(f"{shown} changed after it was judged (a link appeared); nothing was searched.") from exc
    try:
        if stat.S_ISREG(os.fstat(fd).st_mode):
            yield _Root(".", "-", stdin=fd)
        elif _PROC_FD.is_dir():
            yield _Root(f"{_PROC_FD}/{fd}", ".", keep=(fd,))
        else:  # no /proc (macOS): the real path by name; a link swapped in right now is followed
            yield _Root(str(real), ".")
    finally:
        os.close(fd)


_PROC_FD = Path("/proc/self/fd")
_NAME_TYPE = "arnesglob"


def _glob_flags(pattern: str) -> tuple[list[str], bool]:
    """ripgrep flags that keep only files matching `pattern`, and whether ignored files can slip in.

    ripgrep's --glob overrides the ignore rules: whatever it matches is listed even when .gitignore
    excludes it (`*` would list node_modules/ and *.log). A pattern on the file name alone becomes
    a file type, which filters without overriding; a pattern on the path keeps --glob, and then
    the caller drops what an honest listing (`_listed`) does not show.
    """
    name = pattern
    while name.startswith("**/"):
        name = name[3:]
    if name and "/" not in name and ":" not in name and not name.startswith("!"):
        return ["--type-add", f"{_NAME_TYPE}:{name}", "--type", _NAME_TYPE], False
    return ["--glob", pattern], True


def _listed(where: _Root) -> set[str]:
    """The files ripgrep searches there (ignore rules applied), as it prints them (decoded as the
    stream decodes them). Cut at NUL: a name "x\\n./config/local.yml" must not list the ignored
    ./config/local.yml."""
    _, out, _ = _run_rg(["--files", "--null"], where)
    return set(out.split("\0"))


def _shown_under(ctx: ToolContext, root: Path, real_root: Path, tool: str) -> Callable[[str], tuple[str, str] | None]:
    """rg's path (relative to the root it ran in) -> (the name shown, the real path), or None when
    it must not show.

    A hit is shown when no link stands on its way now and no rule hides it, judged on the real
    path and, when the root was reached through a link, on the path as written too. Strings, not
    Paths: this runs once per file listed.
    """
    base, shown_root = str(real_root), ctx.display(root)
    prefix = "" if shown_root == "." else shown_root.rstrip("/") + "/"

    def shown(printed: str) -> tuple[str, str] | None:
        rel = printed[2:] if printed.startswith("./") else printed
        if rel in ("<stdin>", "-", ""):
            return (shown_root, base) if ctx.listable(tool, base) else None
        real = f"{base.rstrip('/')}/{rel}"
        if not ctx.listable(tool, real):
            return None
        if root != real_root and ctx.hidden(tool, root / rel):
            return None
        # A name holding a line break is shown escaped: printed raw it would read as two names.
        return prefix + (rel if printable(rel) else rel.encode("unicode_escape").decode("ascii")), real

    return shown


def _search_root(ctx: ToolContext, path: str | None) -> tuple[Path, str]:
    root = ctx.path(path or ".")
    if not root.exists():
        from arnes.tools.nearest import nearest_files

        hint = nearest_files(ctx, root)
        raise ToolError(f"Path does not exist: {ctx.display(root)}.{hint} Use Glob to find the right folder.")
    return root, ctx.display(root)


class GlobArgs(ToolArgs):
    pattern: str = Field(description="Glob, e.g. **/*.py or src/*.ts.")
    path: str | None = Field(None, description="Folder to search in; default the workspace.")


class Glob(BaseTool[GlobArgs]):
    name = "Glob"
    description = f"Find files by glob: newest first, by path past {GLOB_ORDER_CAP:,}. Honours .gitignore."
    args_model = GlobArgs
    read_only = True

    def targets(self, args: GlobArgs, ctx: ToolContext) -> list[Target]:
        return [Target(ctx.path(args.path or "."), "read")]

    def run(self, args: GlobArgs, ctx: ToolContext) -> str:
        root, shown = _search_root(ctx, args.path)
        if root.is_file():
            raise ToolError(f"{shown} is a file; Glob needs a folder as path.")
        select, leaky = _glob_flags(args.pattern)
        real_root = ctx.real_of(root) or resolve_real(root)
        with _opened(ctx, root) as where:
            listed = _listed(where) if leaky else None
            with _stream(["--files", "--null", *select], where, b"\0") as run:
                judge = _counted(ctx, root, real_root, self.name)
                hits = _newest(run.lines(), listed, judge, GLOB_LIMIT, order_cap=GLOB_ORDER_CAP)
            if run.code == 2 and not hits.total:
                raise ToolError(f"Glob failed: {run.err.strip() or 'bad pattern'}. Check the pattern syntax.")
        lines = hits.shown(_shown_under(ctx, root, real_root, self.name), GLOB_LIMIT)
        if not lines:
            return f"No files match {args.pattern!r} in {_where(shown)}."
        if hits.more:
            order = f", listed by path: over {GLOB_ORDER_CAP:,} match" if hits.by_path else ""
            lines.append(f"... ({hits.more} more{order}; use a narrower pattern or path)")
        return "\n".join(lines)


@dataclass
class _Newest:
    """The newest hits (path as rg printed it, real path), and how many were counted in all."""

    top: list[tuple[str, str]]
    total: int
    more: int = 0
    by_path: bool = False  # more hits than the order cap: the first by path, not the newest

    def shown(self, name_of: Callable[[str], tuple[str, str] | None], limit: int, skip: int = 0) -> list[str]:
        """The names of the newest `limit` hits that pass the full check (links and rules) now,
        after the first `skip` of those (Grep's `offset`)."""
        names: list[str] = []
        examined = 0
        for printed, _ in self.top:
            if len(names) == limit + skip:
                break
            examined += 1
            hit = name_of(printed)
            if hit is not None:
                names.append(hit[0])
        self.more = self.total - examined
        return names[skip:]


def _newest(
    printed: Iterable[str], listed: set[str] | None, judge: _Judge, limit: int, order_cap: int | None = None
) -> _Newest:
    """Every hit counted, only the newest kept: memory stays flat however many files match.

    Links are judged later, on the few shown (each costs an lstat per folder on its way); the
    rules, a compiled pattern, are held against every hit so what they hide is not even counted
    (with no rule, nothing is checked, and the hits pass through C-level filters only). Newest
    first costs one stat per hit beyond rg's own walk: past `order_cap` hits none is stat'ed and
    the first by path are kept instead (Glob: 25,000 stats cost as much as rg's walk; reading
    them in threads, relative to an opened folder, or with `rg --sortr modified` was no faster).
    Twice the limit is kept so hits dropped for a link still leave a full page."""
    hits: Iterator[str] = filter(None, printed)
    if listed is not None:
        hits = filter(listed.__contains__, hits)
    if judge.hides is not None:
        hits = itertools.filterfalse(judge.hides, hits)
    counter = itertools.count()  # how many hits passed, counted in C: next(counter) once they are read
    hits = map(operator.itemgetter(0), zip(hits, counter, strict=False))
    first = list(itertools.islice(hits, order_cap)) if order_cap is not None else []
    extra = next(hits, None) if order_cap is not None else None
    if extra is None:  # within the cap (or none): the newest first, streamed through a heap
        dated = ((_mtime(judge.real(line)), line) for line in itertools.chain(first, hits))
        top = heapq.nlargest(2 * limit, dated)
        return _Newest([(line, judge.real(line)) for _, line in top], next(counter))
    smallest = heapq.nsmallest(2 * limit, itertools.chain(first, [extra], hits))
    return _Newest([(line, judge.real(line)) for line in smallest], next(counter), by_path=True)


@dataclass(frozen=True)
class _Judge:
    """rg's path -> its real path; and whether a rule hides it (None when no rule can: rules
    only, links are judged on what is shown)."""

    real: Callable[[str], str]
    hides: Callable[[str], bool] | None


def _counted(ctx: ToolContext, root: Path, real_root: Path, tool: str) -> _Judge:
    """The judge of the hits under `root`. With no read rule at all, nothing is held against any rule."""
    base = str(real_root).rstrip("/")

    def real(printed: str) -> str:
        rel = printed[2:] if printed.startswith("./") else printed
        return base if rel in ("<stdin>", "-", "") else f"{base}/{rel}"

    if not ctx.read_rules():
        return _Judge(real, None)

    def hides(printed: str) -> bool:
        rel = printed[2:] if printed.startswith("./") else printed
        return ctx.rule_hides(tool, real(printed)) or (root != real_root and ctx.hidden(tool, root / rel))

    return _Judge(real, hides)


def _mtime(path: Path | str) -> float:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return 0.0


# Claude Code's Grep arguments, under its names (`-i`, `-A`, `type`, ...): models trained on it send
# exactly these. Every key costs tokens on every request, so the new ones carry few words.
class GrepArgs(ToolArgs):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    pattern: str = Field(description="Regular expression (ripgrep syntax).")
    path: str | None = Field(None, description="File or folder to search; default the workspace.")
    glob: str | None = Field(None, description="Only files matching this glob, e.g. *.py.")
    file_type: str | None = Field(None, alias="type", description="ripgrep file type, e.g. py, js.")
    output_mode: Literal["files_with_matches", "content", "count"] = Field(
        "files_with_matches", description="content shows matching lines", json_schema_extra=ESSENTIAL
    )
    case_insensitive: bool = Field(False, alias="-i", description="Ignore case.")
    line_numbers: bool = Field(True, alias="-n", description="Line numbers (content mode).")
    after: int | None = Field(None, alias="-A", description="Lines after each match.")
    before: int | None = Field(None, alias="-B", description="Lines before each match.")
    # `context` is arnes's name from before it took Claude Code's `-C`: old scripts still run.
    context: int | None = Field(
        None, validation_alias=AliasChoices("-C", "context"), description="Lines around each match."
    )
    # None, not False: a default in the schema costs tokens and says nothing.
    multiline: bool | None = Field(None, description="Let . match newlines.")
    head_limit: int | None = Field(None, description="At most this many lines (0: all).")
    offset: int | None = Field(None, description="Skip this many lines first.")

    @field_validator("after", "before", "context", "head_limit", "offset")
    @classmethod
    def _not_negative(cls, value: int | None) -> int | None:
        if value is not None and value < 0:
            raise ValueError("must be 0 or more")
        return value


class Grep(BaseTool[GrepArgs]):
    name = "Grep"
    description = "Search file contents with a regex (ripgrep); lists matching files unless output_mode says otherwise."
    args_model = GrepArgs
    read_only = True

    def targets(self, args: GrepArgs, ctx: ToolContext) -> list[Target]:
        return [Target(ctx.path(args.path or "."), "read")]

    def run(self, args: GrepArgs, ctx: ToolContext) -> str:
        root, where_shown = _search_root(ctx, args.path)
        one_file = root.is_file() and args.output_mode == "files_with_matches"
        if one_file:
            # Listing the one file searched says only yes or no: Qwen2.5-Coder-1.5B got
            # `billing/rates.py` back for `tax rate` in billing/rates.py, twice, and never saw the line.
            plain = {"context": None, "before": None, "after": None, "head_limit": None, "offset": None}
            args = args.model_copy(update={"output_mode": "content", **plain})
        lines, more, exact = self._search(args, ctx, root, args.pattern, args.case_insensitive)
        if one_file and lines:
            lines.insert(0, f"[arnes: {where_shown} is one file, so its matching lines are shown]")
        if not lines:
            loose = _loose_pattern(args.pattern)
            if loose is not None and args.case_insensitive and loose == args.pattern.strip():
                loose = None  # already searched ignoring case: the same search again finds nothing new
            found = self._search(args, ctx, root, loose, True) if loose else ([], 0, True)
            note = (
                f"[arnes: no exact match for {args.pattern!r}; these match it ignoring case, "
                f"with _ or - for spaces ({loose!r} -i):]"
            )
            literal = _literal_pattern(args.pattern) if not found[0] else None
            if literal is not None:
                found = self._search(args, ctx, root, literal, args.case_insensitive)
                note = f"[arnes: no match for {args.pattern!r} as a regular expression; these match it as plain text:]"
            if not found[0]:
                past = f" past offset {args.offset}" if args.offset else ""
                return f"No matches for {args.pattern!r} in {_where(where_shown)}{past}."
            lines, more, exact = found
            lines.insert(0, note)
        body = "\n".join(lines)
        if more:
            many = f"{more}" if exact else f"over {more}"
            if args.offset or args.head_limit == 0:
                shown = sum(1 for line in lines if not line.startswith("[arnes: "))
                body += f"\n... ({many} more lines; the next ones from offset {(args.offset or 0) + shown})"
            else:
                body += f"\n... ({many} more lines; narrow the search or raise head_limit)"
        return body

    def _search(
        self, args: GrepArgs, ctx: ToolContext, root: Path, pattern: str, case_insensitive: bool
    ) -> tuple[list[str], int, bool]:
        """One ripgrep run: the lines shown, how many more, whether that count is exact."""
        flags = _grep_flags(args, case_insensitive)
        leaky = False
        if args.glob:
            # With a type, the glob stays a ripgrep --glob, as Claude Code passes both: the glob
            # then decides alone (ripgrep's rule). A glob made a type would widen the type instead.
            select, leaky = (["--glob", args.glob], True) if args.file_type else _glob_flags(args.glob)
            flags += select
        real_root = ctx.real_of(root) or resolve_real(root)
        # head_limit 0 is Claude Code's "no limit": as many lines as the tool's output can hold.
        budget = ctx.max_output_chars if args.head_limit == 0 else None
        limit = budget // 2 if budget is not None else args.head_limit or GREP_LINE_LIMIT
        skip = args.offset or 0
        with _opened(ctx, root) as where:
            listed = _listed(where) if leaky and where.stdin is None else None
            sep = b"\0" if args.output_mode == "files_with_matches" else b"\n"
            with _stream([*flags, "--regexp", pattern], where, sep) as run:
                if args.output_mode == "files_with_matches":
                    judge = _counted(ctx, root, real_root, self.name)
                    hits = _newest(run.lines(), listed, judge, limit + skip)
                    lines = hits.shown(_shown_under(ctx, root, real_root, self.name), limit, skip)
                    lines, cut = _fit(lines, budget)
                    more, exact = hits.more + cut, True
                else:
                    keep = self._keeper(ctx, root, real_root, listed)
                    printed = _filter_output(run.lines(), args.output_mode, keep)
                    lines, more, exact = _first_lines(printed, limit, skip, budget)
            if run.code == 2 and not lines:
                why = run.err.strip() or "bad pattern"
                if "unrecognized file type" in why:
                    raise ToolError(f"Grep failed: {why}. Give a ripgrep type (py, js, ts, rust, go, ...) or use glob.")
                raise ToolError(f"Grep failed: {why}. Check the regular expression.")
        return lines, more, exact

    def _keeper(
        self, ctx: ToolContext, root: Path, real_root: Path, listed: set[str] | None
    ) -> Callable[[str], str | None]:
        """rg's path -> the name to show, when not ignored by .gitignore, behind no link and
        covered by no Read deny or ask rule; judged once per file."""
        shown = _shown_under(ctx, root, real_root, self.name)
        names: dict[str, str | None] = {}

        def keep(path: str) -> str | None:
            if path not in names:
                hit = shown(path) if listed is None or path in listed else None
                names[path] = None if hit is None else hit[0]
            return names[path]

        return keep


def _grep_flags(args: GrepArgs, case_insensitive: bool) -> list[str]:
    """ripgrep's flags for the arguments but the glob (which needs the folder to judge)."""
    flags = ["-i"] if case_insensitive else []
    if args.multiline:
        flags += ["--multiline", "--multiline-dotall"]
    if args.file_type:
        flags.append(f"--type={args.file_type}")  # one word: a type starting with - is no flag
    # --null: a NUL ends each path, so a name holding a newline is told from the next record.
    if args.output_mode == "files_with_matches":
        flags += ["--files-with-matches", "--null"]
    elif args.output_mode == "count":
        flags += ["--count", "--null"]
    else:
        flags.append("--line-number" if args.line_numbers else "--no-line-number")
        # A NUL after each field marks where the path ends; it is taken out again below.
        flags += ["--field-match-separator", r"\x00:", "--field-context-separator", r"\x00-"]
        # As Claude Code: -C, when given, decides both sides; else -B and -A each their own.
        if args.context is not None:
            flags += ["--context", str(args.context)]
        else:
            flags += ["--before-context", str(args.before)] if args.before is not None else []
            flags += ["--after-context", str(args.after)] if args.after is not None else []
    flags.append("--with-filename")
    return flags


def _fit(lines: list[str], budget: int | None) -> tuple[list[str], int]:
    """The first lines that fit in `budget` characters, and how many did not."""
    if budget is None:
        return lines, 0
    size = 0
    for i, line in enumerate(lines):
        size += len(line) + 1
        if size > budget:
            return lines[:i], len(lines) - i
    return lines, 0


def _first_lines(
    printed: Iterable[str], limit: int, skip: int = 0, budget: int | None = None
) -> tuple[list[str], int, bool]:
    """The `limit` lines after the first `skip`, how many more, and whether that count is exact:
    past the limit (or `budget` characters) at most OVERFLOW_LINES more are read (to count
    them), then reading stops and rg dies."""
    lines: list[str] = []
    more = size = 0
    for line in itertools.islice(printed, skip, None):
        if not more and len(lines) < limit and (budget is None or size + len(line) < budget):
            if lines or line != "--":  # a page never starts on a group separator
                lines.append(line)
                size += len(line) + 1
            continue
        more += 1
        if more >= OVERFLOW_LINES:
            break
    while lines and lines[-1] == "--":  # a group separator the cap left at the end
        lines.pop()
    return lines, more, more < OVERFLOW_LINES


def _filter_output(printed: Iterable[str], mode: str, keep: Callable[[str], str | None]) -> Iterator[str]:
    """The output of files `keep` names, each under that name, NULs taken out; a `--` between
    context groups only where kept lines stand on both sides of it.

    Every line rg writes here has a NUL after its path, but the `--` between groups. A line with
    no NUL is the start of a path holding a newline: it is joined (with that newline) to what
    follows up to the next NUL, so the whole real path is judged, never its last piece."""
    started = pending = False
    broken: str | None = None  # the pieces so far of a path cut at a newline
    for line in printed:
        if "\0" not in line:
            if broken is not None:
                broken += "\n" + line
            elif line == "--":  # the separator between context groups
                pending = started
            elif line:
                broken = line
            continue
        path, nul, rest = line.partition("\0")
        if broken is not None:
            path, broken = broken + "\n" + path, None
        rest = ":" + rest if mode == "count" else nul + rest
        name = keep(path)
        if name is None:
            continue
        if pending:
            pending = False
            yield "--"
        started = True
        yield (name + rest).replace("\0", "")


def _loose_pattern(pattern: str) -> str | None:
    """`tax rate` as `tax[ _-]?rate`, for a search in words that found nothing; None for a real regex.

    Small models search in words ("tax rate") where code has identifiers (`TAX_RATE`); the
    literal finds nothing and the model gives up or guesses. Only plain words are loosened.
    """
    if not re.fullmatch(r"\w+(?:[ _-]+\w+)*", pattern.strip()):
        return None
    return "[ _-]?".join(re.escape(word) for word in re.split(r"[ _-]+", pattern.strip()))


_META = set("\\.+*?()|[]{}^$#&-~")  # what ripgrep's regex syntax lets (and needs) a backslash escape


def _literal_pattern(pattern: str) -> str | None:
    """The pattern as plain text, when it has regex characters; else None.

    Qwen2.5-Coder-1.5B: Grep `def add(a: int, b: int) -> int` found nothing in
    the file holding that very line (the parentheses are a group), and it Grepped again and again.
    """
    if not any(c in _META for c in pattern):
        return None
    return "".join(f"\\{c}" if c in _META else c for c in pattern)


def _where(shown: str) -> str:
    return "the workspace" if shown == "." else shown
