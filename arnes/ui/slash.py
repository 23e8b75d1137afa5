"""The interactive prompt's built-in slash commands: what /help and Tab show, and the names a command
file cannot take (the built-in wins; `arnes doctor` names the file). Below the prompt, so the
command-file code and doctor can ask without importing it."""

from __future__ import annotations

HELP = {
    "/help": "this list",
    "/features": "the feature list (features.json)",
    "/next": "work on the next feature and verify it",
    "/check": "run the verification ladder",
    "/checker TASK": "an implementer, then a read-only checker",
    "/compact": "summarise older turns now to free context",
    "/permissions": "the effective permission rules",
    "/mode [MODE]": "show or set the permission mode (default, acceptEdits, plan, bypass)",
    "/model [NAME]": "show or switch the model",
    "/diff": "what the agent changed this session",
    "/undo": "take back the files the last turn changed (any tool or command)",
    "/rewind [N]": "back to before a turn: code, conversation or both (Esc Esc too)",
    "/cost": "tokens and cost so far",
    "/exit": "leave (Ctrl-D too)",
}
# Built-in names win over a command file of the same name (`arnes doctor` names the file).
BUILTINS = frozenset({usage.split()[0].lstrip("/") for usage in HELP} | {"quit"})
