"""``memstack eval answers``: the metrics on hand-computed cases, and the whole pipeline (three modes, cache and
resume, concurrency, cost prompt, report) against the scripted OpenAI-compatible server with a deterministic reader
and judge, on a small LoCoMo-shaped file written here."""

from __future__ import annotations

import asyncio
import json
import math
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from memstack.cli import main
from memstack.evals.answers import AnswerCache, Graded, bleu1, normalize_answer, score, token_f1
from memstack_testing.openai_server import Reply, ScriptedOpenAIServer

# --- metrics -----------------------------------------------------------------------------------------------------


def test_answers_are_normalised_as_squad_does() -> None:
    assert normalize_answer("The 7th of May, 2023!") == ["7th", "of", "may", "2023"]
    assert normalize_answer("  An apple  a day ") == ["apple", "day"]


def test_token_f1_on_hand_computed_cases() -> None:
    # answer [cat, sat, on, mat], gold [cat, on, mat]: 3 common, P 3/4, R 1 -> 6/7
    assert token_f1("The cat sat on the mat", "a cat on a mat") == pytest.approx(6 / 7)
    # answer [7, may], gold [7, may, 2023]: P 1, R 2/3 -> 0.8
    assert token_f1("7 May", "7 May 2023") == pytest.approx(0.8)
    assert token_f1("Lisbon", "Porto") == 0.0
    assert token_f1("", "") == 1.0 and token_f1("", "Porto") == 0.0
    # repeats count once per occurrence in the gold: [may, may, may] vs [may, 2023]: 1 common, P 1/3, R 1/2 -> 0.4
    assert token_f1("may may may", "may 2023") == pytest.approx(0.4)


def test_bleu1_on_hand_computed_cases() -> None:
    assert bleu1("The cat sat on the mat", "a cat on a mat") == pytest.approx(0.75)  # 3 of 4, no brevity penalty
    assert bleu1("7 May", "7 May 2023") == pytest.approx(math.exp(1 - 3 / 2))  # precision 1, brevity exp(1-r/c)
    assert bleu1("may may may", "may 2023") == pytest.approx(1 / 3)  # clipped to the gold's one "may"
    assert bleu1("Lisbon", "Porto") == 0.0


def test_scores_are_percentages_of_the_graded_rows() -> None:
    rows = [
        Graded(1, True, 1.0, 0.5, 100, 10.0),
        Graded(2, False, 0.5, 0.25, 300, 20.0),
        Graded(4, True, 0.0, 0.0, 200, 30.0),
        Graded(4, False, 0.5, 0.25, 400, 40.0),
    ]
    s = score(rows)
    assert (s.questions, s.j, s.f1, s.bleu1, s.context_tokens) == (4, 50.0, 50.0, 25.0, 250.0)
    assert score([]).questions == 0


# --- the pipeline -------------------------------------------------------------------------------------------------

FACTS = [
    ("Ana", "I moved to Lisbon last spring for a new job.", "Bruno", "Lisbon is lovely, how is the job?"),
    ("Ana", "My sister Clara started learning the cello.", "Bruno", "The cello takes patience!"),
    ("Ana", "I adopted a grey cat called Pixel.", "Bruno", "Pixel is a great name."),
]
QUESTIONS = [
    {"question": "Which city did Ana move to?", "answer": "Lisbon", "evidence": ["D1:1"], "category": 4},
    {"question": "What instrument is Clara learning?", "answer": "cello", "evidence": ["D1:3"], "category": 1},
    {"question": "What is the name of Ana's cat?", "answer": "Pixel", "evidence": ["D2:1"], "category": 2},
    {"question": "What did Ana say about skydiving?", "adversarial_answer": "too scary", "evidence": ["D2:1"],
     "category": 5},
]  # fmt: skip
GOLD_WORDS = {"city": "Lisbon", "instrument": "cello", "cat": "Pixel"}  # what each question asks -> its answer


def _locomo(path: Path) -> Path:
    turns = [{"speaker": s, "text": t, "dia_id": ""} for a, ta, b, tb in FACTS for s, t in ((a, ta), (b, tb))]
    session_1 = [dict(t, dia_id=f"D1:{i + 1}") for i, t in enumerate(turns[:4])]
    session_2 = [dict(t, dia_id=f"D2:{i + 1}") for i, t in enumerate(turns[4:])]
    conversation = {
        "speaker_a": "Ana", "speaker_b": "Bruno",
        "session_1_date_time": "1:56 pm on 8 May, 2023", "session_1": session_1,
        "session_2_date_time": "10:00 am on 20 May, 2023", "session_2": session_2,
    }  # fmt: skip
    path.write_text(json.dumps([{"sample_id": "conv-test", "conversation": conversation, "qa": QUESTIONS}]))
    return path


class _Models:
    """A deterministic reader (answers with a gold word if its messages hold it, else 'Not mentioned') and a judge
    (CORRECT when the gold answer's words are in the generated one, or when both decline); counts requests in
    flight."""

    def __init__(self, fail_reader_after: int | None = None) -> None:
        self.lock = threading.Lock()
        self.in_flight = 0
        self.most = 0
        self.reader_calls = 0
        self.judge_calls = 0
        self.fail_reader_after = fail_reader_after

    async def __call__(self, request: Any) -> Any:
        with self.lock:
            self.in_flight += 1
            self.most = max(self.most, self.in_flight)
        try:
            await asyncio.sleep(0.05)  # the server's own loop: requests overlap
            text = request.text
            if "label an answer" in text:
                with self.lock:
                    self.judge_calls += 1
                return Reply.text(json.dumps({"reasoning": "-", "label": self._verdict(text)}))
            with self.lock:
                self.reader_calls += 1
                if self.fail_reader_after is not None and self.reader_calls > self.fail_reader_after:
                    return Reply.error(400, "stop here")
            asked = request.last_user_message or ""
            context = text.replace(asked, "").lower()
            word = next((w for key, w in GOLD_WORDS.items() if key in asked and w.lower() in context), None)
            return Reply.text(word or "Not mentioned")
        finally:
            with self.lock:
                self.in_flight -= 1

    @staticmethod
    def _verdict(text: str) -> str:
        gold = re.search(r"Gold answer: (.*)", text)
        answer = re.search(r"Generated answer: (.*)", text)
        g, a = (gold.group(1) if gold else ""), (answer.group(1) if answer else "")
        if "do not say" in g:
            return "CORRECT" if "not mentioned" in a.lower() else "WRONG"
        return "CORRECT" if g.lower() in a.lower() else "WRONG"


@pytest.fixture
def models(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[ScriptedOpenAIServer, _Models]]:
    handler = _Models()
    with ScriptedOpenAIServer() as server:
        server.handle(handler)
        monkeypatch.setenv("MEMSTACK_OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        yield server, handler


def _run(tmp_path: Path, *extra: str) -> tuple[int, dict[str, Any], str]:
    args = ["eval", "answers", "--data", str(_locomo(tmp_path / "locomo.json")), "--cache", str(tmp_path / "cache")]
    args += ["--answer-model", "openai:reader-1", "--judge-model", "openai:judge-1", *extra]
    result = CliRunner().invoke(main, args)
    lines = result.output.strip().splitlines()
    figures = json.loads(lines[-1]) if result.exit_code == 0 and "--json" in extra else {}
    return result.exit_code, figures, result.output


def test_three_modes_answer_and_are_judged(models: tuple[ScriptedOpenAIServer, _Models], tmp_path: Path) -> None:
    report = tmp_path / "report.html"
    code, figures, output = _run(tmp_path, "--json", "--report", str(report), "--concurrency", "3")
    assert code == 0, output
    modes = figures["modes"]
    assert set(modes) == {"memstack", "full", "none"} and figures["questions"] == 4
    # the whole conversation holds every answer; the question alone holds none; adversarial: declining is right
    assert modes["full"]["overall"]["j"] == 100.0 and modes["full"]["overall"]["questions"] == 3
    assert modes["none"]["overall"]["j"] == 0.0 and modes["none"]["overall"]["f1"] == 0.0
    adversarial = modes["none"]["adversarial"]
    assert (adversarial["questions"], adversarial["j"], adversarial["f1"]) == (1, 100.0, 100.0)
    assert modes["memstack"]["overall"]["j"] == 100.0  # recall brings each fact into the context
    assert set(modes["full"]["per_category"]) == {"1", "2", "4"}
    tokens = {m: modes[m]["overall"]["context_tokens"] for m in modes}
    assert tokens["none"] < tokens["full"] and tokens["none"] < tokens["memstack"]
    # 12 answers; 7 distinct verdicts (each question's right answer, its "Not mentioned", one for the adversarial
    # question): a verdict asked again for the same question and answer comes from the cache
    assert figures["model_calls"] == 19 and figures["cached_calls"] == 5
    _, handler = models
    assert 1 < handler.most <= 3  # concurrent, within --concurrency
    page = report.read_text()
    assert page.startswith("<!doctype html>") and page.count("<svg") == 3 and "memstack" in page and "none" in page


def test_a_repeated_run_makes_no_call_and_an_interrupted_one_resumes(
    models: tuple[ScriptedOpenAIServer, _Models], tmp_path: Path
) -> None:
    _, handler = models
    handler.fail_reader_after = 5  # the 6th reader call fails: the run stops with an error
    code, _, output = _run(tmp_path, "--json", "--mode", "full", "--mode", "none", "--concurrency", "1")
    assert code == 1 and "400" in output
    time.sleep(0.5)  # a request the stopped run had sent already still reaches the server (and is not kept)
    lines = (tmp_path / "cache" / "answers.jsonl").read_text().splitlines()
    assert len(AnswerCache(tmp_path / "cache")) == len(lines) >= 5
    before = handler.reader_calls
    handler.fail_reader_after = None
    code, figures, output = _run(tmp_path, "--json", "--mode", "full", "--mode", "none", "--concurrency", "1")
    assert code == 0, output
    assert handler.reader_calls - before == 8 - 5  # only the answers not kept yet
    assert figures["cached_calls"] >= len(lines) and figures["model_calls"] + figures["cached_calls"] == 16
    calls = handler.reader_calls + handler.judge_calls
    code, figures, _ = _run(tmp_path, "--json", "--mode", "full", "--mode", "none")
    assert code == 0 and figures["model_calls"] == 0 and figures["cached_calls"] == 16
    assert handler.reader_calls + handler.judge_calls == calls  # nothing reached the server


def test_limit_takes_the_first_questions(models: tuple[ScriptedOpenAIServer, _Models], tmp_path: Path) -> None:
    code, figures, output = _run(tmp_path, "--json", "--mode", "none", "--limit", "2")
    assert code == 0, output
    assert figures["questions"] == 2 and figures["model_calls"] == 4


def test_a_priced_model_asks_before_it_runs(models: tuple[ScriptedOpenAIServer, _Models], tmp_path: Path) -> None:
    args = ["eval", "answers", "--data", str(_locomo(tmp_path / "locomo.json")), "--cache", str(tmp_path / "c")]
    args += ["--answer-model", "openai:gpt-4o-mini", "--judge-model", "openai:gpt-4o-mini", "--mode", "none"]
    refused = CliRunner().invoke(main, args)
    assert refused.exit_code == 2 and "estimated cost" in refused.output and "--yes" in refused.output
    _, handler = models
    assert handler.reader_calls == 0
    done = CliRunner().invoke(main, [*args, "--yes", "--json"])
    assert done.exit_code == 0, done.output and handler.reader_calls == 4


def test_the_same_context_asked_again_is_the_same_call(tmp_path: Path) -> None:
    """Each assembly draws new random keys for its data blocks; the cache key leaves them out, so a re-run of the
    memstack mode finds its answers."""
    from memstack.evals.answers import AnswerRun, prepare
    from memstack.evals.answers.cache import call_key
    from memstack.evals.locomo import load_locomo

    conversations = load_locomo(_locomo(tmp_path / "locomo.json"))
    run = AnswerRun("openai:r", "openai:j", tmp_path / "cache", modes=("memstack",), limit=1)
    first, again = asyncio.run(prepare(conversations, run)), asyncio.run(prepare(conversations, run))
    texts = ["\n".join(m.content or "" for m in p[0].messages) for p in (first, again)]
    assert 'key="' in texts[0] and texts[0] != texts[1]  # the blocks' keys differ
    assert call_key("openai:r", first[0].messages) == call_key("openai:r", again[0].messages)
    assert call_key("openai:r", first[0].messages) != call_key("openai:other", first[0].messages)


def test_a_rate_limited_call_is_retried(models: tuple[ScriptedOpenAIServer, _Models], tmp_path: Path) -> None:
    server, _ = models
    server.script("reader-1", Reply.error(429, "slow down"), Reply.error(503, "busy"))  # then the handler answers
    code, figures, output = _run(tmp_path, "--json", "--mode", "none", "--limit", "1", "--concurrency", "1")
    assert code == 0, output
    assert figures["model_calls"] == 2 and figures["modes"]["none"]["overall"]["questions"] == 1
    assert len([r for r in server.requests if r.model == "reader-1"]) == 3  # two refusals, then the answer
