"""What the CLI's command modules share: running an async command with memstack's errors as one clean line, and
opening the store with a line that says which one it is."""

from __future__ import annotations

import asyncio
import functools
import json
import sys
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any, ParamSpec

import click
from rich.console import Console

from memstack.errors import MemstackError

if TYPE_CHECKING:
    from memstack.engine import AsyncMemstack

__all__ = [
    "HOME_HELP",
    "check_port",
    "clip",
    "echo_json",
    "open_engine",
    "run_async",
    "say_store",
    "table_console",
]

#: ``--home``'s help, the same on every command.
HOME_HELP = (
    "Data directory (default: $MEMSTACK_HOME, else ./.memstack if it exists here, else ~/.local/share/memstack)."
)

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


#: How much of a long text a table cell shows by default (``--full`` shows all of it).
CLIP = 160


def clip(text: str, *, full: bool = False, limit: int = CLIP) -> str:
    """``text`` for one table cell: its line breaks shown as ``⏎`` so a row stays one line when piped, and cut to
    ``limit`` characters with ``…`` unless ``full`` (a 30,000-character message made a 30,000-character line)."""
    flat = " ⏎ ".join(line.strip() for line in text.strip().splitlines())
    if full or len(flat) <= limit:
        return flat
    return flat[: limit - 1].rstrip() + f"… ({len(text)} characters)"


def table_console() -> Console:
    """Where the CLI prints tables: the terminal's width on a terminal; piped or redirected, one line per row."""
    return Console() if sys.stdout.isatty() else Console(width=_PIPED_WIDTH)


def say_store(home: Path | None) -> Path:
    """Print (to stderr) which store a command uses and why, ``store: /abs/path (per-user default)``, and return the
    data directory to open. Every command that reads or writes the store says it before its output (not with
    ``--json``): a command run from another directory than usual, on another store, would otherwise answer "alice
    has no memories" without a hint that the memories are elsewhere."""
    from memstack.config import Config, describe_store, find_home

    found = find_home(home)
    click.secho(f"store: {describe_store(Config.resolve(home=found.path), found)}", err=True, dim=True)
    return found.path


def open_engine(home: Path | None, *, quiet: bool = False, resume: bool = False) -> AsyncMemstack:
    """The engine on the command's store (``--home``, else ``$MEMSTACK_HOME``, else the default), which it names
    on stderr unless ``quiet`` (``--json``). ``resume=False``: managing data starts no background model work and
    loads no chat model files at open (a one-shot command would pay for them and use none)."""
    from memstack.config import find_home
    from memstack.engine import AsyncMemstack

    return AsyncMemstack(home=find_home(home).path if quiet else say_store(home), resume=resume, warm=resume)


def check_port(host: str, port: int, *, option: str = "--port") -> None:
    """``ConfigError`` when ``host:port`` cannot be listened on (another server holds it, or the address is not
    this machine's), checked before a server says where it serves: uvicorn's own refusal came after the line
    "serving http://…", which read as if the server ran. The probe binds as uvicorn does (``SO_REUSEADDR``: a port
    whose last connections are closing is free), then lets go; port 0 (any free port) is not checked."""
    import errno
    import socket

    from memstack.errors import ConfigError

    if port == 0:
        return
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    except socket.gaierror as exc:
        raise ConfigError(f"cannot listen on {host!r}: {exc.strerror}; give an address of this machine") from None
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise ConfigError(
                    f"port {port} on {host} is already in use (another memstack serve, or another program); "
                    f"stop it or choose another port with {option}"
                ) from None
            raise ConfigError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
