"""Bash, BashOutput and KillShell: shell commands in the workspace, inside the sandbox."""

from __future__ import annotations

from pydantic import AliasChoices, Field

from arnes.envlimits import DAY_MS
from arnes.permissions.gitroute import git_writes, host_git
from arnes.sandbox.base import Started
from arnes.tools import processes
from arnes.tools.base import ESSENTIAL, BaseTool, ToolArgs, ToolContext, ToolError
from arnes.tools.hostgit import ROUTE_HINT, run_on_host
from arnes.tools.processes import EXIT_LINE, Group, Job, result_lines, run_started
from arnes.tools.responses import Output, bash_shape


def exit_code_of(result: str) -> int | None:
    """The exit code a Bash result begins with; None for a command cut off by its time limit."""
    first = result.split("\n", 1)[0]
    number = first.removeprefix(EXIT_LINE)
    return int(number) if first.startswith(EXIT_LINE) and number.lstrip("-").isdigit() else None


class BashArgs(ToolArgs):
    command: str = Field(description="The command line, run with bash in the workspace.")
    timeout: int | None = Field(
        None,
        ge=1,
        le=DAY_MS,
        description="Milliseconds (default 120000, at most 600000, unless the user set other limits).",
        json_schema_extra=ESSENTIAL,
    )
    run_in_background: bool = Field(False, description="Return an id at once; read it with BashOutput.")


class Bash(BaseTool[BashArgs]):
    name = "Bash"
    description = (
        "Run a shell command in the workspace (sandboxed when a sandbox is on). Returns exit code, stdout "
        "and stderr. For servers and watchers use run_in_background, then BashOutput and KillShell."
    )
    args_model = BashArgs
    read_only = False

    def command(self, args: BashArgs) -> str | None:
        return args.command

    def run(self, args: BashArgs, ctx: ToolContext) -> str:
        if not args.command.strip():
            raise ToolError("The command is empty. Give the command line to run.")
        # git's state-writing commands run on the host where the sandbox holds .git read-only (not
        # for a command allowed only because it reads, nor in the background)
        route = host_git(args.command) if ctx.host_git and not ctx.confined and not args.run_in_background else None
        # The user's BASH_DEFAULT_TIMEOUT_MS / BASH_MAX_TIMEOUT_MS (envlimits.py); past the maximum,
        # the maximum, as in Claude Code (the model's number is a wish, the user's is the limit).
        ms = min(args.timeout or ctx.bash_default_ms, ctx.bash_max_ms)
        if route is not None:
            return run_on_host(route, ms, ctx)
        sandbox = ctx.read_only_sandbox if ctx.confined and ctx.read_only_sandbox else ctx.sandbox
        ctx.changes.before_command()
        # SessionStart hooks' CLAUDE_ENV_FILE variables, set inside the sandbox by `env` (names and
        # values were checked when read: extensions/hook_env.py)
        argv = ["env", *(f"{k}={v}" for k, v in ctx.command_env.items()), "bash", "-c", args.command]
        argv = argv if ctx.command_env else ["bash", "-c", args.command]
        if args.run_in_background:
            with sandbox.wrap(argv, ctx.workspace, lasting=True) as cmd:
                job = ctx.jobs.start(cmd.argv, ctx.workspace, args.command, cmd.env, cmd.pass_fds)
            said = f"Started in the background as {job.id}. Read its output with BashOutput(id={job.id!r})."
            return Output(said, lambda: bash_shape("", "", job.id))
        timeout = ms / 1000

        def start() -> Started:
            # The session's sandbox if it keeps one (bubblewrap's zygote), else one for this command.
            kept = sandbox.start(argv, ctx.workspace)
            if kept is not None:
                return kept
            with sandbox.wrap(argv, ctx.workspace) as cmd:
                return Group(processes.spawn(cmd.argv, ctx.workspace, cmd.env, cmd.pass_fds))

        try:
            done = run_started(start, timeout, ctx.max_output_chars)
        finally:
            sandbox.settle()
        parts = result_lines(done, timeout)
        parts += [f"({note})" for note in sandbox.notes()]
        failed = done.timed_out or (done.exit_code not in (0, None))
        if failed and ctx.host_git and git_writes(args.command):
            parts.append(ROUTE_HINT)
        text = "\n".join(parts)
        if failed:
            raise ToolError(text)
        return Output(text, lambda: bash_shape(done.stdout, done.stderr))


class JobArgs(ToolArgs):
    # Models trained on Claude Code send `bash_id` (BashOutput) or `shell_id` (KillShell): same thing.
    id: str = Field(
        description="The id Bash returned for a background command, e.g. bash_1.",
        validation_alias=AliasChoices("id", "bash_id", "shell_id"),
    )


def _job(args: JobArgs, ctx: ToolContext) -> Job:
    job = ctx.jobs.get(args.id)
    if job is None:
        known = ", ".join(ctx.jobs.ids()) or "none"
        raise ToolError(f"No background shell {args.id!r}. Running or finished ones: {known}.")
    return job


class BashOutput(BaseTool[JobArgs]):
    name = "BashOutput"
    description = "New output of a background command since the last read, and whether it is still running."
    args_model = JobArgs
    read_only = True

    def run(self, args: JobArgs, ctx: ToolContext) -> str:
        job = _job(args, ctx)
        output = ctx.jobs.new_output(job, ctx.max_output_chars)
        code = job.proc.poll()
        status = "running" if code is None else f"finished with exit code {code}"
        return f"{job.id}: {status}\n{output or '(no new output)'}"


class KillShell(BaseTool[JobArgs]):
    name = "KillShell"
    description = "Stop a background command (and everything it started)."
    args_model = JobArgs
    read_only = False

    def run(self, args: JobArgs, ctx: ToolContext) -> str:
        job = _job(args, ctx)
        if job.proc.poll() is not None:
            return f"{job.id} had already finished with exit code {job.proc.returncode}."
        ctx.jobs.kill(job)
        return f"Killed {job.id}."


def as_listing(name: str, raw: dict[str, object]) -> dict[str, object] | None:
    """Claude Code's `LS {path, ignore}` as the Bash call that lists that folder (`ls -1Ap`: one
    name a line, folders with `/`), judged by the rules as any `ls` of it; None for another name.
    `ignore` globs are not applied (the names they would drop are names, not contents)."""
    if name != "LS":
        return None
    import shlex

    path = raw.get("path")
    folder = path if isinstance(path, str) and path else "."
    return {"command": f"ls -1Ap -- {shlex.quote(folder)}"}
