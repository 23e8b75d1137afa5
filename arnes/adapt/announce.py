"""A short reply that ends by announcing a step ("I will read the file first.") did nothing."""

from __future__ import annotations

import re

ANNOUNCE_MAX_CHARS = 400  # a longer answer is a real answer, whatever its last sentence
ANNOUNCE_NUDGE = (
    "[arnes] You said what you will do next but did not call a tool, so nothing happened. "
    "Call the tool now. If the task is already done, say so in one sentence."
)

_FUTURE = re.compile(
    # An optional leading clause ("To fix this, ..."), but not a condition ("If you want, I will ...").
    r"^(?!(?:if|when|unless|should|once|whenever)\b)(?:[^,]{1,60},\s+)?"
    r"(?:(?:ok(?:ay)?|now|next|first|then|so|great|sure|alright)[,!]?\s+)*"
    r"(?:i\s+will|i'll|i\s+am\s+going\s+to|i'm\s+going\s+to|i\s+need\s+to|i\s+should|i\s+must|"
    r"i\s+have\s+to|let\s+me|let's|let\s+us|we\s+will|we'll|we\s+need\s+to|i\s+can\s+now|i'm\s+now\s+going\s+to)"
    r"\s+(?:(?:now|first|then|next|also|quickly)\s+)?(?P<verb>[a-z]+)",
    re.IGNORECASE,
)
_ACTIONS = frozenset(
    "read open look check inspect examine view see create write edit modify update change fix add "
    "implement run execute search find list grep glob start make replace rename remove delete test "
    "correct adjust apply insert append refactor begin proceed go call use verify write".split()
)
_SENTENCE_END = re.compile(r"(?<=[.!:;])\s+|\n+")


def announces(text: str) -> bool:
    """Whether a tool-less answer ends by announcing an action instead of reporting one.

    Cheap on purpose: the last sentence must start like "I will <action>" / "Let me <action>"
    and the answer must be short and free of code. A question, a report of what was done, or
    "let me know ..." ends the run as before.
    """
    stripped = text.strip()
    if not stripped or len(stripped) > ANNOUNCE_MAX_CHARS or "```" in stripped or stripped.endswith("?"):
        return False
    sentences = [s.strip() for s in _SENTENCE_END.split(stripped) if s.strip()]
    last = sentences[-1] if sentences else ""
    match = _FUTURE.match(last)
    if match is None:
        return False
    verb = match.group("verb").lower()
    return verb in _ACTIONS
