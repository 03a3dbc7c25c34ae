"""A file a command cannot use is one clear line, never a traceback: every command that reads a file the user names
reads it through one reader (:mod:`memstack.files`), which says which file, where the bad byte is, and what to do."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from memstack.cli import main
from memstack.errors import ConfigError, InputError
from memstack.files import read_text

#: Every command option that reads a file the user names (the ones that need a model or a server left out).
READERS = [
    ("context", "render", "--rules-only", "--request"),
    ("context", "scan", "--rules-only", "--data"),
    ("eval", "dedup", "--data"),
    ("eval", "updates", "--data"),
    ("eval", "capture", "--data"),
    ("eval", "guard", "--rules-only", "--texts"),
    ("eval", "locomo", "--data"),
    ("eval", "extraction", "--data"),
    ("eval", "memories", "--data"),
    ("eval", "supersedes", "--data"),
    ("bench", "session-memory", "--data"),
]


def _run(tmp_path: Path, *args: str, stdin: bytes | None = None) -> Result:
    env = {"MEMSTACK_HOME": str(tmp_path / "home"), "MEMSTACK_EMBEDDER": "hash:64"}
    return CliRunner().invoke(main, list(args), env=env, input=stdin)


def _one_line(result: Result) -> str:
    lines = [line for line in result.output.splitlines() if line.strip() and not line.startswith("store: ")]
    assert result.exit_code == 1 and "Traceback" not in result.output, result.output
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.output
    return lines[0]


@pytest.mark.parametrize("command", READERS, ids=lambda c: " ".join(c[:2]))
def test_a_file_that_is_not_utf8_is_one_clear_line(tmp_path: Path, command: tuple[str, ...]) -> None:
    bad = tmp_path / "latin1.json"
    bad.write_bytes('{"message": "café"}\n{"note": "Müller"}\n'.encode("latin-1"))
    line = _one_line(_run(tmp_path, *command, str(bad)))
    assert f"{bad} is not UTF-8 text (byte 0xe9 at line 1, column 17): save it as UTF-8" in line


@pytest.mark.parametrize("command", READERS, ids=lambda c: " ".join(c[:2]))
def test_a_missing_file_is_one_clear_line(tmp_path: Path, command: tuple[str, ...]) -> None:
    line = _one_line(_run(tmp_path, *command, str(tmp_path / "nowhere.json")))
    assert "nowhere.json" in line and ("no such file" in line or "not found" in line)


def test_an_agent_file_that_is_not_utf8_is_one_clear_line(tmp_path: Path) -> None:
    request, agent = tmp_path / "request.json", tmp_path / "agent.yaml"
    request.write_text('{"message": "hello"}', encoding="utf-8")
    agent.write_bytes("name: caf\xe9\ncore:\n  identity: You help.\n".encode("latin-1"))
    args = ("context", "render", "--rules-only", "--request", str(request), "--agent", str(agent))
    line = _one_line(_run(tmp_path, *args))
    assert f"agent file {agent} is not UTF-8 text (byte 0xe9 at line 1, column 10)" in line


def test_standard_input_is_read_the_same_way(tmp_path: Path) -> None:
    line = _one_line(_run(tmp_path, "context", "render", "--rules-only", "--request", "-", stdin=b'{"m": "\xff"}'))
    assert "standard input is not UTF-8 text (byte 0xff at line 1, column 8)" in line


def test_the_reader(tmp_path: Path) -> None:
    good = tmp_path / "bom.txt"
    good.write_bytes("\ufeffhello\n".encode())
    assert read_text(good, "text file") == "hello\n"  # a byte-order mark is dropped
    with pytest.raises(InputError, match=r"cannot read data file .* it is a directory, not a file; pass it"):
        read_text(tmp_path, "data file", hint="pass it with --data")
    with pytest.raises(ConfigError, match="cannot read agent file"):
        read_text(tmp_path / "none.yaml", "agent file", error=ConfigError)
