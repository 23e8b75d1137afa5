"""Claude Code's structured output (`--json-schema`, the SDKs' `output_format`): the run's answer
as JSON that a schema holds, for a program that reads it.

As in Claude Code, the model gives it by calling a tool, `StructuredOutput`, whose input schema
is the caller's: the tool checks the input against the schema (jsonschema, every error said, so
the model can send it again) and keeps the last valid one. The loop reminds a model that ends
without it (agent/loop.py) a few times, then the run ends as `error_max_structured_output_retries`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from pydantic import ConfigDict

from arnes.errors import ConfigError
from arnes.nesting import json_loads
from arnes.tools.base import NoPaths, ToolArgs, ToolContext, ToolError

NAME = "StructuredOutput"
MAX_REMINDERS = 3  # replies that end without the call, each answered with a reminder, before the run fails
REMINDER = (
    f"You have not called {NAME} yet. This run's answer must be given by calling {NAME} once, "
    "with input that matches its schema; call it now."
)
MAX_ERRORS = 10  # schema errors listed in one result
CHECK_SECONDS = (
    10  # one check of an answer; a `pattern` that backtracks or a schema that branches without end stops here
)
# The check runs in a child process (python -I: no workspace module, no user site): a `pattern` can
# backtrack for hours and `re` cannot be stopped in-process. `$ref`s resolve inside the schema
# only: nothing is fetched or read (jsonschema's default would fetch http and file URLs).
_CHECK = """
import json, sys
from jsonschema import Draft202012Validator
from referencing import Registry
from referencing.exceptions import NoSuchResource

def refuse(uri):
    raise NoSuchResource(ref=uri)

schema, value = json.load(sys.stdin)
try:
    errors = [("/".join(map(str, e.absolute_path)), e.message)
              for e in sorted(Draft202012Validator(schema, registry=Registry(retrieve=refuse)).iter_errors(value),
                              key=lambda e: list(map(str, e.absolute_path)))]
except Exception as exc:
    errors = [("", f"the schema cannot be applied: {type(exc).__name__}: {str(exc)[:300]}")]
json.dump(errors, sys.stdout)
"""


@dataclass
class StructuredAnswer:
    """The caller's schema and, once the model gave it, the answer (this session's state)."""

    schema: dict[str, Any]
    value: Any = None
    given: bool = False
    reminders: int = field(default=0)

    def note(self) -> str:
        """The system prompt's line: how this run's answer is given."""
        return (
            f"This run's final answer is structured: when the task is done, call the {NAME} tool once with the "
            "answer as its input (it must match the tool's schema). A reply without that call does not end the run."
        )


def parse_schema(text: str, workspace: Path | None = None) -> dict[str, Any]:
    """`--json-schema`'s value (JSON, or a file holding it) as a schema for a tool's input; one
    line naming the flag and the fix for anything else."""
    raw = text.strip()
    if not raw.startswith("{") and os.path.lexists(Path(raw).expanduser()):
        from arnes.host.flagfile import read_flag_file

        raw = read_flag_file(raw, "--json-schema", workspace)
    try:
        schema = json_loads(raw)
    except ValueError as exc:
        raise ConfigError(f"--json-schema: not JSON ({exc}); give a JSON Schema object, or a file holding one") from exc
    if not isinstance(schema, dict):
        raise ConfigError("--json-schema: give a JSON Schema object ({...}), not " + type(schema).__name__)
    from jsonschema import Draft202012Validator  # here: only a run with a schema pays for the import
    from jsonschema.exceptions import SchemaError

    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        raise ConfigError(f"--json-schema: not a valid JSON Schema: {exc.message}") from exc
    if schema.get("type", "object") != "object":
        raise ConfigError(
            '--json-schema: the answer must be an object ("type": "object"): it is a tool\'s input; '
            'wrap a list or a value in a property, e.g. {"type": "object", "properties": {"items": ...}}'
        )
    return schema


class StructuredArgs(ToolArgs):
    """Any input: the tool checks it against the caller's schema and says what is wrong."""

    model_config = ConfigDict(extra="allow")
    schema_: ClassVar[dict[str, Any]] = {"type": "object", "properties": {}}

    @classmethod
    def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
        return {k: v for k, v in cls.schema_.items() if k not in ("$schema", "$id", "title")}


class StructuredOutput(NoPaths[ToolArgs]):
    """Reads and writes nothing; keeps the answer for the run's result."""

    name = NAME
    read_only = True
    description = (
        "Give this run's final answer as structured data, once the task is done. The input must match "
        "the schema; an input that does not is refused with the reasons, and you call again."
    )

    def __init__(self, answer: StructuredAnswer):
        self.answer = answer
        self.args_model: type[ToolArgs] = type("StructuredOutputArgs", (StructuredArgs,), {"schema_": answer.schema})

    def run(self, args: ToolArgs, ctx: ToolContext) -> str:
        value = args.model_dump()
        errors = check(self.answer.schema, value)
        if errors:
            lines = [f"- {where or '(the input)'}: {message}" for where, message in errors]
            more = len(lines) - MAX_ERRORS
            shown = lines[:MAX_ERRORS] + ([f"- ... and {more} more"] if more > 0 else [])
            raise ToolError(
                "The input does not match the schema, nothing was kept:\n" + "\n".join(shown) + f"\nCall {NAME} again."
            )
        again = self.answer.given
        self.answer.value, self.answer.given = value, True
        kept = "Kept as this run's answer, in place of the one before." if again else "Kept as this run's answer."
        return kept + " Stop here: reply in one short sentence, with no more calls."


def check(schema: dict[str, Any], value: Any, seconds: float = CHECK_SECONDS) -> list[tuple[str, str]]:
    """The schema's errors for `value` as (path, message), checked in a child process bounded by
    CHECK_SECONDS; a check that takes longer is one error saying so."""
    try:
        done = subprocess.run(
            [sys.executable, "-I", "-c", _CHECK],
            input=json.dumps([schema, value]),
            capture_output=True,
            text=True,
            timeout=seconds,
            check=False,
        )
        found = json_loads(done.stdout)
    except subprocess.TimeoutExpired:
        return [
            (
                "",
                f"checking it against the schema took over {seconds:g} s (a pattern that backtracks on "
                "this input, or a schema that branches too much); send a simpler value",
            )
        ]
    except (OSError, ValueError):
        return [("", "arnes could not check it against the schema; send it again")]
    return [(str(w), str(m)) for w, m in found] if isinstance(found, list) else []
