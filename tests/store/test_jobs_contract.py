"""The ``JobStore`` contract: every backend in ``conftest.BACKENDS`` must pass every test here unchanged."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest

from memstack.errors import InputError, NotFound
from memstack.store.base import JobStore, Store
from memstack.types import JobStatus, utcnow


async def test_store_exposes_a_job_store(store: Store) -> None:
    assert isinstance(store.jobs, JobStore)


async def test_enqueue_records_a_pending_job_once_per_key(store: Store) -> None:
    first = await store.jobs.enqueue("detect", "turn-1", {"message": "I love tea", "n": 1})
    assert first.status is JobStatus.PENDING and first.attempts == 0 and first.owner is None
    assert first.payload == {"message": "I love tea", "n": 1} and first.state == {} and first.result is None
    again = await store.jobs.enqueue("detect", "turn-1", {"message": "something else"})
    assert again.id == first.id and again.payload == first.payload
    other_kind = await store.jobs.enqueue("consolidate", "turn-1", {})
    assert other_kind.id != first.id


async def test_enqueue_with_an_owner_claims_the_new_job_for_its_lease(store: Store) -> None:
    job = await store.jobs.enqueue("detect", "k", {"x": 1}, owner="worker-a", lease_s=30)
    assert job.status is JobStatus.RUNNING and job.owner == "worker-a" and job.attempts == 1
    assert job.lease_until is not None and job.lease_until > utcnow() + timedelta(seconds=20)
    assert await store.jobs.claim_pending("detect", 10, owner="worker-b") == []
    # a second enqueue of the same key by another worker gets the recorded job, still worker-a's
    again = await store.jobs.enqueue("detect", "k", {"x": 1}, owner="worker-b")
    assert again.id == job.id and again.owner == "worker-a"


async def test_claim_takes_due_jobs_oldest_first_by_kind_and_limit(store: Store) -> None:
    ids = [(await store.jobs.enqueue("detect", f"k{i}", {"i": i})).id for i in range(4)]
    await store.jobs.enqueue("consolidate", "c0", {})
    claimed = await store.jobs.claim_pending("detect", 3, owner="w1")
    assert [j.id for j in claimed] == ids[:3]
    assert all(j.status is JobStatus.RUNNING and j.owner == "w1" and j.attempts == 1 for j in claimed)
    rest = await store.jobs.claim_pending(None, 10, owner="w2")
    assert sorted(j.kind for j in rest) == ["consolidate", "detect"] and ids[3] in {j.id for j in rest}
    assert await store.jobs.claim_pending(None, 10, owner="w3") == []


async def test_a_lapsed_lease_makes_a_running_job_claimable_again(store: Store) -> None:
    job = await store.jobs.enqueue("detect", "k", {}, owner="dead-worker", lease_s=0.05)
    await asyncio.sleep(0.1)
    (taken,) = await store.jobs.claim_pending("detect", 5, owner="new-worker")
    assert taken.id == job.id and taken.owner == "new-worker" and taken.attempts == 2


async def test_checkpoint_keeps_state_and_extends_the_lease(store: Store) -> None:
    job = await store.jobs.enqueue("detect", "k", {"m": "x"}, owner="w", lease_s=0.2)
    saved = await store.jobs.checkpoint(job.id, {"done": {"0": "mem_1"}}, lease_s=60)
    assert saved.state == {"done": {"0": "mem_1"}} and saved.payload == {"m": "x"}
    await asyncio.sleep(0.3)  # past the first lease, within the extended one
    assert await store.jobs.claim_pending("detect", 5, owner="other") == []
    assert (await store.jobs.get(job.id)).state == {"done": {"0": "mem_1"}}


async def test_complete_keeps_the_result_and_drops_the_payload(store: Store) -> None:
    job = await store.jobs.enqueue("detect", "k", {"message": "private text"}, owner="w")
    await store.jobs.complete(job.id, {"updates": [{"id": "mem_1"}]})
    done = await store.jobs.get(job.id)
    assert done.status is JobStatus.DONE and done.result == {"updates": [{"id": "mem_1"}]} and done.payload == {}
    assert await store.jobs.claim_pending(None, 5) == []
    again = await store.jobs.enqueue("detect", "k", {"message": "private text"}, owner="w2")
    assert again.id == job.id and again.status is JobStatus.DONE


async def test_fail_with_retry_at_is_pending_again_when_due(store: Store) -> None:
    later = await store.jobs.enqueue("detect", "later", {}, owner="w")
    soon = await store.jobs.enqueue("detect", "soon", {}, owner="w")
    await store.jobs.fail(later.id, "ProviderTimeout: no answer", retry_at=utcnow() + timedelta(hours=1))
    await store.jobs.fail(soon.id, "StoreBusy: locked", retry_at=utcnow() - timedelta(seconds=1))
    pending = await store.jobs.get(later.id)
    assert pending.status is JobStatus.PENDING and pending.error == "ProviderTimeout: no answer"
    assert pending.run_after is not None and pending.owner is None
    (claimed,) = await store.jobs.claim_pending("detect", 5, owner="w2")
    assert claimed.id == soon.id and claimed.attempts == 2 and claimed.run_after is None


async def test_fail_without_retry_gives_the_job_up(store: Store) -> None:
    job = await store.jobs.enqueue("detect", "k", {"message": "kept for inspection"}, owner="w")
    await store.jobs.fail(job.id, "MalformedResponse: not JSON", retry_at=None)
    failed = await store.jobs.get(job.id)
    assert failed.status is JobStatus.FAILED and failed.error == "MalformedResponse: not JSON"
    assert failed.payload == {"message": "kept for inspection"}
    assert await store.jobs.claim_pending(None, 5) == []


async def test_jobs_survive_reopening(make_store) -> None:
    first = await make_store()
    job = await first.jobs.enqueue("detect", "k", {"message": "hi"}, owner="crashed", lease_s=0.05)
    await first.jobs.checkpoint(job.id, {"candidates": 2}, lease_s=0.05)
    await first.close()
    await asyncio.sleep(0.1)
    second = await make_store()
    (resumed,) = await second.jobs.claim_pending("detect", 5, owner="restarted")
    assert resumed.id == job.id and resumed.state == {"candidates": 2} and resumed.payload == {"message": "hi"}


async def test_concurrent_claimers_never_take_the_same_job(make_store) -> None:
    a, b = await make_store(), await make_store()  # two processes on the same data
    for i in range(30):
        await a.jobs.enqueue("detect", f"k{i}", {"i": i})

    async def drain(store: Store, owner: str) -> list[str]:
        taken: list[str] = []
        while batch := await store.jobs.claim_pending("detect", 4, owner=owner):
            taken += [j.id for j in batch]
        return taken

    got_a, got_b = await asyncio.gather(drain(a, "a"), drain(b, "b"))
    assert len(got_a) + len(got_b) == 30 and not set(got_a) & set(got_b)


async def test_unknown_ids_and_bad_arguments_are_typed_errors(store: Store) -> None:
    with pytest.raises(NotFound):
        await store.jobs.get("job_missing")
    with pytest.raises(NotFound):
        await store.jobs.complete("job_missing")
    with pytest.raises(NotFound):
        await store.jobs.fail("job_missing", "x", retry_at=None)
    with pytest.raises(NotFound):
        await store.jobs.checkpoint("job_missing", {})
    with pytest.raises(InputError, match="JSON"):
        await store.jobs.enqueue("detect", "k", {"when": object()})
    with pytest.raises(InputError):
        await store.jobs.enqueue("", "k", {})
    with pytest.raises(InputError):
        await store.jobs.claim_pending("detect", 0)
    with pytest.raises(InputError):
        await store.jobs.enqueue("detect", "k", {}, owner="w", lease_s=0)


async def test_finished_jobs_are_pruned_after_the_retention(store: Store) -> None:
    old = await store.jobs.enqueue("detect", "old", {}, owner="w")
    kept = await store.jobs.enqueue("detect", "kept", {"message": "not finished"})
    await store.jobs.complete(old.id, {"updates": []})
    store.jobs.retention = timedelta(0)  # type: ignore[attr-defined]  # both backends take a retention
    await asyncio.sleep(0.01)
    newer = await store.jobs.enqueue("detect", "newer", {}, owner="w")
    await store.jobs.complete(newer.id)  # finishing a job prunes the expired finished ones
    with pytest.raises(NotFound):
        await store.jobs.get(old.id)
    assert (await store.jobs.get(kept.id)).status is JobStatus.PENDING  # unfinished jobs are never pruned
