"""Reading a JSON file a person wrote (settings, .mcp.json, a copied Claude Code file): one clear
error naming the file and where it is wrong, never a traceback."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from arnes.errors import ConfigError


def read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from exc
    except OSError as exc:
        raise ConfigError(f"{path}: cannot be read ({exc.strerror})") from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
