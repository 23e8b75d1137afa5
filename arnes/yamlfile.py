"""YAML someone else wrote (front matter, a data file a model wrote), loaded with bounds.

PyYAML's safe loader builds no objects, but two things still let a few hundred bytes stop arnes:
its composer recurses once per level of nesting (`[[[[…]]]]` 3000 deep is a RecursionError), and an
anchor with aliases to it (`&a [x, x]`, then `&b [*a, *a]`, …) is shared, nine levels of which
become 9^9 elements the moment anything copies, prints or hashes the value ("billion laughs").
Files written for Claude Code never need an anchor, so one is refused before any value is built
(`Anchored`), and nesting deeper than nesting.MAX_DEPTH is refused before the composer goes that
deep (`TooDeep`). An alias to no anchor is PyYAML's own error, as before. Imported only where YAML is
read: PyYAML costs start-up time.
"""

from __future__ import annotations

from typing import Any

import yaml
from yaml.nodes import Node

from arnes.nesting import MAX_DEPTH, TooDeep, Unreadable


class Anchored(Unreadable):
    def __init__(self, anchor: str) -> None:
        super().__init__(
            f"it defines the YAML anchor &{anchor}; arnes does not expand anchors or aliases, write each value out"
        )


class _Loader(yaml.SafeLoader):
    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.depth = 0

    def compose_node(self, parent: Node | None, index: int) -> Node | None:
        event = self.peek_event()  # type: ignore[no-untyped-call]  # untyped in types-PyYAML
        anchor = getattr(event, "anchor", None)
        if anchor is not None and not isinstance(event, yaml.AliasEvent):
            raise Anchored(str(anchor))
        nested = isinstance(event, yaml.CollectionStartEvent)  # a list or a mapping opens
        self.depth += nested
        try:
            if self.depth > MAX_DEPTH:
                raise TooDeep
            return super().compose_node(parent, index)
        finally:
            self.depth -= nested


def load(text: str) -> Any:
    """One YAML document: yaml.YAMLError when it is not YAML, as `yaml.safe_load` says it; Anchored,
    TooDeep or Unreadable (ValueErrors) when arnes does not take it."""
    loader = _Loader(text)
    try:
        return loader.get_single_data()
    except ValueError as exc:  # PyYAML's int(): more digits than Python converts
        if isinstance(exc, Unreadable):
            raise
        raise Unreadable(f"it holds a number too long to read ({str(exc).split(':')[0]})") from None
    finally:
        loader.dispose()
