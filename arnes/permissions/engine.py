"""The rule engine: deny > ask > allow over every source, then the perimeter, then the mode.

Paths are judged twice, as written and as their real path: a deny or an ask that matches either
form applies; an allow must match both; the perimeter looks at the real path alone. Deny and ask
rules match case-insensitively (on a case-insensitive disk `.ENV` is `.env`); allow rules do not.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from arnes.host.paths import inside_str, is_inside, real_path, resolve_real
from arnes.permissions.gitstore import MESSAGE as GIT_STORE
from arnes.permissions.gitstore import git_store, named_store
from arnes.permissions.globmatch import LinearGlob, needs_linear
from arnes.permissions.protected import (
    ANY_DEPTH,
    TOP_LEVEL_FILES,
    claude_json_path,
    claude_user_dir,
    grant_file,
    protected_outside,
    protected_part,
    user_config_dir,
)
from arnes.permissions.rules import (
    CommandPattern,
    Rule,
    RuleError,
    RuleKind,
    SourcedRule,
    anchor,
    parse_rule,
    path_regex,
    split_command,
)
from arnes.permissions.types import Access, Decision, Mode, Target, ToolRequest, stricter

PROTECTED_DIRS = ANY_DEPTH  # at every depth, compared as a case-folding disk would (protected.py)
# The feature list's states move only when a verify command is green, never by the model's hand.
PROTECTED_FILES = TOP_LEVEL_FILES
READ_FAMILY = frozenset({"Read", "Glob", "Grep", "ReadDoc"})
WRITE_FAMILY = frozenset({"Write", "Edit", "NotebookEdit"})


@dataclass(frozen=True)
class _Compiled:
    kind: RuleKind
    rule: Rule
    origin: str
    regex: re.Pattern[str] | None  # None: the rule covers every call of its tool (or `linear` holds its glob)
    command: CommandPattern | None = None  # Bash rules
    linear: LinearGlob | None = None  # a path glob with many stars, matched without backtracking

    def covers(self, form: str) -> bool:
        if self.linear is not None:
            return self.linear.match(form)
        return self.regex is not None and self.regex.match(form) is not None


@dataclass(frozen=True)
class _Group:
    """The rules of one kind for one tool: a tool-wide rule, or path rules joined in one regex."""

    members: list[_Compiled]
    everything: _Compiled | None
    combined: re.Pattern[str] | None
    by_name: dict[str, list[_Compiled]] = field(default_factory=dict)  # Bash rules by command name
    linear: list[_Compiled] = field(default_factory=list)  # the members not in `combined`

    def covers(self, form: str) -> bool:
        """Whether any path rule of the group covers `form`."""
        return (self.combined is not None and self.combined.match(form) is not None) or any(
            m.covers(form) for m in self.linear
        )

    @classmethod
    def of(cls, members: list[_Compiled]) -> _Group:
        everything = next((m for m in members if m.regex is None and m.command is None and m.linear is None), None)
        patterned = [m for m in members if m.regex is not None or m.linear is not None]
        joined = [m for m in patterned if m.regex is not None]
        combined = None
        if joined:
            flags = joined[0].regex.flags if joined[0].regex else 0
            combined = re.compile("|".join(f"(?:{m.regex.pattern})" for m in joined if m.regex), flags)
        by_name: dict[str, list[_Compiled]] = {}
        for member in members:  # in order: the first rule that matches is the one reported
            if member.command is not None:
                name = member.command.name  # `*`: a wildcard in the command's name, held against every command
                by_name.setdefault(name if member.kind == "allow" else name.rsplit("/", 1)[-1], []).append(member)
        return cls(patterned, everything, combined, by_name, [m for m in patterned if m.linear is not None])


MCP_NAME_MOST = 64  # characters of a tool name the providers accept (mcp/tools.py cuts to it)


def rule_tools(tool: str, access: Access | None) -> frozenset[str]:
    """Which rule names apply: `Edit(...)` covers Write, `Read(...)` covers Glob, Grep, ReadDoc,
    and `mcp__NAME` or `mcp__NAME__*` covers every tool `mcp__NAME__TOOL` of that server."""
    tools = {tool}
    if tool.startswith("mcp__"):  # by the name the model calls: cut to 64, as rules are
        server = tool.split("__")[1]
        tools = {name[:MCP_NAME_MOST] for name in (tool, f"mcp__{server}", f"mcp__{server}__*")}
    if access == "write" or tool in WRITE_FAMILY:
        tools.add("Edit")
    if access == "read" or tool in READ_FAMILY:
        tools.add("Read")
    return frozenset(tools)


@dataclass
class RuleEngine:
    """The permission policy of DESIGN §4 as one `Policy`; wrappers can narrow it further."""

    workspace: Path
    mode: Mode = "default"
    rules: list[SourcedRule] = field(default_factory=list)
    home: Path = field(default_factory=lambda: Path(os.path.expanduser("~")))
    sandboxed: bool = False  # an OS sandbox holds the perimeter for shell commands
    # The user's arnes folder (settings, the trust record): a write there would grant, so never.
    config_dir: Path = field(default_factory=user_config_dir)
    # The user's Claude Code settings grant like arnes's own (config.py reads them as the user's).
    claude_settings: Path = field(default_factory=lambda: claude_user_dir() / "settings.json")
    # Claude Code's ~/.claude.json: its servers start without trust (config.py), so never written either.
    claude_json: Path = field(default_factory=claude_json_path)
    _groups: dict[tuple[RuleKind, str], _Group] = field(default_factory=dict, init=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False)

    def __post_init__(self) -> None:
        self.workspace = resolve_real(self.workspace)
        self._root = str(self.workspace)
        self._config = os.path.realpath(self.config_dir)
        self._claude_settings = os.path.realpath(self.claude_settings).casefold()
        self._claude_json = os.path.realpath(self.claude_json).casefold()
        self._compile()

    # -- rules ---------------------------------------------------------------------------------
    def add_rule(self, kind: RuleKind, raw: str, source: str = "session") -> None:
        parse_rule(raw)
        with self._lock:
            self.rules.insert(0, SourcedRule(kind, raw, source))
            self._compile()

    def _compile(self) -> None:
        """Group rules by (kind, tool) and join each group's patterns into one regex.

        One `match` per path form then answers "does any rule match"; the rule that did is only
        looked for on a hit. This keeps a decision with hundreds of rules in microseconds.
        """
        grouped: dict[tuple[RuleKind, str], list[_Compiled]] = {}
        ws, home = str(self.workspace), str(self.home)
        for sourced in self.rules:
            rule = parse_rule(sourced.rule)
            regex = None
            if rule.specifier is not None and rule.tool == "Bash":
                pattern = CommandPattern.parse(rule.specifier)
                grouped.setdefault((sourced.kind, "Bash"), []).append(
                    _Compiled(sourced.kind, rule, sourced.source, None, pattern)
                )
                continue
            linear = None
            if rule.specifier is not None and needs_linear(rule.specifier):
                linear = LinearGlob("/" + anchor(rule.specifier, ws, home).lstrip("/"), sourced.kind != "allow")
            elif rule.specifier is not None:
                flags = re.IGNORECASE if sourced.kind != "allow" else 0
                regex = re.compile(path_regex(rule.specifier, ws, home) + r"\Z", flags | re.DOTALL)
            # The model calls an MCP tool by its name cut to 64 characters (mcp/tools.py): a rule
            # naming it in full means that same call.
            tool = rule.tool[:MCP_NAME_MOST] if rule.tool.startswith("mcp__") else rule.tool
            grouped.setdefault((sourced.kind, tool), []).append(
                _Compiled(sourced.kind, rule, sourced.source, regex, linear=linear)
            )
        self._groups = {key: _Group.of(members) for key, members in grouped.items()}

    def _first(
        self, kind: RuleKind, tools: Iterable[str], forms: Sequence[str] | None, every: bool
    ) -> _Compiled | None:
        """The first rule of `kind` for these tools that matches any (or, with every, all) path forms."""
        for tool in tools:
            group = self._groups.get((kind, tool))
            if group is None:
                continue
            if group.everything is not None:
                return group.everything
            if forms is None or not group.members:
                continue
            hits = [group.covers(form) for form in forms]
            if not (all(hits) if every else any(hits)):
                continue
            for compiled in group.members:
                found = [compiled.covers(form) for form in forms]
                if all(found) if every else any(found):
                    return compiled
        return None

    # -- decisions -----------------------------------------------------------------------------
    def decide(self, request: ToolRequest) -> Decision:
        mode = stricter(self.mode, request.mode)  # a sub-agent's mode can only be stricter
        if request.command is not None:
            from arnes.permissions.commands import decide_command

            return self._finish(decide_command(self, request.tool, request.command, mode), mode)
        if not request.targets:
            return self._finish(self._pathless(request, mode), mode)
        decisions = [self._target(request.tool, t, mode) for t in request.targets]
        for kind in ("deny", "ask"):
            for decision in decisions:
                if decision.kind == kind:
                    return self._finish(decision, mode)
        return self._finish(decisions[0], mode)

    def _finish(self, decision: Decision, mode: Mode) -> Decision:
        if mode == "bypass" and decision.kind == "ask":
            return Decision("allow", f"bypass mode (was: {decision.reason})", "mode", decision.rule, decision.origin)
        return decision

    def _pathless(self, request: ToolRequest, mode: Mode) -> Decision:
        tools = rule_tools(request.tool, None)
        mcp = request.tool.startswith("mcp__")
        for kind in ("deny", "ask", "allow"):
            if mcp and kind == "ask" and mode == "plan":  # an MCP tool may write anything
                return Decision("deny", "plan mode: no MCP calls, only reading and planning", "mode")
            hit = self._first(kind, tools, None, every=False)
            if hit:
                return by_rule(hit)
        if mcp:  # what a server's tool does is the server's business: the user decides
            return Decision("ask", f"{request.tool}: an MCP tool with no rule for it", "mode")
        if request.tool == "ExitPlanMode" and mode == "plan":  # tools/plan_mode.py: the user approves a plan
            why = "leaving plan mode needs the user's approval of this plan (until then: only read and plan)"
            return Decision("ask", why, "mode")
        return Decision("allow", "touches no path", "mode")

    def _target(self, tool: str, target: Target, mode: Mode) -> Decision:
        written = str(target.path)
        real = str(target.real) if target.real is not None else real_path(written, self._root)
        forms = (written, real) if written != real else (written,)
        tools = rule_tools(tool, target.access)
        if target.access == "write":
            protected = self._protected(forms)
            if protected:
                return Decision("deny", f"{protected} is protected: the file tools never write it", "builtin")
        elif self.has_read_rules():
            store = next(filter(None, map(git_store, forms)), None)
            if store is not None:
                return Decision("deny", GIT_STORE.format(path=store), "builtin")
        with self._lock:
            hit = self._first("deny", tools, forms, every=False)
            if hit:
                return by_rule(hit)
            if mode == "plan" and target.access == "write":  # before ask rules: no "y" writes in plan
                return Decision("deny", "plan mode: no writes, only reading and planning", "mode")
            hit = self._first("ask", tools, forms, every=False)
            if hit:
                return by_rule(hit)
            hit = self._first("allow", tools, forms, every=True)
            if hit:
                return by_rule(hit)
        if not inside_str(self._root, real):
            return Decision("ask", f"{target.access} outside the workspace: {real}", "perimeter")
        if target.access == "read":
            return Decision("allow", "read inside the workspace", "perimeter")
        grant = grant_file(real[len(self._root) :]) if mode == "acceptEdits" else None
        if grant is not None:  # acceptEdits accepts edits, not new grants: the user says yes to those
            return Decision("ask", f"{grant} is a grant file (it names programs a trusted run starts)", "builtin")
        if mode in ("acceptEdits", "bypass"):
            return Decision("allow", f"{mode}: write inside the workspace", "mode")
        return Decision("ask", f"write {real}", "mode")

    def _protected(self, forms: Iterable[str]) -> str | None:
        for form in forms:
            found: str | None
            if inside_str(self._config, form):
                found = f"{self._config}/ (your arnes settings and trust record)"
            elif form.casefold() == self._claude_settings:  # a disk that folds names: Settings.json too
                found = f"{form} (your Claude Code settings, which arnes reads as yours)"
            elif form.casefold() == self._claude_json:
                found = f"{form} (Claude Code's account and MCP servers, which arnes reads as yours)"
            elif inside_str(self._root, form):
                found = protected_part(form[len(self._root) :])
            else:
                found = protected_outside(form)
            if found:
                return found
        return None

    def command_rule(self, kind: RuleKind, words: list[str]) -> _Compiled | None:
        """The first Bash rule of `kind` for these words: deny generously, allow strictly.

        Rules are indexed by their command's name, so a part is held only against the rules for
        its own command (a 200-part command against 200 rules stays in milliseconds)."""
        group = self._groups.get((kind, "Bash"))
        if group is None:
            return None
        if group.everything is not None:
            return group.everything
        if not words:
            return None
        anyone = group.by_name.get("*", [])
        if kind == "allow":
            named = [*group.by_name.get(words[0], ()), *anyone]
            return next((c for c in named if c.command and c.command.allows(words)), None)
        candidates = [*group.by_name.get(words[0].rsplit("/", 1)[-1], ()), *anyone]
        if not candidates:
            return None
        split = split_command(words)
        return next((c for c in candidates if c.command and c.command.denies_split(split, words)), None)

    def has_read_rules(self) -> bool:
        """Whether any deny or ask rule hides files from reading (so searches must be careful)."""
        with self._lock:
            return any(
                group.members or group.everything
                for (kind, tool), group in self._groups.items()
                if kind != "allow" and tool in READ_FAMILY
            )

    def has_command_denies(self) -> bool:
        with self._lock:
            return ("deny", "Bash") in self._groups

    def target(self, tool: str, target: Target, mode: Mode | None = None) -> Decision:
        """One path's decision before the mode's bypass: for commands' reads and writes."""
        return self._target(tool, target, stricter(self.mode, mode))

    def hidden(self, tool: str, path: Path) -> bool:
        """True when a deny or ask rule covers reading `path`: searches must not show it."""
        written = str(path)
        forms = (written, real_path(written, self._root))
        tools = rule_tools(tool, "read")
        with self._lock:
            return any(self._first(kind, tools, forms, every=False) for kind in ("deny", "ask"))

    def listable(self, tool: str, path: str | Path) -> bool:
        """Whether a search hit at `path` (reached through no link) may be shown.

        ripgrep never follows links, so a hit whose path has a link in it now had one appear
        mid-search: left out. Otherwise one path form is enough, and the rules decide as for Read.
        """
        written = str(path)
        if real_path(written, self._root) != written:
            return False
        if named_store(written) is not None and self.has_read_rules():
            return False
        tools = rule_tools(tool, "read")
        with self._lock:
            return not any(self._first(kind, tools, (written,), every=False) for kind in ("deny", "ask"))

    def rule_hides(self, tool: str, path: str) -> bool:
        """Whether a deny or ask rule covers reading `path` (one form, no link check): the cheap
        test a search applies to every hit it counts; what it shows also passes `listable`. A copy
        git keeps of files' contents is hidden with them (gitstore.py)."""
        tools = rule_tools(tool, "read")
        with self._lock:
            if any(self._first(kind, tools, (path,), every=False) for kind in ("deny", "ask")):
                return True
        return named_store(path) is not None and self.has_read_rules()

    def allow_rule_covers(self, tool: str, target: Target) -> bool:
        """Whether an allow rule covers this path in both its forms (a skill's `allowed-tools`
        entries with a path are held against a call this way: rules alone, no perimeter)."""
        written = str(target.path)
        real = str(target.real) if target.real is not None else real_path(written, self._root)
        forms = (written, real) if written != real else (written,)
        with self._lock:
            return self._first("allow", rule_tools(tool, target.access), forms, every=True) is not None

    def rule_covers(self, kind: RuleKind, tool: str, target: Target) -> bool:
        """Whether a rule of `kind` covers this path in either form, as a deny would (rules alone,
        no perimeter or protected path): a hook's `if` asks this of its one rule."""
        written = str(target.path)
        forms = (written, real_path(written, self._root))
        with self._lock:
            return self._first(kind, rule_tools(tool, target.access), forms, every=False) is not None

    def write_covered(self, path: Path) -> bool:
        """True when a deny or ask rule covers writing `path` (the sandbox then keeps it read-only)."""
        written = str(path)
        forms = (written, real_path(written, self._root))
        with self._lock:
            return any(self._first(kind, rule_tools("Edit", "write"), forms, every=False) for kind in ("deny", "ask"))

    def suggest_rule(self, request: ToolRequest) -> str | None:
        """The session rule offered as "always": reading a folder outside, or a command prefix."""
        if request.command is not None:
            from arnes.permissions.commands import suggest_command_rule

            return suggest_command_rule(request.command)
        if request.tool not in READ_FAMILY or not request.targets:
            return None
        real = resolve_real(request.targets[0].path)
        if is_inside(self.workspace, real):
            return None
        return read_rule(real, real.is_dir(), resolve_real(self.home))

    def listing(self) -> list[SourcedRule]:
        with self._lock:
            return list(self.rules)


def read_rule(real: Path, is_dir: bool, home: Path) -> str | None:
    """The "always" rule for a read outside: its folder, or the file alone when that folder is the
    home folder, above it, or a hidden folder of it (~/.ssh, ~/.aws, ~/.config hold keys and
    tokens), so one answer never opens more than the person meant."""
    folder = real if is_dir else real.parent
    secrets = folder.parent == home and folder.name.startswith(".")
    if is_inside(folder, home) or secrets:  # the home folder itself, /, /home, or ~/.something
        return None if is_dir else _read_spec(str(real))
    return _read_spec(str(folder), "/**")


def folder_read_rule(folder: Path) -> str | None:
    """`Read(FOLDER/**)` for exactly that folder (a loaded skill's files outside the workspace)."""
    return _read_spec(str(folder), "/**")


def _read_spec(path: str, tail: str = "") -> str | None:
    """`Read(path)` with the path's glob characters escaped, so the rule names that path only."""
    escaped = "".join("\\" + ch if ch in "*?[]{}\\" else ch for ch in path)
    rule = f"Read({escaped}{tail})"
    try:
        parse_rule(rule)
    except RuleError:  # a name with unbalanced parentheses: no rule can say it, so no "always"
        return None
    return rule


def by_rule(hit: _Compiled) -> Decision:
    return Decision(hit.kind, f"rule {hit.rule.raw}", "rule", hit.rule.raw, hit.origin)
