"""Reading an export document for an import (issue 27): version 1 (before imports: no ``sha256``, a ``seq`` on each
message, no job ``key``) is still read; the ``sha256`` covers the owner as well as the records; a document whose
shape is not an export's is refused naming the record, before anything is written."""

from __future__ import annotations

import copy
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from memstack.config import Config
from memstack.engine import AsyncMemstack
from memstack.errors import ImportRefused
from memstack.imports import read_document
from memstack.types import UserRef

ALICE = UserRef("alice", tenant="acme")


@pytest.fixture
async def ms(tmp_path: Path) -> AsyncIterator[AsyncMemstack]:
    async with AsyncMemstack(Config(home=tmp_path)) as engine:
        yield engine


async def _document(ms: AsyncMemstack) -> dict[str, Any]:
    await ms.add(ALICE, "I keep bees on the roof", category="fact")
    reply = await ms.chat(ALICE, "My sister Lena lives in Ghent.")
    await ms.end_session(ALICE, reply.session_id)
    await ms.wait_idle()
    return await ms.export(ALICE)


def _without_job_keys(document: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(document)
    for job in out["jobs"]:
        job.pop("key", None)
    return {**out, "exported_at": "", "sha256": ""}


async def test_a_version_1_document_is_read(ms: AsyncMemstack) -> None:
    document = await _document(ms)
    assert any(s["messages"] for s in document["sessions"])
    old = copy.deepcopy(document)
    old["version"] = 1
    del old["sha256"]
    for session in old["sessions"]:
        for seq, message in enumerate(session["messages"], 1):
            message["seq"] = seq
    for job in old["jobs"]:
        del job["key"]
    checked = read_document(old)
    assert (checked.version, checked.verified) == (1, False)
    await ms.erase(ALICE)
    report = await ms.import_user(old)
    assert report.added["memories"] == sum(1 for m in document["memories"] if m["stored"]) and not report.unchanged
    again = await ms.export(ALICE)
    assert again["version"] == 2
    assert _without_job_keys(again) == _without_job_keys(document)  # a job's key is its id: v1 did not export it
    assert all(job["key"] == job["id"] for job in again["jobs"])


async def test_the_digest_covers_the_owner_and_every_record(ms: AsyncMemstack) -> None:
    document = await _document(ms)
    assert read_document(document).verified
    for change in (
        lambda d: d.update(tenant="globex"),
        lambda d: d.update(user_id="mallory"),
        lambda d: d["sessions"][0]["turns"][0].update(user_text="something else"),
        lambda d: d["memories"].pop(),
    ):
        changed = copy.deepcopy(document)
        change(changed)
        with pytest.raises(ImportRefused, match="sha256"):
            read_document(changed)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.update(format="mem0"), "not a memstack user export"),
        (lambda d: d.update(version=True), "version True"),
        (lambda d: d.pop("sessions"), "no 'sessions' list"),
        (lambda d: d.pop("sha256"), "no 'sha256'"),
        (lambda d: d["memories"][0].pop("history"), r"memories\[0\] has no valid 'history'"),
        (lambda d: d["sessions"].append("a session"), r"sessions\[1\] is not a JSON object"),
        (lambda d: d.update(user_id=""), "owner is unusable"),
    ],
)
async def test_a_document_not_shaped_as_an_export_is_refused(ms: AsyncMemstack, change: Any, message: str) -> None:
    document = await _document(ms)
    await ms.erase(ALICE)
    changed = copy.deepcopy(document)
    change(changed)
    with pytest.raises(ImportRefused, match=message):
        await ms.import_user(changed)
    assert (await ms.export(ALICE))["memories"] == []
