"""Run mini-swe-agent once, non-interactively, against an OpenAI-compatible fake server.

Runs inside bench/.venv-mini (never the project venv); bench/run.py starts it as a subprocess:

    bench/.venv-mini/bin/python bench/mini_driver.py --base-url http://127.0.0.1:PORT/v1 \
        --workspace WS --task "..." [--traj FILE]

It builds what the `mini` command builds from its default config (minisweagent/config/mini.yaml):
LitellmModel (the `bash` tool-call format) and LocalEnvironment (each action runs as a shell
subprocess in the workspace). It uses the non-interactive DefaultAgent instead of the
InteractiveAgent, so no terminal rendering or prompting is measured (arnes runs with
--output-format json, which renders nothing either). Model "openai/fake", with api_base and
api_key in model_kwargs, routes litellm to the fake server. The fake model is registered with
litellm at a tiny price (mini-swe-agent's recipe for local models), and the cost limit is off.
With --traj the trajectory is saved after every step, as the `mini` command does by default
(arnes writes its JSONL trace by default too).

Prints one JSON line: exit_status, n_calls, cost, loop_seconds (agent.run() only, no start-up).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

# Before minisweagent/litellm are imported: no banner, no network fetch of the price list.
os.environ.setdefault("MSWEA_SILENT_STARTUP", "1")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_TELEMETRY", "False")


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--base-url", required=True, help="OpenAI-compatible base URL, ending in /v1")
    p.add_argument("--workspace", required=True)
    p.add_argument("--task", default="read a.txt 100 times")
    p.add_argument("--traj", help="save the trajectory here after every step (as `mini` does)")
    a = p.parse_args()

    # Scratch files stay outside the workspace the agent works in, and out of $HOME: the global
    # config dir (~/.config/mini-swe-agent) is created on import.
    scratch = tempfile.TemporaryDirectory(prefix="mini-driver-")
    os.environ.setdefault("MSWEA_GLOBAL_CONFIG_DIR", str(Path(scratch.name) / "config"))

    import yaml
    from minisweagent.agents.default import DefaultAgent
    from minisweagent.config import builtin_config_dir
    from minisweagent.environments.local import LocalEnvironment
    from minisweagent.models.litellm_model import LitellmModel

    config = yaml.safe_load((builtin_config_dir / "mini.yaml").read_text())
    # DefaultAgent's AgentConfig knows these keys; the interactive-only ones (mode, confirm_exit) are dropped.
    allowed = {
        "system_template",
        "instance_template",
        "step_limit",
        "cost_limit",
        "wall_time_limit_seconds",
        "max_consecutive_format_errors",
        "output_path",
    }
    agent_cfg = {k: v for k, v in config["agent"].items() if k in allowed}
    agent_cfg |= {"cost_limit": 0, "step_limit": 0}
    if a.traj:
        agent_cfg["output_path"] = Path(a.traj)

    model_cfg = dict(config.get("model") or {})
    model_cfg.pop("model_class", None)
    model_cfg["model_name"] = "openai/fake"
    # Register the fake model with a price, as mini-swe-agent's local-model guide says to, so cost
    # tracking takes its normal path (without it litellm prints a "Provider List" error every step).
    registry = Path(scratch.name) / "model-registry.json"
    price = {"input_cost_per_token": 1e-9, "output_cost_per_token": 1e-9}
    entry = {"max_tokens": 8192, "max_input_tokens": 1_000_000, "max_output_tokens": 8192}
    entry |= price | {"litellm_provider": "openai", "mode": "chat", "supports_function_calling": True}
    # "fake" too: the model name the server echoes back, which litellm prices the response by.
    registry.write_text(json.dumps({"openai/fake": entry, "fake": entry}))
    model_cfg["litellm_model_registry"] = str(registry)
    model_cfg["model_kwargs"] = (model_cfg.get("model_kwargs") or {}) | {
        "api_base": a.base_url,
        "api_key": "test",
    }
    env_cfg = dict(config.get("environment") or {})
    env_cfg.pop("environment_class", None)
    env_cfg["cwd"] = a.workspace

    agent = DefaultAgent(LitellmModel(**model_cfg), LocalEnvironment(**env_cfg), **agent_cfg)
    started = time.perf_counter()
    info = agent.run(a.task)
    loop_seconds = time.perf_counter() - started
    result = {"exit_status": info.get("exit_status"), "n_calls": agent.n_calls, "cost": agent.cost}
    print(json.dumps(result | {"loop_seconds": loop_seconds}))
    scratch.cleanup()
    return 0 if info.get("exit_status") == "Submitted" else 1


if __name__ == "__main__":
    sys.exit(main())
