"""What an untrusted project's settings may still decide: only what narrows (DESIGN §10).

A clone's `.arnes/settings.json` is someone else's choice. Its `deny`/`ask` rules, a stricter
`defaultMode`, `disableBypassPermissionsMode`, `sandbox.network: false` and lower limits keep
applying; everything else is a grant and waits until the user trusts the folder. The list of
restrictions is closed: a key added to the settings later is a grant until someone decides
otherwise ("when in doubt, no").
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

# plan < dontAsk < default < acceptEdits < bypass: a mode further left only narrows (dontAsk denies
# what default would ask; plan, what it would write).
MODE_RANK = {"plan": 0, "dontAsk": 1, "default": 2, "acceptEdits": 3, "bypass": 4}
# Short names for the keys people know from the docs (`allow`, not `permissions.allow`).
SHORT = {"permissions.allow": "allow", "permissions.defaultMode": "defaultMode"}


@dataclass
class Split:
    """One settings file cut in two: what still applies, and the grants that wait for trust."""

    kept: dict[str, Any] = field(default_factory=dict)
    ignored: dict[str, Any] = field(default_factory=dict)  # dotted key -> the value it would set

    def keep(self, section: str, key: str, value: Any) -> None:
        self.kept.setdefault(section, {})[key] = value

    def ignore(self, name: str, value: Any) -> None:
        if value in (None, [], {}, ""):
            return  # an empty value grants nothing
        self.ignored[SHORT.get(name, name)] = value


def split_grants(data: Mapping[str, Any], mode: str, limits: Mapping[str, float | None]) -> Split:
    """Cut validated settings (only the keys the file set) into restrictions and grants.

    `mode` and `limits` are what the user's own layers decided: a project mode or limit is a
    restriction only if it is narrower than those.
    """
    split = Split()
    for section, value in data.items():
        if section == "permissions":
            _permissions(split, value, mode)
        elif section == "sandbox":
            for key, item in value.items():
                if key == "network" and item is False:
                    split.keep("sandbox", key, item)
                else:
                    split.ignore(f"sandbox.{key}", item)
        elif section == "limits":
            for key, item in value.items():
                current = limits.get(key)
                if item is not None and (current is None or item < current):
                    split.keep("limits", key, item)
                elif item is not None and item != current:
                    split.ignore(f"limits.{key}", item)
        elif section == "progress" and value is False:
            split.kept["progress"] = False
        elif section == "disabledMcpjsonServers" or (section == "enableAllProjectMcpServers" and value is False):
            split.kept[section] = value  # servers that do not start (mcp/approval.py): only narrows
        elif section == "hooks_fail" and value == "closed":
            split.kept["hooks_fail"] = "closed"  # a failing hook blocks: only narrows
        elif section == "disableAllHooks":  # a project's turns off only its own hooks (config.py): narrows
            if value is True:
                split.kept[section] = True
        elif section == "hooks":  # they run commands: each event's hooks wait for trust
            for event, matchers in value.items():
                split.ignore(f"hooks.{event}", matchers)
        elif isinstance(value, Mapping):
            for key, item in value.items():
                split.ignore(f"{section}.{key}", item)
        else:
            split.ignore(section, value)
    return split


def _permissions(split: Split, value: Mapping[str, Any], mode: str) -> None:
    for key, item in value.items():
        narrower = key == "defaultMode" and item is not None and MODE_RANK[item] <= MODE_RANK[mode]
        no_bypass = key == "disableBypassPermissionsMode" and item == "disable"  # only takes a mode away
        if key in ("deny", "ask") or narrower or no_bypass:
            split.keep("permissions", key, item)
        else:
            split.ignore(f"permissions.{key}", item)


def describe(value: Any) -> str:
    """A value as the trust prompt shows it: JSON, with every control character escaped."""
    return json.dumps(value, ensure_ascii=True)
