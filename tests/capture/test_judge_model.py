"""The model update judge over real HTTP (the scripted OpenAI-compatible server), on a real store: one structured
call per message, what an answer may do, and what happens when the model fails (the offline judge decides)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from memstack.capture.judge import UpdateKind, get_update_judge
from memstack.capture.judge.model import ModelJudge, parse_decisions
from memstack.capture.judge.offline import LearnedJudge
from memstack.capture.offline import OfflineClassifier
from memstack.capture.pipeline import CapturePipeline
from memstack.embed import Embedder
from memstack.errors import ConfigError, MalformedResponse
from memstack.store import Store
from memstack.types import Category, HistoryAction, Memory, NewMemory, UpdateAction, UserRef
from memstack_testing.openai_server import RecordedRequest, Reply, ScriptedOpenAIServer

from .support import ALICE, AT, MODEL, found, llm_classifier, mem, open_store

JUDGE = "judge-mini"  # the judge's own model: its requests are scripted apart from the classifier's
BOB = UserRef("bob")


@pytest.fixture
def server() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer() as scripted:
        yield scripted


@pytest.fixture
async def store(tmp_path: Path, minilm: Embedder) -> AsyncIterator[Store]:
    opened = await open_store(f"sqlite:///{tmp_path / 'memstack.db'}", minilm)
    yield opened
    await opened.close()


def _judge(server: ScriptedOpenAIServer, **options: float) -> ModelJudge:
    return ModelJudge(server.chat_model(JUDGE), LearnedJudge(), owns_model=True, **options)  # type: ignore[arg-type]


@pytest.fixture
async def pipeline(store: Store, minilm: Embedder, server: ScriptedOpenAIServer) -> AsyncIterator[CapturePipeline]:
    """The LLM classifier and the model judge, each on its own model of the scripted server."""
    judge = _judge(server)
    made = CapturePipeline(store, minilm, llm_classifier(server), updates=judge)
    yield made
    await made.drain(5.0)
    await made.classifier.aclose()
    await judge.aclose()


async def _remember(
    store: Store, embedder: Embedder, content: str, category: Category = Category.FACT, user: UserRef = ALICE
) -> Memory:
    vector = (await embedder.embed([content]))[0]
    return await store.memories.add(user, NewMemory(content, category), vector)


def _judge_requests(server: ScriptedOpenAIServer) -> list[RecordedRequest]:
    return [r for r in server.chat_requests if r.model == JUDGE]


def _decide(*decisions: dict[str, object]) -> Reply:
    return Reply.json({"decisions": list(decisions)})


async def test_a_supersede_replaces_the_memory_in_place_and_the_history_names_the_model(
    pipeline: CapturePipeline, store: Store, minilm: Embedder, server: ScriptedOpenAIServer
) -> None:
    await _remember(store, minilm, "User has a cat named Tom.")
    old = await _remember(store, minilm, "User's yoga class is on Mondays.", Category.SCHEDULE)
    server.script(MODEL, found(mem("User's yoga class is on Wednesdays now.", "schedule")))
    server.script(JUDGE, _decide({"fact": "f1", "action": "supersede", "memory": "m1", "reason": "moved days"}))
    (update,) = (await pipeline.start(ALICE, "My yoga class moved to Wednesdays", at=AT)).updates
    assert (update.action, update.id, update.content) == (
        UpdateAction.UPDATED,
        old.id,
        "User's yoga class is on Wednesdays now.",
    )
    _, supersede = await store.index.history(ALICE, old.id)
    assert supersede.action is HistoryAction.SUPERSEDE and supersede.before is not None
    assert supersede.before["content"] == "User's yoga class is on Mondays."
    assert f"llm:openai:{JUDGE}" in supersede.note and "moved days" in supersede.note
    (request,) = _judge_requests(server)
    prompt = request.last_user_message or ""
    assert "f1 (schedule): User's yoga class is on Wednesdays now." in prompt
    assert "m1: User's yoga class is on Mondays." in prompt
    assert len(await store.index.list(ALICE)) == 2


async def test_an_update_rewrites_the_same_fact_with_more_detail(
    pipeline: CapturePipeline, store: Store, minilm: Embedder, server: ScriptedOpenAIServer
) -> None:
    old = await _remember(store, minilm, "User works at a hospital.")
    server.script(MODEL, found(mem("User works as a night nurse at St. Mary's hospital.")))
    server.script(JUDGE, _decide({"fact": "f1", "action": "update", "memory": "m1", "reason": "more detail"}))
    (update,) = (await pipeline.start(ALICE, "I'm a night nurse at St. Mary's", at=AT)).updates
    assert (update.action, update.id) == (UpdateAction.UPDATED, old.id)
    _, entry = await store.index.history(ALICE, old.id)
    assert entry.action is HistoryAction.UPDATE and "updated with more detail" in entry.note


async def test_none_stores_nothing(
    pipeline: CapturePipeline, store: Store, minilm: Embedder, server: ScriptedOpenAIServer
) -> None:
    old = await _remember(store, minilm, "User is allergic to peanuts.")
    server.script(MODEL, found(mem("User cannot eat peanuts.")))
    server.script(JUDGE, _decide({"fact": "f1", "action": "none", "memory": "m1", "reason": "already known"}))
    (update,) = (await pipeline.start(ALICE, "I can't eat peanuts", at=AT)).updates
    assert (update.action, update.id) == (UpdateAction.DUPLICATE, old.id)
    assert [m.content for m in await store.index.list(ALICE)] == ["User is allergic to peanuts."]


async def test_the_candidates_of_one_message_are_judged_in_one_call(
    pipeline: CapturePipeline, store: Store, minilm: Embedder, server: ScriptedOpenAIServer
) -> None:
    home = await _remember(store, minilm, "User lives in Porto.")
    job = await _remember(store, minilm, "User works as a barista at a cafe.")
    server.script(MODEL, found(mem("User moved to Lisbon."), mem("User works as a baker at a bakery now.")))
    server.script(
        JUDGE,
        _decide(
            {"fact": "f2", "action": "supersede", "memory": "m2", "reason": "new job"},
            {"fact": "f1", "action": "supersede", "memory": "m1", "reason": "moved"},
        ),
    )
    result = await pipeline.start(ALICE, "I moved to Lisbon and I'm a baker now", at=AT)
    assert sorted((u.action, u.id) for u in result.updates) == sorted(
        [(UpdateAction.UPDATED, home.id), (UpdateAction.UPDATED, job.id)]
    )
    (request,) = _judge_requests(server)
    prompt = request.last_user_message or ""
    assert "f1 (fact): User moved to Lisbon." in prompt and "f2 (fact): User works as a baker" in prompt
    assert prompt.count("User lives in Porto.") == 1  # each memory shown once, whichever fact it is near


async def test_a_memory_replaced_earlier_in_the_batch_is_not_replaced_again(
    pipeline: CapturePipeline, store: Store, minilm: Embedder, server: ScriptedOpenAIServer
) -> None:
    old = await _remember(store, minilm, "User lives in Porto.")
    server.script(MODEL, found(mem("User moved to Lisbon."), mem("User lives in Lisbon now.")))
    server.script(
        JUDGE,
        _decide(
            {"fact": "f1", "action": "supersede", "memory": "m1"},
            {"fact": "f2", "action": "supersede", "memory": "m1"},
        ),
    )
    first, second = (await pipeline.start(ALICE, "I moved to Lisbon, I live in Lisbon now", at=AT)).updates
    assert (first.action, first.id) == (UpdateAction.UPDATED, old.id)
    assert second.id != old.id  # the second verdict named a memory that no longer says what it was judged against
    assert (await store.memories.get(ALICE, old.id)).content == "User moved to Lisbon."


@pytest.mark.parametrize(
    "decision",
    [
        {"fact": "f1", "action": "supersede", "memory": "m7", "reason": "an id it was not shown"},
        {"fact": "f1", "action": "supersede", "memory": "mem_invented", "reason": "an id it made up"},
        {"fact": "f1", "action": "supersede", "reason": "no memory at all"},
        {"fact": "f1", "action": "replace", "memory": "m1", "reason": "an action that does not exist"},
        {"fact": "f1", "action": 3, "memory": ["m1"], "reason": {"not": "text"}},
    ],
)
async def test_an_answer_that_names_no_memory_shown_is_an_addition(
    pipeline: CapturePipeline,
    store: Store,
    minilm: Embedder,
    server: ScriptedOpenAIServer,
    decision: dict[str, object],
) -> None:
    old = await _remember(store, minilm, "User plays the violin.")
    server.script(MODEL, found(mem("User plays the cello as well.")))
    server.script(JUDGE, _decide(decision))
    (update,) = (await pipeline.start(ALICE, "I play the cello as well", at=AT)).updates
    assert update.action is UpdateAction.CREATED
    assert (await store.memories.get(ALICE, old.id)).content == "User plays the violin."
    assert [e.action for e in await store.index.history(ALICE, old.id)] == [HistoryAction.CREATE]


async def test_a_verdict_naming_another_users_memory_changes_nothing_of_theirs(
    pipeline: CapturePipeline, store: Store, minilm: Embedder, server: ScriptedOpenAIServer
) -> None:
    theirs = await _remember(store, minilm, "User lives in Porto.", user=BOB)
    await _remember(store, minilm, "User lives in Faro.")
    server.script(MODEL, found(mem("User moved to Lisbon.")))
    server.script(JUDGE, _decide({"fact": "f1", "action": "supersede", "memory": theirs.id}))
    (update,) = (await pipeline.start(ALICE, "I moved to Lisbon", at=AT)).updates
    assert update.action is UpdateAction.CREATED
    assert (await store.memories.get(BOB, theirs.id)).content == "User lives in Porto."
    assert sorted(m.content for m in await store.index.list(ALICE)) == ["User lives in Faro.", "User moved to Lisbon."]


@pytest.mark.parametrize(
    "faults",
    [
        (Reply.malformed_json(), Reply.error(503)),
        (Reply.json({"verdict": "supersede"}), Reply.raw("<html>502 Bad Gateway</html>")),
        (Reply.text("late").after(1.5), Reply.text("late").after(1.5)),
    ],
    ids=["malformed-then-5xx", "wrong-shape-then-html", "timeouts"],
)
async def test_a_failing_model_leaves_the_decision_to_the_offline_judge(
    store: Store, minilm: Embedder, server: ScriptedOpenAIServer, faults: tuple[Reply, Reply]
) -> None:
    judge = _judge(server, timeout_s=0.5)
    made = CapturePipeline(store, minilm, llm_classifier(server), updates=judge)
    old = await _remember(store, minilm, "User lives in Porto.")
    server.script(MODEL, found(mem("User moved to Lisbon.")))
    server.script(JUDGE, *faults)
    try:
        (update,) = (await made.start(ALICE, "I moved to Lisbon", at=AT)).updates
    finally:
        await made.drain(5.0)
        await made.classifier.aclose()
        await judge.aclose()
    assert (update.action, update.id) == (UpdateAction.UPDATED, old.id)
    note = (await store.index.history(ALICE, old.id))[-1].note
    assert f"llm:openai:{JUDGE} failed" in note and "(offline)" in note and "the cross-encoder reads it as news" in note
    assert len(_judge_requests(server)) == 2  # the call and its one retry


async def test_a_fact_the_answer_leaves_out_is_decided_offline(
    pipeline: CapturePipeline, store: Store, minilm: Embedder, server: ScriptedOpenAIServer
) -> None:
    home = await _remember(store, minilm, "User lives in Porto.")
    await _remember(store, minilm, "User plays the violin.")
    server.script(MODEL, found(mem("User moved to Lisbon."), mem("User plays the cello as well.")))
    server.script(JUDGE, _decide({"fact": "f2", "action": "add"}, {"fact": "f9", "action": "none", "memory": "m1"}))
    moved, cello = (await pipeline.start(ALICE, "I moved to Lisbon. I play the cello as well", at=AT)).updates
    assert (moved.action, moved.id) == (UpdateAction.UPDATED, home.id)
    assert "did not decide this fact" in (await store.index.history(ALICE, home.id))[-1].note
    assert cello.action is UpdateAction.CREATED


async def test_no_near_memory_means_no_judge_call(
    pipeline: CapturePipeline, store: Store, server: ScriptedOpenAIServer
) -> None:
    server.script(MODEL, found(mem("User lives in Lisbon.")))
    (update,) = (await pipeline.start(ALICE, "I live in Lisbon", at=AT)).updates
    assert update.action is UpdateAction.CREATED
    assert _judge_requests(server) == []


async def test_the_model_judge_works_with_the_offline_classifier_and_answers_news_once(
    store: Store, minilm: Embedder, server: ScriptedOpenAIServer
) -> None:
    """Chosen by its own setting: the offline classifier passes "Sadly Bubbles didn't make it" over, the news step
    asks the model judge, and the writer's same question is answered from the judge's cache (one call)."""
    judge = _judge(server)
    made = CapturePipeline(store, minilm, OfflineClassifier(minilm), updates=judge)
    old = await _remember(store, minilm, "User has a goldfish named Bubbles.")
    server.script(JUDGE, _decide({"fact": "f1", "action": "supersede", "memory": "m1", "reason": "the fish died"}))
    try:
        (update,) = (await made.start(ALICE, "Sadly Bubbles didn't make it through the weekend.", at=AT)).updates
    finally:
        await made.drain(5.0)
        await judge.aclose()
    assert (update.action, update.id) == (UpdateAction.UPDATED, old.id)
    assert "the fish died" in (await store.index.history(ALICE, old.id))[-1].note
    assert len(_judge_requests(server)) == 1


@pytest.mark.parametrize(
    "message",
    ["x" * 100_000, "I live in Lisbon 🏠🏠🏠 " * 3000, "\x01\x02 binary \x7f looking ÿþ text I live in Lisbon"],
    ids=["100KB", "emoji-heavy", "binary-looking"],
)
async def test_huge_and_odd_texts_reach_the_model_clipped(
    pipeline: CapturePipeline, store: Store, minilm: Embedder, server: ScriptedOpenAIServer, message: str
) -> None:
    old = await _remember(store, minilm, "User lives in Porto.")
    server.script(MODEL, found(mem("User lives in Lisbon. " + message[:1500])))
    server.script(JUDGE, _decide({"fact": "f1", "action": "supersede", "memory": "m1"}))
    (update,) = (await pipeline.start(ALICE, message, at=AT)).updates
    assert update.id == old.id
    (request,) = _judge_requests(server)
    assert len(request.last_user_message or "") < 5000


def test_parse_decisions_maps_short_ids_back_per_fact() -> None:
    shown = {"f1": {"m1": "mem_a"}, "f2": {"m1": "mem_a", "m2": "mem_b"}}
    verdicts = parse_decisions(
        {
            "decisions": [
                {"fact": "f2", "action": "SUPERSEDE", "memory": "m2", "reason": "ended"},
                {"fact": "f1", "action": "none", "memory": "m2"},  # m2 was shown for f2 only
                {"fact": "f2", "action": "add"},  # a second decision for a fact is ignored
                "not an object",
            ]
        },
        ["f1", "f2"],
        shown,
        "llm:x",
    )
    assert (verdicts["f2"].kind, verdicts["f2"].memory_id, verdicts["f2"].judge) == (
        UpdateKind.SUPERSEDE,
        "mem_b",
        "llm:x",
    )
    assert verdicts["f1"].kind is UpdateKind.ADD and "not a memory shown for it" in verdicts["f1"].reason
    with pytest.raises(MalformedResponse):
        parse_decisions({"action": "add"}, ["f1"], {"f1": {}}, "llm:x")


def test_the_registry_builds_each_judge_by_its_setting(server: ScriptedOpenAIServer) -> None:
    assert get_update_judge(None).name == get_update_judge("offline").name == "offline"
    judge = get_update_judge(f"openai:{JUDGE}", base_url=server.base_url, api_key="sk-test")
    assert isinstance(judge, ModelJudge) and judge.name == f"llm:openai:{JUDGE}"
    with pytest.raises(ConfigError, match="provider"):
        get_update_judge("nosuchprovider:model")


def test_prompt_renders_facts_and_memories() -> None:
    from memstack.prompts import get_prompt

    text = get_prompt("capture.update").render(facts="f1 (fact): User moved.", memories="m1: User lives in Porto.")
    assert '"decisions"' in text and "f1 (fact): User moved." in text
    json.loads('{"decisions": []}')


@pytest.mark.parametrize(
    ("classifier", "update_model", "judge_calls"),
    [(None, "custom:judge-mini", 1), ("custom:classifier-mini", "offline", 0), ("custom:classifier-mini", None, 1)],
    ids=["offline-classifier-model-judge", "model-classifier-offline-judge", "unset-follows-the-classifier"],
)
async def test_the_engine_chooses_the_judge_by_its_own_setting(
    tmp_path: Path,
    server: ScriptedOpenAIServer,
    monkeypatch: pytest.MonkeyPatch,
    classifier: str | None,
    update_model: str | None,
    judge_calls: int,
) -> None:
    from memstack import AsyncMemstack, Config

    monkeypatch.setenv("MEMSTACK_CUSTOM_BASE_URL", server.base_url)
    monkeypatch.setenv("MEMSTACK_CUSTOM_API_KEY", "sk-test")
    if update_model is not None:
        monkeypatch.setenv("MEMSTACK_UPDATE_MODEL", update_model)
    config = Config.resolve(home=tmp_path, classifier_model=classifier)
    model = "classifier-mini" if classifier and update_model is None else JUDGE
    server.script(MODEL, found(mem("User moved to Lisbon.")))
    server.script(model, _decide({"fact": "f1", "action": "supersede", "memory": "m1", "reason": "said the model"}))
    async with AsyncMemstack(config, resume=False) as ms:
        old = await ms.add("alice", "User lives in Porto.", category=Category.FACT)
        await ms.chat("alice", "I moved to Lisbon last month.")
        await ms.wait_idle()
        history = await ms.history("alice", old.id)
    judged = [r for r in server.chat_requests if "New facts (id (category): fact)" in (r.last_user_message or "")]
    assert len(judged) == judge_calls
    assert history[-1].action is HistoryAction.SUPERSEDE
    assert ("said the model" in history[-1].note) == (judge_calls == 1)
