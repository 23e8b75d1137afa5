"""Per-model request defaults as data (DESIGN §11): one table, first matching pattern wins.

Why these numbers: tool use wants little randomness (llama.cpp samples at 0.8 when nothing is
sent, and a small model then loses the JSON of its calls; Qwen2.5-Coder-1.5B did best greedy);
an output cap keeps a looping model from filling the whole window (a 0.5B model once wrote
3,511 tokens for "create hello.txt").
OpenAI's reasoning models refuse `temperature` and `max_tokens`, and newer Claude models
`temperature`, so they get none unless the user sets one.
"""

from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatchcase


@dataclass(frozen=True)
class ModelDefaults:
    temperature: float | None  # None: not sent (the model accepts only its own)
    max_output_tokens: int
    max_tokens_key: str = "max_tokens"


_REASONING = ModelDefaults(None, 16_384, "max_completion_tokens")

MODEL_DEFAULTS: tuple[tuple[str, ModelDefaults], ...] = (
    ("o[1-9]*", _REASONING),
    ("gpt-5*", _REASONING),
    ("claude-*", ModelDefaults(None, 8192)),  # newer Claude models take no temperature (the SDK has none)
    # Local small coders: a call rarely needs more than 2k tokens. Greedy: at 0.2 the 1.5B model passed
    # 8 of 18 eval runs, at 0 it passed 11 of 18 (bench/README.md).
    ("*qwen2.5*", ModelDefaults(0.0, 2048)),
    ("*", ModelDefaults(0.2, 4096)),
)


def defaults_for(model: str) -> ModelDefaults:
    """The first row whose pattern matches the model name (lower case; `org/name` by its name)."""
    name = model.lower().rsplit("/", 1)[-1]
    for pattern, defaults in MODEL_DEFAULTS:
        if fnmatchcase(name, pattern):
            return defaults
    return MODEL_DEFAULTS[-1][1]
