"""Importing a user (issue 27): export → import into an empty store → export gives the same document, on every
backend; the import is one transaction (a refused one leaves nothing), idempotent, and refuses a document it cannot
trust (another version, cut short, changed) or one that would take over data it does not own.

The user is populated as the erasure contract test populates one (``_populate``: memories managed, chat turns,
an ingested conversation, a forget that hides what was said, a superseded memory, artifacts, snapshots, a pending
job, a dropped capture), so every section of the document is exercised.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest

from memstack.config import Config
from memstack.engine import AsyncMemstack
from memstack.errors import ImportConflict, ImportRefused, MemstackError
from memstack.types import UserRef

from .conftest import BACKENDS
from .test_users_contract import ALICE, _populate

Opener = Callable[[], AsyncMemstack]


@pytest.fixture(params=BACKENDS)
async def engines(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Callable[[str], AsyncMemstack]]:
    """A factory of engines, each on a store of its own (a file, or a database) of this test's backend."""
    backend = str(request.param)
    opened: list[AsyncMemstack] = []

    async def open_one(name: str) -> AsyncMemstack:
        settings: dict[str, Any] = {"home": tmp_path / name}
        if backend != "sqlite":
            server = request.getfixturevalue("postgres_server")
            url = server.create_database(server.new_database_name())
            settings["database_url"] = url
            if backend == "pgbouncer":
                pooled = request.getfixturevalue("pgbouncer").url(urlparse(url).path.lstrip("/"))
                settings.update(database_url=pooled, database_pooler="transaction", database_direct_url=url)
        ms = AsyncMemstack(Config(**settings))
        await ms.open()
        opened.append(ms)
        return ms

    yield open_one  # type: ignore[misc]
    for ms in opened:
        await ms.aclose()


def _same(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """``b`` with the export time of ``a`` (the one field that says when, not what)."""
    return {**b, "exported_at": a["exported_at"]}


async def test_export_import_export_gives_the_same_document(engines: Any) -> None:
    source = await engines("source")
    await _populate(source, ALICE)
    text = "".join([piece async for piece in source.export_stream(ALICE)])
    document = json.loads(text)
    assert document["memories"] and document["sessions"] and document["jobs"] and document["dropped_captures"]
    assert any(s["messages"] for s in document["sessions"]) and any(m["hides"] for m in document["memories"])

    target = await engines("target")
    report = await target.import_user(text)
    assert not report.unchanged and report.added["memories"] == sum(1 for m in document["memories"] if m["stored"])
    assert report.added["archive_vectors"] == sum(len(s["messages"]) for s in document["sessions"])
    again = await target.export(ALICE)
    assert _same(document, again) == document

    # what was imported works: searched, recalled, listed with its history
    assert await target.search(ALICE, "green tea", limit=3)
    assert await target.recall(ALICE, "what did I say about pottery?", limit=5)

    # idempotent: the same document again changes nothing
    second = await target.import_user(document)
    assert second.unchanged and second.total == 0
    assert _same(document, await target.export(ALICE)) == document


async def test_a_refused_import_changes_nothing(engines: Any) -> None:
    source = await engines("source")
    await _populate(source, ALICE)
    text = "".join([piece async for piece in source.export_stream(ALICE)])
    document = json.loads(text)
    target = await engines("target")
    bob = UserRef("bob", tenant="acme")
    await target.add(bob, "I keep bees", category="fact")
    before = await target.export(bob)

    # cut short, changed after the export, another version: refused before anything is written
    with pytest.raises(ImportRefused, match="cut short"):
        await target.import_user(text[: len(text) // 2])
    changed = json.loads(text)
    changed["memories"][0]["content"] = "I never drink tea"
    with pytest.raises(ImportRefused, match="sha256"):
        await target.import_user(changed)
    with pytest.raises(ImportRefused, match="version 3"):
        await target.import_user({**document, "version": 3})
    with pytest.raises(ImportRefused, match="more than"):
        await target.import_user(text, max_bytes=1000)
    # of another tenant than the caller's
    with pytest.raises(ImportConflict, match="tenant"):
        await target.import_user(text, tenant="globex")
    assert (await target.export(ALICE))["memories"] == []

    # a user that holds other data: refused, their data as it was
    await target.add(ALICE, "I live in Lisbon", category="fact")
    held = await target.export(ALICE)
    with pytest.raises(ImportConflict, match="erase the user first"):
        await target.import_user(text)
    assert _same(held, await target.export(ALICE)) == held

    # ids another user holds (here bob's memory id inside alice's document): refused in the transaction, nothing kept
    await target.erase(ALICE)
    (bees,) = before["memories"]
    stolen = json.loads(text)
    stolen["memories"][0]["id"] = bees["id"]
    stolen.pop("sha256")
    stolen["version"] = 1  # version 1 has no digest: the store's own check is what stops it
    with pytest.raises(ImportConflict, match="another user"):
        await target.import_user(stolen)
    assert (await target.export(ALICE))["memories"] == [] and (await target.export(ALICE))["sessions"] == []
    assert _same(before, await target.export(bob)) == before

    # a failure late in the transaction (a turn number twice, after the memories and sessions were written): the
    # database refuses it and the whole import rolls back
    broken = json.loads(text)
    broken.pop("sha256")
    broken["version"] = 1
    session = next(s for s in broken["sessions"] if s["turns"])
    session["turns"].append(session["turns"][0])
    with pytest.raises(MemstackError):
        await target.import_user(broken)
    empty = await target.export(ALICE)
    assert [empty[k] for k in ("memories", "sessions", "contexts", "jobs", "dropped_captures")] == [[]] * 5
    assert (await target.import_user(text)).added["memories"] > 0  # and the good document imports afterwards
