"""The README's chat example runs exactly as written, offline (SQLite, local MiniLM, rules, offline responder)."""

from __future__ import annotations

from pathlib import Path

from readme_examples import python_block, run_python  # tests/readme_examples.py


def chat_example() -> str:
    return python_block("Chat")


def test_the_chat_example_runs_as_written(tmp_path: Path) -> None:
    done = run_python(chat_example(), tmp_path)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert out.startswith("Memory updated: ['User is vegetarian.']\n[offline] No chat model is configured")
    assert 'Your message: "What should I cook tonight?"' in out
    assert "time zone Europe/Lisbon" in out and "- (preference) User is vegetarian." in out
