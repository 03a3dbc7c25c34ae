import csv
import json
import random
from pathlib import Path

import pytest
from click.testing import CliRunner

from memstack.cli import main
from memstack.evals.extraction import load_turns

SUBJECTS = ["The cat", "My neighbour", "A young girl", "The old man", "Our teacher", "The chef", "A tall woman"]
ACTIONS = [
    "is playing the guitar",
    "is cooking pasta",
    "is reading a book",
    "is riding a bike",
    "is painting a wall",
    "is feeding the ducks",
    "is writing a letter",
    "is washing the car",
]


def write_stsb(path: Path, n: int = 60, seed: int = 1) -> None:
    rng = random.Random(seed)
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        for i in range(n):
            s1 = f"{rng.choice(SUBJECTS)} {rng.choice(ACTIONS)}."
            if i % 3 == 0:  # duplicate: same sentence, trivially changed
                w.writerow([s1, s1.replace(".", " today."), "4.6"])
            else:
                w.writerow([s1, f"{rng.choice(SUBJECTS)} {rng.choice(ACTIONS)} in the park.", "1.0"])


def last_json(output: str) -> dict[str, object]:
    value = json.loads(output.strip().splitlines()[-1])
    assert isinstance(value, dict)
    return value


def test_eval_dedup_stsb_prints_the_contract(tmp_path: Path) -> None:
    data = tmp_path / "pairs.csv"
    write_stsb(data, n=12)
    result = CliRunner().invoke(main, ["eval", "dedup", "--data", str(data), "--format", "stsb", "--json"])
    assert result.exit_code == 0, result.output
    out = last_json(result.stdout)
    assert list(out) == ["pairs", "threshold", "precision", "recall", "f1"]
    assert out["pairs"] == 12 and 0 <= float(out["f1"]) <= 1  # type: ignore[arg-type]


def test_eval_dedup_paws_counts_word_swaps_as_not_duplicates(tmp_path: Path) -> None:
    data = tmp_path / "paws.tsv"
    rows = [
        ("1", "Alice's brother is Bob .", "Bob's brother is Alice .", "0"),
        ("2", "The team from Leeds beat the team from York .", "The team from York beat the team from Leeds .", "0"),
        ("3", "She moved to Paris in 1990 .", "She moved to Paris in 1990 .", "1"),
        ("4", "In 1990 , she moved to Paris .", "She moved to Paris in 1990 .", "1"),
    ]
    data.write_bytes("".join("\t".join(r) + "\r\n" for r in rows).encode())  # the PAWS release uses CRLF
    result = CliRunner().invoke(main, ["eval", "dedup", "--data", str(data), "--format", "paws", "--json"])
    assert result.exit_code == 0, result.output
    out = last_json(result.stdout)
    assert out["pairs"] == 4 and out["precision"] == 1.0  # neither swap was called a duplicate
    detail = json.loads(result.stdout.strip().splitlines()[-2])["detail"]
    assert detail["fp"] == 0 and detail["embedder"] == "local:minilm"


def test_eval_dedup_calibrate_derives_parameters(tmp_path: Path) -> None:
    data = tmp_path / "train.csv"
    write_stsb(data, n=90, seed=7)
    args = ["eval", "dedup", "--data", str(data), "--calibrate", "--embedder", "hash:64", "--min-precision", "0.5"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "threshold = " in result.stdout and "min_order = " in result.stdout
    params = last_json(result.stdout)
    assert params["embedder"] == "hash:64"
    assert set(params["weights"]) >= {"cosine", "overlap", "missing"}  # type: ignore[arg-type]


def test_bad_input_is_a_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("only one column\n", encoding="utf-8")
    result = CliRunner().invoke(main, ["eval", "dedup", "--data", str(bad), "--json"])
    assert result.exit_code == 1 and "expected s1,s2,score" in result.output
    result = CliRunner().invoke(main, ["eval", "dedup", "--data", str(tmp_path / "missing.csv")])
    assert result.exit_code == 1 and "--data" in result.output


def locomo(path: Path) -> None:
    conv = {
        "sample_id": "conv-test",
        "conversation": {
            "speaker_a": "Ana",
            "speaker_b": "Ben",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": "Ana", "dia_id": "D1:1", "text": "Hey Ben! How are you?"},
                {"speaker": "Ben", "dia_id": "D1:2", "text": "I just adopted a puppy named Biscuit! I love him."},
                {"speaker": "Ana", "dia_id": "D1:3", "text": "That's so cute! What breed is he?"},
                {"speaker": "Ben", "dia_id": "D1:4", "text": "He's a beagle. I'm a vet nurse, so I know dogs."},
            ],
            "session_2_date_time": "10:00 am on 20 May, 2023",
            "session_2": [
                {"speaker": "Ana", "dia_id": "D2:1", "text": "My pottery exam is next Thursday, wish me luck."},
                {"speaker": "Ben", "dia_id": "D2:2", "text": "Good luck! You'll do great."},
            ],
        },
        "observation": {
            "session_1_observation": {
                "Ben": [["Ben adopted a puppy named Biscuit.", "D1:2"], ["Ben is a vet nurse.", "D:1:04; D1:2"]]
            },
            "session_2_observation": {"Ana": [["Ana has a pottery exam.", ["D2:01"]]]},
        },
    }
    path.write_text(json.dumps([conv]), encoding="utf-8")


def test_locomo_loading_normalises_ids_and_dates(tmp_path: Path) -> None:
    data = tmp_path / "locomo.json"
    locomo(data)
    turns = load_turns(data)
    assert [t.dia_id for t in turns if t.gold] == ["D1:2", "D1:4", "D2:1"]
    assert turns[1].recent == (("assistant", "Hey Ben! How are you?"),)
    assert turns[4].at.isoformat() == "2023-05-20T10:00:00+00:00"


def test_eval_extraction_prints_the_contract(tmp_path: Path) -> None:
    data = tmp_path / "locomo.json"
    locomo(data)
    result = CliRunner().invoke(main, ["eval", "extraction", "--data", str(data), "--json"])
    assert result.exit_code == 0, result.output
    out = last_json(result.stdout)
    assert list(out) == ["turns", "precision", "recall", "f1", "p50_ms", "p99_ms"]
    assert out["turns"] == 6 and out["recall"] == 1.0 and out["precision"] == 1.0
    detail = json.loads(result.stdout.strip().splitlines()[-2])["detail"]
    assert detail["classifier"] == "offline:rules-v1" and detail["categories"]["schedule"] == 1


@pytest.mark.parametrize("payload", ["not json", "{}", '[{"no": "conversation"}]'])
def test_eval_extraction_rejects_what_is_not_locomo(tmp_path: Path, payload: str) -> None:
    data = tmp_path / "x.json"
    data.write_text(payload, encoding="utf-8")
    result = CliRunner().invoke(main, ["eval", "extraction", "--data", str(data), "--json"])
    assert result.exit_code == 1 and "Error" in result.output


def test_eval_supersedes_chats_every_user_turn_and_lists_what_was_replaced(tmp_path: Path) -> None:
    data, report = tmp_path / "locomo.json", tmp_path / "replaced.jsonl"
    locomo(data)
    args = ["eval", "supersedes", "--data", str(data), "--report", str(report), "--json", "--no-progress"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    out = last_json(result.stdout)
    assert list(out) == [
        "conversations",
        "turns",
        "memories",
        "superseded",
        "superseded_per_1000_turns",
        "seconds",
        "judge",
    ]
    user_turns = 3  # the speaker_a side of the sample: Ana
    assert (out["conversations"], out["turns"], out["judge"]) == (1, user_turns, "offline")
    assert out["memories"] >= 1  # "My pottery exam is next Thursday" is kept
    rows = [json.loads(line) for line in report.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == out["superseded"] and all({"before", "after", "note"} <= set(r) for r in rows)
