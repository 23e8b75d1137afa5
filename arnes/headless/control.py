"""The SDK's control requests that change or ask about a running session (beyond `initialize` and
`interrupt`, which headless/run.py answers itself; MCP servers: control_mcp.py; rewind_files:
control_rewind.py).

`ClaudeSDKClient.set_permission_mode`, `set_model`, `get_context_usage` and `stop_task` send
these. The SDK's program is the user's own, so it may do what the user may do at the prompt
(`/mode`, `/model`), with one line held: a session never widens itself into bypass or out of dontAsk's "nobody is
asked" unless it was started that way (`--permission-mode`), as Claude Code wants the dangerous
mode chosen at start.
"""

from __future__ import annotations

from typing import Any

from arnes.config import EffectiveConfig
from arnes.config_flags import bypass_refused
from arnes.headless.channel import Json, Unanswered
from arnes.llm.base import PROFILES
from arnes.permissions.types import MODES, Mode
from arnes.session import Session

Usage = tuple[int, int]  # (system prompt and tools, the conversation) in tokens


def set_permission_mode(session: Session, cfg: EffectiveConfig, request: Json) -> Json:
    wanted = request.get("mode")
    mode = "bypass" if wanted == "bypassPermissions" else wanted
    if wanted == "dontAsk":
        if not session.never_ask:
            raise Unanswered("dontAsk is chosen when arnes starts (--permission-mode dontAsk), not switched to")
        return {}
    if mode not in MODES:
        known = ", ".join(["default", "acceptEdits", "plan", "bypassPermissions", "dontAsk"])
        raise Unanswered(f"arnes has no permission mode {wanted!r} (it has: {known})")
    if mode == "bypass" and (refused := bypass_refused(cfg)):
        raise Unanswered(refused)
    chosen: Mode = next(m for m in MODES if m == mode)
    session.set_mode(chosen)
    return {}


def set_model(session: Session, cfg: EffectiveConfig, request: Json) -> Json:
    """The model from the next request on; None: the one the session started with."""
    wanted = request.get("model")
    if wanted is not None and (not isinstance(wanted, str) or not wanted.strip()):
        raise Unanswered("set_model takes a model name, or null for the session's own")
    name = wanted or cfg.model or PROFILES[cfg.provider].default_model
    if session.model_switch is None:
        raise Unanswered("this session cannot switch models")
    session.provider = session.model_switch(session.provider, name)
    return {}


def context_usage(session: Session, usage: Usage) -> Json:
    """Claude Code's `/context` answer, from what arnes measures: the fixed part and the conversation."""
    fixed, conversation = usage
    total = fixed + conversation
    window = session.context_window
    categories: list[dict[str, Any]] = [
        {"name": "System prompt and tools", "tokens": fixed, "color": "gray"},
        {"name": "Messages", "tokens": conversation, "color": "purple"},
        {"name": "Free space", "tokens": max(0, window - total), "color": "white"},
    ]
    return {
        "categories": categories,
        "totalTokens": total,
        "maxTokens": window,
        "rawMaxTokens": window,
        "percentage": round(100 * total / window, 1) if window else 0.0,
        "model": session.provider.model,
        "isAutoCompactEnabled": True,  # arnes clears old results, then compacts, near 80 % of the window
        "memoryFiles": [],
        "mcpTools": [],
        "agents": [],
        "gridRows": [],
    }


def stop_task(session: Session, request: Json) -> Json:
    """`stop_task`: arnes's tasks are the session's background shells, known by the id Bash gave
    them (`bash_1`, in the tool result); stopping one ends everything it started (tools/keeper.py).
    arnes sends no `task_started` messages: a sub-agent (Delegate) runs inside its call, so an
    `interrupt` is what stops it."""
    task = request.get("task_id")
    if not isinstance(task, str) or not task:
        raise Unanswered("stop_task takes task_id: the id Bash gave a background command (bash_1)")
    jobs = session.ctx.jobs
    job = jobs.get(task)
    if job is None:
        known = ", ".join(jobs.ids()) or "none"
        raise Unanswered(
            f"no task {task!r}: arnes's tasks are its background shells, by the id Bash gave them (this "
            f"session's: {known}); a running turn stops with interrupt"
        )
    if job.proc.poll() is not None:
        raise Unanswered(f"the background shell {task} had already finished (exit code {job.proc.returncode})")
    jobs.kill(job)
    return {}
