"""Claude model names in files written for Claude Code (`model: sonnet` in a command or an agent).

On Anthropic's API an alias is mapped to a model id and an id is used as it is. Any other
provider serves no Claude model: the file's choice is left out, with a note, and the session's
model answers, so a copied collection works on a local model unchanged. `inherit` (Claude
Code's "the caller's model") is no choice at all. A model name that is not Claude's is the
file's to choose, on any provider.
"""

from __future__ import annotations

ALIASES = {"sonnet": "claude-sonnet-4-5", "opus": "claude-opus-4-5", "haiku": "claude-haiku-4-5"}


def is_claude(model: str) -> bool:
    name = model.strip().lower()
    return name in ALIASES or name.startswith("claude-")


def model_for(model: str | None, provider: str) -> tuple[str | None, str | None]:
    """(the model a file's `model` means for `provider`, None for the session's own; why the
    file's model was left out, or None)."""
    if model is None or not model.strip() or model.strip().lower() == "inherit":
        return None, None
    name = model.strip()
    if not is_claude(name):
        return name, None
    if provider == "anthropic":
        return ALIASES.get(name.lower(), name), None
    return (
        None,
        f"model {name!r} is a Claude model, which the {provider} provider does not serve; the session's model is used",
    )
