"""No error and no log line shows a secret a setting carries: a database URL's password, ``password=…`` of a
connection string, an API key in a URL's query. Each case below printed the password before."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from memstack.cli import main
from memstack.config import Config
from memstack.errors import ConfigError, MemstackError, StoreUnavailable, redact

SECRET = "hunter2"

REDACTED = [
    ("postgresql://ana:hunter2@db:5432/app", "postgresql://ana:***@db:5432/app"),
    ("postgresql://ana:hun@ter2@db/app", "postgresql://ana:***@db/app"),  # a password holding '@'
    ("unsupported database URL 'mysql://root:hunter2@h/db'", "unsupported database URL 'mysql://root:***@h/db'"),
    ('missing "=" after "postgres:/ana:hunter2@db/app"', 'missing "=" after "postgres:/ana:***@db/app"'),
    ("host=db password=hunter2 dbname=app", "host=db password=*** dbname=app"),
    ("host=db password='hunter 2' dbname=app", "host=db password=*** dbname=app"),
    ("https://api.example/v1?api_key=hunter2&x=1", "https://api.example/v1?api_key=***&x=1"),
    ("redis://:hunter2@cache:6379", "redis://:***@cache:6379"),
    # Nothing else changes: a URL without a password, an e-mail address, a time.
    ("postgresql://ana@db/app and https://example.com/a@b", "postgresql://ana@db/app and https://example.com/a@b"),
    ("User meets ana@example.com at 10:30", "User meets ana@example.com at 10:30"),
    ("reembed to 'openai:text-embedding-3-small@32'", "reembed to 'openai:text-embedding-3-small@32'"),
    ("ana:hunter2@[::1]:5432/app", "ana:***@[::1]:5432/app"),
]


@pytest.mark.parametrize(("text", "expected"), REDACTED)
def test_redact_hides_the_secrets_of_urls_and_connection_strings(text: str, expected: str) -> None:
    assert redact(text) == expected


def test_every_memstack_error_is_redacted_however_it_was_made() -> None:
    assert SECRET not in str(StoreUnavailable(f"cannot use postgresql://ana:{SECRET}@db/app"))
    assert str(MemstackError("password=hunter2", 3).args[0]) == "password=***"


def test_the_unsupported_database_url_error_keeps_the_password_out() -> None:
    with pytest.raises(ConfigError, match="unsupported database URL") as caught:
        _ = Config.resolve(database_url=f"mysql://root:{SECRET}@db/app").backend
    assert SECRET not in str(caught.value) and "mysql://root:***@db/app" in str(caught.value)


@pytest.mark.parametrize(
    "url",
    [f"mysql://root:{SECRET}@db/app", f"postgres:/ana:{SECRET}@db/app", f"postgresql://ana:{SECRET}@db/app?bad=1"],
)
def test_a_cli_command_with_a_bad_database_url_shows_no_password(tmp_path: Path, url: str) -> None:
    env = {"MEMSTACK_HOME": str(tmp_path), "MEMSTACK_EMBEDDER": "hash:64", "MEMSTACK_DATABASE_URL": url}
    done = CliRunner().invoke(main, ["memories", "list", "--user", "ana"], env=env)
    assert done.exit_code == 1 and "Error:" in done.output, done.output
    assert SECRET not in done.output and "Traceback" not in done.output


def test_log_lines_of_memstack_processes_are_redacted() -> None:
    """What ``memstack serve`` and the other commands log, tracebacks of errors that are not memstack's included."""
    code = """
import logging
from memstack.errors import redact_log_records
redact_log_records()
logging.basicConfig(format="%(message)s")
log = logging.getLogger("psycopg.pool")
log.warning("error connecting: %s", "postgresql://ana:hunter2@db/app")
try:
    raise RuntimeError("bad conninfo: host=db password=hunter2")
except RuntimeError:
    log.exception("unexpected error")
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "postgresql://ana:***@db/app" in done.stderr and "password=***" in done.stderr
    assert "RuntimeError" in done.stderr and SECRET not in done.stderr
