"""Map the official SDKs' exceptions (same shape in `openai` and `anthropic`) to ProviderError."""

from __future__ import annotations

import re
from types import ModuleType
from typing import Any

from arnes.errors import ContextExceeded, ProviderError

RETRYABLE_STATUS = {408, 409, 425, 429, 500, 502, 503, 504, 529}
# What servers say when a request is longer than the window: llama.cpp, OpenAI/vLLM, Anthropic.
_TOO_LONG = re.compile(
    r"exceeds the available context size|context_length_exceeded|maximum context length|prompt is too long"
    r"|context window|too many tokens",
    re.IGNORECASE,
)
_WINDOW = re.compile(
    r"available context size \((\d+) tokens\)|maximum context length is (\d+)|> (\d+) maximum", re.IGNORECASE
)


def to_provider_error(
    exc: Exception, sdk: ModuleType, where: str, *, streaming: bool = False, timeout: float = 0, read_timeout: float = 0
) -> ProviderError:
    """Say what failed, where, and whether waiting could help.

    Only a failed connection is retried: a time-out means the server is busy with a long
    generation, and starting it again from scratch (4 times) is what nobody wants.
    """
    if streaming and isinstance(exc, sdk.APIConnectionError):  # the reply had begun
        return mid_stream_error(exc, where, read_timeout)
    if isinstance(exc, sdk.APITimeoutError):
        if _named(exc.__cause__, "ConnectTimeout"):
            return ProviderError(
                f"could not connect to the model at {where} (time-out)", retryable=True, unreachable=True
            )
        return first_byte_timeout(where, timeout)
    if isinstance(exc, sdk.APIConnectionError):
        return ProviderError(f"could not connect to the model at {where}", retryable=True, unreachable=True)
    if isinstance(exc, sdk.APIStatusError):
        status = exc.status_code
        retry_after = _retry_after(exc)
        detail = _detail(exc)
        if status in (400, 413) and _TOO_LONG.search(f"{detail} {getattr(exc, 'body', '')}"):
            return context_exceeded(where, detail, _window_of(exc, detail))
        if status in RETRYABLE_STATUS:
            return ProviderError(
                f"the model at {where} answered HTTP {status}: {detail}",
                retryable=True,
                retry_after=retry_after,
            )
        hint = {
            401: " Check the API key in the environment.",
            403: " Check the API key's permissions.",
            404: " Check the model name and the base URL.",
        }.get(status, "")
        return ProviderError(f"the model at {where} refused the request (HTTP {status}): {detail}.{hint}")
    return ProviderError(f"the model at {where} failed: {exc}")


def first_byte_timeout(where: str, timeout: float) -> ProviderError:
    return ProviderError(
        f"no answer from the model at {where} within {timeout:g} s (not retried: it would start the whole "
        "reply again). A CPU can need minutes to read a long prompt: raise --timeout or model.timeout"
    )


def mid_stream_error(exc: BaseException, where: str, read_timeout: float) -> ProviderError:
    if _named(exc, "TimeoutException") or _named(exc.__cause__, "TimeoutException") or isinstance(exc, TimeoutError):
        return ProviderError(
            f"the model at {where} stopped sending for {read_timeout:g} s in the middle of its reply "
            "(model.read_timeout); not retried. Check the server, or raise model.read_timeout"
        )
    return ProviderError(f"the connection to the model at {where} broke in the middle of its reply: {exc}")


def context_exceeded(where: str, detail: str, window: int | None) -> ContextExceeded:
    size = f" (its window: {window} tokens)" if window else ""
    return ContextExceeded(
        f"the model at {where} refused the request as too long for its context{size}: {detail}. "
        "Give the server a larger context (llama-server -c N, Ollama num_ctx) or pass --context-window N",
        window=window,
    )


def shorten_read_timeout(response: Any, seconds: float) -> None:
    """The headers came (the first byte): from now on a chunk must follow within `seconds`.

    The time-out the request was sent with waits for the prefill, which on a CPU takes minutes;
    between chunks a much shorter wait shows a stalled server. The HTTP library reads the read
    time-out from the request's extensions when the body is first read, so it is set here.
    """
    timeout = getattr(getattr(response, "request", None), "extensions", {}).get("timeout")
    if isinstance(timeout, dict):
        timeout["read"] = seconds


def is_transport_error(exc: BaseException) -> bool:
    return _named(exc, "TransportError")


def _named(exc: BaseException | None, name: str) -> bool:
    """Is it the HTTP library's exception `name`, whichever library the SDK was built on (httpx, httpx2)."""
    return exc is not None and any(cls.__name__ == name for cls in type(exc).__mro__)


def _window_of(exc: Exception, detail: str) -> int | None:
    body = getattr(exc, "body", None)
    err = body.get("error", body) if isinstance(body, dict) else None
    if isinstance(err, dict) and isinstance(err.get("n_ctx"), int):  # llama.cpp says it outright
        return int(err["n_ctx"])
    match = _WINDOW.search(detail)
    return int(next(g for g in match.groups() if g)) if match else None


def _retry_after(exc: Exception) -> float | None:
    response = getattr(exc, "response", None)
    value = response.headers.get("retry-after") if response is not None else None
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def _detail(exc: Exception) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict) and isinstance(err.get("message"), str):
            return str(err["message"])
    return str(getattr(exc, "message", exc))
