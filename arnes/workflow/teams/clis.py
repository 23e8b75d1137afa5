"""External coding CLIs as team members: how each is called, and how its read-only switch is
spelled. A switch is used only where it was verified in that CLI's documented `--help`
(docs/teams.md keeps the table of sources and versions); otherwise a read-only node gets only
the two prompt sentences, and `arnes team show` says so."""

from __future__ import annotations

from dataclasses import dataclass

READ_ONLY_SENTENCES = (
    "You are read-only in this step: a refusal to write is the rule, not an obstacle to route around. "
    "Report what should change as file, line and reason in your handoff; change nothing yourself."
)


@dataclass(frozen=True)
class CliProfile:
    name: str
    head: tuple[str, ...]  # the command and its non-interactive subcommand or flag
    prompt_first: bool  # the prompt right after the head (before variadic options) or last
    read_only: tuple[str, ...] | None  # verified flags; None: nothing verified
    single_valued: frozenset[str]  # options a strict parser rejects when repeated: ours replace theirs
    source: str


PROFILES: dict[str, CliProfile] = {
    "claude": CliProfile(
        "claude", ("claude", "-p"), True,
        ("--disallowedTools", "Edit", "Write", "MultiEdit", "NotebookEdit", "Bash"),
        frozenset(), "Claude Code CLI reference (claude --help): -p/--print, --disallowedTools (lists accumulate)",
    ),
    "codex": CliProfile(
        "codex", ("codex", "exec"), False, ("--sandbox", "read-only"), frozenset({"--sandbox", "-s"}),
        "openai/codex docs/sandbox.md (rust-v0.66.0): codex exec, --sandbox read-only",
    ),
    "opencode": CliProfile(
        "opencode", ("opencode", "run"), False, ("--agent", "plan"), frozenset({"--agent"}),
        "opencode.ai/docs/cli: opencode run, --agent (the built-in plan agent is read-only)",
    ),
    "gemini": CliProfile(
        "gemini", ("gemini", "-p"), True, None, frozenset(),
        "gemini --help (v0.64.0) documents --approval-mode plan, but headless plan mode goes on to edit: "
        "not a read-only switch",
    ),
}  # fmt: skip


def enforcement(agent: str) -> str:
    """In plain words, what makes a read-only node of this agent read-only."""
    if agent == "arnes":
        return "enforced by arnes: no write tools, a read-only sandbox, only read-only commands"
    profile = PROFILES[agent]
    if profile.read_only is None:
        return f"NOT enforced: {agent} has no verified read-only flag, so the node gets only the prompt sentences"
    return f"enforced by {agent}'s own flags: {' '.join(profile.read_only)}"


def command_line(agent: str, prompt: str, args: list[str], read_only: bool, model: str | None = None) -> list[str]:
    """The argv for one external node: the user's extra args, then ours, then the prompt."""
    profile = PROFILES[agent]
    extra = list(args)
    ours: list[str] = []
    if model:
        extra = _without(extra, {"--model", "-m"})
        ours += ["--model", model]
    if read_only:
        prompt = f"{prompt}\n\n{READ_ONLY_SENTENCES}"
        if profile.read_only is not None:
            extra = _without(extra, profile.single_valued)
            ours += list(profile.read_only)
    if profile.prompt_first:
        return [*profile.head, prompt, *extra, *ours]
    return [*profile.head, *extra, *ours, prompt]


def _without(args: list[str], options: frozenset[str] | set[str]) -> list[str]:
    """Drop every occurrence of these options together with its value (`-s X` or `--sandbox=X`)."""
    out: list[str] = []
    skip = False
    for word in args:
        if skip:
            skip = False
            continue
        if word in options:
            skip = True
            continue
        if word.split("=", 1)[0] in options and "=" in word:
            continue
        out.append(word)
    return out
