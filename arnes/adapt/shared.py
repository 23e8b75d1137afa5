"""What the pieces of one session tell each other: one object per session, never global."""

from __future__ import annotations

from dataclasses import dataclass

from arnes.adapt.draws import Draws
from arnes.adapt.focus import Focusing


@dataclass
class TurnState:
    red: bool = False  # the last message to the model was arnes's red test run: code next is a fix
    said: str | None = None  # arnes's last message, which a reply that only parrots it repeats
    draws: Draws | None = None  # fresh draws after a red test run (adapt/draws.py); None: off
    focus: Focusing | None = None  # one failing test at a time (adapt/focus.py); None: off
    failure: str = ""  # the output of arnes's last red test run
