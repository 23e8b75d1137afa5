"""Which settings apply in this folder: the project's grants only where the user trusts it.

Sits between the settings files (config.py) and the runner: reads the user's trust record, asks
at a terminal, and says on stderr what was ignored and which key was withheld (DESIGN §10).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from arnes.config import EffectiveConfig, load_config
from arnes.errors import ConfigError
from arnes.llm.base import PROFILES
from arnes.permissions.grants import describe
from arnes.safe import visible


def trusted_config(workspace: Path, flag: bool, terminal: bool) -> EffectiveConfig:
    """The settings with the project's grants applied only in a folder the user trusts (DESIGN §10).

    `--trust` trusts for this run; a record in the user's config folder trusts until the granting
    files change; at a terminal the user is asked once (a "no" is remembered too). Otherwise the
    grants are ignored and named in one warning on stderr.
    """
    from arnes.permissions.trust import TrustStore

    store = TrustStore.default()
    said: list[str] = []
    try:
        status = "trusted" if flag else store.status(workspace)
    except ConfigError as exc:  # a broken record trusts nothing, but does not stop arnes everywhere
        said.append(say(str(exc)))
        status, terminal = "unknown", False
    cfg = load_config(workspace, trusted=status == "trusted")
    if cfg.ignored and terminal and status in ("unknown", "changed"):
        from arnes.permissions.trust import fingerprint
        from arnes.permissions.trust_frontmatter import frontmatter_grants
        from arnes.ui.trust_prompt import ask_trust

        shown = fingerprint(workspace)  # what the user saw is what gets trusted, nothing newer
        yes = ask_trust(workspace, cfg.ignored, status == "changed", models=frontmatter_grants(workspace))
        try:
            store.record(workspace, yes, shown)
        except ConfigError as exc:  # the answer still holds for this run
            said.append(say(str(exc)))
        if yes and fingerprint(workspace) == shown:
            cfg = load_config(workspace, trusted=True)
        status = "trusted" if cfg.trusted else "declined"
    if cfg.ignored:
        said.append(say(untrusted_warning(workspace, cfg)))
    cfg.said += said
    cfg.trust_status = "--trust, for this run" if flag else status
    return cfg


def say(warning: str) -> str:
    """A warning on stderr before the run, returned so that JSON readers get it too (EffectiveConfig.said)."""
    print(f"arnes: warning: {visible(warning)}", file=sys.stderr)
    return warning


def untrusted_warning(workspace: Path, cfg: EffectiveConfig) -> str:
    """One line naming every ignored grant, per file: what the user needs to decide on trust."""
    parts = []
    for path, grants in cfg.ignored.items():
        where = path.relative_to(workspace) if path.is_relative_to(workspace) else path
        names = ", ".join(describe(name)[1:-1] for name in grants)  # a pricing key is any string: escaped
        parts.append(f"{where}: ignored until you trust this folder: {names}")
    return "; ".join(parts) + " (`arnes trust` to apply them, or --trust for one run)"


def warn_withheld_keys(cfg: EffectiveConfig) -> None:
    """Say so when a repository's base URL gets no key: the user may wonder why it answers 401."""
    chosen = [(cfg.provider, cfg.base_url, cfg.repo_chose_url())]
    chosen += [(m.provider or cfg.provider, m.base_url, cfg.repo_chose_url(r)) for r, m in cfg.roles.items()]
    for provider, url, from_repo in chosen:
        env = PROFILES[provider].api_key_env
        if from_repo and url and env and os.environ.get(env):
            cfg.said.append(
                say(
                    f"the base URL {url} comes from the project's settings: your {env} is "
                    "not sent to it (set the URL in your user settings or with --base-url to send it)"
                )
            )
