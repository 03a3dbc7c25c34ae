"""The UI's own HTTP surface over real HTTP (no browser): the page and its files, the info endpoint, and the
inspector's endpoints, with the same auth and tenant scoping as the rest of the API."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest

from memstack.config import Config
from memstack.context.stack import DEFAULT_STACK
from memstack.engine import AsyncMemstack
from memstack.server import create_app
from memstack.server.runner import BackgroundServer
from memstack.server.ui import CSP, inspect_manifest
from memstack.types import FragmentStatus, Manifest, ManifestEntry, UserRef

from .conftest import Served, run_async

STATIC = ["app.js", "api.js", "memories.js", "chat.js", "inspector.js", "app.css"]


def _manifest(context_id: str, entries: tuple[ManifestEntry, ...]) -> Manifest:
    return Manifest(
        context_id=context_id,
        created_at=datetime(2025, 3, 1, 12, 0, tzinfo=UTC),
        agent="assistant",
        fingerprint="f" * 64,
        model=None,
        encoding="o200k_base",
        budget_tokens=1000,
        tokens=sum(e.tokens for e in entries if e.status is FragmentStatus.KEPT) + 40,
        memory_enabled=True,
        temporary=False,
        entries=entries,
    )


ENTRIES = (
    ManifestEntry("core", "agent:core", 120, FragmentStatus.KEPT),
    ManifestEntry("memory", "memory:mem_a", 12, FragmentStatus.KEPT),
    ManifestEntry("memory", "memory:mem_b", 9, FragmentStatus.TRIMMED, (), "over budget"),
    ManifestEntry("memory", "memory:mem_c", 15, FragmentStatus.QUARANTINED, ("override",), "tries to take authority"),
    ManifestEntry("current", "message", 8, FragmentStatus.KEPT),
)


def test_page_and_files_are_open_and_locked_down(keyed_server: Served) -> None:
    page = httpx.get(f"{keyed_server.url}/")
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert page.headers["content-security-policy"] == CSP
    assert "script-src 'self'" in CSP and "unsafe-inline" not in CSP
    assert '<script type="module" src="/ui/static/app.js">' in page.text
    for name in STATIC:
        got = httpx.get(f"{keyed_server.url}/ui/static/{name}")
        assert got.status_code == 200, name
        assert got.headers["content-security-policy"] == CSP
        assert got.headers["content-type"].split(";")[0] in {"text/javascript", "application/javascript", "text/css"}
        assert "innerHTML" not in got.text  # the UI renders server data as text only
    assert httpx.get(f"{keyed_server.url}/ui/static/../ui.py").status_code == 404


def test_info_says_how_to_authenticate(keyed_server: Served, local_server: Served) -> None:
    keyed = httpx.get(f"{keyed_server.url}/ui/api/info").json()  # open: no key needed
    assert keyed["auth"] == "keys"
    assert httpx.get(f"{local_server.url}/ui/api/info").json()["auth"] == "local"
    assert [layer["key"] for layer in keyed["layers"]] == [spec.key for spec in DEFAULT_STACK]
    assert len(keyed["layers"]) == 10
    assert keyed["default_tier"] == "free" and keyed["tiers"]["tiny"] == 2 and keyed["tiers"]["premium"] is None
    paths = httpx.get(f"{keyed_server.url}/openapi.json").json()["paths"]
    assert not [p for p in paths if p == "/" or p.startswith("/ui")]  # UI plumbing, not the public API


def test_context_endpoints_need_a_key_and_stay_in_the_tenant(keyed_server: Served) -> None:
    async def keep() -> None:
        from memstack.engine import AsyncMemstack

        async with AsyncMemstack(home=keyed_server.home) as ms:
            await ms.store.contexts.save(UserRef("dana", "acme"), _manifest("ctx_ui_api_1", ENTRIES))

    run_async(keep())
    with keyed_server.api() as acme, keyed_server.api(keyed_server.other_key) as globex:
        assert httpx.get(f"{keyed_server.url}/ui/api/users/dana/contexts").status_code == 401
        assert httpx.get(f"{keyed_server.url}/ui/api/contexts/ctx_ui_api_1").status_code == 401
        listed = acme.get("/ui/api/users/dana/contexts").json()["contexts"]
        assert [(c["context_id"], c["memories"], c["trimmed"], c["quarantined"]) for c in listed] == [
            ("ctx_ui_api_1", 3, 1, 1)
        ]
        assert globex.get("/ui/api/users/dana/contexts").json() == {"contexts": []}
        assert globex.get("/ui/api/contexts/ctx_ui_api_1").status_code == 404
        assert acme.get("/ui/api/contexts/ctx_ui_api_1", params={"user_id": "erin"}).status_code == 404
        detail = acme.get("/ui/api/contexts/ctx_ui_api_1", params={"user_id": "dana"}).json()
    assert detail["framing_tokens"] == 40
    # The memories were never stored for dana: shown as gone, never as another user's text.
    assert [(m["id"], m["status"], m["gone"]) for m in detail["memories_used"]] == [
        ("mem_a", "kept", True),
        ("mem_b", "trimmed", True),
        ("mem_c", "quarantined", True),
    ]


@pytest.mark.postgres
def test_inspector_endpoints_on_postgresql(postgres_url: str, tmp_path: Path) -> None:
    config = Config.resolve(home=tmp_path, database_url=postgres_url, embedder="hash:64")

    async def keep() -> tuple[str, str]:
        async with AsyncMemstack(config) as ms:
            _, key = await ms.store.keys.create("acme")
            user = UserRef("ana", "acme")
            kept = await ms.add(user, "Keeps bees on the roof", category="fact")
            entries = (ManifestEntry("memory", f"memory:{kept.id}", 9, FragmentStatus.KEPT), *ENTRIES[4:])
            await ms.store.contexts.save(user, _manifest("ctx_pg_1", entries))
            return key, kept.id

    key, memory_id = run_async(keep())
    with BackgroundServer(create_app(config)) as server, httpx.Client(base_url=server.url) as client:
        client.headers["Authorization"] = f"Bearer {key}"
        listed = client.get("/ui/api/users/ana/contexts").json()["contexts"]
        assert [c["context_id"] for c in listed] == ["ctx_pg_1"]
        detail = client.get("/ui/api/contexts/ctx_pg_1", params={"user_id": "ana"}).json()
    used = detail["memories_used"]
    assert [(m["id"], m["memory"]["content"], m["gone"]) for m in used] == [
        (memory_id, "Keeps bees on the roof", False)
    ]
    assert [layer["tokens"] for layer in detail["layers"] if layer["key"] == "memory"] == [9]


@pytest.mark.parametrize("user_known", [True, False])
def test_inspect_manifest_sums_each_layer_in_stack_order(user_known: bool) -> None:
    extra = ManifestEntry("policy", "policy:tenant", 30, FragmentStatus.KEPT)  # a layer this stack does not have
    view = inspect_manifest(_manifest("ctx_x", (*ENTRIES, extra)), DEFAULT_STACK, {}, user_known=user_known)
    keys = [layer["key"] for layer in view["layers"]]
    assert keys == [*(spec.key for spec in DEFAULT_STACK), "policy"]  # unknown layers kept, after the known ones
    memory = view["layers"][keys.index("memory")]
    assert (memory["tokens"], memory["tokens_removed"]) == (12, 24)
    assert (memory["kept"], memory["trimmed"], memory["quarantined"]) == (1, 1, 1)
    assert [f["flags"] for f in memory["fragments"]] == [[], [], ["override"]]
    assert view["layers"][keys.index("delegated")]["fragments"] == []
    assert view["counts"] == {"kept": 4, "trimmed": 1, "quarantined": 1}
    assert [m["gone"] for m in view["memories_used"]] == [user_known] * 3
