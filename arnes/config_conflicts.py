"""Where the user's two settings files disagree: Claude Code's `~/.claude/settings.json` and arnes's
own `~/.config/arnes/settings.json` (DESIGN §16), each conflict named in one line.

Nothing here decides: a value comes from arnes's own file (the later layer), a rule's kind from
deny > ask > allow. The line says so, so that a user who copied rules between the two files sees
which one holds instead of guessing.
"""

from __future__ import annotations

from arnes.permissions.rules import SourcedRule

_ORDER = ("deny", "ask", "allow")


def mode_conflict(claude: tuple[str, str], arnes: tuple[str, str]) -> str | None:
    """One line for a defaultMode both user files set differently: arnes's own wins."""
    (c_path, c_mode), (a_path, a_mode) = claude, arnes
    if c_mode == a_mode:
        return None
    return (
        f"{c_path}: permissions.defaultMode {c_mode!r} not used: {a_path} sets {a_mode!r}, "
        "and arnes's own file wins a value both set"
    )


def rule_conflicts(rules: list[SourcedRule], user_files: list[str]) -> list[str]:
    """One line per rule the user's files give different kinds (an allow here, a deny there)."""
    kinds: dict[str, dict[str, str]] = {}  # rule -> kind -> the first file that says so
    for r in rules:
        if r.source in user_files:
            kinds.setdefault(r.rule, {}).setdefault(r.kind, r.source)
    lines = []
    for rule, said in kinds.items():
        if len(said) < 2:
            continue
        wins = next(kind for kind in _ORDER if kind in said)
        where = ", ".join(f"{kind} in {said[kind]}" for kind in _ORDER if kind in said)
        lines.append(f"rule {rule} is {where}: the {wins} applies (deny > ask > allow, whatever the file)")
    return lines
