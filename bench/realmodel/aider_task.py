"""Run aider once on one Exercism task's workspace copy, the way aider's own benchmark does.

Runs inside bench/.venv-aider (never the project venv); bench/realmodel/exercism.py starts it as a
subprocess, one process per task, then runs the task's own `verify` in the copy itself:

    bench/.venv-aider/bin/python bench/realmodel/aider_task.py --base-url http://127.0.0.1:PORT/v1 \
        --model openai/NAME --ctx 8192 --workspace COPY --pristine TASK/workspace \
        --message-file PROMPT --solution x.py --test x_test.py --result R.json --history H.md

What it copies from `run_test_real` in aider's benchmark/benchmark.py (Aider-AI/aider): the
coder is built in-process with `Coder.create(model, "whole", io, fnames=<the solution files>,
use_git=False, stream=False, cache_prompts=True, suggest_shell_commands=False,
ignore_mentions=<the test files>)` (no git, so no repo map and no commits), `io` is
`InputOutput(pretty=False, yes=True, chat_history_file=...)`, file mentions are switched off, and
the same coder (so the same chat) gets up to `--tries` messages: the instructions, then, while the
tests are red, their output followed by the benchmark's `test_failures` text. Between tries the
pristine test files are copied back and `pytest` runs in the workspace (180 s, output cleaned of
timings and the folder's path), as `run_unit_tests` does. The model's metadata (context window,
price 0) and settings are registered the way the benchmark's `--read-model-settings` does, so
litellm knows the local model.

Writes --result after every try (so a run killed at the wall-time limit still says how far it
got): tests_outcomes, prompt/completion tokens as aider counts them, and aider's own counters.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

# Before aider/litellm are imported: no fetch of litellm's price list.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_TELEMETRY", "False")

# aider's benchmark/prompts.py, as it is at the aider-chat release installed.
TEST_FAILURES = """
####

See the testing errors above.
The tests are correct, don't try and change them.
Fix the code in {file_list} to resolve the errors.
"""
TEST_TIMEOUT = 60 * 3  # run_unit_tests


def cleanup_test_output(output: str, testdir: Path) -> str:
    """The benchmark's: timings go (so the model sees the same text twice), the path becomes the name."""
    res = re.sub(r"\bin \d+\.\d+s\b", "", output)
    return res.replace(str(testdir), str(testdir.name))


def run_unit_tests(workspace: Path, pristine: Path, tests: list[str], history: Path) -> str | None:
    """Restore the pristine test files, run pytest; the output when red, None when green."""
    for name in tests:
        shutil.copy(pristine / name, workspace / name)
    pytest = Path(sys.executable).parent / "pytest"
    r = subprocess.run(
        [str(pytest)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=TEST_TIMEOUT,
        cwd=workspace,
        encoding="utf-8",
        errors="replace",
        check=False,
    )
    res = cleanup_test_output(r.stdout, workspace)
    with history.open("a") as fh:
        fh.write(f"```\n{res}\n```")
    return None if r.returncode == 0 else res


def register_model(name: str, ctx: int, folder: Path) -> tuple[Path, Path]:
    metadata = folder / "model-metadata.json"
    metadata.write_text(
        json.dumps(
            {
                name: {
                    "max_tokens": ctx,
                    "max_input_tokens": ctx,
                    "max_output_tokens": ctx,
                    "input_cost_per_token": 0.0,
                    "output_cost_per_token": 0.0,
                    "litellm_provider": "openai",
                    "mode": "chat",
                }
            },
            indent=2,
        )
    )
    settings = folder / "model-settings.yml"
    settings.write_text(f"- name: {name}\n  edit_format: whole\n")
    return metadata, settings


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--base-url", required=True)
    p.add_argument("--model", required=True, help="litellm name, e.g. openai/NAME")
    p.add_argument("--ctx", type=int, default=8192, help="the server's context window")
    p.add_argument("--workspace", required=True)
    p.add_argument("--pristine", required=True, help="the task's own workspace: the test files come from here")
    p.add_argument("--message-file", required=True)
    p.add_argument("--solution", action="append", default=[], help="a file aider edits (repeatable)")
    p.add_argument("--test", action="append", default=[], help="a test file, restored before each test run")
    p.add_argument("--tries", type=int, default=2)
    p.add_argument("--result", required=True)
    p.add_argument("--history", required=True)
    a = p.parse_args()

    os.environ["OPENAI_API_BASE"] = a.base_url  # what aider's --openai-api-base sets
    os.environ.setdefault("OPENAI_API_KEY", "x")
    workspace = Path(a.workspace).resolve()
    os.chdir(workspace)

    import importlib_resources
    from aider import models, sendchat
    from aider.coders import Coder, base_coder
    from aider.io import InputOutput

    with tempfile.TemporaryDirectory(prefix="aider-model-") as tmp:
        metadata, settings = register_model(a.model, a.ctx, Path(tmp))
        resource = importlib_resources.files("aider.resources").joinpath("model-metadata.json")
        models.register_litellm_models([str(resource), str(metadata)])
        models.register_models([str(settings)])

    # "Don't give up when benchmarking": the wall-time limit of the caller is the only limit.
    long_timeout = 24 * 60 * 60
    sendchat.RETRY_TIMEOUT = long_timeout
    base_coder.RETRY_TIMEOUT = long_timeout
    models.RETRY_TIMEOUT = long_timeout

    fnames = [workspace / name for name in a.solution]
    file_list = " ".join(f.name for f in fnames)
    history = Path(a.history)
    io = InputOutput(pretty=False, yes=True, chat_history_file=history)
    main_model = models.Model(a.model, weak_model=None, editor_model=None, editor_edit_format=None)
    coder = Coder.create(
        main_model,
        "whole",
        io,
        fnames=[str(f) for f in fnames],
        use_git=False,
        stream=False,
        verbose=False,
        cache_prompts=True,
        suggest_shell_commands=False,
        ignore_mentions=set(a.test),
    )
    coder.show_announcements()
    coder.get_file_mentions = lambda x: set()  # no loading of any other files

    instructions = Path(a.message_file).read_text()
    outcomes: list[bool] = []
    timeouts = syntax_errors = indentation_errors = 0
    dur = 0.0

    def save(tries_started: int) -> None:
        result: dict[str, Any] = {
            "tries_started": tries_started,
            "tests_outcomes": outcomes,
            "duration": round(dur, 1),
            "prompt_tokens": coder.total_tokens_sent,
            "completion_tokens": coder.total_tokens_received,
            "test_timeouts": timeouts,
            "num_error_outputs": io.num_error_outputs,
            "num_malformed_responses": coder.num_malformed_responses,
            "num_exhausted_context_windows": coder.num_exhausted_context_windows,
            "syntax_errors": syntax_errors,
            "indentation_errors": indentation_errors,
        }
        Path(a.result).write_text(json.dumps(result, indent=2) + "\n")

    for i in range(a.tries):
        save(i + 1)
        start = time.time()
        coder.run(with_message=instructions, preproc=False)
        dur += time.time() - start
        try:
            errors = run_unit_tests(workspace, Path(a.pristine), a.test, history)
        except subprocess.TimeoutExpired:
            errors = "Tests timed out!"
            timeouts += 1
        outcomes.append(not errors)
        if not errors:
            break
        lines = errors.splitlines()
        syntax_errors += sum(1 for line in lines if line.startswith("SyntaxError"))
        indentation_errors += sum(1 for line in lines if line.startswith("IndentationError"))
        instructions = "\n".join(lines) + TEST_FAILURES.format(file_list=file_list)
    save(len(outcomes))
    return 0


if __name__ == "__main__":
    sys.exit(main())
