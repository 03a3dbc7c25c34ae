"""Which agent answers: an :class:`~memstack.context.Agent`, a registered name, a YAML file, or the default."""

from __future__ import annotations

from pathlib import Path

from memstack.context import Agent, default_agent, load_agent
from memstack.errors import InputError

__all__ = ["AgentRegistry"]


class AgentRegistry:
    """Agents by name. A name resolves to a registered agent, then ``<home>/agents/<name>.yaml``; a string ending in
    ``.yaml``/``.yml`` is a file path; ``None`` (or the default agent's name) is memstack's default agent.

    Files are loaded once and kept (an agent is frozen and fingerprinted at load: layers 1-2 never change while it
    is in use; register it again to replace it)."""

    def __init__(self, home: Path | None = None) -> None:
        self._home = home
        self._agents: dict[str, Agent] = {}

    def register(self, agent: Agent) -> Agent:
        agent.verify()
        self._agents[agent.name] = agent
        return agent

    def _load(self, key: str, path: Path) -> Agent:
        loaded = self.register(load_agent(path))
        self._agents[key] = loaded
        return loaded

    def names(self) -> list[str]:
        return sorted({default_agent().name, *self._agents})

    def resolve(self, agent: str | Agent | None) -> Agent:
        if agent is None:
            return default_agent()
        if isinstance(agent, Agent):
            agent.verify()
            return agent
        name = agent.strip()
        if found := self._agents.get(name):
            return found
        if name in ("", "default", default_agent().name):
            return default_agent()
        if name.endswith((".yaml", ".yml")):
            return self._load(name, Path(name))
        if self._home is not None and name.isidentifier():
            path = self._home / "agents" / f"{name}.yaml"
            if path.is_file():
                return self._load(name, path)
        raise InputError(
            f"unknown agent {name!r}; register it (AsyncMemstack.register_agent), save it as agents/{name}.yaml "
            "in the memstack home, or pass the path of its YAML file"
        )
