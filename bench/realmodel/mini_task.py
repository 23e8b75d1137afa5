"""Run mini-swe-agent once on one eval task's workspace copy, against a real OpenAI-compatible server.

Runs inside bench/.venv-mini (never the project venv); bench/realmodel/run.py starts it as a
subprocess, one process per task, then runs the task's own `verify` in the copy itself:

    bench/.venv-mini/bin/python bench/realmodel/mini_task.py --base-url http://127.0.0.1:PORT/v1 \
        --model NAME --workspace COPY --task "..." --traj FILE [--config mini|mini_textbased]

It builds what the `mini` command builds from a built-in config (default: mini.yaml, the one `mini`
uses; mini_textbased.yaml is its variant that reads a ```bash block from the reply instead of a native
tool call): LitellmModel and LocalEnvironment (each action runs as a shell subprocess in the
workspace), driven by the non-interactive DefaultAgent (the `mini` command's InteractiveAgent
asks a person to confirm each step). The model is "openai/NAME" with api_base pointing at the
server, registered with litellm at price 0 (mini-swe-agent's recipe for local models). Sampling
settings are mini's own (none are sent, so the server's defaults apply) unless --temperature is
given. The step and wall-time limits are the only limits, the same ones the arnes side gets.

Prints one JSON line: exit_status, steps (model calls), input/output tokens summed from each
response's `usage`, loop_seconds. The trajectory is saved after every step (as `mini` does).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

# Before minisweagent/litellm are imported: no banner, no network fetch of the price list.
os.environ.setdefault("MSWEA_SILENT_STARTUP", "1")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_TELEMETRY", "False")

AGENT_KEYS = {
    "system_template",
    "instance_template",
    "step_limit",
    "cost_limit",
    "wall_time_limit_seconds",
    "max_consecutive_format_errors",
    "output_path",
}


def usage_of(messages: list[dict[str, Any]]) -> tuple[int, int]:
    """Prompt and completion tokens over every model response kept in the trajectory."""
    prompt = completion = 0
    for message in messages:
        response = (message.get("extra") or {}).get("response")
        usage = response.get("usage") if isinstance(response, dict) else None
        if isinstance(usage, dict):
            prompt += int(usage.get("prompt_tokens") or 0)
            completion += int(usage.get("completion_tokens") or 0)
    return prompt, completion


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--base-url", required=True, help="OpenAI-compatible base URL, ending in /v1")
    p.add_argument("--model", required=True, help="the model name the server serves")
    p.add_argument("--workspace", required=True)
    p.add_argument("--task", required=True)
    p.add_argument("--traj", required=True, help="save the trajectory here after every step")
    p.add_argument("--config", default="mini", choices=["mini", "mini_textbased"])
    p.add_argument("--step-limit", type=int, default=30)
    p.add_argument("--wall-seconds", type=int, default=600)
    p.add_argument("--temperature", type=float)
    p.add_argument("--context-window", type=int, default=8192)
    a = p.parse_args()

    scratch = tempfile.TemporaryDirectory(prefix="mini-task-")
    os.environ.setdefault("MSWEA_GLOBAL_CONFIG_DIR", str(Path(scratch.name) / "config"))

    import yaml
    from minisweagent.agents.default import DefaultAgent
    from minisweagent.config import builtin_config_dir
    from minisweagent.environments.local import LocalEnvironment

    if a.config == "mini":
        from minisweagent.models.litellm_model import LitellmModel as Model
    else:
        from minisweagent.models.litellm_textbased_model import LitellmTextbasedModel as Model

    config = yaml.safe_load((builtin_config_dir / f"{a.config}.yaml").read_text())
    agent_cfg = {k: v for k, v in config["agent"].items() if k in AGENT_KEYS}
    agent_cfg |= {"cost_limit": 0, "step_limit": a.step_limit, "wall_time_limit_seconds": a.wall_seconds}
    agent_cfg["output_path"] = Path(a.traj)

    model_cfg = dict(config.get("model") or {})
    model_cfg.pop("model_class", None)
    model_cfg["model_name"] = f"openai/{a.model}"
    registry = Path(scratch.name) / "model-registry.json"
    entry = {
        "max_tokens": a.context_window,
        "max_input_tokens": a.context_window,
        "max_output_tokens": a.context_window,
        "input_cost_per_token": 0.0,
        "output_cost_per_token": 0.0,
        "litellm_provider": "openai",
        "mode": "chat",
        "supports_function_calling": True,
    }
    # The bare name too: the model name the server echoes back, which litellm prices the response by.
    registry.write_text(json.dumps({f"openai/{a.model}": entry, a.model: entry}))
    model_cfg["litellm_model_registry"] = str(registry)
    model_cfg["cost_tracking"] = "ignore_errors"
    kwargs = (model_cfg.get("model_kwargs") or {}) | {"api_base": a.base_url, "api_key": "none"}
    if a.temperature is not None:
        kwargs["temperature"] = a.temperature
    model_cfg["model_kwargs"] = kwargs
    env_cfg = dict(config.get("environment") or {})
    env_cfg.pop("environment_class", None)
    env_cfg["cwd"] = a.workspace

    agent = DefaultAgent(Model(**model_cfg), LocalEnvironment(**env_cfg), **agent_cfg)
    started = time.perf_counter()
    try:
        info = agent.run(a.task)
        status = str(info.get("exit_status"))
    except Exception as exc:  # a crash is a result here, not a reason to lose the numbers
        status = f"crashed: {type(exc).__name__}: {exc}"[:300]
    loop_seconds = time.perf_counter() - started
    prompt, completion = usage_of(agent.messages)
    result = {
        "exit_status": status,
        "steps": agent.n_calls,
        "input_tokens": prompt,
        "output_tokens": completion,
        "loop_seconds": round(loop_seconds, 2),
    }
    print(json.dumps(result))
    scratch.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
