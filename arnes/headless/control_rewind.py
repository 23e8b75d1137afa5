"""`rewind_files`: the SDK's `ClaudeSDKClient.rewind_files(user_message_id)`, answered with arnes's
checkpoints (DESIGN §17, commands/rewind.py): the files go back to how they were before that user
message's turn; the conversation stays, as in Claude Code.

A user message is known by its `uuid`: the one the SDK's caller sent with it, or the one arnes
gave it (`--replay-user-messages` shows it). The answer is Claude Code's (`canRewind`,
`filesChanged`, `insertions`, `deletions`); `dry_run` says what would change. What arnes will not
do is an error naming why, never a wait: a turn is running (the files are being changed), the
message is unknown, or a file changed outside arnes since (`arnes rewind N --code-only --force`
overwrites it, after a look at it). The rewind is a checkpoint of its own, as at the prompt.
"""

from __future__ import annotations

from arnes.agent.loop import Agent
from arnes.commands.rewind import Prepared, carry_out, prepare
from arnes.errors import ConfigError
from arnes.headless.channel import Json, Unanswered
from arnes.rewind.plan import NoSuchPoint, render_diff
from arnes.rewind.store import Store
from arnes.session import Session

FAILED = "Failed to rewind"  # Claude Code's words before the reason


def rewind_files(session: Session, agent: Agent, points: dict[str, int], request: Json, idle: bool) -> Json:
    message = request.get("user_message_id")
    if not isinstance(message, str) or not message:
        raise Unanswered("rewind_files takes user_message_id: the uuid of a user message of this session")
    checkpoints = session.checkpoints
    if checkpoints is None:
        raise Unanswered(f"{FAILED}: rewind is off in this session (rewind.enabled in your settings, or plan mode)")
    n = points.get(message)
    if n is None:
        raise Unanswered(
            f"{FAILED}: no file checkpoint for user message {message} in this session (send each message "
            'with a "uuid", or pass --replay-user-messages to be told the one arnes gave it)'
        )
    if not idle:
        raise Unanswered(f"{FAILED}: a turn is running; rewind once its result has come, or interrupt it first")
    try:
        prepared = prepare(checkpoints, n, "code")
    except (NoSuchPoint, ConfigError) as exc:
        raise Unanswered(f"{FAILED}: {exc}") from exc
    stats = _stats(prepared, checkpoints.store)
    if request.get("dry_run") is True:
        return {"canRewind": True, **stats}
    if prepared.conflicts:
        raise Unanswered(
            f"{FAILED}: changed outside arnes since that message: {', '.join(prepared.conflicts)} (look at "
            f"them; `arnes rewind {n} --code-only --force --session {session.id}` overwrites them)"
        )
    event = carry_out(
        checkpoints, prepared, lambda kind, label, extra: agent.mark(kind, label, **extra), session.bus.emit, None
    )
    if event.failed:
        raise Unanswered(f"{FAILED}: not restored: {'; '.join(event.failed)}")
    return {"canRewind": True, **stats}


def _stats(prepared: Prepared, store: Store) -> Json:
    """The files a rewind puts back and the lines it adds and removes (text files)."""
    if prepared.plan is None:
        return {"filesChanged": [], "insertions": 0, "deletions": 0}
    added = removed = 0
    for _, diff in render_diff(prepared.plan, store):
        for line in diff.splitlines():
            if line.startswith("+") and not line.startswith("+++"):
                added += 1
            elif line.startswith("-") and not line.startswith("---"):
                removed += 1
    return {"filesChanged": prepared.plan.paths, "insertions": added, "deletions": removed}
