"""features.json: the work as a list, one feature active at a time (WIP=1), promoted to `passing`
only by a green verify command. The model has no tool that sets a state: the file tools and the
sandbox keep features.json read-only."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError

from arnes.errors import ConfigError, validation_summary
from arnes.host.files import HostFiles, Refused
from arnes.nesting import Unreadable, json_loads

FILE = "features.json"
State = Literal["not_started", "active", "blocked", "passing"]


class Feature(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str = Field(min_length=1)
    description: str = Field(min_length=1)
    verify: str = Field(min_length=1, description="The command that proves it works.")
    state: State = "not_started"


class FeatureList(BaseModel):
    """Read from `{"features": [...]}` or from a bare list (the seed's shape); saved in the shape read."""

    model_config = ConfigDict(extra="forbid")
    features: list[Feature]
    _bare_list: bool = PrivateAttr(default=False)

    @classmethod
    def from_json(cls, raw: Any) -> FeatureList:
        if isinstance(raw, list):
            features = cls.model_validate({"features": raw})
            features._bare_list = True
            return features
        return cls.model_validate(raw)

    def to_json(self) -> str:
        if self._bare_list:
            return json.dumps([f.model_dump() for f in self.features], indent=2, ensure_ascii=False)
        return self.model_dump_json(indent=2)

    def active(self) -> Feature | None:
        return next((f for f in self.features if f.state == "active"), None)

    def next_up(self) -> Feature | None:
        """The active feature (WIP=1: it is finished first), else the first not started."""
        return self.active() or next((f for f in self.features if f.state == "not_started"), None)

    def get(self, feature_id: str) -> Feature:
        for feature in self.features:
            if feature.id == feature_id:
                return feature
        raise ConfigError(f"no feature {feature_id!r} in {FILE}")


def load(workspace: Path) -> FeatureList:
    """The list, read through no link out of the workspace (its descriptions become the model's task)."""
    path = workspace / FILE
    try:
        data = HostFiles(workspace).read(FILE)
    except Refused as exc:
        raise ConfigError(f"{path}: {exc.strerror}") from exc
    if not data:  # empty: also the stand-in the session's sandbox keeps while the file is missing
        raise ConfigError(f"no {FILE} in {workspace} (or it is empty): write one like " + '{"features": [{"id": "F01", '
                          '"description": "...", "verify": "pytest -q tests/test_f01.py"}]}')  # fmt: skip
    try:
        features = FeatureList.from_json(json_loads(data.decode("utf-8")))
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno})") from exc
    except Unreadable as exc:
        raise ConfigError(f"{path}: not read: {exc}") from None
    except (UnicodeDecodeError, OSError) as exc:
        raise ConfigError(f"{path}: cannot be read as UTF-8 text ({exc})") from exc
    except ValidationError as exc:
        raise ConfigError(f"{path}: invalid feature list: {validation_summary(exc)}") from exc
    ids = [f.id for f in features.features]
    if len(ids) != len(set(ids)):
        raise ConfigError(f"{path}: feature ids must be unique")
    if sum(f.state == "active" for f in features.features) > 1:
        raise ConfigError(f"{path}: more than one feature is active; WIP=1 allows one")
    return features


def save(workspace: Path, features: FeatureList) -> None:
    """Written by the harness alone (the model's tools never write it), on its real path inside."""
    try:
        HostFiles(workspace).write(FILE, (features.to_json() + "\n").encode("utf-8"), judged=False)
    except Refused as exc:
        raise ConfigError(f"{workspace / FILE}: {exc.strerror}") from exc


def task_for(feature: Feature) -> str:
    return (
        f"Implement feature {feature.id}: {feature.description}\n"
        f"It is done when `{feature.verify}` passes. Work on this feature only."
    )
