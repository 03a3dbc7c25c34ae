"""The ``memstack`` command line. Each command group lives in its own module and is registered here.

The modules are imported when a command runs, never for ``memstack --help`` (or ``--version``): importing them
pulls in the engine, numpy, the embedding runtime and the web server, over a second of a help screen's time. The
help screen lists the commands from :data:`SUMMARIES`; ``tests/cli/test_startup.py`` holds each line to the
command's own help and checks that ``memstack --help`` imports none of the heavy modules.
"""

from __future__ import annotations

from collections.abc import MutableMapping

import click

__all__ = ["SUMMARIES", "main"]

#: Each top-level command and the line ``memstack --help`` shows for it: the first sentence of its own help.
SUMMARIES: dict[str, str] = {
    "bench": "Measure memstack on this machine.",
    "chat": 'Chat in the terminal with memory ("Memory updated" badges; /help for commands).',
    "context": "Inspect layered context assembly.",
    "demo": "An offline, scripted walkthrough: capture, dedup, retrieval, injection, trimming, explain.",
    "eval": "Measure memstack's quality on public data sets (each prints one JSON object last with --json).",
    "keys": "Manage the API keys of `memstack serve` (one tenant per key).",
    "mcp": "Serve memstack's memory tools to MCP clients (add, search, list, forget, restore, recall).",
    "memories": "Manage a user's long-term memories.",
    "reembed": "Re-embed every stored vector with another embedding model, then switch the store to it.",
    "serve": "Serve the HTTP API (OpenAPI docs at /docs).",
    "sessions": "Inspect session memory: base truth, turn log, raw window, flagged turns, snapshots.",
    "users": "Export, import or erase everything memstack holds about a user.",
    "webhooks": "Send memstack's changes to your HTTP endpoints (signed, retried, at least once).",
}


class _Main(click.Group):
    """The ``memstack`` group. Its commands are registered the first time one is asked for (:func:`_register`);
    the help screen needs none of them. An error memstack raises on purpose, from any command, is one line
    (``Error: …``, exit status 1), never a traceback, even where a command did not catch it itself."""

    _registered = False

    @property
    def commands(self) -> MutableMapping[str, click.Command]:
        if not self._registered:
            self._registered = True
            _register()
        return self._commands

    @commands.setter
    def commands(self, value: MutableMapping[str, click.Command]) -> None:
        self._commands = value

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(self._commands) if self._registered else sorted(SUMMARIES)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The commands with their lines, as click lays them out, from :data:`SUMMARIES`."""
        if self._registered:
            super().format_commands(ctx, formatter)
            return
        limit = formatter.width - 6 - max(len(name) for name in SUMMARIES)
        stand_ins = {name: click.Command(name, help=line) for name, line in SUMMARIES.items()}  # cut as click cuts
        rows = [(name, stand_ins[name].get_short_help_str(limit)) for name in sorted(SUMMARIES)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def invoke(self, ctx: click.Context) -> object:
        from memstack.errors import MemstackError

        try:
            return super().invoke(ctx)
        except MemstackError as exc:
            raise click.ClickException(str(exc)) from None


@click.group(cls=_Main, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="memstack")
def main() -> None:
    """memstack: layered context and long-term memory for LLM apps."""
    from memstack.errors import redact_log_records

    redact_log_records()  # a log line of this process never shows a setting's password


def _register() -> None:
    from memstack.bench.http import add_bench as add_http_bench
    from memstack.cli import answers, capture, chat, context, eval_guard  # noqa: F401 (answers, eval_guard: on eval)
    from memstack.cli.bench import bench
    from memstack.cli.demo import demo
    from memstack.cli.eval import eval_group
    from memstack.cli.keys import keys
    from memstack.cli.mcp import mcp
    from memstack.cli.memories import memories
    from memstack.cli.reembed import reembed
    from memstack.cli.serve import serve
    from memstack.cli.sessions import sessions
    from memstack.cli.users import users
    from memstack.cli.webhooks import webhooks

    main.add_command(bench)
    main.add_command(eval_group)
    main.add_command(memories)
    main.add_command(keys)
    main.add_command(serve)
    main.add_command(mcp)
    main.add_command(context.context)
    context.add_bench(main)
    add_http_bench(main)
    main.add_command(sessions)
    main.add_command(demo)
    main.add_command(reembed)
    main.add_command(webhooks)
    main.add_command(users)
    capture.register(main)  # after the groups it adds to
    chat.register(main)
