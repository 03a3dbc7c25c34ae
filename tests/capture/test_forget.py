"""Which texts carry a memory a forget hides (``memstack.capture.forget.Trace``): a name is enough, a place named
alone is not, a memory without names needs most of its key words; the words a memory frames its fact with never
count."""

from __future__ import annotations

import pytest

from memstack.capture.forget import Trace, unique
from memstack.types import HiddenItem, HiddenKind

CAT = Trace.of("User adopted a cat named Miso")
SISTER = Trace.of("User's sister Gina lives in Rome")
PEANUTS = Trace.of("User is allergic to peanuts")
SEATS = Trace.of("User prefers window seats on long flights")


def test_key_words_and_names() -> None:
    assert CAT.names == {"miso"} and CAT.keys == {"adopt", "cat", "miso"}
    assert SISTER.names == {"gina", "rome"}
    assert PEANUTS.names == frozenset() and SEATS.names == frozenset()  # "User" and "prefers" frame, not name
    assert "prefer" not in SEATS.keys and "user" not in SEATS.keys


@pytest.mark.parametrize(
    ("trace", "text", "carries"),
    [
        (CAT, "Can you suggest toys for Miso?", True),  # the name alone
        (CAT, "I just adopted a cat!", True),  # two thirds of the key words
        (CAT, "My neighbour's cat is cute", False),
        (CAT, "", False),
        (SISTER, "I'm flying to Rome next week", False),  # a place named alone
        (SISTER, "Gina moved to Rome last year", True),  # every name
        (SISTER, "My sister in Rome called", True),  # a name and another key word
        (SISTER, "Gina called me yesterday", False),
        (PEANUTS, "I'm allergic to peanuts, remember", True),
        (PEANUTS, "A peanut butter recipe please", False),
        (SEATS, "I always book a window seat on long flights", True),
        (SEATS, "The seats in the cinema were comfy", False),
    ],
)
def test_what_carries_a_memory(trace: Trace, text: str, carries: bool) -> None:
    assert trace.found_in(text) is carries


def test_a_fact_or_line_of_the_session_a_memory_came_from_needs_one_key_word() -> None:
    assert not CAT.found_in("User talked about their new cat")
    assert CAT.found_in("User talked about their new cat", loosely=True)
    assert not CAT.found_in("User talked about the weather", loosely=True)


def test_each_hidden_thing_is_listed_once() -> None:
    one = HiddenItem(HiddenKind.TURN, "s", 1, "I adopted Miso", "mem_a")
    same = HiddenItem(HiddenKind.TURN, "s", 1, "", "mem_b")
    line = HiddenItem(HiddenKind.LINE, "s", 0, "Adopted Miso", "mem_b")
    assert unique([one, same, line]) == [one, line]
