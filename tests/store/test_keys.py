"""Contract of the tenant roles, on every backend: ``store.keys`` (API keys) and ``store.agents`` (definitions)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from memstack.errors import InputError, NotFound
from memstack.store.base import AgentStore, KeyStore, Store, hash_api_key
from memstack.types import ApiKey


async def test_the_roles_are_exposed(store: Store) -> None:
    assert isinstance(store.keys, KeyStore) and isinstance(store.agents, AgentStore)


async def test_a_key_authenticates_as_its_tenant_until_revoked(store: Store) -> None:
    key, secret = await store.keys.create("acme", name="web")
    assert secret.startswith("msk_") and len(secret) >= 40 and secret.startswith(key.prefix)
    assert key.id.startswith("key_") and key.tenant == "acme" and key.name == "web" and key.active

    found = await store.keys.authenticate(secret)
    assert found == key
    assert await store.keys.authenticate(secret + "x") is None
    assert await store.keys.authenticate("") is None
    assert await store.keys.authenticate(hash_api_key(secret)) is None  # the stored hash is not a key

    revoked = await store.keys.revoke(key.id)
    assert revoked.id == key.id and not revoked.active and revoked.revoked_at is not None
    assert await store.keys.authenticate(secret) is None
    again = await store.keys.revoke(key.id)  # harmless
    assert again.revoked_at == revoked.revoked_at
    with pytest.raises(NotFound):
        await store.keys.revoke("key_unknown")


async def test_keys_are_listed_per_tenant_without_secrets(store: Store) -> None:
    a1, _ = await store.keys.create("acme")
    b1, _ = await store.keys.create("globex")
    a2, _ = await store.keys.create("acme", name="second")
    await store.keys.revoke(a1.id)
    assert [k.id for k in await store.keys.list("acme")] == [a2.id]
    assert [k.id for k in await store.keys.list("acme", include_revoked=True)] == [a1.id, a2.id]
    assert {k.id for k in await store.keys.list()} == {b1.id, a2.id}
    assert all(isinstance(k, ApiKey) for k in await store.keys.list())


async def test_secrets_are_unique(store: Store) -> None:
    made = await asyncio.gather(*(store.keys.create("acme") for _ in range(20)))
    assert len({secret for _, secret in made}) == 20 and len({key.id for key, _ in made}) == 20


@pytest.mark.parametrize("tenant", ["", "x" * 201, "bell\x07"])
async def test_bad_tenants_are_input_errors(store: Store, tenant: str) -> None:
    with pytest.raises(InputError):
        await store.keys.create(tenant)


async def test_keys_survive_reopening(make_store: Any) -> None:
    first = await make_store()
    key, secret = await first.keys.create("acme")
    await first.close()
    second = await make_store()
    assert await second.keys.authenticate(secret) == key


async def test_agents_are_stored_per_tenant(store: Store) -> None:
    definition = {"name": "tutor", "core": {"identity": "You are a tutor.", "instructions": ["Be brief."]}}
    stored = await store.agents.put("acme", "tutor", definition)
    assert stored.definition == definition and stored.tenant == "acme"
    assert (await store.agents.get("acme", "tutor")).definition == definition
    with pytest.raises(NotFound):
        await store.agents.get("globex", "tutor")

    changed = await store.agents.put("acme", "tutor", {**definition, "characteristics": {"tone": "dry"}})
    assert changed.created_at == stored.created_at and changed.updated_at >= stored.updated_at
    await store.agents.put("acme", "planner", {"name": "planner", "core": "You plan."})
    assert [a.name for a in await store.agents.list("acme")] == ["planner", "tutor"]
    assert await store.agents.list("globex") == []

    await store.agents.delete("acme", "tutor")
    with pytest.raises(NotFound):
        await store.agents.get("acme", "tutor")
    with pytest.raises(NotFound):
        await store.agents.delete("acme", "tutor")
    with pytest.raises(InputError):
        await store.agents.put("acme", "bad", {"when": object()})
