"""The ``memstack`` command line. Each command group lives in its own module and is registered here."""

from __future__ import annotations

import click

__all__ = ["main"]


class _Main(click.Group):
    """The ``memstack`` group: an error memstack raises on purpose, from any command, is one line (``Error: …``,
    exit status 1), never a traceback, even where a command did not catch it itself."""

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
    # Imported here so `memstack --help` stays fast and optional parts fail only when used.
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
    main.add_command(users)
    capture.register(main)  # after the groups it adds to
    chat.register(main)


_register()
