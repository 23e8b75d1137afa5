"""Fresh draws: after one repair try, each attempt starts again from before the turn's first
attempt, sampled, and the project's tests judge it.

A small model decoded greedily is deterministic: shown its failing code and the failure, a 1.5B
coder mostly sends the same file back, word for word, however the message is put. aider's
benchmark gives a model two tries, the second after the failure; past that, what small code
models are good at is being sampled: of several programs drawn for the same task, one often
passes where the first did not (pass@k far above pass@1). So arnes keeps the repair try (the
failure shown, greedy), then draws: the conversation goes back to before the first attempt (the
user's message and what the model read stay), the next reply is sampled (the profile's draw
temperature), and the tests run on what it writes. The first draw the tests pass ends the turn;
when the draws run out, the workspace keeps the attempt that passed the most tests, and the user
is told. Measured on Exercism it did not pay (bench/README.md), so no steering set has it.

This module is the bookkeeping only (no Session, no loop): which step comes next, and which
attempt was best.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Step = Literal["repair", "draw", "done"]


@dataclass(frozen=True)
class Attempt:
    """The files an attempt changed (display path -> text) and how many tests it passed."""

    files: dict[str, str]
    passed: int | None  # None: the runner's output gave no count


@dataclass
class Draws:
    """Per user message: the repair try, the draws made, the best attempt so far."""

    most: int  # fresh draws per user message
    made: int = 0
    repaired: bool = False
    best: Attempt | None = None
    last: Attempt | None = None

    def new_turn(self) -> None:
        self.made, self.repaired, self.best, self.last = 0, False, None, None

    def after_red(self, attempt: Attempt) -> Step:
        """The tests failed on `attempt`: repair it (once), draw again, or stop."""
        self.last = attempt
        if attempt.passed is not None and (self.best is None or (self.best.passed or 0) < attempt.passed):
            self.best = attempt
        if not self.repaired:
            self.repaired = True
            return "repair"
        return "draw" if self.made < self.most else "done"

    def can_draw(self) -> bool:
        """A reply that changed nothing while the tests are red: another draw, if one is left
        (the repair try was given first)."""
        return self.repaired and self.made < self.most

    def draw(self) -> int:
        """Count a draw; its number."""
        self.made += 1
        return self.made

    def restore(self) -> Attempt | None:
        """The best attempt, when it passed more tests than the files hold now (the last one)."""
        best, last = self.best, self.last
        if best is None or last is None or best is last or best.files == last.files:
            return None
        if last.passed is not None and (best.passed or 0) <= last.passed:
            return None
        return best
