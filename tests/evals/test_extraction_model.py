"""``memstack eval extraction --classifier MODEL``: a model-backed classifier scored on the same data as the offline
one, the model being the scripted OpenAI-compatible server over real HTTP."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from memstack.cli import main
from memstack_testing.openai_server import Reply, ScriptedOpenAIServer

TURNS = [
    ("Ana", "I moved to Lisbon last spring for a new job."),
    ("Bruno", "Lisbon is lovely, how is the job?"),
    ("Ana", "My sister Clara started learning the cello."),
    ("Bruno", "The cello takes patience!"),
]


def _data(path: Path) -> Path:
    session = [{"speaker": s, "text": t, "dia_id": f"D1:{i + 1}"} for i, (s, t) in enumerate(TURNS)]
    observation = {"session_1_observation": {"Ana": [["Ana moved to Lisbon.", "D1:1"], ["Clara plays cello.", "D1:3"]]}}
    conversation = {"speaker_a": "Ana", "speaker_b": "Bruno", "session_1_date_time": "1:56 pm on 8 May, 2023",
                    "session_1": session}  # fmt: skip
    path.write_text(json.dumps([{"sample_id": "conv-x", "conversation": conversation, "observation": observation}]))
    return path


def _classify(request: Any) -> Reply:
    """Saves what the speaker says of their own life (the message names 'I' or 'My'), nothing else."""
    said = request.last_user_message or ""
    message = said.split("<<<", 1)[-1].split(">>>", 1)[0].strip()  # the new message (what precedes is context)
    if any(w in message for w in ("I moved", "My sister")):
        return Reply.json({"memories": [{"content": message, "category": "fact", "confidence": 0.9,
                                         "explicit": False}]})  # fmt: skip
    return Reply.json({"memories": []})


def _run(data: Path, *extra: str) -> dict[str, Any]:
    result = CliRunner().invoke(main, ["eval", "extraction", "--data", str(data), "--json", "--no-progress", *extra])
    assert result.exit_code == 0, result.output
    figures: dict[str, Any] = json.loads(result.output.strip().splitlines()[-1])
    return figures


def test_a_model_classifier_is_scored_beside_the_offline_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = _data(tmp_path / "locomo.json")
    with ScriptedOpenAIServer() as server:
        server.handle(_classify)
        monkeypatch.setenv("MEMSTACK_OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        model = _run(data, "--classifier", "openai:classifier-1")
        assert len([r for r in server.requests if r.model == "classifier-1"]) >= 2  # it asked the model
    offline = _run(data, "--classifier", "offline")
    assert model["turns"] == offline["turns"] == 4
    assert (model["precision"], model["recall"], model["f1"]) == (1.0, 1.0, 1.0)
    assert set(offline) >= {"precision", "recall", "f1", "p50_ms"}
