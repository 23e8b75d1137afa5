"""One command of a command line as it would run: what the parser (shell.py) produces and the
wrapper peeler (wrappers.py), the read-only judge and the command judge read. Its own module so
those all import it from below instead of from the parser."""

from __future__ import annotations

from dataclasses import dataclass, field

# Environment variables that change what a command does; a command prefixed with one is not
# allowed by a rule written for the bare command (every GIT_* variable counts too).
RISKY_ENV = {"PATH", "BASH_ENV", "ENV", "IFS", "PROMPT_COMMAND", "PYTHONPATH", "PYTHONSTARTUP", "NODE_OPTIONS",
             "PERL5OPT", "RUBYOPT", "EDITOR", "PAGER", "SHELLOPTS", "BASHOPTS", "PS4", "CDPATH", "HOME"}  # fmt: skip


@dataclass
class SimpleCommand:
    """One command as it would run: wrappers and assignments peeled off `words`."""

    words: list[str]
    wrappers: list[str] = field(default_factory=list)
    env: list[str] = field(default_factory=list)
    nested: bool = False  # inside $(...), backticks, <(...), eval or `sh -c`: never allowed by a rule
    unknown_args: bool = False  # xargs appends arguments nobody can see here

    @property
    def text(self) -> str:
        return " ".join(self.words or self.wrappers)

    @property
    def privileged(self) -> bool:
        """Run as another user: never read-only, never allowed by a rule for the bare command."""
        return any(w in ("sudo", "doas") for w in self.wrappers)

    @property
    def risky_env(self) -> bool:
        return any(risky_env_name(v.split("=", 1)[0]) for v in self.env)


def risky_env_name(name: str) -> bool:
    """A variable that changes what a command the rules judged does (which program runs, what git
    or the loader runs for it): such a prefix keeps a rule for the bare command from allowing it."""
    return name in RISKY_ENV or name.startswith(("LD_", "DYLD_", "GIT_", "LESS"))
