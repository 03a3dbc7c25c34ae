"""What the CLI's command modules share: running an async command with memstack's errors as one clean line."""

from __future__ import annotations

import asyncio
import functools
import json
import sys
from collections.abc import Callable, Coroutine
from typing import Any, ParamSpec

import click
from rich.console import Console

from memstack.errors import MemstackError

__all__ = ["echo_json", "run_async", "table_console"]

P = ParamSpec("P")


def run_async(fn: Callable[P, Coroutine[Any, Any, None]]) -> Callable[P, None]:
    """Run an async command; memstack's own errors become one clean line and exit code 1."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> None:
        try:
            asyncio.run(fn(*args, **kwargs))
        except MemstackError as exc:
            raise click.ClickException(str(exc)) from None

    return wrapper


def echo_json(value: Any) -> None:
    """``value`` as one line of JSON on stdout: what every ``--json`` ends with, so a tool reads the last line.
    Dates are ISO 8601; other objects their ``str``."""
    click.echo(json.dumps(value, ensure_ascii=False, default=_plain))


def _plain(value: Any) -> str:
    isoformat = getattr(value, "isoformat", None)
    return str(isoformat()) if callable(isoformat) else str(value)


#: Piped output has no width to fit: wide enough that no table shrinks a column, so a row is one line and an id is
#: never cut to "key_01m8…" (a script reading the output gets whole ids).
_PIPED_WIDTH = 10_000


def table_console() -> Console:
    """Where the CLI prints tables: the terminal's width on a terminal; piped or redirected, one line per row."""
    return Console() if sys.stdout.isatty() else Console(width=_PIPED_WIDTH)
