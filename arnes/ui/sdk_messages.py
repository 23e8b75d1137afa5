"""The messages of Claude Code's headless output, as its Agent SDKs read them (DESIGN §12, §16).

Ground truth: `claude_agent_sdk._internal.message_parser.parse_message` (what the Python SDK
requires) and the TypeScript SDK's `SDKMessage` types (what a TypeScript reader may rely on:
`uuid` and `session_id` on every message, `message.id`/`model`/`usage` on an assistant message,
`duration_api_ms`, `modelUsage`, `permission_denials` and `errors` on a result, `slash_commands`,
`tools`, `mcp_servers`... on init). arnes's own keys may be added beside theirs, never instead.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from arnes.agent.transcript import anthropic_block

# Claude Code's permission modes by arnes's name (`dontAsk` is arnes's default mode with nobody asked).
MODE_NAMES = {"default": "default", "acceptEdits": "acceptEdits", "plan": "plan", "bypass": "bypassPermissions"}
RESULT_SUBTYPES = {"end_turn": "success", "max_turns": "error_max_turns"}


def new_uuid() -> str:
    return str(uuid.uuid4())


def mode_name(mode: str, never_ask: bool = False) -> str:
    return "dontAsk" if never_ask and mode == "default" else MODE_NAMES.get(mode, mode)


def usage(input_tokens: int, output_tokens: int) -> dict[str, Any]:
    """The Messages API's usage with every key present (the TypeScript SDK's `NonNullableUsage`)."""
    return {
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "cache_creation": {"ephemeral_1h_input_tokens": 0, "ephemeral_5m_input_tokens": 0},
        "server_tool_use": {"web_search_requests": 0, "web_fetch_requests": 0},
        "service_tier": "standard",
    }


@dataclass(frozen=True)
class ModelSpend:
    """One model's share of a run, for `modelUsage`."""

    input_tokens: int
    output_tokens: int
    cost: float
    context_window: int
    max_output_tokens: int


def model_usage(spent: Mapping[str, ModelSpend]) -> dict[str, dict[str, Any]]:
    return {
        model: {
            "inputTokens": s.input_tokens,
            "outputTokens": s.output_tokens,
            "cacheReadInputTokens": 0,
            "cacheCreationInputTokens": 0,
            "webSearchRequests": 0,
            "costUSD": round(s.cost, 6),
            "contextWindow": s.context_window,
            "maxOutputTokens": s.max_output_tokens,
        }
        for model, s in spent.items()
    }


def block(neutral: dict[str, Any]) -> dict[str, Any]:
    """arnes's neutral block (messages.py) as the Anthropic-shaped block the SDKs parse (the same
    conversion the hooks' transcript makes)."""
    return anthropic_block(neutral)


def assistant(
    content: list[dict[str, Any]],
    *,
    model: str,
    session_id: str,
    parent: str | None,
    stop_reason: str | None,
    input_tokens: int = 0,
    output_tokens: int = 0,
    message_uuid: str | None = None,
) -> dict[str, Any]:
    return {
        "type": "assistant",
        "message": stream_message(model, [block(b) for b in content], stop_reason, input_tokens, output_tokens),
        "parent_tool_use_id": parent,
        "session_id": session_id,
        "uuid": message_uuid or new_uuid(),
    }


def stream_message(
    model: str,
    content: list[dict[str, Any]] | None = None,
    stop_reason: str | None = None,
    input_tokens: int = 0,
    output_tokens: int = 0,
) -> dict[str, Any]:
    """A Messages API message: an assistant line's whole one, or (the defaults) the empty one a
    `message_start` stream event opens."""
    return {
        "id": f"msg_{uuid.uuid4().hex[:24]}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content or [],
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": usage(input_tokens, output_tokens),
    }


def stream_event(event: dict[str, Any], session_id: str, parent: str | None) -> dict[str, Any]:
    """`--include-partial-messages`: one raw stream event, as the SDKs' StreamEvent parses it."""
    return {"type": "stream_event", "uuid": new_uuid(), "session_id": session_id, "event": event,
            "parent_tool_use_id": parent}  # fmt: skip


def user(
    content: list[dict[str, Any]], *, session_id: str, parent: str | None, message_uuid: str | None = None
) -> dict[str, Any]:
    return {
        "type": "user",
        "message": {"role": "user", "content": [block(b) for b in content]},
        "parent_tool_use_id": parent,
        "session_id": session_id,
        "uuid": message_uuid or new_uuid(),
    }


def system(subtype: str, session_id: str, **keys: Any) -> dict[str, Any]:
    """A system message; subtypes of arnes's own (`steered`, `warning`) parse as the SDKs' generic one."""
    return {"type": "system", "subtype": subtype, **keys, "session_id": session_id, "uuid": new_uuid()}


def denial(raw: Mapping[str, Any]) -> dict[str, Any]:
    """A denial as Claude Code lists it ({tool_name, tool_use_id, tool_input}), arnes's reason and source beside."""
    return {
        "tool_name": raw.get("tool_name", raw.get("tool", "")),
        "tool_use_id": raw.get("tool_use_id", ""),
        "tool_input": raw.get("tool_input", {}),
        **{k: v for k, v in raw.items() if k not in ("tool_name", "tool_use_id", "tool_input")},
    }


def result_subtype(stop_reason: str, limit: str | None) -> str:
    if stop_reason == "budget" and limit == "cost":
        return "error_max_budget_usd"
    if limit == "structured_output":
        return "error_max_structured_output_retries"
    return RESULT_SUBTYPES.get(stop_reason, "error_during_execution")


def result(
    *,
    stop_reason: str,
    text: str,
    session_id: str,
    num_turns: int = 0,
    duration_ms: int = 0,
    duration_api_ms: int = 0,
    input_tokens: int = 0,
    output_tokens: int = 0,
    cost: float = 0.0,
    spent: Mapping[str, ModelSpend] | None = None,
    denials: list[dict[str, Any]] | None = None,
    limit: str | None = None,
    error: str | None = None,
    verified: bool | None = None,
    structured_output: Any = None,
) -> dict[str, Any]:
    """The last message of a run (and Claude Code's `--output-format json` object)."""
    subtype = result_subtype(stop_reason, limit)
    failed = subtype != "success" or verified is False
    data: dict[str, Any] = {
        "type": "result",
        "subtype": subtype,
        "is_error": failed,
        "duration_ms": duration_ms,
        "duration_api_ms": duration_api_ms,
        "num_turns": num_turns,
        "result": text,
        "stop_reason": stop_reason,
        "session_id": session_id,
        "total_cost_usd": round(cost, 6),
        "usage": usage(input_tokens, output_tokens),
        "modelUsage": model_usage(spent or {}),
        "permission_denials": [denial(d) for d in denials or []],
        "uuid": new_uuid(),
    }
    if structured_output is not None:
        data["structured_output"] = structured_output
    if subtype != "success":
        data["errors"] = [error or stop_reason]
    return data
