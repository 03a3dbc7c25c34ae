"""What the CLI's command modules share: running an async command with memstack's errors as one clean line."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Coroutine
from typing import Any, ParamSpec

import click

from memstack.errors import MemstackError

__all__ = ["run_async"]

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
