"""Nothing dropped silently (issue 23): a self-hosted install keeps every memory; where tiers are configured and one
is full, an automatic capture is not stored but the reply says so (``dropped_limit`` with the tier and its limit),
the store counts it for ``usage`` (kept across a restart, exported and erased with the user), and the log says it
once per user; an explicit save gets the upgrade prompt. On SQLite and PostgreSQL."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from memstack.capture.writer import LimitNotices
from memstack.config import TierLimits
from memstack.types import UpdateAction, UserRef
from memstack_testing.openai_server import RecordedRequest

from .conftest import BACKENDS, Rig, memories

ONE = TierLimits({"free": 1, "pro": None}, default_tier="free")


def _says(*items: tuple[str, str, float]) -> Any:
    async def reply(request: RecordedRequest) -> object:
        return memories(*items)

    return reply


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "memstack.capture.writer"]


@pytest.mark.parametrize("rig", BACKENDS, indirect=True)
async def test_a_self_hosted_install_keeps_every_capture(rig: Rig) -> None:
    async with rig.engine() as ms:  # no tiers configured
        for i, fact in enumerate(("User has a cat", "User plays chess", "User lives in Oslo", "User sings")):
            rig.classify = _says((fact, "fact", 0.9))
            result = await ms.chat("ana", f"message {i}", metadata={"tier": "free"})  # a tier name selects nothing
            assert [(u.action, u.content) for u in result.memory_updates] == [(UpdateAction.CREATED, fact)]
        usage = await ms.usage("ana")
        assert (usage.tier, usage.active, usage.limit, usage.dropped) == ("unlimited", 4, None, 0)


@pytest.mark.parametrize("rig", BACKENDS, indirect=True)
async def test_a_full_tier_drops_a_capture_but_says_so_counts_it_and_logs_it_once(
    rig: Rig, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="memstack.capture.writer")
    rig.classify = _says(("User is vegetarian", "preference", 0.95))
    async with rig.engine(tiers=ONE) as ms:
        await ms.chat("ana", "I'm vegetarian.")
        for fact in ("User has a cat", "User plays chess"):
            rig.classify = _says((fact, "fact", 0.9))
            result = await ms.chat("ana", f"About me: {fact}")
            (update,) = result.memory_updates
            assert (update.action, update.content, update.tier, update.limit) == (
                UpdateAction.DROPPED_LIMIT,
                fact,
                "free",
                1,
            )
            assert update.to_dict() == {
                "id": None,
                "content": fact,
                "category": "fact",
                "action": "dropped_limit",
                "tier": "free",
                "limit": 1,
            }
            assert update.note == "not saved: the free tier keeps at most 1 memories"
            assert result.badge == () and result.upgrade_prompt is None
        # logged once for the user, not once per message
        (logged,) = _warnings(caplog)
        assert "'ana'" in logged and "free tier's limit of 1 memories" in logged
        usage = await ms.usage("ana")
        assert (usage.active, usage.limit, usage.dropped) == (1, 1, 2) and usage.last_dropped_at is not None
        # an explicit save at the limit gets the upgrade prompt, and is not an automatic capture dropped
        explicit = {"content": "User has a dog", "category": "fact", "confidence": 0.9, "explicit": True}

        async def remember(request: RecordedRequest) -> object:
            return {"memories": [explicit]}

        rig.classify = remember
        asked = await ms.chat("ana", "Remember that I have a dog.")
        assert asked.upgrade_prompt is not None and "1-memory limit of the free plan" in asked.upgrade_prompt
        assert [u.action for u in asked.memory_updates] == [UpdateAction.DROPPED_LIMIT]
        assert (await ms.usage("ana")).dropped == 2
        # another user fills up: logged for them too
        rig.classify = _says(("User is a nurse", "fact", 0.9))
        await ms.chat("ben", "I'm a nurse.")
        rig.classify = _says(("User lives in Lyon", "fact", 0.9))
        await ms.chat("ben", "I live in Lyon.")
        assert len(_warnings(caplog)) == 2 and "'ben'" in _warnings(caplog)[1]
    async with rig.engine(tiers=ONE) as ms:  # the count is in the store, not in the process
        assert (await ms.usage("ana")).dropped == 2 and (await ms.usage("ben")).dropped == 1
        (dropped,) = (await ms.export("ana"))["dropped_captures"]
        assert dropped["count"] == 2
        assert (await ms.erase("ana")).removed["capture_drops"] == 1
        assert (await ms.usage("ana")).dropped == 0 and (await ms.usage("ben")).dropped == 1


async def test_a_user_is_logged_again_once_their_tier_fills_up_again(
    rig: Rig, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="memstack.capture.writer")
    async with rig.engine(tiers=ONE) as ms:
        for message, fact in (("I'm vegetarian.", "User is vegetarian"), ("I have a cat.", "User has a cat")):
            rig.classify = _says((fact, "fact", 0.9))
            await ms.chat("ana", message)
        assert len(_warnings(caplog)) == 1
        (memory,) = await ms.list("ana")
        await ms.delete("ana", memory.id)  # room again: the next capture is stored, and the next drop is news
        for message, fact in (("I play chess.", "User plays chess"), ("I sing.", "User sings")):
            rig.classify = _says((fact, "fact", 0.9))
            await ms.chat("ana", message)
        assert len(_warnings(caplog)) == 2


def test_the_record_of_users_logged_is_bounded() -> None:
    notices = LimitNotices(size=3)
    assert [notices.first(UserRef(u)) for u in ("u1", "u2", "u1", "u3", "u4")] == [True, True, False, True, True]
    assert len(notices) == 3
    assert notices.first(UserRef("u2"))  # the least recently noted was evicted: logged once more, nothing else
    notices.forget(UserRef("u4"))  # erased
    assert notices.first(UserRef("u4"))
