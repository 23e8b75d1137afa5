"""Diagnostic, not a fix: run arnes with the openai SDK's request `maybe_transform` skipped.

`client.chat.completions.create(**request)` walks the whole request (every message of the
conversation) against the SDK's TypedDict annotations before sending it. On the benchmark machine
the walk takes ~1 ms for a fresh conversation and ~0.36 ms more for every earlier tool step
(~37 ms per request after 100 steps), so it grows with the conversation and dominates arnes's
per-step cost over 100 steps. litellm avoids it by posting the body itself
(`openai_client.post("/chat/completions", body=..., cast_to=ChatCompletion, stream=...,
stream_cls=Stream[ChatCompletionChunk])`, see litellm/llms/openai/openai.py
`_request_without_sdk_transform`).

This wrapper only sizes the gain: it replaces the transform by "drop the omitted arguments",
then runs the arnes CLI unchanged. Compare with

    python bench/run.py --skip-startup --only arnes arnes-notransform --no-write
"""

from __future__ import annotations

import sys
from typing import Any

import openai.resources.chat.completions.completions as completions
from openai._types import NotGiven, Omit


def _no_transform(data: Any, expected_type: Any) -> Any:
    if isinstance(data, dict):
        return {k: v for k, v in data.items() if not isinstance(v, NotGiven | Omit)}
    return data


completions.maybe_transform = _no_transform  # type: ignore[assignment]

from arnes.cli import main  # noqa: E402

sys.exit(main())
