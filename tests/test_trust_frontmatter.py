"""Every front-matter key the loaders read is either a grant (in the trust fingerprint) or only
narrows or describes (permissions/trust_frontmatter.py): a new key fails here until it is placed."""

from __future__ import annotations

import ast
from pathlib import Path

import arnes
from arnes.permissions.trust_frontmatter import GRANTS, NARROWS_OR_DESCRIBES

LOADERS = ("extensions/commands.py", "extensions/agents.py", "extensions/skills.py")


def _keys_read() -> set[str]:
    keys: set[str] = set()
    for rel in LOADERS:
        tree = ast.parse((Path(arnes.__file__).parent / rel).read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("text", "name", "names")
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
            ):
                keys.add(node.args[0].value)
    return keys


def test_every_key_read_is_a_grant_or_only_narrows() -> None:
    read = _keys_read()
    assert {"model", "allowed-tools", "tools", "permissionMode"} <= read  # the scan sees the loaders
    grants = {key for keys in GRANTS.values() for key in keys}
    assert not grants & NARROWS_OR_DESCRIBES
    assert read <= grants | NARROWS_OR_DESCRIBES, f"place these keys: {sorted(read - grants - NARROWS_OR_DESCRIBES)}"
