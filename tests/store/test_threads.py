"""``store.threads`` on every backend: a conversation state's digest names a session's turn, per user."""

from __future__ import annotations

from memstack.store.base import ChatThreads, Store
from memstack.types import UserRef

ANA = UserRef("ana", tenant="acme")


async def test_a_marked_conversation_state_is_found_by_its_user_only(store: Store) -> None:
    threads = store.threads
    assert isinstance(threads, ChatThreads)
    assert await threads.find(ANA, "a" * 64) is None
    await threads.mark(ANA, "a" * 64, "ses_1", 1)
    await threads.mark(ANA, "b" * 64, "ses_1", 2)
    assert await threads.find(ANA, "a" * 64) == ("ses_1", 1)
    assert await threads.find(ANA, "b" * 64) == ("ses_1", 2)
    assert await threads.find(UserRef("bo", tenant="acme"), "a" * 64) is None
    assert await threads.find(UserRef("ana", tenant="globex"), "a" * 64) is None
    await threads.mark(ANA, "a" * 64, "ses_2", 1)  # the same state continued elsewhere (a fork) moves
    assert await threads.find(ANA, "a" * 64) == ("ses_2", 1)
