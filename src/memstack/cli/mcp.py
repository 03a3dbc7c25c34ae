"""``memstack mcp``: memstack's memory tools for MCP clients (:mod:`memstack.mcp`), over stdio or streamable HTTP.

* ``--transport stdio`` (default): the client starts ``memstack mcp`` itself and talks over stdin/stdout; the tools
  act in ``--tenant`` (default ``default``, the CLI's tenant).
* ``--transport http``: serves ``http://HOST:PORT/mcp``; every request needs ``Authorization: Bearer KEY``
  (``memstack keys create --tenant NAME``) and the key's tenant scopes the tools. There is no keyless mode.

``--user`` (or ``$MEMSTACK_MCP_USER``) fixes the user every call acts for; without it each call names ``user_id``.
The data directory and the rest of the configuration come from ``--home`` and the ``MEMSTACK_*`` variables.

The server says on stderr which store it uses and where it serves before it starts (stdout is the protocol's, over
stdio). ``--print-config`` prints the client configuration for this install instead: its command is this Python
interpreter, by absolute path, with ``-m memstack``, so a client that does not have the virtual environment on its
``PATH`` (most agent clients) can start it; a bare ``memstack`` there fails to start.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from memstack.cli._common import HOME_HELP, check_port, run_async, say_store

__all__ = ["mcp"]


@click.command("mcp")
@click.option(
    "--transport", type=click.Choice(["stdio", "http"]), default="stdio", show_default=True, help="How clients connect."
)
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on (http).")
@click.option("--port", default=8701, show_default=True, type=click.IntRange(0, 65535), help="Port (http).")
@click.option("--user", "-u", envvar="MEMSTACK_MCP_USER", help="The one user every call acts for ($MEMSTACK_MCP_USER).")
@click.option("--tenant", "-t", help="Tenant of the users (stdio; default 'default'). Over http the key decides.")
@click.option("--home", type=click.Path(path_type=Path), help=HOME_HELP)
@click.option("--log-level", default="warning", show_default=True, type=click.Choice(["debug", "info", "warning"]))
@click.option("--print-config", is_flag=True, help="Print an MCP client's configuration for this install, and exit.")
@run_async
async def mcp(
    transport: str,
    host: str,
    port: int,
    user: str | None,
    tenant: str | None,
    home: Path | None,
    log_level: str,
    print_config: bool,
) -> None:
    """Serve memstack's memory tools to MCP clients (add, search, list, forget, restore, recall)."""
    from memstack.engine import AsyncMemstack
    from memstack.errors import ConfigError
    from memstack.mcp import McpScope, build_server, http_app
    from memstack.mcp.server import LogLevel

    level: LogLevel = "DEBUG" if log_level == "debug" else "INFO" if log_level == "info" else "WARNING"
    if transport == "http" and tenant is not None:
        raise ConfigError("--tenant is for stdio; over http each request's API key names the tenant")
    if print_config:
        click.echo(json.dumps(client_config(transport, host, port, user, tenant, home), indent=2))
        return
    if transport == "http":
        check_port(host, port)  # before anything says where it serves
    chosen = say_store(home)
    async with AsyncMemstack(home=chosen, resume=False) as engine:
        who = f", user {user}" if user else ""
        if transport == "stdio":
            click.echo(f"memstack mcp: serving over stdio (tenant {tenant or 'default'}{who})", err=True)
            scope = McpScope(tenant=tenant or "default", user=user)
            await build_server(engine, scope, log_level=level).run_stdio_async()
            return
        import uvicorn

        click.echo(
            f"memstack mcp: serving http://{host}:{port}/mcp{who}; every request needs an API key "
            "(memstack keys create --tenant NAME)",
            err=True,
        )
        app = http_app(engine, user=user, host=host, log_level=level)
        await uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level=log_level)).serve()


def client_config(
    transport: str, host: str, port: int, user: str | None, tenant: str | None, home: Path | None
) -> dict[str, object]:
    """The ``mcpServers`` entry a client needs. Over stdio: this interpreter by absolute path with ``-m memstack``
    (no ``PATH`` needed) and the data directory by absolute path; over HTTP: the URL and the header to fill in."""
    from memstack.config import find_home

    if transport == "http":
        entry: dict[str, object] = {
            "type": "http",
            "url": f"http://{host}:{port}/mcp",
            "headers": {"Authorization": "Bearer msk_..."},
        }
    else:
        env = {"MEMSTACK_HOME": str(find_home(home).path.absolute())}
        if user:
            env["MEMSTACK_MCP_USER"] = user
        args = ["-m", "memstack", "mcp", *(["--tenant", tenant] if tenant else [])]
        entry = {"command": sys.executable, "args": args, "env": env}
    return {"mcpServers": {"memstack": entry}}
