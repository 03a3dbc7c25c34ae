"""Agent definitions: layers 1-2 (core, characteristics) plus the agent's model, budget, memory and tool settings.

An agent is loaded once from YAML (or a JSON object), validated, frozen and fingerprinted: the fingerprint is the
sha256 of the canonical JSON of core + characteristics. Any later change to those fields (``dataclasses.replace``,
``object.__setattr__``) no longer matches the fingerprint, and :meth:`Agent.verify` (run by every assembly) raises
:class:`~memstack.errors.OverrideViolation`.

A bad YAML file raises :class:`~memstack.errors.ConfigError` naming the file, line and column of the problem.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from memstack.errors import ConfigError, InputError, MemstackError, OverrideViolation
from memstack.types import Category, unstorable

__all__ = [
    "Agent",
    "AgentTool",
    "Characteristics",
    "CoreSpec",
    "MemorySettings",
    "ModelSettings",
    "agent_from_request",
    "default_agent",
    "load_agent",
    "parse_agent",
]

_MAX_BUDGET = 2_000_000
_DEFAULT_BUDGET = 16_000
_DEFAULT_WINDOW = 6


@dataclass(frozen=True, slots=True)
class CoreSpec:
    """Layer 1: who the agent is, what it does, and the constraints nothing below may override."""

    identity: str
    instructions: tuple[str, ...] = ()
    hard_constraints: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Characteristics:
    """Layer 2: tone, style and decision habits."""

    tone: str = ""
    style: str = ""
    decision_habits: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ModelSettings:
    name: str | None = None  # e.g. "openai:gpt-4o-mini"; None: the engine's configured chat model
    temperature: float | None = None
    max_output_tokens: int | None = None


@dataclass(frozen=True, slots=True)
class MemorySettings:
    enabled: bool = True
    top_k: int = 12  # memories placed in layer 6 at most
    keep_top: int = 3  # best hits that the budget never trims
    category_weights: tuple[tuple[Category, float], ...] = ()

    def weight(self, category: Category | str | None) -> float:
        for cat, value in self.category_weights:
            if cat == category:
                return value
        return 1.0


@dataclass(frozen=True, slots=True)
class AgentTool:
    name: str
    description: str = ""


@dataclass(frozen=True, slots=True)
class Agent:
    """A loaded agent definition. Build one with :func:`load_agent`, :func:`parse_agent` or the constructor."""

    name: str
    core: CoreSpec
    characteristics: Characteristics = field(default_factory=Characteristics)
    model: ModelSettings = field(default_factory=ModelSettings)
    budget_tokens: int = _DEFAULT_BUDGET
    raw_window: int = _DEFAULT_WINDOW
    memory: MemorySettings = field(default_factory=MemorySettings)
    tools: tuple[AgentTool, ...] = ()
    origin: str = ""  # where it was loaded from, for messages
    fingerprint: str = ""  # computed when empty; a mismatch raises OverrideViolation

    def __post_init__(self) -> None:
        actual = self.compute_fingerprint()
        if not self.fingerprint:
            object.__setattr__(self, "fingerprint", actual)
        elif self.fingerprint != actual:
            raise OverrideViolation(_tampered(self, actual))

    def compute_fingerprint(self) -> str:
        canonical = json.dumps(
            {"core": _plain(self.core), "characteristics": _plain(self.characteristics)},
            sort_keys=True,
            ensure_ascii=False,
            separators=(",", ":"),
        )
        return hashlib.sha256(canonical.encode()).hexdigest()

    def verify(self) -> None:
        """Raise ``OverrideViolation`` if core or characteristics changed since the agent was loaded."""
        actual = self.compute_fingerprint()
        if actual != self.fingerprint:
            raise OverrideViolation(_tampered(self, actual))


def _tampered(agent: Agent, actual: str) -> str:
    return (
        f"agent {agent.name!r} ({agent.origin or 'built in code'}): core or characteristics changed after loading "
        f"(fingerprint {agent.fingerprint[:12]} at load, {actual[:12]} now); layers 1-2 are immutable: "
        "edit the agent definition and load it again"
    )


def _plain(value: Any) -> Any:
    if isinstance(value, CoreSpec | Characteristics):
        return {name: _plain(getattr(value, name)) for name in value.__dataclass_fields__}
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value


# --- parsing -------------------------------------------------------------------------------------------------------

Path_ = tuple[str | int, ...]


class _Reader:
    """Reads plain values (from YAML or JSON) with the location of each field for error messages."""

    def __init__(self, origin: str, marks: Mapping[Path_, str], *, strict: bool, error: type[MemstackError]) -> None:
        self.origin = origin
        self.marks = marks
        self.strict = strict
        self.error = error
        self.ignored: list[str] = []
        self.root: Path_ = ()  # prefix of every field path in messages (e.g. "agent" inside a request)

    def where(self, path: Path_) -> str:
        for end in range(len(path), -1, -1):
            if (mark := self.marks.get(path[:end])) is not None:
                return f"{self.origin}:{mark}"
        return self.origin

    def fail(self, path: Path_, message: str, *, at_key: bool = False) -> MemstackError:
        name = ".".join(str(p) for p in (*self.root, *path)) or "agent"
        key_mark = self.marks.get((*path, "#key")) if at_key else None
        where = f"{self.origin}:{key_mark}" if key_mark else self.where(path)
        return self.error(f"{where}: {name}: {message}")

    def mapping(self, value: Any, path: Path_, known: Sequence[str]) -> Mapping[str, Any]:
        if not isinstance(value, Mapping):
            raise self.fail(path, f"must be a mapping with fields {', '.join(known)}; got {_kind(value)}")
        for key in value:
            if key not in known:
                if self.strict:
                    raise self.fail(
                        (*path, str(key)), f"unknown field; known fields here: {', '.join(known)}", at_key=True
                    )
                self.ignored.append(".".join(str(p) for p in (*self.root, *path, key)))
        return value

    def text(self, value: Any, path: Path_, *, required: bool = False, default: str = "") -> str:
        if value is None:
            if required:
                raise self.fail(path, "is required")
            return default
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise self.fail(path, f"must be text; got {_kind(value)}")
        text = str(value).strip()
        if required and not text:
            raise self.fail(path, "must not be empty")
        if (why := unstorable(text)) is not None:
            raise self.fail(path, why)
        return text

    def lines(self, value: Any, path: Path_) -> tuple[str, ...]:
        if value is None:
            return ()
        if isinstance(value, str):
            return (text,) if (text := self.text(value, path)) else ()
        if not isinstance(value, list | tuple):
            raise self.fail(path, f"must be a list of text lines; got {_kind(value)}")
        return tuple(t for i, item in enumerate(value) if (t := self.text(item, (*path, i))))

    def number(self, value: Any, path: Path_, *, default: int, low: int, high: int) -> int:
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int | float | str):
            raise self.fail(path, f"must be a whole number; got {_kind(value)}")
        try:
            number = int(value)
        except ValueError:
            raise self.fail(path, f"must be a whole number; got {value!r}") from None
        if not low <= number <= high or number != float(value):
            raise self.fail(path, f"must be a whole number from {low} to {high}; got {value!r}")
        return number

    def real(self, value: Any, path: Path_, *, low: float, high: float) -> float | None:
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.fail(path, f"must be a number; got {_kind(value)}")
        if not low <= float(value) <= high:
            raise self.fail(path, f"must be between {low} and {high}; got {value}")
        return float(value)

    def flag(self, value: Any, path: Path_, *, default: bool) -> bool:
        if value is None:
            return default
        if not isinstance(value, bool):
            raise self.fail(path, f"must be true or false; got {_kind(value)}")
        return value


def _kind(value: Any) -> str:
    if value is None:
        return "nothing"
    return {dict: "a mapping", list: "a list", str: "text", bool: "true/false"}.get(type(value), type(value).__name__)


_TOP = ("name", "core", "characteristics", "model", "budget_tokens", "raw_window", "memory", "tools", "description")


def parse_agent(
    data: Any,
    *,
    origin: str = "agent",
    marks: Mapping[Path_, str] | None = None,
    strict: bool = True,
    base: Agent | None = None,
    error: type[MemstackError] = ConfigError,
) -> Agent:
    """Build an agent from plain values (a parsed YAML or JSON object).

    ``strict``: unknown fields raise (YAML files) or are ignored (requests). Missing fields take ``base``'s values
    when given (``core`` is required otherwise). ``core`` and ``characteristics`` may each be one plain string.
    """
    return _parse(_Reader(origin, marks or {}, strict=strict, error=error), data, base)


def agent_from_request(data: Any) -> tuple[Agent, tuple[str, ...]]:
    """An agent from a request's ``agent`` object, leniently: unknown fields are ignored (and returned), missing ones
    come from the default agent. Values of the wrong type raise ``InputError`` naming the field."""
    if data is None:
        return default_agent(), ()
    reader = _Reader("request", {}, strict=False, error=InputError)
    agent = _parse(reader, data, default_agent(), path=("agent",))
    return agent, tuple(reader.ignored)


def _parse(r: _Reader, data: Any, base: Agent | None, path: Path_ = ()) -> Agent:
    top = r.mapping(data, path, _TOP)
    r.root = path
    default_budget = base.budget_tokens if base else _DEFAULT_BUDGET
    default_window = base.raw_window if base else _DEFAULT_WINDOW
    return Agent(
        name=r.text(top.get("name"), ("name",), default=base.name if base else "") or "agent",
        core=_core(r, top.get("core"), base),
        characteristics=_characteristics(r, top.get("characteristics"), base),
        model=_model(r, top.get("model"), base),
        budget_tokens=r.number(
            top.get("budget_tokens"), ("budget_tokens",), default=default_budget, low=1, high=_MAX_BUDGET
        ),
        raw_window=r.number(top.get("raw_window"), ("raw_window",), default=default_window, low=0, high=1000),
        memory=_memory(r, top.get("memory"), base),
        tools=_tools(r, top.get("tools"), base),
        origin=r.origin if path == () else f"{r.origin}.{'.'.join(map(str, path))}",
    )


def _core(r: _Reader, value: Any, base: Agent | None) -> CoreSpec:
    if value is None:
        if base is None:
            raise r.fail(("core",), "is required: give the agent's identity, instructions and hard_constraints")
        return base.core
    if isinstance(value, str):
        return CoreSpec(identity=r.text(value, ("core",), required=True))
    core = r.mapping(value, ("core",), ("identity", "instructions", "hard_constraints"))
    return CoreSpec(
        identity=r.text(core.get("identity"), ("core", "identity"), required=True),
        instructions=r.lines(core.get("instructions"), ("core", "instructions")),
        hard_constraints=r.lines(core.get("hard_constraints"), ("core", "hard_constraints")),
    )


def _characteristics(r: _Reader, value: Any, base: Agent | None) -> Characteristics:
    if value is None:
        return base.characteristics if base else Characteristics()
    if isinstance(value, str):
        return Characteristics(style=r.text(value, ("characteristics",)))
    chars = r.mapping(value, ("characteristics",), ("tone", "style", "decision_habits"))
    return Characteristics(
        tone=r.text(chars.get("tone"), ("characteristics", "tone")),
        style=r.text(chars.get("style"), ("characteristics", "style")),
        decision_habits=r.lines(chars.get("decision_habits"), ("characteristics", "decision_habits")),
    )


def _model(r: _Reader, value: Any, base: Agent | None) -> ModelSettings:
    if value is None:
        return base.model if base else ModelSettings()
    if isinstance(value, str):
        return ModelSettings(name=r.text(value, ("model",)) or None)
    model = r.mapping(value, ("model",), ("name", "temperature", "max_output_tokens"))
    max_out = model.get("max_output_tokens")
    return ModelSettings(
        name=r.text(model.get("name"), ("model", "name")) or None,
        temperature=r.real(model.get("temperature"), ("model", "temperature"), low=0.0, high=2.0),
        max_output_tokens=None
        if max_out is None
        else r.number(max_out, ("model", "max_output_tokens"), default=0, low=1, high=_MAX_BUDGET),
    )


def _memory(r: _Reader, value: Any, base: Agent | None) -> MemorySettings:
    default = base.memory if base else MemorySettings()
    if value is None:
        return default
    if isinstance(value, bool):
        return MemorySettings(value, default.top_k, default.keep_top, default.category_weights)
    mem = r.mapping(value, ("memory",), ("enabled", "top_k", "keep_top", "category_weights"))
    weights: list[tuple[Category, float]] = []
    raw_weights = mem.get("category_weights")
    if raw_weights is not None:
        for key in r.mapping(raw_weights, ("memory", "category_weights"), [c.value for c in Category]):
            if key in {c.value for c in Category}:
                path = ("memory", "category_weights", key)
                weight = r.real(raw_weights[key], path, low=0.0, high=100.0)
                weights.append((Category(key), 1.0 if weight is None else weight))
    top_k = r.number(mem.get("top_k"), ("memory", "top_k"), default=default.top_k, low=0, high=10_000)
    keep_top = r.number(mem.get("keep_top"), ("memory", "keep_top"), default=default.keep_top, low=0, high=10_000)
    return MemorySettings(
        enabled=r.flag(mem.get("enabled"), ("memory", "enabled"), default=default.enabled),
        top_k=top_k,
        keep_top=min(keep_top, top_k),
        category_weights=tuple(weights) if raw_weights is not None else default.category_weights,
    )


def _tools(r: _Reader, value: Any, base: Agent | None) -> tuple[AgentTool, ...]:
    if value is None:
        return base.tools if base else ()
    if not isinstance(value, list | tuple):
        raise r.fail(("tools",), f"must be a list of tool names or {{name, description}} mappings; got {_kind(value)}")
    tools = []
    for i, item in enumerate(value):
        if isinstance(item, str):
            tools.append(AgentTool(r.text(item, ("tools", i), required=True)))
        else:
            tool = r.mapping(item, ("tools", i), ("name", "description"))
            tools.append(
                AgentTool(
                    r.text(tool.get("name"), ("tools", i, "name"), required=True),
                    r.text(tool.get("description"), ("tools", i, "description")),
                )
            )
    return tuple(tools)


# --- YAML ----------------------------------------------------------------------------------------------------------


def load_agent(path: str | Path) -> Agent:
    """Load and validate one agent YAML file; errors name the file, line and column."""
    from memstack.files import read_text

    path = Path(path)
    return _from_yaml(read_text(path, "agent file", error=ConfigError), str(path))


def _from_yaml(text: str, origin: str) -> Agent:
    import yaml

    try:
        loader = yaml.SafeLoader(text)
        try:
            node = loader.get_single_node()
            if node is None:
                raise ConfigError(f"{origin}: the file is empty; an agent needs at least name and core")
            marks: dict[Path_, str] = {}
            data = _plain_node(loader, node, (), marks, origin)
        finally:
            loader.dispose()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{origin}:{mark.line + 1}:{mark.column + 1}" if mark else origin
        raise ConfigError(f"{where}: invalid YAML: {exc.problem or exc.context}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{origin}: invalid YAML: {exc}") from None
    return parse_agent(data, origin=origin, marks=marks, strict=True)


def _plain_node(loader: Any, node: Any, path: Path_, marks: dict[Path_, str], origin: str) -> Any:
    import yaml

    marks[path] = f"{node.start_mark.line + 1}:{node.start_mark.column + 1}"
    if isinstance(node, yaml.MappingNode):
        out: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            key = loader.construct_object(key_node, deep=True)
            if isinstance(key, list | dict):
                raise ConfigError(f"{origin}:{key_node.start_mark.line + 1}: a mapping key must be text")
            if key in out:
                raise ConfigError(
                    f"{origin}:{key_node.start_mark.line + 1}:{key_node.start_mark.column + 1}: "
                    f"field {key!r} appears twice; keep one"
                )
            marks[(*path, str(key), "#key")] = f"{key_node.start_mark.line + 1}:{key_node.start_mark.column + 1}"
            out[key] = _plain_node(loader, value_node, (*path, str(key)), marks, origin)
        return out
    if isinstance(node, yaml.SequenceNode):
        return [_plain_node(loader, item, (*path, i), marks, origin) for i, item in enumerate(node.value)]
    return loader.construct_object(node, deep=True)


@lru_cache(maxsize=1)
def default_agent() -> Agent:
    """The agent shipped with memstack (``memstack/agents/default.yaml``), used when none is given; loaded once."""
    source = resources.files("memstack").joinpath("agents/default.yaml")
    return _from_yaml(source.read_text(encoding="utf-8"), "memstack/agents/default.yaml")
