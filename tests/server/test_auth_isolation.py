"""Keys scope every call to one tenant: no key → 401, another tenant's data → 404 (never its content)."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import httpx
import pytest

from memstack.engine import AsyncMemstack
from memstack.server import ServerSettings, create_app
from memstack.server.runner import BackgroundServer

from .conftest import Running, fresh_user, make_config


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"Authorization": "Bearer msk_not-a-real-key"},
        {"Authorization": "Basic dXNlcjpwYXNz"},
        {"Authorization": ""},
    ],
)
def test_requests_without_a_valid_key_get_401(running: Running, headers: dict[str, str]) -> None:
    with httpx.Client(base_url=running.url, headers=headers) as client:
        for method, path in [
            ("GET", "/v1/users/alice/memories"),
            ("POST", "/v1/users/alice/memories/search"),
            ("GET", "/v1/agents/default"),
            ("GET", "/v1/contexts/ctx_x"),
        ]:
            response = client.request(method, path, json={"query": "x"} if method == "POST" else None)
            assert response.status_code == 401, (path, response.text)
            assert response.json()["error"]["type"] == "Unauthorized"
            assert response.headers["www-authenticate"] == "Bearer"


def test_a_revoked_key_is_refused(running: Running) -> None:
    with running.client(running.revoked) as client:
        response = client.get("/v1/users/alice/memories")
    assert response.status_code == 401 and "revoked" in response.json()["error"]["message"]


def test_tenants_never_see_each_others_data(
    acme: httpx.Client, globex: httpx.Client, request: pytest.FixtureRequest
) -> None:
    user = fresh_user(request)  # the same user id in both tenants: two different users
    secret = acme.post(f"/v1/users/{user}/memories", json={"content": "User's locker code is 4512"}).json()
    url = f"/v1/users/{user}/memories/{secret['id']}"

    for response in (
        globex.get(url),
        globex.patch(url, json={"content": "User's locker code is 0000"}),
        globex.delete(url),
        globex.delete(url, params={"permanent": "true"}),
        globex.post(f"{url}/restore"),
        globex.get(f"{url}/history"),
    ):
        assert response.status_code == 404, response.text
        assert "4512" not in response.text
    assert globex.get(f"/v1/users/{user}/memories", params={"include_deleted": "true"}).json() == {"memories": []}
    found = globex.post(f"/v1/users/{user}/memories/search", json={"query": "locker code", "k": 5}).json()
    assert found == {"results": []}
    assert globex.get(f"/v1/users/{user}/usage").json()["active"] == 0

    # Nothing globex tried changed acme's memory.
    mine = acme.get(url).json()
    assert mine["content"] == "User's locker code is 4512" and mine["is_active"] is True
    assert [e["action"] for e in acme.get(f"{url}/history").json()["events"]] == ["create"]


def test_agents_are_per_tenant(acme: httpx.Client, globex: httpx.Client) -> None:
    definition = {"core": {"identity": "You are Acme's support assistant."}, "characteristics": {"tone": "brisk"}}
    assert acme.put("/v1/agents/support", json=definition).status_code == 200
    assert acme.get("/v1/agents/support").status_code == 200
    missing = globex.get("/v1/agents/support")
    assert missing.status_code == 404 and "Acme" not in missing.text
    assert all(a["name"] != "support" for a in globex.get("/v1/agents").json()["agents"])


def test_contexts_are_per_tenant(running: Running, acme: httpx.Client, globex: httpx.Client) -> None:
    from datetime import UTC, datetime

    from memstack.types import FragmentStatus, Manifest, ManifestEntry, UserRef

    manifest = Manifest(
        context_id="ctx_tenant_test",
        created_at=datetime.now(UTC),
        agent="assistant",
        fingerprint="f" * 64,
        model=None,
        encoding="o200k_base",
        budget_tokens=1000,
        tokens=42,
        memory_enabled=True,
        temporary=False,
        entries=(ManifestEntry("memory", "memory:mem_1", 12, FragmentStatus.KEPT),),
    )

    async def save() -> None:
        async with AsyncMemstack(make_config(running.home)) as ms:
            await ms.store.contexts.save(UserRef("carol", "acme"), manifest)

    asyncio.run(save())
    got = acme.get("/v1/contexts/ctx_tenant_test")
    assert got.status_code == 200
    assert got.json()["tokens"] == 42 and got.json()["entries"][0]["source"] == "memory:mem_1"
    assert acme.get("/v1/contexts/ctx_tenant_test", params={"user_id": "dave"}).status_code == 404
    assert globex.get("/v1/contexts/ctx_tenant_test").status_code == 404


def test_local_mode_serves_tenant_default_without_a_key(tmp_path: Path) -> None:
    async def setup() -> str:
        async with AsyncMemstack(make_config(tmp_path)) as ms:
            await ms.add("alice", "User is a night owl")
            _, key = await ms.store.keys.create("acme")
            return key

    key = asyncio.run(setup())
    app = create_app(make_config(tmp_path), settings=ServerSettings(auth="local"))
    with BackgroundServer(app) as server, httpx.Client(base_url=server.url) as client:
        listed = client.get("/v1/users/alice/memories").json()["memories"]
        assert [m["content"] for m in listed] == ["User is a night owl"]  # the CLI's tenant, "default"
        keyed = client.get("/v1/users/alice/memories", headers={"Authorization": f"Bearer {key}"})
        assert keyed.json() == {"memories": []}  # a key still names its tenant
        placeholder = client.get("/v1/users/alice/memories", headers={"Authorization": "Bearer msk_wrong"})
        assert placeholder.status_code == 200  # an unknown key is a placeholder here: tenant "default"
        assert [m["content"] for m in placeholder.json()["memories"]] == ["User is a night owl"]


def test_the_openai_sdk_talks_to_a_local_mode_server_with_a_placeholder_key(tmp_path: Path) -> None:
    """The SDK refuses to start without a key; a local server takes any one and acts for tenant ``default``."""
    import openai

    async def setup() -> None:
        async with AsyncMemstack(make_config(tmp_path)) as ms:
            await ms.add("alice", "User is vegetarian")

    asyncio.run(setup())
    app = create_app(make_config(tmp_path), settings=ServerSettings(auth="auto", key_cache_s=0.2))
    with BackgroundServer(app) as server:
        client = openai.OpenAI(base_url=f"{server.url}/v1", api_key="local", max_retries=0)
        assert "memstack" in [m.id for m in client.models.list()]
        reply = client.chat.completions.create(
            model="memstack", messages=[{"role": "user", "content": "What should I cook tonight?"}], user="alice"
        )
        assert "vegetarian" in (reply.choices[0].message.content or "").lower()  # alice's memory, tenant default

        async def make_key() -> None:
            async with AsyncMemstack(make_config(tmp_path)) as ms:
                await ms.store.keys.create("acme")

        asyncio.run(make_key())  # once a key exists the server requires keys, and a placeholder is refused
        time.sleep(0.3)
        with pytest.raises(openai.AuthenticationError):
            client.models.list()


def test_keys_made_and_revoked_with_the_cli_work_against_a_running_server(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from memstack.cli import main

    cli = CliRunner()
    made = cli.invoke(main, ["keys", "create", "--tenant", "acme", "--name", "ci", "--json", "--home", str(tmp_path)])
    assert made.exit_code == 0, made.output
    key = json.loads(made.output)
    assert key["secret"].startswith("msk_") and key["tenant"] == "acme"

    # key_cache_s=0: every request asks the database, so a revocation by another process counts at once.
    app = create_app(make_config(tmp_path), settings=ServerSettings(key_cache_s=0.0))
    headers = {"Authorization": f"Bearer {key['secret']}"}
    with BackgroundServer(app) as server, httpx.Client(base_url=server.url, headers=headers) as client:
        assert client.post("/v1/users/bob/memories", json={"content": "User likes rain"}).status_code == 201
        listed = cli.invoke(main, ["keys", "list", "--json", "--home", str(tmp_path)])
        assert [k["id"] for k in json.loads(listed.output)] == [key["id"]]
        assert "secret" not in listed.output and key["secret"] not in listed.output
        revoked = cli.invoke(main, ["keys", "revoke", key["id"], "--home", str(tmp_path)])
        assert revoked.exit_code == 0 and "Revoked" in revoked.output
        assert client.get("/v1/users/bob/memories").status_code == 401
    # Only a hash of the secret is on disk.
    files = list(tmp_path.glob("memstack.db*"))  # the database and its write-ahead log
    assert files and all(key["secret"].encode() not in f.read_bytes() for f in files)
    assert cli.invoke(main, ["keys", "revoke", "key_nope", "--home", str(tmp_path)]).exit_code == 1


def test_the_gc_keeper_freezes_long_lived_objects(tmp_path: Path) -> None:
    import gc

    app = create_app(make_config(tmp_path), settings=ServerSettings(auth="local", gc_freeze_s=0.05))
    try:
        with BackgroundServer(app) as server:
            assert httpx.get(f"{server.url}/healthz").status_code == 200
            assert gc.get_freeze_count() > 0  # the engine, caches and app are out of the collector's sight
    finally:
        gc.unfreeze()


def test_sessions_are_per_tenant_and_user(running: Running, acme: httpx.Client, globex: httpx.Client) -> None:
    from memstack.types import UserRef

    async def start() -> None:
        async with AsyncMemstack(make_config(running.home)) as ms:
            await ms.store.sessions.open(UserRef("sam", "acme"), "ses_tenant_test", agent="assistant")

    asyncio.run(start())
    got = acme.get("/v1/sessions/ses_tenant_test", params={"user_id": "sam"})
    assert got.status_code == 200, got.text
    body = got.json()
    assert body["session_id"] == "ses_tenant_test" and body["user_id"] == "sam" and body["turn_count"] == 0
    assert body["agent"] == "assistant" and body["base_truth"] == [] and body["raw_window"] == []
    assert acme.get("/v1/sessions/ses_tenant_test/turns", params={"user_id": "sam"}).json() == {"turns": []}
    for client, user in ((globex, "sam"), (acme, "someone-else")):
        for path in ("/v1/sessions/ses_tenant_test", "/v1/sessions/ses_tenant_test/turns"):
            missing = client.get(path, params={"user_id": user})
            assert missing.status_code == 404 and missing.json()["error"]["type"] == "NotFound"
    assert acme.get("/v1/sessions/ses_tenant_test").status_code == 400  # the user is required


def test_a_users_contexts_are_listed_per_tenant(acme: httpx.Client, globex: httpx.Client) -> None:
    reply = acme.post("/v1/chat", json={"user_id": "erin", "message": "I collect stamps."}).json()
    listed = acme.get("/v1/users/erin/contexts").json()["contexts"]
    assert [c["context_id"] for c in listed] == [reply["context_id"]]
    assert listed[0] == acme.get(f"/v1/contexts/{reply['context_id']}").json()  # each as GET /v1/contexts/{id}
    assert acme.get("/v1/users/erin/contexts", params={"session_id": "ses_other"}).json() == {"contexts": []}
    assert globex.get("/v1/users/erin/contexts").json() == {"contexts": []}
    assert acme.get("/v1/users/erin/contexts", params={"limit": 0}).status_code == 400
