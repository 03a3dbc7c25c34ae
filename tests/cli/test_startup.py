"""``memstack --help`` starts fast because it imports no command (issue 25: it took 1.6-2.6 s): checked by what it
imports, not by timing it (``memstack bench startup`` measures the time)."""

from __future__ import annotations

import subprocess
import sys

import click
from click.testing import CliRunner

from memstack.bench.startup import HEAVY, heavy_imports
from memstack.cli import SUMMARIES, main


def test_help_imports_no_heavy_module() -> None:
    assert "numpy" in HEAVY and "memstack.engine" in HEAVY
    assert heavy_imports(("--help",)) == []
    assert heavy_imports(("--version",)) == []


def test_importing_memstack_imports_nothing_heavy() -> None:
    """The package's names are imported on first use: ``import memstack`` (which ``memstack.cli`` implies) is free,
    and ``from memstack import Memstack`` still works."""
    code = (
        "import sys, memstack\n"
        "print(sorted(m for m in sys.modules if m.startswith('memstack')))\n"
        "from memstack import AsyncMemstack, Memstack, UserRef, __version__\n"
        "print(Memstack.__module__, AsyncMemstack.__module__, UserRef.__module__, __version__)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    before, after = done.stdout.splitlines()
    assert before == "['memstack']"
    assert after.split()[:2] == ["memstack.blocking", "memstack.engine"] and after.split()[2].startswith(
        "memstack.types"
    )


def test_the_help_screen_lists_every_command_with_its_own_line() -> None:
    """The help screen is built from SUMMARIES without importing the commands; each line is the command's own, and
    the screen reads the same once the commands are loaded."""
    code = (
        "from click.testing import CliRunner\n"
        "from memstack.cli import main\n"
        "first = CliRunner().invoke(main, ['--help']).output\n"
        "main.commands  # registers every command\n"
        "print(first == CliRunner().invoke(main, ['--help']).output)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout.strip() == "True"
    ctx = click.Context(main)
    assert sorted(main.commands) == sorted(SUMMARIES)
    for name, line in SUMMARIES.items():
        command = main.get_command(ctx, name)
        assert command is not None and command.get_short_help_str(limit=1000) == line, name


def test_bench_startup_prints_one_json_line() -> None:
    import json

    result = CliRunner().invoke(main, ["bench", "startup", "--runs", "1", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout.splitlines()[-1])
    assert data["runs"] == 1 and data["median_ms"] > 0 and data["heavy_imports"] == []
