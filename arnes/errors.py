"""Exceptions that end a run, each mapped to one exit code of DESIGN §2."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pydantic import ValidationError

# DESIGN §2's exit codes: here, beside the errors that map to them, so every layer can return one.
EXIT_OK, EXIT_FAIL, EXIT_USAGE, EXIT_LIMIT, EXIT_RED, EXIT_INTERRUPTED = 0, 1, 2, 3, 4, 130


class ArnesError(Exception):
    exit_code = EXIT_FAIL


class ConfigError(ArnesError):
    """Bad settings, flags or script: nothing was run."""

    exit_code = EXIT_USAGE


class ProviderError(ArnesError):
    """The model could not be reached or refused the request.

    `retryable` errors (rate limits, 5xx, time-outs, refused connections) are retried with
    backoff before they end the run.
    """

    exit_code = EXIT_FAIL

    def __init__(
        self,
        message: str,
        *,
        retryable: bool = False,
        retry_after: float | None = None,
        unreachable: bool = False,
        exhausted: bool = False,
    ):
        super().__init__(message)
        self.retryable = retryable
        self.retry_after = retry_after
        self.unreachable = unreachable  # nothing answered at all: the "how to configure a model" help fits
        self.exhausted = exhausted  # retryable, and the retries gave up: another model may answer (--fallback-model)


class ContextExceeded(ProviderError):
    """The server refused the request as longer than its context window: compact and try again."""

    def __init__(self, message: str, *, window: int | None = None):
        super().__init__(message)
        self.window = window


class LimitReached(ArnesError):
    """A budget (turns, tokens, cost) stopped the run."""

    exit_code = EXIT_LIMIT

    def __init__(self, limit: str, message: str):
        super().__init__(message)
        self.limit = limit


def validation_summary(exc: ValidationError, top: str = "(top level)") -> str:
    """A pydantic error in one line a person or a model can act on: `where: what` for each problem."""
    problems = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"]) or top
        msg = "unknown key" if err["type"] == "extra_forbidden" else err["msg"].removeprefix("Value error, ")
        problems.append(f"{where}: {msg}")
    return "; ".join(problems)


class OutputClosed(KeyboardInterrupt):
    """Whoever read stdout went away (`arnes -p ... | head -1`): the run stops as an interrupt
    does (the loop already ends a turn cleanly on one), and nothing more is printed or said."""


class ToolError(Exception):
    """A failure the model can act on: the message says what happened and what to do next.
    Part of the Tool seam (tools/base.py exports it); defined here so modules below the tools
    (host/ripgrep.py) raise it too."""
