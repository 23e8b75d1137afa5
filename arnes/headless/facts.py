"""What Claude Code's Agent SDKs learn of a session before its first turn: the keys of the init
message only a running session knows, and the answer to the SDK's `initialize` request."""

from __future__ import annotations

import os
from typing import Any

from arnes import __version__
from arnes.extensions.commands import Catalog, load_catalog
from arnes.extensions.output_styles import BUILT_IN, DEFAULT
from arnes.extensions.plugins import enabled_plugins
from arnes.session import Session
from arnes.ui.sdk_messages import mode_name
from arnes.ui.slash import BUILTINS


def commands(session: Session) -> Catalog:
    """The custom `/NAME` commands a message may start with (extensions/commands.py)."""
    return load_catalog(session.host, BUILTINS)


def style_name(session: Session) -> str:
    """The output style in use (extensions/output_styles.py), as Claude Code names it."""
    return session.output_style.name if session.output_style is not None else DEFAULT


def init_keys(session: Session, catalog: Catalog) -> dict[str, Any]:
    skills = session.skill_catalog.skills() if session.skill_catalog else []
    return {
        "permissionMode": mode_name(session.mode, session.never_ask),
        "apiKeySource": "ANTHROPIC_API_KEY" if session.provider.name == "anthropic" else "none",
        # Required by the TypeScript SDK's type; no Claude Code runs here, so it is arnes's own version.
        "claude_code_version": __version__,
        "arnes_version": __version__,
        "slash_commands": catalog.names(),
        "output_style": style_name(session),
        "skills": [skill.name for skill in skills],
        "agents": sorted(session.agents.agents) if session.agents else [],
        # Claude Code's `{name, path}` of each plugin on: the SDKs print it to show a plugin loaded.
        "plugins": [{"name": p.name, "path": str(p.root)} for p in enabled_plugins(None, session.host.root)[0]],
    }


def initialize_response(session: Session, catalog: Catalog) -> dict[str, Any]:
    """Claude Code's `SDKControlInitializeResponse`."""
    agents = session.agents.agents.values() if session.agents else []
    model = session.provider.model
    return {
        "commands": [
            {"name": c.name, "description": c.description, "argumentHint": c.hint} for c in catalog.commands.values()
        ],
        "agents": [{"name": a.name, "description": a.description} for a in agents],
        "output_style": style_name(session),
        "available_output_styles": list(
            dict.fromkeys([DEFAULT, *(s.name for s in BUILT_IN.values()), style_name(session)])
        ),
        "models": [{"value": model, "displayName": model, "description": f"{session.provider.name}, through arnes"}],
        "account": {},
        "pid": os.getpid(),
    }
