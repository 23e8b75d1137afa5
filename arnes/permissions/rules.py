"""Permission rules `Tool` or `Tool(specifier)`, parsed strictly: a typo must not become a no-op."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

RuleKind = Literal["allow", "ask", "deny"]
KNOWN_TOOLS = ("Read", "Glob", "Grep", "Write", "Edit", "ReadDoc", "Bash", "BashOutput", "KillShell", "Delegate")
_RULE = re.compile(r"^(?P<tool>[A-Za-z][A-Za-z0-9_]*)(?:\((?P<spec>.*)\))?$", re.DOTALL)


class RuleError(ValueError):
    """A rule that cannot be parsed; the message says why and how to write it."""


@dataclass(frozen=True)
class Rule:
    tool: str
    specifier: str | None
    raw: str

    def __str__(self) -> str:
        return self.raw


def parse_rule(raw: str) -> Rule:
    text = raw.strip()
    match = _RULE.match(text)
    if not match:
        raise RuleError(f"{raw!r} is not a rule; write Tool or Tool(specifier), e.g. Read(**/.env*)")
    tool, spec = match.group("tool"), match.group("spec")
    if tool not in KNOWN_TOOLS:
        raise RuleError(f"{raw!r} names an unknown tool {tool!r}; tools are {', '.join(KNOWN_TOOLS)}")
    if spec is not None:
        spec = spec.strip()
        if not spec:
            raise RuleError(f"{raw!r} has an empty specifier; write {tool} alone to cover every call")
        if spec.count("(") != spec.count(")"):
            raise RuleError(f"{raw!r} has unbalanced parentheses")
    return Rule(tool, spec, text)
