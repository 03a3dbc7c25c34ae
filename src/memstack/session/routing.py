"""Size routing (seed 04 §6): how deeply to summarize one exchange.

| route  | when                                            | diff | raw reply kept longer |
|--------|-------------------------------------------------|------|-----------------------|
| short  | both messages < ``short_words`` (40)            | no*  | no                    |
| medium | otherwise, both < ``long_words`` (200)          | yes  | no                    |
| long   | either message ≥ ``long_words``                 | yes  | ``long_extra_turns``  |
| code   | code-heavy, whatever the length                 | yes  | yes when also long    |

\\* unless the user's message has a cue (``SessionSettings.diff_on_cue``): a rule, a correction, a lifted rule or a
first-person fact, preference or decision. Routing saves cost; it must not drop "Never use semicolons." or
"My name is Dana."
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memstack.session.settings import SessionSettings
from memstack.session.text import count_words, split_code
from memstack.types import Exchange, Route

__all__ = ["CONSTRAINT_CUE", "CORRECTION_CUE", "FACT_CUE", "RouteDecision", "route_exchange"]

#: Words that state a rule about what must or must not happen.
CONSTRAINT_CUE = re.compile(
    r"\b(can ?not|can't|cant|must|mustn't|never|always|don't|do not|doesn't|does not|shouldn't|should not|"
    r"not allowed|forbidden|avoid|required?|requirement|only use|no longer|under no circumstances|make sure)\b",
    re.IGNORECASE,
)
#: Words that change or withdraw something said before.
CORRECTION_CUE = re.compile(
    r"\b(actually|correction|i meant|i mean|scratch that|instead|changed? (?:it |that )?to|switch(?:ed)? to|"
    r"moved to|turns out|no longer|not anymore|any ?more|forget (?:about|that)|never ?mind|update:|rather than)\b",
    re.IGNORECASE,
)

#: A first-person fact, preference or decision, or a rule being lifted.
FACT_CUE = re.compile(
    r"\b(my|our|i'm|i am|i prefer|i like|i love|i hate|i'd rather|i work|i live|call me|let's|we'll|we will|we use|"
    r"i use|we're using|i'm using|you can (?:now )?use|(?:is|are) (?:now )?allowed|feel free to)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class RouteDecision:
    """The route of one exchange, what it implies, and the measurements it was decided on."""

    route: Route
    extract_diff: bool
    preserve_raw: bool
    keep_extra_turns: int
    user_words: int
    assistant_words: int
    code_lines: int
    reason: str


def route_exchange(exchange: Exchange, settings: SessionSettings | None = None) -> RouteDecision:
    s = settings or SessionSettings()
    uw, aw = count_words(exchange.user), count_words(exchange.assistant)
    _, _, user_code = split_code(exchange.user)
    _, _, reply_code = split_code(exchange.assistant)
    code_lines = user_code + reply_code
    total_lines = sum(1 for ln in (exchange.user + "\n" + exchange.assistant).splitlines() if ln.strip())
    code_heavy = code_lines >= s.code_min_lines or (code_lines >= 2 and code_lines >= s.code_ratio * total_lines)
    long = max(uw, aw) >= s.long_words
    extra = s.long_extra_turns if long else 0
    if code_heavy:
        reason = f"{code_lines} of {total_lines} lines are code"
        return RouteDecision(Route.CODE, True, long, extra, uw, aw, code_lines, reason)
    if long:
        reason = f"{max(uw, aw)} words ≥ {s.long_words}"
        return RouteDecision(Route.LONG, True, True, extra, uw, aw, code_lines, reason)
    if uw < s.short_words and aw < s.short_words:
        cue = s.diff_on_cue and any(c.search(exchange.user) for c in (CONSTRAINT_CUE, CORRECTION_CUE, FACT_CUE))
        reason = "short, but the user states a rule, a correction or a fact" if cue else "short and incidental"
        return RouteDecision(Route.SHORT, cue, False, 0, uw, aw, code_lines, reason)
    reason = f"{max(uw, aw)} words"
    return RouteDecision(Route.MEDIUM, True, False, 0, uw, aw, code_lines, reason)
