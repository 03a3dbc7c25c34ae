"""Standing instructions in the forms chat gives them beside a fact (capture/instructions.py): "…, so please always
…", a polite "don't" with any verb, a verbless fragment with a word that makes it last, a plan for both sides
("let's … from now on"), two alternatives with one asked for; each form in several wordings, with hard negatives of
the same form. Read at a Friday, 27 November 2026."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memstack.capture.instructions import PREFERENCE_FRAME, standing_instruction
from memstack.capture.offline import OfflineClassifier

AT = datetime(2026, 11, 27, 10, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("sentence", "kept"),
    [
        # "always" or "never" first after a "please": any verb is an imperative
        ("pls always check recipes for hidden gluten", "always check recipes for hidden gluten"),
        ("please never use red and green to tell things apart in charts", "never use red and green"),
        ("always convert prices to euros for me", "always convert prices to euros"),
        ("please never schedule calls for me on fridays", "never schedule calls for User on fridays"),
        ("pls always flag anything with caffeine for me", "always flag anything with caffeine for User"),
        # a polite "don't" with any verb
        ("please don't book anything for me before noon", "do not book anything for User before noon"),
        ("pls don't plan meetings for me on weekends", "do not plan meetings for User on weekends"),
        ("please don't pad your answers with disclaimers", "do not pad your answers with disclaimers"),
        # every thing of a kind the assistant gives
        ("please cross-check any meal plan you propose against my allergies", "cross-check any meal plan you propose"),
        ("please flag every recipe you suggest with nuts in it", "flag every recipe you suggest"),
        # a verbless fragment that lasts
        ("numbered lists, max 7 items, always", "numbered lists, max 7 items, always"),
        ("numbered steps, max 10, always. thx", "numbered steps, max 10, always"),
        ("metric units only, always", "metric units only, always"),
        ("plain text, no markdown, always", "plain text, no markdown, always"),
        ("short answers from now on", "short answers"),
        # a plan for both sides that lasts
        ("let's do everything in French from now on", "do everything in French from now on"),
        ("ok let's stick to metric units going forward", "stick to metric units going forward"),
        ("let's switch back to Spanish for everything", "switch back to Spanish for everything"),
        ("let's keep the replies short from here on", "keep the replies short from here on"),
        ("let's go back to Python for all the examples", "go back to Python for all the examples"),
    ],
)
def test_a_standing_instruction_in_the_forms_chat_gives_it(sentence: str, kept: str) -> None:
    written = standing_instruction(sentence, lasting_only=True)
    assert written is not None and written.startswith(PREFERENCE_FRAME) and kept in written


@pytest.mark.parametrize(
    ("sentence", "kept"),
    [
        ("please give me brew commands not macports", "give User brew commands not macports"),
        ("give me dnf commands instead of apt", "give User dnf commands instead of apt"),
        ("use grams rather than cups", "use grams rather than cups"),
        ("write dates as day month year not month day", "write dates as day month year not month day"),
    ],
)
def test_two_alternatives_with_one_asked_for_are_a_form_of_answer(sentence: str, kept: str) -> None:
    """Outside a request for a piece of work, "X not Y" asks for a form, as "in Spanish" does."""
    written = standing_instruction(sentence)
    assert written is not None and kept in written


@pytest.mark.parametrize(
    "sentence",
    [
        # "always" or "never" before a past or a perfect: a statement whose "I" chat left out
        "always loved cooking for my family",
        "never been to Japan",
        "never had a pet growing up",
        # without a "please": a habit whose "I" chat left out
        "always eat breakfast with my kids",
        "always walk my dog at 6 before work",
        "always forget my keys lol",
        "never drink coffee after 2pm, it wrecks my sleep",
        # a "don't" that comforts, or reminds
        "please don't worry about me",
        "please don't forget the attachment",
        # a form without a word that makes it last, or a verb of its own
        "bullet points are always so ugly",
        "numbered lists for this one",
        # one thing at hand
        "please give me the dnf command for this",
        "give me a recipe not a lecture about nutrition for this",
        # a plan for the work at hand
        "let's write the cover letter now",
        "let's do the French exercise on page 4",
        "let's switch to the next question",
        "let's go over this again",
        "let's try the other recipe tonight",
    ],
)
def test_forms_of_the_same_shape_that_do_not_last_are_not_instructions(sentence: str) -> None:
    assert standing_instruction(sentence, lasting_only=True) is None


@pytest.mark.parametrize(
    ("message", "fact", "instruction"),
    [
        ("I'm on Fedora, so please give me dnf commands instead of apt", "User is on Fedora", "dnf commands"),
        (
            "I'm allergic to tree nuts so double-check every recipe you suggest for almonds please.",
            "User is allergic to tree nuts",
            "double-check every recipe you suggest for almonds",
        ),
        (
            "I teach night school so afternoons are my only free time, please don't book anything for me before noon",
            "User teaches night school",
            "do not book anything for User before noon",
        ),
        ("I work from Tokyo, so please always give me times in JST", "User works from Tokyo", "times in JST"),
        (
            "I'm on lithium so please check every painkiller you mention for interactions",
            "User is on lithium",
            "check every painkiller you mention for interactions",
        ),
    ],
)
async def test_a_fact_and_the_instruction_it_gives_rise_to_are_two_memories(
    classifier: OfflineClassifier, message: str, fact: str, instruction: str
) -> None:
    """ "I'm on X, so please always …": the fact and the standing instruction are each kept, one memory each."""
    contents = [c.content for c in await classifier.classify(message, at=AT)]
    assert any(c.startswith(fact) for c in contents), contents
    assert any(c.startswith(PREFERENCE_FRAME) and instruction in c for c in contents), contents


async def test_a_fact_before_a_request_for_the_work_at_hand_keeps_only_the_fact(
    classifier: OfflineClassifier,
) -> None:
    asks = ("I'm vegan so please give me a recipe for dinner tonight", "I'm on Fedora, what's the dnf command?")
    for message in asks:
        contents = [c.content for c in await classifier.classify(message, at=AT)]
        assert not any(c.startswith(PREFERENCE_FRAME) for c in contents), contents


@pytest.mark.parametrize(
    "sentence",
    [
        "make pasta not pizza tonight",
        "go with the blue one not the red",
        "go to Spanish class tonight",
        "talk to English speakers more",
        "let's go to Spanish class",
    ],
)
def test_alternatives_or_a_language_outside_an_answer_are_no_form(sentence: str) -> None:
    """Two alternatives are a form of answer only after a verb of answering ("give", "use", "write"), and a language
    after "to" only in a plan for both sides that lasts ("let's switch to Spanish for everything")."""
    assert standing_instruction(sentence) is None
