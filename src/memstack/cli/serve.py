"""``memstack serve``: the HTTP API (``memstack.server``) under uvicorn.

Authentication (``--auth``):

* ``keys``: every request needs ``Authorization: Bearer KEY`` (``memstack keys create --tenant NAME``).
* ``local``: requests without a key act for tenant ``default`` (the CLI's tenant). Only allowed on a loopback
  address (127.0.0.1, ::1, localhost): anyone who can reach the port can read every memory of that tenant.
* ``auto`` (default): ``keys`` as soon as one active key exists; otherwise ``local`` with a warning, and a refusal to
  start on a non-loopback address.

``--workers N`` runs N server processes on one port (uvicorn's supervisor, which restarts a worker that dies), each
with its own engine on the shared PostgreSQL database: sessions stay in order across them (leases), background work
is claimed once. SQLite is refused for more than one worker: it serialises every write behind one lock, so workers
would wait on each other. (Other processes may still share a SQLite directory safely: the CLI, a second server.)
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import click

from memstack.cli._common import HOME_HELP, check_port
from memstack.errors import ConfigError, MemstackError

__all__ = ["serve"]


async def _active_keys(home: Path | None) -> int:
    from memstack.engine import AsyncMemstack

    async with AsyncMemstack(home=home, resume=False) as ms:
        return len(await ms.keys.list())


def choose_auth(requested: str, host: str, active_keys: int) -> str:
    """The auth mode to run with (see the module docstring); ``ConfigError`` for an unsafe combination."""
    from memstack.server.settings import is_loopback

    mode = requested if requested != "auto" else ("keys" if active_keys else "local")
    if mode == "local" and not is_loopback(host):
        raise ConfigError(
            f"refusing to serve without API keys on {host}: anyone who can reach it could read every memory. "
            "Create a key with `memstack keys create --tenant NAME` (then --auth keys), or bind to 127.0.0.1"
        )
    return mode


@click.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=8700, show_default=True, type=click.IntRange(0, 65535), help="Port to listen on.")
@click.option("--home", type=click.Path(path_type=Path), help=HOME_HELP)
@click.option(
    "--auth",
    type=click.Choice(["auto", "keys", "local"]),
    default="auto",
    show_default=True,
    help="keys: Bearer keys required. local: no key needed (loopback only). auto: keys once one exists.",
)
@click.option("--log-level", default="info", show_default=True, type=click.Choice(["debug", "info", "warning"]))
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Server processes on this port (more than one needs PostgreSQL: MEMSTACK_DATABASE_URL).",
)
def serve(host: str, port: int, home: Path | None, auth: str, log_level: str, workers: int) -> None:
    """Serve the HTTP API (OpenAPI docs at /docs)."""
    import uvicorn

    from memstack.config import Config, describe_store, find_home
    from memstack.server import ServerSettings, create_app
    from memstack.server.app import AUTH_ENV
    from memstack.server.settings import AuthMode

    try:
        check_port(host, port)  # before anything says "serving"
        found = find_home(home)
        config = Config.resolve(home=found.path)
        if workers > 1 and config.backend != "postgres":
            raise ConfigError(
                f"--workers {workers} needs PostgreSQL (set MEMSTACK_DATABASE_URL=postgresql://…): the embedded "
                "SQLite store serialises every write behind one lock, so several workers would only wait on each "
                "other. Serve SQLite with one worker"
            )
        keys = asyncio.run(_active_keys(config.home)) if auth != "local" else 0
        mode = choose_auth(auth, host, keys)
    except MemstackError as exc:
        raise click.ClickException(str(exc)) from None
    if mode == "local":
        click.secho(
            f"memstack: LOCAL MODE — no API key needed; requests act for tenant 'default'. Listening on {host} only.\n"
            "          Create a key (memstack keys create --tenant NAME) to require keys"
            + (" (this server requires them within 10 s)." if auth == "auto" else "."),
            fg="yellow",
            err=True,
        )
    elif keys == 0:
        click.secho(
            "memstack: no API key exists yet, so every request will get 401. "
            "Create one with: memstack keys create --tenant NAME",
            fg="yellow",
            err=True,
        )
    served: AuthMode = "keys" if mode == "keys" else ("auto" if auth == "auto" else "local")
    where = f"http://{host}:{port}"
    processes = f", {workers} workers" if workers > 1 else ""
    click.echo(
        f"memstack: store {describe_store(config, found)}, serving {where}{processes} (docs: {where}/docs)", err=True
    )
    access = log_level == "debug"
    if workers > 1:  # each worker builds its app from the environment (memstack.server.app.app_from_env)
        os.environ["MEMSTACK_HOME"] = str(config.home.resolve())
        os.environ[AUTH_ENV] = served
        uvicorn.run(
            "memstack.server.app:app_from_env",
            factory=True,
            workers=workers,
            host=host,
            port=port,
            log_level=log_level,
            access_log=access,
        )
        return
    app = create_app(config, settings=ServerSettings.from_env(auth=served, gc_freeze_s=10.0))
    uvicorn.run(app, host=host, port=port, log_level=log_level, access_log=access)
