"""Forget means forgotten (issue 23): after a forget, what the user said about the thing forgotten reaches no model.

The user tells memstack about their cat over two sessions, so the fact lands everywhere memstack keeps what was
said: a long-term memory, the archive recall searches (layer 6), the session's facts (layer 5) and turn log
(layer 8), the raw window (layer 9) and a past session's summary line (layer 7). Every model is the scripted
OpenAI-compatible server over real HTTP and every request it receives is recorded: the chat model (which echoes
the message, so replies carry the words too), the LLM classifier and the summarizer (which writes its summaries,
facts and lines from what it is sent, so anything it is shown comes back in what it derives). After "forget
everything about my cat", the cat's name is in none of the requests any model receives, and recall does not find
it; after a restore it is back, with the session's hidden fact where it was; a permanent delete hides it for good.
On SQLite and PostgreSQL.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from memstack import AsyncMemstack
from memstack.types import HiddenKind, UserRef
from memstack_testing.openai_server import RecordedRequest, Reply

from .conftest import BACKENDS, Rig

USER = UserRef("fay")
MEMORY = "User adopted a cat named Miso"
WORD = re.compile(r"miso", re.IGNORECASE)


async def _classify(request: RecordedRequest) -> Any:
    said = _between(request.text, "New message from the user:\n<<<", ">>>")
    if "adopted" in said:
        return {"memories": [{"content": MEMORY, "category": "fact", "confidence": 0.95, "explicit": False}]}
    return {"memories": []}


def _between(text: str, start: str, end: str) -> str:
    return text.split(start, 1)[1].split(end, 1)[0].strip() if start in text else ""


async def _summarize(request: RecordedRequest) -> Any:
    """A summarizer that derives from what it is shown: turn summaries repeat the message, a fact names the cat
    when the message does (in its words: the session checks a fact against the exchange), the session line
    repeats the turn log."""
    text = request.text
    if "<user_message>" in text:
        said = " ".join(_between(text, "<user_message>", "</user_message>").split())
        facts = [said.rstrip(".?!")] if WORD.search(said) else []  # supported by the exchange: its own words
        return {
            "user_summary": f"User said: {said}"[:150],
            "assistant_summary": "Assistant replied",
            "base_truth_diff": {"add": facts, "update": [], "remove": []},
            "hard_exceptions": [],
            "flags": [],
        }
    if "Turn summaries:" in text:
        turns = " ".join(_between(text, "Turn summaries:", "Established facts:").split())
        return {"line": turns.replace("Turn 1: ", "")[:150] or "A short chat"}
    return {"facts": [line.strip("- ") for line in text.splitlines() if line.startswith("- ")]}


async def _echo(request: RecordedRequest) -> Any:
    return Reply.text(f"Noted: {request.last_user_message}")


def _leaks(requests: list[RecordedRequest]) -> list[str]:
    """The requests (model and a piece of the body) in which the cat's name appears."""
    found = []
    for r in requests:
        body = json.dumps(r.body, ensure_ascii=False)
        if match := WORD.search(body):
            found.append(f"{r.model}: …{body[max(0, match.start() - 120) : match.end() + 60]}…")
    return found


async def _turn(ms: AsyncMemstack, rig: Rig, message: str, session_id: str) -> str:
    """One turn, its background work done; the context the chat model was sent."""
    before = len(rig.chat_requests())
    await ms.chat(USER, message, session_id=session_id)
    await ms.wait_idle()
    return json.dumps([r.body for r in rig.chat_requests()[before:]], ensure_ascii=False)


@pytest.mark.parametrize("rig", BACKENDS, indirect=True)
async def test_a_forgotten_fact_reaches_no_model_until_it_is_restored(rig: Rig) -> None:
    rig.classify, rig.summarize, rig.answer = _classify, _summarize, _echo
    async with rig.engine() as ms:
        # -- the user tells it over two sessions: memory, archive, facts, turn log, a past session's line
        await _turn(ms, rig, "I just adopted a cat named Miso.", "home")
        await _turn(ms, rig, "Miso keeps knocking my plants over.", "home")
        ended = await ms.end_session(USER, "home")
        assert ended is not None and WORD.search(ended.line)
        await _turn(ms, rig, "Any toy ideas for Miso?", "later")
        [memory] = await ms.list(USER)
        assert memory.content == MEMORY
        assert any(WORD.search(f.text) for f in (await ms.store.sessions.open(USER, "later")).base_truth)
        context = await _turn(ms, rig, "Plan my weekend, please.", "later")
        assert WORD.search(context)  # before the forget the model sees it (where this test looks is right)

        # -- the preview: the memory, the exchanges that said it, the fact and the line derived from them
        preview = await ms.forget_about(USER, "everything about my cat", dry_run=True)
        assert [m.id for m in preview.memories] == [memory.id] and preview.dry_run
        kinds = {(i.kind, i.session_id, i.turn) for i in preview.hidden}
        assert {(HiddenKind.TURN, "home", 1), (HiddenKind.TURN, "home", 2), (HiddenKind.TURN, "later", 1)} <= kinds
        assert {(HiddenKind.FACT, "later", 0), (HiddenKind.LINE, "home", 0)} <= kinds
        assert next(i for i in preview.hidden if (i.session_id, i.turn) == ("home", 1)).reason == "source"
        assert (await ms.get(USER, memory.id)).is_active  # nothing changed yet

        # -- forget: from here on no model is sent the name, in this session, a new one, or after one ends
        done = await ms.forget_about(USER, "everything about my cat")
        assert [m.id for m in done.memories] == [memory.id] and not done.memories[0].is_active
        mark = len(rig.server.chat_requests)
        await _turn(ms, rig, "What do you remember about me?", "later")
        await _turn(ms, rig, "What pets do I have?", "fresh")
        await ms.end_session(USER, "later")
        await _turn(ms, rig, "Hello again, what did we talk about last time?", "after")
        after = rig.server.chat_requests[mark:]
        assert {r.model for r in after} >= {"chat", "classifier", "summarizer"}
        assert _leaks(after) == []
        recalled = await ms.recall(USER, "Miso the cat", k=20)
        assert not any(WORD.search(item.text + item.context) for item in recalled)
        state = await ms.store.sessions.open(USER, "later")
        assert not any(WORD.search(f.text) for f in state.base_truth)
        assert not any(WORD.search(m.content) for m in state.raw_window)
        lines = await ms.store.archive.sessions(USER, with_line=True)
        assert "home" not in {s.session_id for s in lines} and not any(WORD.search(s.line) for s in lines)

        # -- restore: what was hidden is back, the session's fact where it was (later turns kept it)
        await ms.restore(USER, memory.id)
        assert WORD.search(await _turn(ms, rig, "What pets do I have?", "restored"))
        assert any(WORD.search(f.text) for f in (await ms.store.sessions.open(USER, "later")).base_truth)
        assert "home" in {s.session_id for s in await ms.store.archive.sessions(USER, with_line=True)}

        # -- a permanent delete: the memory is gone and what it came from stays hidden for good
        await ms.delete(USER, memory.id)
        mark = len(rig.server.chat_requests)
        await _turn(ms, rig, "Do I have any pets?", "deleted")
        assert _leaks(rig.server.chat_requests[mark:]) == []
        assert {i.memory_id for i in await ms.store.hidden.hidden(USER)} == {memory.id}
        exported = await ms.export(USER)
        assert [h["kind"] for m in exported["memories"] for h in m["hides"]]  # the user's record says what hides
