"""Reading a JSON file a person wrote (settings, .mcp.json, a copied Claude Code file): one clear
error naming the file and where it is wrong, never a traceback (nesting.py bounds how deep it goes)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from arnes.errors import ConfigError
from arnes.nesting import Unreadable, json_loads


def read_json(path: Path) -> Any:
    try:
        return json_loads(path.read_text(encoding="utf-8"))
    except Unreadable as exc:
        raise ConfigError(f"{path}: not read: {exc}; fix the file or move it aside") from None
    except MemoryError:
        raise ConfigError(f"{path}: too large to read; fix the file or move it aside") from None
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from exc
    except OSError as exc:
        raise ConfigError(f"{path}: cannot be read ({exc.strerror})") from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
