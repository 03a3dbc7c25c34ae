"""Memory updates with the offline judge (a fine-tuned cross-encoder), over a real store; the LLM classifier
speaks real HTTP to the scripted OpenAI-compatible server. The model judge: test_judge_model.py."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memstack.capture.judge import JudgeItem
from memstack.capture.judge.cross import CrossEncoder, file_sha256, load_card, shipped_model
from memstack.capture.judge.offline import LearnedJudge, about_someone_else, views
from memstack.capture.offline import OfflineClassifier
from memstack.capture.pipeline import CapturePipeline
from memstack.embed import Embedder
from memstack.store import Store
from memstack.types import (
    Candidate,
    Category,
    HistoryAction,
    Memory,
    NewMemory,
    ScoredMemory,
    Source,
    UpdateAction,
)
from memstack_testing.openai_server import ScriptedOpenAIServer

from .support import ALICE, AT, MODEL, CountingEmbedder, found, llm_classifier, mem, open_store

# -- the learned head on cases written for the earlier phrase rules ----------------------------------------------------

UPDATES = [
    ("User moved to Lisbon last spring.", "User lives in Porto."),
    ("User now works as a pharmacist at Boots.", "User works as a cashier at Tesco."),
    ("Jordan and User split up.", "User's boyfriend is Jordan."),
    ("User doesn't eat fish anymore.", "User eats fish."),
    ("User's piano exam was moved to 3 July.", "User's piano exam is on 26 June."),
    ("User's favourite colour is green now.", "User's favourite colour is blue."),
    ("User hates running now.", "User loves running."),
    ("User sold User's motorbike.", "User rides a Yamaha motorbike."),
    ("User started smoking again.", "User quit smoking."),
    ("User turned 41.", "User is 40 years old."),
    ("User got a job as a nurse at the city hospital.", "User is unemployed."),
    ("User is single now.", "User is married to Chris."),
    ("I moved to Lisbon.", "I live in Porto."),  # memories in the first person too
    ("User moved in with User's girlfriend.", "User lives with User's parents."),
    ("User works at Amazon now.", "User works at Google."),
    ("User got a job at Amazon.", "User works at Google."),  # a new job replaces the employer too
    ("User completed the pottery class.", "User is taking a pottery class."),
    ("User and User's boyfriend moved in together.", "User lives alone."),
    ("User uses Linux now instead of Windows.", "User uses Windows."),
    ("User cancelled the Rome trip, it was too expensive.", "User is going to Rome in June."),  # "too" adds nothing
    ("User works remotely now.", "User takes the train to work."),
    ("User's son was born last week.", "User is pregnant."),
    ("User had the baby on Monday.", "User is expecting twins."),
    ("User dyed User's hair pink.", "User has blonde hair."),
    ("I traded my bike for a scooter.", "I ride a bike to work."),
    ("Biscuit passed away on Sunday.", "User has a dog called Biscuit."),  # a name that the memory holds
    ("User withdrew from the triathlon.", "User is training for the Seaside triathlon."),
    ("User accepted an offer from Deloitte.", "User works at KPMG."),
    ("User switched User's major from history to law.", "User is studying history at Leeds."),
    ("User moved out of the studio.", "User rents a studio in the old town."),
    ("Jo and User filed for divorce.", "User is married to Jo."),
    ("User made the move to Bristol.", "User lives in Cardiff."),
    ("User moved out of the dorm into a flat.", "User lives in a dorm."),
    ("Kim proposed on the beach.", "User is seeing Kim."),
    ("The clinic rescheduled User's scan to 9 May.", "User's scan is on 2 May."),
    ("User gave User's old Nikon to a friend.", "User shoots with a Nikon camera."),
    ("User defended User's dissertation.", "User is writing a dissertation on bees."),
    ("User retired from nursing.", "User nurses at St. Anne's."),
    ("User is a dietitian now.", "User works as a chef."),
    ("The movers left the boxes at our new flat in Leeds.", "User lives in York."),  # told by what happened there
    ("They made me head chef at Nando's.", "User works as a line cook at Nando's."),  # given by someone else
    ("Someone stole my scooter from outside the gym.", "User rides a blue scooter."),
    ("Sadly Pickles didn't make it through the night.", "User has a hamster called Pickles."),
    ("I've decided not to run the Paris marathon after all.", "User plans to run the Paris marathon."),
    ("The garage called and moved my MOT to 12 March.", "User's MOT is on 5 March."),
    ("I transferred from Leeds to Durham.", "User studies law at Leeds."),
    ("After the surgery I'm not short-sighted anymore.", "User is short-sighted."),  # a phrase before the subject
    ("We have four kids now.", "User has three kids."),
    ("Finally got rid of the Vespa, it kept breaking down.", "User rides a Vespa."),  # "I" left out
    ("Podcasts don't do it for me anymore.", "User listens to podcasts on the way to work."),
    ("I ran my first marathon on Sunday!", "User wants to run a marathon next year."),  # a goal reached
    ("I visited Japan in April, it was amazing.", "User plans to visit Japan someday."),
    ("I'm on 62k a year now.", "User earns 54,000 pounds a year."),
    ("I've cut out sugar completely.", "User eats a lot of sugar."),
    ("We had to say goodbye to Mochi at the vet today.", "User has a rabbit called Mochi."),
    ("Hurt my knee, so Boston is off the table this spring.", "User plans to run the Boston marathon in April."),
    ("I haven't set foot in a pool since March.", "User swims in the pool every Sunday."),
    ("Traded in the old Golf last week.", "User drives a Volkswagen Golf."),
    ("I've realized flashcards just don't stick for me anymore.", "User learns vocabulary with flashcards."),
    ("Six months after surgery my knee is fully healed.", "User is recovering from knee surgery."),
    ("Dusted off the old bike and now I'm cycling to work again.", "User stopped cycling to work."),
    ("Flights to Rome were too dear, so we booked Lisbon for June instead.", "User plans to visit Rome in June."),
]
LOOK_ALIKES = [
    ("User's brother moved to Lisbon.", "User lives in Porto."),
    ("User also plays the cello.", "User plays the violin."),
    ("User visited Lisbon in May.", "User lives in Porto."),
    ("User's favourite film is Alien.", "User's favourite colour is blue."),
    ("User's dance recital is on 3 July.", "User's piano exam is on 26 June."),
    ("User's mum hates running.", "User loves running."),
    ("User washed User's motorbike.", "User rides a Yamaha motorbike."),
    ("User's friend works at Boots.", "User works as a cashier at Tesco."),
    ("User used to live in Faro.", "User lives in Porto."),
    ("User grew up in Faro.", "User lives in Porto."),
    ("User quit drinking soda too.", "User quit smoking."),
    ("User had lunch with a colleague who works at Boots.", "User works as a cashier at Tesco."),
    ("User works at St. Mary's Hospital.", "User works as a nurse."),  # another facet of the same job
    ("User lives with User's boyfriend.", "User lives in Paris."),
    ("User is gluten-free.", "User is vegetarian."),
    ("User is married to Tom.", "User is married."),
    ("User started at the gym.", "User works at Google."),
    ("User left early.", "User wakes up early."),
    ("User stopped by the bakery.", "User owns a bakery."),
    ("User ended up in Rome.", "User lives in Rome."),
    ("User completed the first week of the pottery class.", "User is taking a pottery class."),  # a part of it
    ("User's sister and her boyfriend moved in together.", "User lives alone."),
    ("User had tea instead of coffee this morning.", "User drinks coffee every day."),  # once
    ("User works from home on Mondays.", "User takes the train to work."),  # some days
    ("User's friend had the baby.", "User is pregnant."),
    ("User went to a baby shower.", "User is expecting a baby."),
    ("User's sister cut her hair short.", "User has long hair."),
    ("User was born in Ohio.", "User is expecting a baby."),
    ("User started learning Spanish too.", "User is learning French."),
    ("Biscuit's owner passed away.", "User has a dog called Biscuit."),  # someone else's
    ("User's cousin withdrew from the triathlon.", "User is training for the Seaside triathlon."),
    ("User's minor is Spanish.", "User's major is history."),  # another attribute
    ("User shares a flat with Tom.", "User lives in Cardiff."),  # in what, not where
    ("The clinic rescheduled User's sister's scan to 9 May.", "User's scan is on 2 May."),
    ("User submitted the first chapter of User's dissertation.", "User is writing a dissertation on bees."),
    ("User gave User's friend a lift to the station.", "User drives a Nikon."),
    ("Kim's brother proposed to his girlfriend.", "User is seeing Kim."),
    ("I'm not allergic to peanuts, luckily.", "User is allergic to shellfish."),  # "not" about something else
    ("Someone stole my friend's scooter.", "User rides a blue scooter."),
    ("They made me dinner at Nando's.", "User works as a line cook at Nando's."),  # no job in it
    ("My sister's new flat is in Leeds.", "User lives in York."),
    ("I'm not gonna give up on my dreams.", "User keeps chasing User's dreams."),  # a negated ending goes on
    ("Pickles didn't make it to the vet on time, but she's fine.", "User's neighbour has a hamster called Pickles."),
    ("I ran 10 miles for my marathon training.", "User wants to run a marathon next year."),  # not yet
    ("My brother ran a marathon on Sunday.", "User wants to run a marathon next year."),
    ("I will visit Japan in April.", "User plans to visit Japan someday."),
    ("My husband is on 70k a year.", "User earns 54,000 pounds a year."),
    ("I'm on 3 different medications.", "User earns 54,000 pounds a year."),
    ("Podcasts don't do it for my wife.", "User listens to podcasts on the way to work."),
    ("I finished the slides for the investors.", "User hopes investors will look at User's startup."),  # a task
    ("I finished my chapter about gardens.", "User is always happy to get gardening tips."),
    ("I can't stop knitting these days.", "User finished knitting a scarf."),  # not said to resume
    ("I showed the scarf to my aunt.", "User finished knitting a scarf."),
    ("I had to say goodbye to my parents at the airport.", "User's parents live in Ohio."),
    ("Work is off today, so I'm at the beach.", "User works at a bank."),
    ("My sister's knee is fully healed.", "User is recovering from knee surgery."),
    ("I've realized I love the flashcards app.", "User learns vocabulary with flashcards."),
    ("I haven't seen my cousin since March.", "User swims in the pool every Sunday."),
    ("I found a new cafe near the office.", "User works as a barista at Blue Bottle."),  # "found" is not "realized"
    # a switch with no "from" that still names the memory's value switches nothing away from it
    (
        "Since I'm allergic to nuts I'm trying out nut-free spreads like oat or seed butter instead.",
        "User is allergic to nuts, so User will just need the nut-free cake!",
    ),
    ("Since I'm allergic to nuts I'm trying out nut-free spreads instead.", "User is tempted to try nut-free spreads."),
]


async def _verdicts(embedder: Embedder, pairs: list[tuple[str, str]]) -> list[bool]:
    judge = LearnedJudge(embedder)
    out = []
    for new, old in pairs:
        vectors = await embedder.embed([new, old])
        hit = ScoredMemory(_memory(old), float(vectors[0] @ vectors[1]))
        (verdict,) = await judge.judge([JudgeItem(Candidate(new, Category.FACT, 0.9), (hit,))])
        out.append(verdict.replaces)
    return out


async def test_the_learned_judge_tells_news_from_look_alikes_it_was_not_trained_on(minilm: Embedder) -> None:
    """The lists above were written for the earlier phrase rules (none is in the judge's training data): most news
    and look-alikes share their words, many are word traps ("stopped by the bakery", "ended up in Rome"). The judge
    is no oracle on them; this checks that it reads news well above chance and keeps look-alikes mostly alone, so a
    broken model, tokenizer or threshold (which would supersede all or nothing) fails here."""
    updates = await _verdicts(minilm, UPDATES)
    look_alikes = await _verdicts(minilm, LOOK_ALIKES)
    print(f"updates {sum(updates)} / {len(updates)}, look-alikes {sum(look_alikes)} / {len(look_alikes)}")
    assert sum(updates) >= 0.5 * len(updates)  # the cross-encoder: 36 / 62 (the earlier head: 30)
    assert sum(look_alikes) <= 0.12 * len(look_alikes)  # 6 / 61


async def test_news_inside_a_longer_statement_is_read_part_by_part(minilm: Embedder) -> None:
    """Chatter before the news ("Long week at work, the kids were sick, …") hides it from a model trained on short
    statements; each part that names the user is read on its own (the whole scored 0.64 and 0.16 here, the part
    0.99 and 0.98)."""
    pairs = [
        (
            "The movers were two hours late and the lift was broken, but User finally lives in Bristol now, so the "
            "commute is gone.",
            "User lives in Leeds.",
        ),
        ("Boxes everywhere, the cat hates it, User moved to Bristol on Saturday.", "User lives in Leeds."),
    ]
    assert await _verdicts(minilm, pairs) == [True, True]
    assert views("User lives in Paris.") == ["User lives in Paris."]
    assert views("Weirdly User's taste flipped. Dark roast tastes burnt to User now, so User buys light roasts.")[
        1:
    ] == [
        "Weirdly User's taste flipped.",
        "Dark roast tastes burnt to User now.",
        "User buys light roasts.",
    ]


def test_the_shipped_cross_encoder_is_the_file_its_card_names() -> None:
    """The model file is the one whose threshold and figures the card records (a retrained file without a new card,
    or a damaged install, fails here)."""
    card = load_card()
    assert file_sha256(shipped_model()) == card.sha256
    assert 0.0 < card.threshold < 1.0
    development = card.about["development"]
    assert development["compatible"] > 200 and development["compatible_superseded"] <= 0.02 * development["compatible"]


def test_the_cross_encoder_reads_the_pair_in_the_order_it_was_trained_on() -> None:
    """``[CLS] memory [SEP] statement [SEP]``: the news read as the memory and the memory as the news is another
    question, and a pair scores the same whatever it is scored with (batched, dynamic int8 quantization would scale
    its activations with its neighbours')."""
    model = CrossEncoder()
    news = ("User lives in Paris.", "User moved to Berlin last month and loves the new flat.")
    both = model.score_sync([news, ("User has a dog named Biscuit.", "Biscuit passed away on Sunday.")])
    alone = model.score_sync([news])
    assert float(both[0]) == float(alone[0])
    assert both.shape == (2,) and bool(((both >= 0) & (both <= 1)).all())
    (swapped,) = model.score_sync([(news[1], news[0])])
    assert abs(float(swapped) - float(alone[0])) > 0.01


async def test_a_memory_stored_without_its_full_stop_is_read_as_a_sentence(minilm: Embedder) -> None:
    """Memories added through the API need no full stop; the model only ever read memories with one, and without it
    scored plain news of a move 0.49 (below its threshold) where it scores 0.99 with it."""
    for memory in ("User lives in Paris", "User lives in Paris."):
        (superseded,) = await _verdicts(minilm, [("User moved to Berlin in the week of 16 November 2026", memory)])
        assert superseded, memory


def test_news_about_someone_else_is_told_by_its_subject() -> None:
    assert about_someone_else("User's sister moved to Berlin.")
    assert about_someone_else("Robert's father passed away.")
    assert about_someone_else('User said: "Robert\'s father passed away."')
    assert not about_someone_else("User's dog Biscuit died.")  # the user's own pet is the user's news
    assert not about_someone_else("User moved to Berlin.")


def test_a_possessive_that_is_no_owner_leaves_the_news_the_users() -> None:
    """Contractions, sentence-initial common nouns and someone's words about the user are the user's news; a
    relative's or a named person's own news, dated or in a reported clause about them, stays someone else's."""
    assert not about_someone_else("That's been three months since User had to give Pepper away.", "that's been")
    assert not about_someone_else("Here's the thing: User sold the van last week.", "here's the thing")
    assert not about_someone_else("Vet's clinic called: User's surgery moved to Friday.", "vet's clinic called")
    assert not about_someone_else("User's coach thinks User should drop to the 10k, so the half is off.")
    assert not about_someone_else("User's physio said User can run again, so the break is over.")
    assert about_someone_else("User's coach thinks he will retire next year.")
    assert about_someone_else("She's back from Lisbon on Sunday.", "she's back from Lisbon on Sunday")
    assert about_someone_else("Gran's flat in Leeds is sold.", "gran's flat in leeds is sold")
    assert about_someone_else("Priya's landlord sold the building.", "Priya's landlord sold the building")
    assert about_someone_else("User said on Friday, 27 November 2026: Robert's father passed away.")


def _memory(content: str) -> Memory:
    now = datetime.now(UTC)
    return Memory(
        id="mem_1",
        user_id="alice",
        tenant="default",
        agent_id=None,
        content=content,
        category=Category.FACT,
        source=Source.AUTO,
        confidence=0.9,
        is_active=True,
        deleted_by=None,
        created_at=now,
        updated_at=now,
    )


# -- the writer with the offline judge (the model judge: test_judge_model.py) ----------------------------------------


@pytest.fixture
def server() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer() as scripted:
        yield scripted


@pytest.fixture
async def store(tmp_path: Path, minilm: Embedder) -> AsyncIterator[Store]:
    opened = await open_store(f"sqlite:///{tmp_path / 'memstack.db'}", minilm)
    yield opened
    await opened.close()


async def _remember(store: Store, embedder: Embedder, content: str, category: Category = Category.FACT) -> Memory:
    vector = (await embedder.embed([content]))[0]
    return await store.memories.add(ALICE, NewMemory(content, category), vector)


@pytest.fixture
async def pipeline(store: Store, minilm: Embedder, server: ScriptedOpenAIServer) -> AsyncIterator[CapturePipeline]:
    made = CapturePipeline(store, minilm, llm_classifier(server))
    yield made
    await made.drain(5.0)
    await made.classifier.aclose()


async def test_the_offline_judge_supersedes_in_place_with_history(
    store: Store, minilm: Embedder, server: ScriptedOpenAIServer
) -> None:
    old = await _remember(store, minilm, "User lives in Porto.")
    server.script(MODEL, found(mem("User moved to Lisbon in April 2024.")))
    made = CapturePipeline(store, minilm, llm_classifier(server), updates=LearnedJudge(minilm))
    try:
        result = await made.start(ALICE, "I moved to Lisbon last month", at=AT, session_id="s1", turn=2)
    finally:
        await made.classifier.aclose()
    (update,) = result.updates
    assert (update.action, update.id) == (UpdateAction.UPDATED, old.id)
    (memory,) = await store.index.list(ALICE)
    assert memory.content == "User moved to Lisbon in April 2024." and memory.source_turn_ids == ("s1:2",)
    _, supersede = await store.index.history(ALICE, old.id)
    assert supersede.action is HistoryAction.SUPERSEDE and supersede.actor == "system"
    assert supersede.before is not None and supersede.before["content"] == "User lives in Porto."
    assert "(offline)" in supersede.note and "the cross-encoder reads it as news" in supersede.note
    assert len(server.chat_requests) == 1  # the offline judge asks no model


# -- news the classifier passes over ----------------------------------------------------------------------------------


@pytest.fixture
async def offline(store: Store, minilm: Embedder) -> AsyncIterator[CapturePipeline]:
    made = CapturePipeline(store, minilm, OfflineClassifier(minilm))
    yield made
    await made.drain(5.0)


@pytest.mark.parametrize(
    ("memory", "message"),
    [
        ("User is married to Robert.", "Robert passed away in February after a long illness."),
        ("User has tickets to the Taylor Swift concert.", "The Taylor Swift show got called off, what a shame."),
    ],
)
async def test_news_without_self_disclosure_supersedes_the_memory_it_is_about(
    offline: CapturePipeline, store: Store, minilm: Embedder, memory: str, message: str
) -> None:
    assert await offline.classifier.classify(message, at=AT) == []  # the classifier alone keeps nothing
    old = await _remember(store, minilm, memory)
    (update,) = (await offline.start(ALICE, message, at=AT, session_id="s1", turn=4)).updates
    assert (update.action, update.id) == (UpdateAction.UPDATED, old.id)
    after = await store.memories.get(ALICE, old.id)
    assert after.content != memory and after.source_turn_ids == ("s1:4",)
    (_, supersede) = await store.index.history(ALICE, old.id)
    assert supersede.action is HistoryAction.SUPERSEDE and "(offline)" in supersede.note


@pytest.mark.parametrize(
    ("memory", "message"),
    [
        ("User has a goldfish named Bubbles.", "My sister's goldfish Bubbles didn't make it through the weekend."),
        ("User is allergic to cats.", "I'm not allergic to dogs, luckily."),
        ("User is married to Robert.", "Robert's father passed away in February."),
        ("User lives in Boston.", "Did the Boston office move to a new place?"),
    ],
)
async def test_look_alike_news_leaves_the_memory(
    offline: CapturePipeline, store: Store, minilm: Embedder, memory: str, message: str
) -> None:
    old = await _remember(store, minilm, memory)
    result = await offline.start(ALICE, message, at=AT)
    assert old.id not in {u.id for u in result.updates}, result.updates
    assert (await store.memories.get(ALICE, old.id)).content == memory


async def test_news_for_a_user_without_memories_embeds_nothing(store: Store, minilm: Embedder) -> None:
    counting = CountingEmbedder(minilm)
    made = CapturePipeline(store, counting, OfflineClassifier(minilm))
    try:
        result = await made.start(ALICE, "Sadly Bubbles didn't make it through the weekend.", at=AT)
    finally:
        await made.drain(5.0)
    assert result.updates == () and counting.calls == 0


async def test_news_is_left_to_the_model_when_an_llm_classifier_decides(
    pipeline: CapturePipeline, store: Store, minilm: Embedder, server: ScriptedOpenAIServer
) -> None:
    old = await _remember(store, minilm, "User has a goldfish named Bubbles.")
    server.script(MODEL, found())  # the model keeps nothing: that is its decision
    result = await pipeline.start(ALICE, "Sadly Bubbles didn't make it through the weekend.", at=AT)
    assert result.updates == ()
    assert (await store.memories.get(ALICE, old.id)).content == "User has a goldfish named Bubbles."
