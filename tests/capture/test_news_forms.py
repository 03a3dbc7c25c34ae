"""News of a change in the user's life and facts chat tells without its subject, by their form: a state that changed
("… are back on my plate", "first weekend in my own …"), a sigh after a plain report ("… still on crutches 🙄"), a
past tense of an irregular verb, a perfect with its "I've" left out, "she" opening the sentence after the one that
names her, a predicate before its own time clause. Each form in several wordings of its own, with hard negatives of
the same form. Read at a Friday, 27 November 2026."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memstack.capture.clauses import resolve_pronoun, restore_be, restore_subject
from memstack.capture.offline import OfflineClassifier
from memstack.capture.passing import passing_sentence
from memstack.capture.rewrite import third_person
from memstack.capture.rules import screen

AT = datetime(2026, 11, 27, 10, 0, tzinfo=UTC)


async def _contents(classifier: OfflineClassifier, message: str) -> list[str]:
    return [c.content for c in await classifier.classify(message, at=AT)]


@pytest.mark.parametrize(
    ("message", "kept"),
    [
        ("alright, I relented and burgers are back on my plate", "burgers are back on their plate"),
        ("fine, I gave up and cheese is back in my fridge", "cheese is back in their fridge"),
        ("I quit the diet, pasta is officially back on my menu", "pasta is officially back on"),
        ("first weekend in my own flat and the silence is bliss", "First weekend in User's own flat"),
        ("first week in our new place and the heating works", "First week in User's new place"),
        ("first birthday without my ex in years but I'm better off", "First birthday without User's ex"),
    ],
)
async def test_a_state_that_changed_is_kept_whoever_its_subject(
    classifier: OfflineClassifier, message: str, kept: str
) -> None:
    """A change told by what came back or went, or by a first time in a new home or without someone: news about the
    user, as strong as "I moved" (the update judge can only supersede what capture keeps)."""
    contents = await _contents(classifier, message)
    assert any(kept in c for c in contents), contents


@pytest.mark.parametrize(
    "message",
    [
        "the cafe put pancakes back on the menu, so good",
        "the office canteen has pizza back on the menu",
        "first night at the hotel and the bed is amazing",
        "first day of the conference went well",
        "my phone is back on after the update, phew",
    ],
)
async def test_the_same_form_outside_the_users_life_is_not_kept(classifier: OfflineClassifier, message: str) -> None:
    assert await _contents(classifier, message) == []


@pytest.mark.parametrize(
    ("sentence", "passing"),
    [
        # a sigh after a plain report: the report stands
        ("sprained my wrist in spring and still in a brace 🙄", False),
        ("the holiday fund became a new boiler 🙃 so no Greece this year", False),
        ("quit my job in june and still job hunting 🙃", False),
        ("broke my wrist in march and still can't lift much 🙄", False),
        # the same faces after praise: said the other way round
        ("best weekend ever 🙃 spent it doing my taxes", True),
        ("love that my landlord raised the rent again 🙄", True),
        ("great, another monday 🙃", True),
        ("so lucky my flight got cancelled 🙄", True),
    ],
)
def test_a_wry_face_turns_praise_around_but_leaves_a_report_standing(sentence: str, passing: bool) -> None:
    assert passing_sentence(sentence) is passing


def test_a_report_with_a_sigh_keeps_both_of_its_facts() -> None:
    found = screen("fractured my ankle hiking in june and im still on crutches 🙄 tips for showering?")
    assert [c.text for c in found] == ["I fractured my ankle hiking in june", "im still on crutches"]


@pytest.mark.parametrize(
    ("sentence", "written"),
    [
        ("I tore my ACL skiing", "User tore their ACL skiing"),
        ("I swam across the bay last summer", "User swam across the bay last summer"),
        ("I froze my eggs in 2024", "User froze their eggs in 2024"),
        ("I shook off the cold", "User shook off the cold"),
        ("I better sleep early", "User better sleep early"),
        # a present tense still takes its "-s"
        ("I swim on Sundays", "User swims on Sundays"),
        ("I bake bread every week", "User bakes bread every week"),
    ],
)
def test_an_irregular_past_after_i_keeps_its_form(sentence: str, written: str) -> None:
    assert third_person(sentence, their=True) == written


@pytest.mark.parametrize(
    ("clause", "restored"),
    [
        ("never been to Japan", "I've never been to Japan"),
        ("always loved cooking for my family", "I've always loved cooking for my family"),
        ("never tried sushi", "I've never tried sushi"),
        ("always hated mornings", "I've always hated mornings"),
        # a present after "always" or "never" is no perfect
        ("always need coffee first", "always need coffee first"),
        ("never use tabs", "I never use tabs"),
    ],
)
def test_a_perfect_gets_back_the_ive_chat_left_out(clause: str, restored: str) -> None:
    assert restore_subject(clause) == restored


@pytest.mark.parametrize(
    ("before", "sentence", "resolved"),
    [
        ("my niece Hana got a place at art college!!", "she starts in October", "my niece Hana starts in October"),
        ("my brother Sam got a job in Seattle.", "he moves in January", "my brother Sam moves in January"),
        ("my daughter Ada passed her test!", "she's getting a car", "my daughter Ada is getting a car"),
        ("my dad got diagnosed with diabetes.", "he's on insulin now", "my dad is on insulin now"),
        # nobody named before, or the sentence points at something said before
        ("the weather is awful.", "she starts in October", "she starts in October"),
        ("my niece got into art college.", "she said it was tough", "she said it was tough"),
        ("my niece Hana got in!", "I start in October", "I start in October"),
    ],
)
def test_she_opening_a_sentence_means_whom_the_sentence_before_names(before: str, sentence: str, resolved: str) -> None:
    assert resolve_pronoun(before, sentence) == resolved


async def test_news_of_a_relative_told_in_two_sentences_is_the_relatives(classifier: OfflineClassifier) -> None:
    contents = await _contents(classifier, "my cousin Ines got into law school at Leiden!! she starts in February")
    assert any(c.startswith("User's cousin Ines starts in February") for c in contents), contents
    assert not any(c.startswith("User said") for c in contents), contents


@pytest.mark.parametrize(
    ("message", "kept"),
    [
        ("first Thanksgiving without Grandma, it's going to be hard", "first Thanksgiving without Grandma"),
        ("first birthday without Dad, miss him every day", "first birthday without Dad"),
        ("first New Year without Sofia in a decade", "first New Year without Sofia in a decade"),
        ("the first Easter without Tomasz since the divorce", "the first Easter without Tomasz"),
    ],
)
async def test_a_first_occasion_without_someone_named_is_the_users_news(
    classifier: OfflineClassifier, message: str, kept: str
) -> None:
    """Someone gone from the user's life (a breakup, a death, a move), told without "I": kept in the user's words."""
    contents = await _contents(classifier, message)
    assert any(c.startswith("User said") and kept in c for c in contents), contents


@pytest.mark.parametrize(
    "message",
    ["first day without rain in weeks", "first night without the baby waking up!!", "first week without sugar, ugh"],
)
async def test_a_first_occasion_without_a_thing_is_not(classifier: OfflineClassifier, message: str) -> None:
    assert await _contents(classifier, message) == []


@pytest.mark.parametrize(
    ("clause", "restored"),
    [
        ("type 2 diabetic since I was 30", "I'm type 2 diabetic since I was 30"),
        ("vegetarian since we moved to Goa", "I'm vegetarian since we moved to Goa"),
        ("allergic to cats ever since I was a kid", "I'm allergic to cats ever since I was a kid"),
        # a verb of the predicate's own, or no predicate
        ("hilarious when I was drunk", None),
        ("shellfish allergy since I was 5", None),
        ("allergic to cats is what I am", None),
    ],
)
def test_a_predicate_before_its_own_time_clause_gets_its_im(clause: str, restored: str | None) -> None:
    """The verb of "since I was 9" is the time clause's: the predicate before it still has none of its own."""
    assert restore_be(clause) == restored


async def test_a_predicate_with_its_time_clause_is_written_about_user(classifier: OfflineClassifier) -> None:
    contents = await _contents(classifier, "lactose intolerant since I was a teen, cheese is my nemesis")
    assert any(c.startswith("User is lactose intolerant since User was a teen") for c in contents), contents


@pytest.mark.parametrize(
    "message",
    [
        "my sister visited yesterday. she brought cake",
        "my dad watched the match with me. he was furious about the ref",
        "my mom called earlier. she says hi",
    ],
)
async def test_she_is_resolved_only_in_a_sentence_that_may_last(classifier: OfflineClassifier, message: str) -> None:
    """A relation named is no cue of what is said of them: "she brought cake" is not made a fact about the sister."""
    second = message.split(". ")[1]
    contents = await _contents(classifier, message)
    assert not any(second.split(" ", 1)[1] in c for c in contents), contents
