"""Claude Code's flag spellings, and the flags its Agent SDKs pass to the CLI they run (DESIGN §16).

The grammar only (stdlib, so `arnes --help` stays light); what each means for a run is applied in
config_flags.py. A flag arnes has its own option for is an alias of it; a flag with no meaning
here is accepted and named in a warning when ignoring it loses nothing the caller relies on,
and refused (exit 2, one line) when it would (resuming part of a session).
"""

from __future__ import annotations

import argparse

MODES = ["default", "acceptEdits", "plan", "bypass", "bypassPermissions", "dontAsk"]

# Accepted and ignored, each with what the caller should know; dest -> (flag, why).
IGNORED: dict[str, tuple[str, str]] = {
    "max_thinking_tokens": ("--max-thinking-tokens", "arnes asks for no thinking budget"),
    "thinking": ("--thinking", "arnes asks for no thinking budget"),
    "thinking_display": ("--thinking-display", "arnes prints no thinking blocks"),
    "effort": ("--effort", "arnes sends no effort level"),
    "betas": ("--betas", "arnes sends no beta headers"),
    "include_hook_events": ("--include-hook-events", "hook runs are in the trace, not in stream-json"),
    "task_budget": ("--task-budget", "use --max-tokens"),
    "session_mirror": ("--session-mirror", "the session is in arnes's trace, no transcript_mirror lines"),
    # the SDKs' own example of a stderr callback passes it
    "debug_to_stderr": ("--debug-to-stderr", "arnes's record of a run is its trace (--trace); warnings go to stderr"),
    # Codex's short flags whose modes are not arnes's (values checked as Codex does, _CHOICES); -m and
    # -C mean what --model and --workspace do (cliargs.py).
    "codex_sandbox": ("-s", "Codex's sandbox modes are not arnes's: commands always run in its sandbox, which "
                      "writes only in the workspace; use --permission-mode plan to only read, --sandbox to choose"),
    "codex_approval": ("-a", "Codex's approval policies are not arnes's: use --permission-mode (default, "
                       "acceptEdits, plan, dontAsk, bypass)"),
}  # fmt: skip
_FLAGS = {"include_hook_events", "session_mirror", "debug_to_stderr"}
_CHOICES = {
    "codex_sandbox": ["read-only", "workspace-write", "danger-full-access"],
    "codex_approval": ["untrusted", "on-failure", "on-request", "never"],
}


def add_options(p: argparse.ArgumentParser) -> None:
    """Claude Code's spellings beside arnes's own options (cliargs.py)."""
    p.add_argument("--verbose", action="store_true", help="accepted for Claude Code's sake (stream-json is complete)")
    p.add_argument(
        "--include-partial-messages", action="store_true",
        help="with stream-json output: the reply's text as it streams, in stream_event lines",
    )  # fmt: skip
    p.add_argument(
        "--input-format", choices=["text", "stream-json"], default="text",
        help="stream-json: user messages and the SDK's control requests as JSON lines on stdin",
    )  # fmt: skip
    p.add_argument(
        "--allowedTools", "--allowed-tools", dest="allowed_tools", action="append", nargs="+", default=[],
        metavar="RULES", help="allow rules, comma- or space-separated (Claude Code's spelling of --allow)",
    )  # fmt: skip
    p.add_argument(
        "--disallowedTools", "--disallowed-tools", dest="disallowed_tools", action="append", nargs="+", default=[],
        metavar="RULES", help="deny rules, comma- or space-separated (Claude Code's spelling of --deny)",
    )  # fmt: skip
    p.add_argument(
        "--add-dir", dest="add_dir", action="append", nargs="+", default=[], metavar="DIR",
        help="folders outside the workspace the agent may read (writes there still ask)",
    )  # fmt: skip
    p.add_argument(
        "--agents", metavar="JSON", help='sub-agents for this run: {"NAME": {"description": ..., "prompt": ...}}'
    )
    p.add_argument(
        "--setting-sources", dest="setting_sources", metavar="SOURCES",
        help="which settings to read: user, project and/or local, comma-separated (default: all three)",
    )  # fmt: skip
    p.add_argument("--tools", metavar="NAMES", help='the built-in tools offered ("" none, "default" all)')
    p.add_argument(
        "--dangerously-skip-permissions", action="store_true", help="the bypass permission mode (deny rules still hold)"
    )
    p.add_argument("--system-prompt", metavar="TEXT", help="replaces arnes's system prompt (empty: arnes's own)")
    p.add_argument("--system-prompt-file", metavar="FILE", help="--system-prompt, read from FILE")
    p.add_argument("--append-system-prompt", metavar="TEXT", help="added at the end of the system prompt")
    p.add_argument("--append-system-prompt-file", metavar="FILE", help="--append-system-prompt, read from FILE")
    p.add_argument(
        "--mcp-config", action="append", default=[], metavar="JSON_OR_FILE",
        help='MCP servers for this run: {"mcpServers": {...}} as JSON or a file',
    )  # fmt: skip
    p.add_argument(
        "--plugin-dir", dest="plugin_dir", action="append", default=[], metavar="DIR",
        help="a Claude Code plugin folder for this run: its commands, agents, skills, hooks and MCP servers",
    )  # fmt: skip
    p.add_argument("--strict-mcp-config", action="store_true", help="only the servers of --mcp-config")
    p.add_argument(
        "--json-schema", metavar="JSON_OR_FILE",
        help="the answer as JSON this schema holds (the model calls StructuredOutput), as `structured_output`",
    )  # fmt: skip
    p.add_argument("--settings", metavar="JSON_OR_FILE", help="Claude Code settings for this run (permissions)")
    p.add_argument("--session-id", metavar="UUID", help="the new session's id (a UUID)")
    p.add_argument(
        "--fork-session", action="store_true",
        help="with --resume/--continue: go on in a new session that starts with a copy of that one's conversation",
    )  # fmt: skip
    p.add_argument(
        "--replay-user-messages", action="store_true",
        help="stream-json: each user message comes back on stdout with its uuid (what rewind_files takes)",
    )  # fmt: skip
    p.add_argument(
        "--permission-prompt-tool", metavar="NAME",
        help="stdio: asks go to the SDK's can_use_tool (with --input-format stream-json); else asks are denied",
    )  # fmt: skip
    p.add_argument(
        "--fallback-model", metavar="MODEL",
        help="when the model stays overloaded after its retries, go on with this one (same provider)",
    )  # fmt: skip
    p.add_argument(
        "--resume-session-at", metavar="UUID",
        help="with --resume/-c: the conversation up to and including this message (its stream-json uuid)",
    )  # fmt: skip
    p.add_argument(
        "--resume-drops-turn", metavar="UUID",
        help="with --resume-session-at: refuse unless what the cut drops is exactly the turn of this user message",
    )  # fmt: skip
    for dest, (flag, _) in IGNORED.items():  # out of --help: docs/headless.md lists them
        if dest in _FLAGS:
            p.add_argument(flag, dest=dest, action="store_true", help=argparse.SUPPRESS)
        else:
            p.add_argument(flag, dest=dest, choices=_CHOICES.get(dest), help=argparse.SUPPRESS)


def split_rules(value: str) -> list[str]:
    """Claude Code's rule lists: commas or spaces separate rules, except inside parentheses
    (`Bash(git log:*),Edit` and `Bash(npm run test:*) Read` are two rules each)."""
    rules, current, depth = [], "", 0
    for char in value:
        if char in ", \t\n" and depth == 0:
            if current:
                rules.append(current)
            current = ""
            continue
        depth += (char == "(") - (char == ")")
        current += char
    if current:
        rules.append(current)
    return rules
