"""Size routing (seed 04 §6) and the raw window with long messages kept longer."""

from __future__ import annotations

import pytest

from memstack.session import SessionSettings, route_exchange
from memstack.session.window import evict, push_exchange
from memstack.types import Exchange, RawMessage, Route


def words(n: int, word: str = "word") -> str:
    return " ".join([word] * n)


CODE = "Here is the fix:\n```python\ndef add(a: int, b: int) -> int:\n    return a + b\n```"
LONG_CODE = "```python\n" + "\n".join(f"x{i} = compute({i}, {i + 1})" for i in range(70)) + "\n```\n" + words(210)


@pytest.mark.parametrize(
    ("user", "reply", "route", "diff", "preserve"),
    [
        (words(39), words(39), Route.SHORT, False, False),
        (words(40), words(10), Route.MEDIUM, True, False),
        (words(10), words(199), Route.MEDIUM, True, False),
        (words(10), words(200), Route.LONG, True, True),
        (words(250), words(5), Route.LONG, True, True),
        ("fix it", CODE, Route.CODE, True, False),
        ("fix it", LONG_CODE, Route.CODE, True, True),
        ("fix it", CODE + "\n" + words(220), Route.LONG, True, True),  # a little code in a long text is not code-heavy
    ],
)
def test_routes_follow_the_seed_table(user: str, reply: str, route: Route, diff: bool, preserve: bool) -> None:
    decision = route_exchange(Exchange(1, user, reply))
    assert (decision.route, decision.extract_diff, decision.preserve_raw) == (route, diff, preserve)
    assert decision.keep_extra_turns == (2 if preserve else 0)


def test_unfenced_code_counts_as_code() -> None:
    reply = "Try this:\n" + "\n".join(["def f(x):", "    y = x * 2", "    return y", "print(f(2));"])
    assert route_exchange(Exchange(1, "why does it fail", reply)).route is Route.CODE


def test_prose_is_not_mistaken_for_code() -> None:
    reply = "First, open the settings. Then choose a theme: dark or light. Finally, restart the app."
    assert route_exchange(Exchange(1, "how do I change the theme?", reply)).route is Route.SHORT


@pytest.mark.parametrize(
    "message",
    [
        "Never use semicolons.",
        "Actually, it's Postgres 16.",
        "We must ship by May.",
        "My name is Dana.",
        "You can use numpy now.",
    ],
)
def test_short_exchanges_stating_a_rule_or_correction_still_get_a_diff(message: str) -> None:
    decision = route_exchange(Exchange(1, message, "Okay."))
    assert decision.route is Route.SHORT and decision.extract_diff
    off = route_exchange(Exchange(1, message, "Okay."), SessionSettings(diff_on_cue=False))
    assert not off.extract_diff


def test_thresholds_are_configurable() -> None:
    s = SessionSettings(short_words=5, long_words=20, long_extra_turns=1)
    assert route_exchange(Exchange(1, words(6), "ok"), s).route is Route.MEDIUM
    decision = route_exchange(Exchange(1, words(20), "ok"), s)
    assert decision.route is Route.LONG and decision.keep_extra_turns == 1


def turn(
    window: tuple[RawMessage, ...], n: int, reply: str = "short reply", s: SessionSettings | None = None
) -> tuple[RawMessage, ...]:
    ex = Exchange(n, f"question {n}", reply)
    return push_exchange(window, ex, route_exchange(ex, s), s)


def test_window_keeps_the_last_n_messages() -> None:
    window: tuple[RawMessage, ...] = ()
    for n in range(1, 6):
        window = turn(window, n)
    assert len(window) == 6 and [m.turn for m in window] == [3, 3, 4, 4, 5, 5]
    assert [m.role for m in window[:2]] == ["user", "assistant"]
    small = SessionSettings(window=4)
    w2: tuple[RawMessage, ...] = ()
    for n in range(1, 6):
        w2 = turn(w2, n, s=small)
    assert [m.turn for m in w2] == [4, 4, 5, 5]


def test_long_reply_stays_two_extra_turns_then_goes() -> None:
    window = turn((), 1, reply=words(300, "detail"))
    assert window[1].keep_extra_turns == 2 and window[0].keep_extra_turns == 0
    present = []
    for n in range(2, 8):
        window = turn(window, n)
        present.append(any(m.turn == 1 and m.role == "assistant" for m in window))
    # an ordinary reply of turn 1 leaves when turn 4 arrives; the long one survives turns 4 and 5
    assert present == [True, True, True, True, False, False]
    assert all(not (m.turn == 1 and m.role == "user") for m in window)


def test_evict_is_a_no_op_under_the_limit() -> None:
    msgs = (RawMessage("user", "hi", 1), RawMessage("assistant", "hello", 1))
    assert evict(msgs, 6) == msgs
