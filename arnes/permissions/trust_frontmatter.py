"""The front-matter keys of a project's command and agent files that grant (DESIGN §10).

A command's or an agent definition's `model` chooses which model gets the user's prompts (and is
paid for), so a project's applies only in a trusted folder (extensions/command_turn.py,
extensions/agents.py). Trust covers it like a settings file: the value of every granting key of
every project file is part of the trust fingerprint (trust.py), so a pull that sets or changes one
asks again, while a pull that edits a command's text does not. The files are read by the loader's
own function (extensions/locations.py `project_files`): what is covered is what is used.

Every other key a project file may set only narrows or only describes: `allowed-tools` (a fence
that never grants, permissions/scope.py), an agent's `tools`, `disallowedTools` and
`permissionMode` (cut to the parent's), `name`, `description`, `argument-hint`, `user-invocable`,
`disable-model-invocation` (takes a skill from the model).
tests/test_trust_frontmatter.py fails when the loaders read a key that is in neither list.

A granting value must be a name on one line (frontmatter.py `Document.name`, as the loaders read
it); a file whose value is anything else is refused by its loader, grants nothing, and is one line
here saying so, never the value itself: a list or a page of text is neither shown nor formatted.
"""

from __future__ import annotations

from pathlib import Path

from arnes.errors import ConfigError
from arnes.extensions.locations import Kind, project_files
from arnes.host.files import HostFiles

GRANTS: dict[Kind, tuple[str, ...]] = {"commands": ("model",), "agents": ("model",)}
NARROWS_OR_DESCRIBES = frozenset(
    {"allowed-tools", "tools", "disallowedTools", "permissionMode", "name", "description"}
    | {"argument-hint", "user-invocable", "disable-model-invocation"}
)


def frontmatter_grants(workspace: Path) -> list[str]:
    """One line per granting key a project file sets, `PATH: KEY VALUE`, in the loaders' order
    (a value is taken as YAML gave it: a number counts as it is written)."""
    files = HostFiles(workspace)
    lines: list[str] = []
    for kind, keys in GRANTS.items():
        for found in project_files(kind, files)[0]:
            rel = found.document.path.relative_to(files.root)
            for name in keys:
                value = found.document.meta.get(name)
                if value is None:
                    continue
                try:
                    found.document.name(name)
                except ConfigError:
                    lines.append(f"{rel}: {name} refused, not a name (the file is not loaded)")
                    continue
                lines.append(f"{rel}: {name} {value!r}")
    return lines
