"""The names arnes protects from the file tools (and the sandbox keeps read-only): one definition.

`.git` is protected at every depth: a nested repository's `sub/.git/config` runs its fsmonitor
and hooks on the next `git status` just like the top-level one, and a FILE named `.git` (the
gitfile of a submodule or a worktree) can point git at a planted folder. `.arnes` holds settings
that grant permissions, and `features.json` moves only when a verify command is green.

Names are compared the way the disks that fold them do (like git's own `is_ntfs_dotgit` and
`is_hfs_dotgit`): case-insensitively (macOS, Windows), ignoring trailing dots and spaces and an
NTFS stream suffix (`.git.`, `.git::$INDEX_ALLOCATION` are `.git` on Windows), the 8.3 short name
`GIT~1`, `ARNES~1`, and the zero-width code points HFS+ drops (`.g\u200cit` is `.git` on a Mac).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

# Folders protected at every depth (a path component with this name, folder or file).
ANY_DEPTH = (".git", ".arnes")
# Files protected at the top of the workspace only.
TOP_LEVEL_FILES = ("features.json",)
# A copied Claude Code settings file grants like .arnes's own (config_claude.py).
CLAUDE_SETTINGS = (".claude", ("settings.json", "settings.local.json"))
# What the sandbox keeps read-only at the top of the workspace (nested repositories are found and
# held by sandbox/gitguard.py; `in_git` serves the file tools and the shell rules): the
# whole .git (hooks, config, commondir run code on the host later, and a renamed .git could carry
# them back; git commands that write the repository fail in the sandbox), .arnes, features.json,
# Claude Code's settings (the file tools never write them either), and its prompt folders
# (skills, commands, agents, output styles) and hook folder: what the user reads, chose and runs, which the agent's own
# commands should not rewrite behind the user's back, nor swap a skill folder for a link (the
# file tools still edit them, through the gate). One that does not exist yet gets an empty
# read-only stand-in (sandbox/bubblewrap.py), so a command cannot create it either.
SANDBOX_READ_ONLY = (
    ".git", ".arnes", "features.json", ".claude/settings.json", ".claude/settings.local.json",
    ".claude/skills", ".claude/commands", ".claude/agents", ".agents/skills", ".claude/output-styles",
    ".claude/hooks",
)  # fmt: skip

# Code points HFS+ ignores in names (git's list in utf8.c, `next_hfs_char`).
_IGNORED = re.compile("[\u200c-\u200f\u202a-\u202e\u206a-\u206f\ufeff]")
_SHORT = re.compile(r"(git|arnes)~\d+")  # NTFS 8.3 short names: GIT~1 is .git, ARNES~1 is .arnes


def fold(name: str) -> str:
    """A path component as a case-folding disk sees it, for comparing with protected names."""
    name = _IGNORED.sub("", name).split(":", 1)[0].rstrip(" .")
    return name.casefold()


def protected_component(name: str) -> str | None:
    """The protected name this component stands for (`.git`, `.arnes`), else None."""
    folded = fold(name)
    short = _SHORT.fullmatch(folded)
    if short:
        return "." + short.group(1)
    for protected in ANY_DEPTH:
        if folded == protected:
            return protected
    return None


def protected_part(relative: str) -> str | None:
    """Why a path relative to the workspace is protected (`sub/.git/`, `features.json`), else None."""
    parts = [p for p in relative.split("/") if p]
    for i, part in enumerate(parts):
        name = protected_component(part)
        if name is not None:
            shown = "/".join(parts[: i + 1]) + "/"
            return shown if part == name else f"{shown} (that is {name} on a disk that folds names)"
    if len(parts) == 1:
        folded = fold(parts[0])
        for name in TOP_LEVEL_FILES:
            if folded == name:
                return parts[0] if parts[0] == name else f"{parts[0]} (that is {name} on a disk that folds names)"
    folder, files = CLAUDE_SETTINGS
    if len(parts) == 2 and fold(parts[0]) == folder and fold(parts[1]) in files:
        return "/".join(parts)
    return None


# Files at the top of a workspace that grant once the folder is trusted (DESIGN §10), beyond the
# settings the file tools never write: a server definition is a program the next trusted run starts.
GRANT_FILES = (".mcp.json",)


def grant_file(relative: str) -> str | None:
    """The grant file a path relative to the workspace is (`.mcp.json`), else None."""
    parts = [p for p in relative.split("/") if p]
    if len(parts) == 1 and fold(parts[0]) in GRANT_FILES:
        return parts[0]
    return None


def protected_outside(path: str) -> str | None:
    """Outside the workspace only `.git` counts: another repository's config runs code too."""
    for part in path.split("/"):
        if protected_component(part) == ".git":
            return path
    return None


def in_git(relative: str) -> bool:
    """Whether a relative path is, or lies inside, a `.git` at any depth (the file tools and the
    shell rules; the sandbox finds nested repositories itself: sandbox/repos.py)."""
    return any(protected_component(p) == ".git" for p in relative.split("/"))


def user_state_dir(env: dict[str, str] | None = None) -> Path:
    """The user's arnes state (XDG): what arnes itself recorded, never in a workspace."""
    env = dict(os.environ) if env is None else env
    base = env.get("XDG_STATE_HOME") or os.path.join(env.get("HOME", "~"), ".local", "state")
    return Path(os.path.expanduser(base)) / "arnes"


def user_config_dir(env: dict[str, str] | None = None) -> Path:
    """The user's arnes folder (XDG): settings and the trust record, never a repository's choice."""
    env = dict(os.environ) if env is None else env
    base = env.get("XDG_CONFIG_HOME") or os.path.join(env.get("HOME", "~"), ".config")
    return Path(os.path.expanduser(base)) / "arnes"


def claude_user_dir(env: dict[str, str] | None = None) -> Path:
    """The user's Claude Code folder, ~/.claude (CLAUDE_CONFIG_DIR when set, as Claude Code reads it):
    read by arnes as the user's own, like its own config folder (DESIGN §16)."""
    env = dict(os.environ) if env is None else env
    return Path(os.path.expanduser(env.get("CLAUDE_CONFIG_DIR") or os.path.join(env.get("HOME", "~"), ".claude")))


def claude_json_path(env: dict[str, str] | None = None) -> Path:
    """Claude Code's own state file (its account, and the servers `claude mcp add` wrote):
    `$CLAUDE_CONFIG_DIR/.claude.json` when that is set, else `~/.claude.json`."""
    env = dict(os.environ) if env is None else env
    base = env.get("CLAUDE_CONFIG_DIR") or env.get("HOME") or "~"
    return Path(os.path.expanduser(base)) / ".claude.json"


def codex_user_dir(env: dict[str, str] | None = None) -> Path:
    """The user's Codex folder, ~/.codex (CODEX_HOME when set, as Codex reads it)."""
    env = dict(os.environ) if env is None else env
    return Path(os.path.expanduser(env.get("CODEX_HOME") or os.path.join(env.get("HOME", "~"), ".codex")))
