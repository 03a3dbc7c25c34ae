"""``engine.agents``: agent definitions stored per tenant (the fields of an agent YAML file, as plain values), which a
chat names by ``agent=`` (``PUT /v1/agents/{name}`` stores one over HTTP).

A definition is validated by the agent loader (:func:`memstack.context.parse_agent`, strict) before it is stored, so
a chat naming it can never fail on its definition. ``default`` is the built-in agent until a tenant stores its own
under that name. :meth:`AsyncMemstack.register_agent` is the other way to name an agent: in this process only,
for every tenant, never stored.
"""

from __future__ import annotations

import builtins
import dataclasses
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from memstack.engine._scope import tenant_of
from memstack.errors import InputError, NotFound
from memstack.types import AgentRecord, utcnow

if TYPE_CHECKING:
    from memstack.context import Agent
    from memstack.engine import AsyncMemstack

__all__ = ["DEFAULT_AGENT", "Agents"]

#: The name of the built-in agent (``memstack/agents/default.yaml``).
DEFAULT_AGENT = "default"

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")


def _name(name: str) -> str:
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise InputError(
            f"an agent name is 1-100 letters, digits, '.', '_' or '-', starting with a letter or digit; got {name!r}"
        )
    return name


class Agents:
    """A tenant's stored agents (tenant ``default`` unless ``tenant=`` names another)."""

    def __init__(self, engine: AsyncMemstack) -> None:
        self._engine = engine

    @staticmethod
    def parse(name: str, definition: Mapping[str, Any]) -> Agent:
        """The agent ``definition`` describes, validated as :meth:`put` validates it (``InputError`` naming the bad
        field), without storing it. Its ``name``, when given, must be ``name``."""
        from memstack.context import parse_agent

        _name(name)
        if not isinstance(definition, Mapping):
            raise InputError("an agent definition must be a JSON object (or a YAML mapping) with at least 'core'")
        given = definition.get("name", name)
        if given != name:
            raise InputError(f"the definition is named {given!r} but was sent to /v1/agents/{name}; make them match")
        return parse_agent({**definition, "name": name}, origin=f"agent {name!r}", strict=True, error=InputError)

    async def list(self, *, tenant: str | None = None) -> builtins.list[AgentRecord]:
        """The tenant's stored agents, by name."""
        return await self._engine.store.agents.list(tenant_of(tenant))

    async def get(self, name: str, *, tenant: str | None = None) -> AgentRecord:
        """One stored definition; ``default`` is the built-in agent's until the tenant stores its own."""
        ten = tenant_of(tenant)
        try:
            return await self._engine.store.agents.get(ten, _name(name))
        except NotFound:
            if name != DEFAULT_AGENT:
                raise
        from memstack.context import default_agent

        now = utcnow()
        return AgentRecord(ten, DEFAULT_AGENT, _plain(default_agent()), now, now)

    async def put(self, name: str, definition: Mapping[str, Any], *, tenant: str | None = None) -> AgentRecord:
        """Create or replace the tenant's agent ``name`` (validated first: see :meth:`parse`)."""
        ten = tenant_of(tenant)
        self.parse(name, definition)
        return await self._engine.store.agents.put(ten, name, {**definition, "name": name})

    async def delete(self, name: str, *, tenant: str | None = None) -> None:
        """Delete a stored agent (``NotFound`` if the tenant has none of that name)."""
        await self._engine.store.agents.delete(tenant_of(tenant), _name(name))

    async def load(self, name: str, *, tenant: str | None = None) -> Agent:
        """The agent a chat of the tenant naming ``name`` runs: the stored one, or the built-in for ``default``.

        A name is never read as a file path here (a server must not open files a request names)."""
        try:
            record = await self._engine.store.agents.get(tenant_of(tenant), _name(name))
        except NotFound:
            if name == DEFAULT_AGENT:
                from memstack.context import default_agent

                return default_agent()
            raise NotFound("agent", name) from None
        return self.parse(name, record.definition)


def _plain(agent: Agent) -> dict[str, Any]:
    """The built-in agent's definition as plain values, under its stored name (what a PUT of ``default`` takes)."""
    return {
        "name": DEFAULT_AGENT,
        "core": dataclasses.asdict(agent.core),
        "characteristics": dataclasses.asdict(agent.characteristics),
        "budget_tokens": agent.budget_tokens,
        "raw_window": agent.raw_window,
    }
