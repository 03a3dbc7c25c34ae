"""Agent definitions: YAML loading with file/line errors, fingerprints, lenient request agents."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from memstack.context import Agent, CoreSpec, agent_from_request, default_agent, load_agent, parse_agent
from memstack.errors import ConfigError, InputError, OverrideViolation
from memstack.types import Category

GOOD = """\
name: tutor
core:
  identity: You are a patient biology tutor.
  instructions:
    - Explain with one example.
  hard_constraints:
    - Never write the student's essay for them.
characteristics:
  tone: encouraging
  style: short paragraphs
  decision_habits: [Ask before giving the answer away.]
model: {name: "openai:gpt-4o-mini", temperature: 0.3, max_output_tokens: 500}
budget_tokens: 8000
raw_window: 8
memory:
  enabled: true
  top_k: 5
  keep_top: 2
  category_weights: {learningstyle: 1.5, general: 0.5}
tools: [recall_memory, {name: save_memory, description: Save a fact.}]
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "agent.yaml"
    path.write_text(text)
    return path


def test_loads_every_field(tmp_path: Path) -> None:
    agent = load_agent(write(tmp_path, GOOD))
    assert agent.name == "tutor" and agent.core.hard_constraints == ("Never write the student's essay for them.",)
    assert agent.characteristics.decision_habits == ("Ask before giving the answer away.",)
    assert agent.model.name == "openai:gpt-4o-mini" and agent.model.temperature == 0.3
    assert (agent.budget_tokens, agent.raw_window) == (8000, 8)
    assert agent.memory.top_k == 5 and agent.memory.weight(Category.LEARNINGSTYLE) == 1.5
    assert agent.memory.weight("fact") == 1.0
    assert [t.name for t in agent.tools] == ["recall_memory", "save_memory"]
    assert agent.origin.endswith("agent.yaml") and len(agent.fingerprint) == 64


def test_fingerprint_covers_core_and_characteristics_only(tmp_path: Path) -> None:
    a = load_agent(write(tmp_path, GOOD))
    b = load_agent(write(tmp_path, GOOD.replace("budget_tokens: 8000", "budget_tokens: 9000")))
    c = load_agent(write(tmp_path, GOOD.replace("encouraging", "stern")))
    assert a.fingerprint == b.fingerprint != c.fingerprint
    a.verify()


def test_frozen_agent_cannot_be_changed_quietly(tmp_path: Path) -> None:
    agent = load_agent(write(tmp_path, GOOD))
    with pytest.raises(AttributeError):
        agent.name = "x"  # type: ignore[misc]
    with pytest.raises(OverrideViolation, match="changed after loading"):
        replace(agent, characteristics=replace(agent.characteristics, tone="hostile"))
    with pytest.raises(OverrideViolation, match="fingerprint"):
        Agent("x", CoreSpec("You are X."), fingerprint="0" * 64)
    object.__setattr__(agent.characteristics, "tone", "hostile")
    with pytest.raises(OverrideViolation, match="tutor"):
        agent.verify()


@pytest.mark.parametrize(
    ("text", "where", "message"),
    [
        ("name: x\ncore:\n  identity: [unclosed\n", ":4:", "invalid YAML"),
        ("name: x\ncore:\n  identity: hi\n  hard_constraint: [a]\n", ":4:3", "core.hard_constraint: unknown field"),
        ("name: x\ncore:\n  identity: hi\nbudget_tokens: lots\n", ":4:16", "budget_tokens: must be a whole number"),
        ("name: x\ncore:\n  identity: hi\nmemory:\n  top_k: -1\n", ":5:10", "memory.top_k: must be a whole number"),
        ("name: x\ncore: hi\nname: y\n", ":3:1", "appears twice"),
        ("name: x\n", "agent.yaml", "core: is required"),
        ("name: x\ncore:\n  identity: ''\n", ":3:13", "core.identity: must not be empty"),
        ("- a\n- b\n", ":1:1", "must be a mapping"),
        ("", "agent.yaml", "empty"),
        ("name: x\ncore: {identity: hi}\ntools: [{name: t, params: {}}]\n", ":3:", "tools.0.params: unknown field"),
        ("name: x\ncore: {identity: hi}\nmodel: {temperature: 7}\n", ":3:", "model.temperature: must be between"),
    ],
)
def test_bad_files_name_file_line_and_field(tmp_path: Path, text: str, where: str, message: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as exc:
        load_agent(path)
    assert str(path) in str(exc.value) and where in str(exc.value) and message in str(exc.value)


def test_missing_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read agent file"):
        load_agent(tmp_path / "nope.yaml")


def test_plain_string_core_and_characteristics() -> None:
    agent = parse_agent({"name": "bot", "core": "You are terse.", "characteristics": "Dry humour."})
    assert agent.core == CoreSpec("You are terse.") and agent.characteristics.style == "Dry humour."


def test_default_agent_is_shipped_and_loaded_once() -> None:
    agent = default_agent()
    assert agent is default_agent() and agent.name == "assistant"
    assert agent.core.hard_constraints and {t.name for t in agent.tools} >= {"recall_memory", "forget_memory"}


def test_request_agent_is_lenient_but_typed() -> None:
    agent, ignored = agent_from_request({"core": "You are X.", "colour": "blue", "memory": {"top_k": 2, "zz": 1}})
    assert agent.core.identity == "You are X." and agent.memory.top_k == 2
    assert agent.characteristics == default_agent().characteristics  # missing fields come from the default agent
    assert set(ignored) == {"agent.colour", "agent.memory.zz"}
    assert agent_from_request(None) == (default_agent(), ())
    with pytest.raises(InputError, match=r"agent\.budget_tokens: must be a whole number"):
        agent_from_request({"budget_tokens": "lots"})
    with pytest.raises(InputError, match="agent: must be a mapping"):
        agent_from_request(["not", "an", "object"])
