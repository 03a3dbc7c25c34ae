"""The offline responder's report is shown to the caller and never kept as conversation (issue 13): the session
keeps the user's message and marks the turn as having no reply; recall, the raw window and the turn log never hold
the report. The engine knows a placeholder by the reply's flag, not by its words: a model that writes the same
words is archived like any reply."""

from __future__ import annotations

import pytest

from memstack.context.offline import OFFLINE_BANNER
from memstack.session.policy import NO_REPLY
from memstack.types import ChatDone, RecallKind, UserRef
from memstack_testing.openai_server import Reply

from .conftest import BACKENDS, Rig

ANA = UserRef("ana")


@pytest.mark.parametrize("rig", BACKENDS, indirect=True)
async def test_an_offline_reply_is_not_archived_as_conversation(rig: Rig) -> None:
    async with rig.engine(chat=False) as ms:
        first = await ms.chat(ANA, "I'm training for a marathon in Porto.")
        events = [
            e async for e in ms.chat_stream(ANA, "What should I eat before a long run?", session_id=first.session_id)
        ]
        done = events[-1]
        assert isinstance(done, ChatDone)
        second = done.result
        await ms.wait_idle()
        assert first.offline and second.offline and first.reply.startswith(OFFLINE_BANNER)
        assert "Your message" in second.reply  # the caller still sees the report
        turns = await ms.store.archive.turns(ANA, session_id=first.session_id)
        assert [t.user for t in turns] == [
            "I'm training for a marathon in Porto.",
            "What should I eat before a long run?",
        ]
        assert [t.assistant for t in turns] == ["", ""]  # the report is not conversation
        assert all("no_reply" in t.flags for t in turns)  # marked: no reply was given
        state = await ms.store.sessions.open(ANA, first.session_id, create=False)
        assert [m.role for m in state.raw_window] == ["user", "user"]
        assert [t.assistant_summary for t in state.turn_log] == [NO_REPLY, NO_REPLY]
        for query in ("offline responder chat model configured", "what a model would be given"):
            found = await ms.recall(ANA, query, k=20, kinds=[RecallKind.TURN])
            assert all(item.role == "user" for item in found), found
            assert not any("offline" in item.text.lower() for item in found)
        said = await ms.recall(ANA, "marathon in Porto", k=5, kinds=[RecallKind.TURN])
        assert said and said[0].role == "user" and "Porto" in said[0].text  # what the user said is kept
        document = await ms.export(ANA)
        assert OFFLINE_BANNER not in str(document)


async def test_a_model_writing_the_same_words_is_archived(rig: Rig) -> None:
    """No string matching: the flag on the reply decides, so a real model's reply is kept whatever it says."""
    rig.answer = lambda r: _reply(OFFLINE_BANNER)
    async with rig.engine() as ms:
        result = await ms.chat(ANA, "Quote the offline banner, please.")
        await ms.wait_idle()
        turns = await ms.store.archive.turns(ANA, session_id=result.session_id)
    assert not result.offline
    assert [t.assistant for t in turns] == [OFFLINE_BANNER] and "no_reply" not in turns[0].flags


async def _reply(text: str) -> object:
    return Reply.text(text)
