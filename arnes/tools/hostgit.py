"""The Bash tool's host route for git (docs/shell.md, "git"): `.git` is read-only inside
bubblewrap, so a command permissions/gitroute.py reads as one of git's state-writing commands
(`git add PATHS`, `git commit -m MSG`, ...) runs on the host through host/gitwrite.py instead,
once the gate has allowed it like any command.

What the sandbox did for such a command is done here: a file a Read rule hides is an unreadable
stand-in in the sandbox, so `git add .env` failed there; on the host git would store the real
file in the repository, so a command that would store one is refused. The result says where it
ran, and that the repository's hooks did not run (Claude Code would run them).
"""

from __future__ import annotations

import subprocess

from arnes.host.freeze import NotHeld, held
from arnes.host.git import Repository, config_value, repository
from arnes.host.gitwrite import changed_tracked, work_tree, write_command
from arnes.permissions.gitroute import HostGit
from arnes.tools.base import ToolContext, ToolError
from arnes.tools.processes import Finished, result_lines, run_foreground
from arnes.tools.responses import Output, bash_shape

ON_HOST = (
    "(ran on the host through arnes's git runner, not in the sandbox, where .git is read-only; "
    "the repository's hooks, filters, fsmonitor and editor did not run)"
)
NOT_SIGNED = "(not signed: arnes does not run a signing program on the host; sign it yourself if you need to)"
ROUTE_HINT = (
    "(.git is read-only in the sandbox. arnes runs git add, git commit -m, git restore --staged, git rm --cached, "
    "git reset [HEAD] PATHS and git switch -c/checkout -b/branch NAME on the host when that one git command is "
    "the whole Bash command: run them one per call, with literal paths and message, no cd, pipe or &&)"
)


def run_on_host(route: HostGit, timeout_ms: int, ctx: ToolContext) -> Output:
    """Run `route` on the host; ToolError (for the model) when it failed or was not run."""
    repo = repository(ctx.workspace)
    if isinstance(repo, str):
        raise ToolError(_not_run(route, repo))
    try:
        with held():  # nothing arnes started changes the workspace between the checks and git's exit
            done = _checked_run(repo, route, timeout_ms, ctx)
    except NotHeld as exc:
        raise ToolError(_not_run(route, str(exc))) from None
    parts = [*result_lines(done, timeout_ms / 1000), ON_HOST]
    if route.subcommand == "commit" and done.exit_code == 0 and _signs(repo):
        parts.append(NOT_SIGNED)
    text = "\n".join(parts)
    if done.timed_out or done.exit_code != 0:
        raise ToolError(text)
    return Output(text, lambda: bash_shape(done.stdout, done.stderr))


def _checked_run(repo: Repository, route: HostGit, timeout_ms: int, ctx: ToolContext) -> Finished:
    # The repository's own config first: before it is known to include no other file, no git
    # may run in the repository (git would read that file, which may be a FIFO held open).
    prepared = write_command(repo, list(route.args))
    if isinstance(prepared, str):
        raise ToolError(_not_run(route, prepared))
    if route.scans != "none":
        problem = _stores_unseen(repo, route, ctx)
        if problem:
            raise ToolError(_not_run(route, problem))
    ctx.changes.before_command()
    return run_foreground(prepared.argv, prepared.cwd, timeout_ms / 1000, ctx.max_output_chars, prepared.env)


def _stores_unseen(repo: Repository, route: HostGit, ctx: ToolContext) -> str | None:
    """Why the command must not read the working tree here: a repository inside that git would
    look into, or a file a Read rule hides that it would store."""
    found = work_tree(repo, list(route.pathspecs), untracked=route.scans == "new")
    if isinstance(found, str):
        return found
    if found.nested:
        return (
            f"it would look into {found.nested[0]}, a repository inside this one (git runs git status there, "
            "with that repository's own configuration, which arnes cannot turn off); name the files instead, "
            f"or leave it out with -- . ':!{found.nested[0].rstrip('/')}'"
        )
    if not ctx.read_rules():
        return None
    gone = set(found.removed)
    hidden = next((f for f in found.files if f not in gone and ctx.hidden("Read", ctx.workspace / f)), None)
    if hidden is None:
        changed = changed_tracked(repo, list(route.pathspecs), lambda f: ctx.hidden("Read", ctx.workspace / f))
        if isinstance(changed, str):
            return changed
        hidden = next(iter(changed), None)
    if hidden is None:
        return None
    return (
        f"it would store {hidden} in the repository, and a Read rule hides that file (the sandbox would not have "
        f"let git read it); name the files instead, or leave it out with -- . ':!{hidden}'"
    )


def _not_run(route: HostGit, why: str) -> str:
    where = "arnes runs it on the host, since .git is read-only in the sandbox"
    return f"git {route.subcommand} was not run ({where}): {why}"


def _signs(repo: Repository) -> bool:
    """Whether the user's (or the repository's) config asks for signed commits."""
    try:
        value = config_value(repo, "commit.gpgsign")
    except subprocess.TimeoutExpired:
        return False
    return value is not None and value.lower() in ("true", "yes", "on", "1")
