"""A Claude Code settings file read as arnes settings: a project's `.claude/settings.json` (and
`.local.json`), and the user's own `~/.claude/settings.json`.

Only what means the same in both is taken: `permissions.allow/ask/deny`, `defaultMode`, `hooks`
(extensions/hooks_config.py keeps the hooks arnes can run and names the rest) and the approval of
`.mcp.json` servers (`enabledMcpjsonServers` and the like, mcp/approval.py), `outputStyle`, and
the user's own `env` (a project's would set what the user's host-run hooks and git see). Every
other key is named in a warning, never fatal, in these files only (arnes's own files stay strict).
In the user's file the keys arnes does not use (theme, ...) are Claude Code's own business and are
not named on every run; a deny or ask rule arnes cannot read still is. The user's `model` is kept
aside (`CLAUDE_MODEL`): it means something only on Anthropic's API, which the runner knows.
Claude Code's path rules are relative to the project where arnes's absolute ones start with `/`:
`Read(./.env)` and `Edit(/src/**)` are the project's, `//etc/x` is absolute; they are translated.
"""

from __future__ import annotations

import contextlib
import re
from pathlib import Path
from typing import Any

from arnes.errors import ConfigError
from arnes.jsonfile import read_json
from arnes.mcp.approval import KEYS as APPROVAL_KEYS
from arnes.mcp.approval import approval_keys
from arnes.permissions.rules import RuleError, parse_rule

CLAUDE_MODEL = "claudeModel"  # the user's `model`, as (name, file), for runner.py `claude_model`
MODES = {
    "default": "default", "acceptEdits": "acceptEdits", "plan": "plan", "bypassPermissions": "bypass",
    "dontAsk": "dontAsk",
}  # fmt: skip
_PATH_RULE = re.compile(r"^(Read|Edit|Write|Glob|Grep)\((.*)\)$", re.DOTALL)


def translate_rule(raw: str) -> str:
    """Claude Code's spelling of a rule as arnes's (DESIGN §4): `Task` is Delegate; a path rule's
    anchors differ, the rest is the same."""
    if raw.strip() in ("Task", "Agent"):
        return "Delegate"
    match = _PATH_RULE.match(raw.strip())
    if not match:
        return raw.strip()
    tool, spec = match.groups()
    if spec.startswith("//"):
        spec = spec[1:]  # absolute
    elif spec.startswith("./"):
        spec = spec[2:]
    elif spec.startswith("/"):
        spec = spec[1:]  # relative to the settings' project
    return f"{tool}({spec})" if spec else tool


def read_claude_settings(path: Path, *, user: bool = False) -> tuple[dict[str, Any], list[str]]:
    """(arnes settings as a dict, warnings) from one Claude Code settings file; `user`: the user's own.
    An empty file is no settings: the sandbox stands an empty read-only file where a project has
    none while a session runs (a killed session can leave it behind)."""
    with contextlib.suppress(OSError):
        if path.stat().st_size == 0:
            return {}, []
    return claude_settings(read_json(path), path, user=user)


def claude_settings(raw: Any, path: Path | str, *, user: bool = False) -> tuple[dict[str, Any], list[str]]:
    """(arnes settings as a dict, warnings) from Claude Code settings found at `path` (a file, a flag);
    `user`: the user's own ~/.claude file (read quietly: Claude Code's own keys are no news there)."""
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: a settings file is a JSON object")
    warnings: list[str] = []
    # enabledPlugins is read by extensions/plugins.py, which says what it does with each
    taken = ("permissions", "hooks", "disableAllHooks", "outputStyle", "enabledPlugins", "env", "apiKeyHelper",
             *APPROVAL_KEYS)  # fmt: skip
    unused = [k for k in raw if k not in taken]
    perms = raw.get("permissions") or {}
    if not isinstance(perms, dict):
        raise ConfigError(f"{path}: permissions must be an object")
    unused += [
        f"permissions.{k}"
        for k in perms
        if k not in ("allow", "ask", "deny", "defaultMode", "additionalDirectories", "disableBypassPermissionsMode")
    ]
    if unused and not user:
        warnings.append(f"{path}: Claude Code keys arnes does not use, ignored: {', '.join(unused)}")
    kept: dict[str, Any] = {}
    for kind in ("allow", "ask", "deny"):
        rules = perms.get(kind) or []
        if not isinstance(rules, list):
            raise ConfigError(f"{path}: permissions.{kind} must be a list of rules")
        for rule in rules:
            translated = translate_rule(str(rule))
            try:
                parse_rule(translated)
            except RuleError as exc:
                if user and kind == "allow":
                    continue  # a grant arnes cannot read grants nothing: nothing to say on every run
                lost = " (this deny does not apply in arnes: add an arnes rule for it)" if kind == "deny" else ""
                warnings.append(f"{path}: permissions.{kind} rule {rule!r} skipped: {exc}{lost}")
                continue
            kept.setdefault(kind, []).append(translated)
    folders = perms.get("additionalDirectories")
    if isinstance(folders, list) and all(isinstance(f, str) for f in folders):
        kept["additionalDirectories"] = folders
    elif folders is not None:
        warnings.append(f"{path}: permissions.additionalDirectories must be a list of folders; ignored")
    if perms.get("disableBypassPermissionsMode") == "disable":
        kept["disableBypassPermissionsMode"] = "disable"
    elif "disableBypassPermissionsMode" in perms:
        warnings.append(f'{path}: permissions.disableBypassPermissionsMode takes "disable"; ignored')
    mode = perms.get("defaultMode")
    if mode is not None:
        if mode in MODES:
            kept["defaultMode"] = MODES[mode]
        else:
            warnings.append(f"{path}: permissions.defaultMode {mode!r} is not one arnes knows; ignored")
    result: dict[str, Any] = {"permissions": kept} if kept else {}
    result |= approval_keys(raw, str(path), warnings)
    helper = raw.get("apiKeyHelper")
    if isinstance(helper, str) and helper.strip():
        result["apiKeyHelper"] = helper.strip()
    elif helper is not None:
        warnings.append(f"{path}: apiKeyHelper must be a command line; ignored")
    off = raw.get("disableAllHooks")
    if isinstance(off, bool):
        result["disableAllHooks"] = off
    elif off is not None:
        warnings.append(f"{path}: disableAllHooks must be true or false; ignored")
    style = raw.get("outputStyle")
    if isinstance(style, str) and style.strip():
        result["outputStyle"] = style.strip()
    elif style is not None:
        warnings.append(f"{path}: outputStyle must be a style's name; ignored")
    model = raw.get("model")
    if user and isinstance(model, str) and model.strip():
        result[CLAUDE_MODEL] = (model.strip(), str(path))
    elif user and model is not None:
        warnings.append(f'{path}: model must be a model\'s name or alias (e.g. "sonnet"); ignored')
    if "env" in raw:  # a project's is named and dropped by config.py (user-only keys)
        env = raw["env"]
        if isinstance(env, dict) and all(isinstance(v, (str, int, float, bool)) for v in env.values()):
            result["env"] = {str(k): str(v).lower() if isinstance(v, bool) else str(v) for k, v in env.items()}
        else:
            warnings.append(f"{path}: env must be an object of names and string values; ignored")
    if "hooks" in raw:
        from arnes.extensions.hooks_config import lenient_hooks

        hooks, hook_warnings = lenient_hooks(raw["hooks"], str(path))
        warnings += hook_warnings
        if hooks:
            result["hooks"] = hooks
    return result, warnings
