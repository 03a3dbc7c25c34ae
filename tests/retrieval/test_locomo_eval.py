import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from memstack.cli import main
from memstack.errors import InputError
from memstack.evals.locomo import load_locomo

CONTRACT = ["questions", "hit@5", "hit@10", "recall@5", "recall@10", "per_category", "tokens_per_query",
            "full_context_tokens", "p50_ms", "p95_ms"]  # fmt: skip


def _sample(sample_id: str, topic: str) -> dict[str, object]:
    filler = [f"I had {word} for lunch today." for word in ("soup", "rice", "salad", "pasta", "tacos", "curry")]
    session_1 = [{"speaker": "Ann", "dia_id": f"D1:{i}", "text": t} for i, t in enumerate(filler, start=1)]
    session_2 = [
        {"speaker": "Ann", "dia_id": "D2:1", "text": f"What about your {topic}?"},
        {"speaker": "Bob", "dia_id": "D2:2", "text": "It went great, thanks!"},
        {"speaker": "Bob", "dia_id": "D2:3", "text": "Look at this.", "blip_caption": f"a photo of a {topic} medal"},
    ]
    return {
        "sample_id": sample_id,
        "conversation": {
            "speaker_a": "Ann",
            "speaker_b": "Bob",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": session_1,
            "session_2_date_time": "10:00 am on 2 June, 2023",
            "session_2": session_2,
        },
        "qa": [
            {"question": f"How did Bob's {topic} go?", "answer": "great", "evidence": ["D2:2"], "category": 4},
            {
                "question": f"What did Bob show in June 2023 about the {topic}?",
                "answer": "a medal",
                "evidence": ["D2:3; D1:1"],
                "category": 2,
            },
            {"question": "What did Ann eat?", "answer": "soup", "evidence": ["D:1:01"], "category": 1},
            {"question": "Unanswerable?", "adversarial_answer": "x", "evidence": [], "category": 5},
        ],
    }


@pytest.fixture
def locomo_file(tmp_path: Path) -> Path:
    path = tmp_path / "tiny-locomo.json"
    path.write_text(json.dumps([_sample("c-1", "marathon"), _sample("c-2", "chess tournament")]))
    return path


def test_loader_reads_sessions_photos_and_questions_with_evidence(locomo_file: Path) -> None:
    first = load_locomo(locomo_file)[0]
    assert [t.id for t in first.turns][-3:] == ["D2:1", "D2:2", "D2:3"]
    assert first.turns[-1].render() == "Bob: Look at this. [shares a photo: a photo of a marathon medal]"
    assert [q.evidence for q in first.questions] == [("D2:2",), ("D2:3", "D1:1"), ("D1:1",)]
    assert first.asked_at.date().isoformat() == "2023-06-03"


def test_eval_locomo_prints_the_contract_last(locomo_file: Path) -> None:
    result = CliRunner().invoke(main, ["eval", "locomo", "--data", str(locomo_file), "--embedder", "hash:64", "--json"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.strip().splitlines()
    per_conversation = [json.loads(line) for line in lines[:-1]]
    assert [c["conversation"] for c in per_conversation] == ["c-1", "c-2"]
    last = json.loads(lines[-1])
    assert list(last) == CONTRACT
    assert last["questions"] == 6
    assert set(last["per_category"]) == {"1", "2", "4"}
    assert last["per_category"]["4"]["questions"] == 2
    for k in ("hit@5", "hit@10", "recall@5", "recall@10"):
        assert 0.0 <= last[k] <= 1.0
    assert last["hit@10"] >= last["hit@5"] and last["hit@10"] >= last["recall@10"]
    assert last["per_category"]["4"]["hit@5"] == 1.0  # the answer follows the question that names the topic
    # layers 6-7 with their section framing: on a conversation this tiny, more than the conversation itself
    assert 0 < last["full_context_tokens"] < last["tokens_per_query"] <= 2000
    assert 0 < last["p50_ms"] <= last["p95_ms"]


def test_eval_locomo_selects_conversations_and_prints_a_table(locomo_file: Path) -> None:
    runner = CliRunner()
    args = ["eval", "locomo", "--data", str(locomo_file), "--embedder", "hash:64", "--conversations", "c-2"]
    result = runner.invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "c-2" in result.stdout and "c-1" not in result.stdout and "tokens per query" in result.stdout
    bad = runner.invoke(main, [*args[:-1], "nope"])
    assert bad.exit_code != 0 and "nope" in bad.output


def test_unreadable_data_says_what_to_pass(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="--data"):
        load_locomo(tmp_path / "missing.json")
    (tmp_path / "obj.json").write_text("{}")
    with pytest.raises(InputError, match="list of conversations"):
        load_locomo(tmp_path / "obj.json")
    (tmp_path / "bad.json").write_text("[{}]")
    with pytest.raises(InputError, match="LoCoMo"):
        load_locomo(tmp_path / "bad.json")


def test_settings_can_be_changed_for_ablations(locomo_file: Path) -> None:
    runner = CliRunner()
    base = ["eval", "locomo", "--data", str(locomo_file), "--embedder", "hash:64", "--json"]
    plain = runner.invoke(main, [*base, "--set", "context_turns=0", "--set", "dense_weight=0"])
    assert plain.exit_code == 0, plain.output
    assert json.loads(plain.stdout.splitlines()[-1])["questions"] == 6
    for bad in ("nope=1", "dense_weight=x", "dense_weight=-1", "context_turns"):
        result = runner.invoke(main, [*base, "--set", bad])
        assert result.exit_code == 2 and "--set" in result.output
