"""Map the official SDKs' exceptions (same shape in `openai` and `anthropic`) to ProviderError."""

from __future__ import annotations

from types import ModuleType

from arnes.errors import ProviderError

RETRYABLE_STATUS = {408, 409, 425, 429, 500, 502, 503, 504, 529}


def to_provider_error(exc: Exception, sdk: ModuleType, where: str) -> ProviderError:
    """Say what failed, where, and whether waiting could help."""
    if isinstance(exc, sdk.APITimeoutError):
        return ProviderError(f"the model at {where} timed out", retryable=True)
    if isinstance(exc, sdk.APIConnectionError):
        return ProviderError(f"could not connect to the model at {where}", retryable=True)
    if isinstance(exc, sdk.APIStatusError):
        status = exc.status_code
        retry_after = _retry_after(exc)
        detail = _detail(exc)
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
