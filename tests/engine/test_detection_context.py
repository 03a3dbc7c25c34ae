"""The memory classifier reads the session's last exchange as context, in the process that served it and after a
restart (from the session's stored raw window), and a resumed detection job classifies with the context it was
recorded with."""

from __future__ import annotations

from memstack_testing.openai_server import Reply

from .conftest import Rig

QUESTION = "Nice photo! How long have you been married?"


async def test_a_restarted_engine_gives_the_classifier_the_sessions_last_exchange(rig: Rig) -> None:
    rig.server.script("chat", Reply.text(QUESTION))
    async with rig.engine() as ms:
        first = await ms.chat("ana", "Here is a picture from our anniversary trip.")
    async with rig.engine() as ms:  # a new process: nothing of the session in memory
        await ms.chat("ana", "Five years already!", session_id=first.session_id)
        await ms.chat("ana", "Another session, a new start.", new_session=True)
    first_turn, resumed, fresh = rig.classifier_requests()
    assert "(none)" in first_turn.text
    assert f"assistant: {QUESTION}" in resumed.text
    assert "user: Here is a picture from our anniversary trip." in resumed.text
    assert QUESTION not in fresh.text and "(none)" in fresh.text


async def test_a_session_id_the_caller_chose_starts_without_context(rig: Rig) -> None:
    async with rig.engine() as ms:
        await ms.chat("ana", "Hello there, I'm new here.", session_id="my-own-session")
    [request] = rig.classifier_requests()
    assert "(none)" in request.text


async def test_the_classifier_reads_the_message_at_the_users_local_time(rig: Rig) -> None:
    """23:30 in New York on 28 February is already 29 February in UTC: the user's today is the 28th."""
    async with rig.engine() as ms:
        meta = {"local_time": "2024-02-28T23:30:00", "timezone": "America/New_York"}
        await ms.chat("ana", "My dentist appointment is tomorrow.", metadata=meta)
    [request] = rig.classifier_requests()
    assert "Today is Wednesday, 28 February 2024" in request.text
