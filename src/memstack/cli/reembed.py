"""``memstack reembed``: switch the store's embedding model, re-embedding every stored vector (DESIGN §5).

How it stays consistent, resumes and locks is in :mod:`memstack.store.reembed`. Progress goes to stderr; a summary
ends the output, and with ``--json`` the last line of stdout is one JSON object
``{"embedder", "dim", "from_embedder", "from_dim", "vectors", "batches", "seconds"}``.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

import click

from memstack.cli._common import HOME_HELP, echo_json, say_store
from memstack.errors import ConfigError, MemstackError
from memstack.types import ReembedResult

if TYPE_CHECKING:
    from memstack.embed import Embedder

__all__ = ["reembed"]


@click.command("reembed")
@click.option(
    "--to",
    "to",
    metavar="EMBEDDER",
    help="The model to switch to, e.g. local:minilm or openai:text-embedding-3-small (default: $MEMSTACK_EMBEDDER; "
    "a reembed already in progress is finished with its own model).",
)
@click.option("--batch", default=256, show_default=True, type=click.IntRange(min=1), help="Texts per embedder call.")
@click.option("--home", type=click.Path(path_type=Path), help=HOME_HELP)
@click.option("--abort", is_flag=True, help="Discard a reembed in progress; the store keeps its previous model.")
@click.option("--json", "as_json", is_flag=True, help="End with one JSON object on the last line.")
@click.option("--progress/--no-progress", default=True, help="Progress bar on stderr.")
def reembed(to: str | None, batch: int, home: Path | None, abort: bool, as_json: bool, progress: bool) -> None:
    """Re-embed every stored vector with another embedding model, then switch the store to it.

    Active and forgotten memories are re-embedded (a forgotten memory stays restorable). The store cannot be used
    while this runs; if it is stopped, run it again: it resumes where it stopped."""
    try:
        asyncio.run(_abort(home, as_json) if abort else _reembed(to, batch, home, as_json, progress))
    except MemstackError as exc:
        raise click.ClickException(str(exc)) from None


async def _abort(home: Path | None, as_json: bool) -> None:
    from memstack.config import Config, find_home
    from memstack.store import open_reembed
    from memstack.store.reembed import abort

    chosen = find_home(home).path if as_json else say_store(home)
    async with await open_reembed(Config.resolve(home=chosen)) as backend:
        state = await abort(backend)
    if state.target is None:
        click.echo(f"no reembed is in progress; the store uses {state.embedder!r} ({state.dim}-d)")
    else:
        click.echo(
            f"discarded the reembed to {state.target!r} ({state.staged} vectors staged); "
            f"the store uses {state.embedder!r} ({state.dim}-d) again"
        )
    if as_json:
        echo_json({"embedder": state.embedder, "dim": state.dim, "aborted": state.target})


async def _reembed(to: str | None, batch: int, home: Path | None, as_json: bool, show_progress: bool) -> None:
    from memstack.config import Config, find_home
    from memstack.embed import get_embedder
    from memstack.evals.common import progress
    from memstack.store import open_reembed
    from memstack.store.reembed import reembed

    config = Config.resolve(home=find_home(home).path if as_json else say_store(home))
    async with await open_reembed(config) as backend:
        state = await backend.state()
        spec = to or state.target or config.embedder
        embedder = get_embedder(spec)
        try:
            await _learn_dim(embedder)
            with progress(f"re-embedding with {embedder.name}", state.total, enabled=show_progress) as bar:
                bar.advance(state.staged if state.target == embedder.name else 0)
                result = await reembed(backend, embedder, batch=batch, on_batch=lambda rows, _: bar.advance(rows))
        finally:
            await embedder.aclose()
    for line in _summary(result, config.embedder):
        click.echo(line)
    if as_json:
        keys = ("embedder", "dim", "from_embedder", "from_dim", "vectors", "batches", "seconds")
        echo_json({key: getattr(result, key) for key in keys})


async def _learn_dim(embedder: Embedder) -> None:
    """Remote models may only learn their vector length from a first answer."""
    try:
        embedder.dim  # noqa: B018 (raises ConfigError when unknown)
    except ConfigError:
        await embedder.embed(["dimension probe"])


def _summary(result: ReembedResult, configured: str) -> list[str]:
    from memstack.capture.dedup import CALIBRATED, params_for

    if not result.switched:
        return [f"the store already uses {result.embedder!r} ({result.dim}-d); nothing to do"]
    lines = [
        f"re-embedded {result.vectors} vectors in {result.batches} batch{'' if result.batches == 1 else 'es'} "
        f"({result.seconds:g} s): "
        f"{result.from_embedder!r} ({result.from_dim}-d) -> {result.embedder!r} ({result.dim}-d)"
    ]
    if result.resumed:
        lines.append(f"{result.resumed} vectors staged by an interrupted run were kept, not recomputed")
    rule = params_for(result.embedder)
    if result.embedder in CALIBRATED:
        lines.append(f"dedup: calibrated parameters for {result.embedder} ({rule.derivation})")
    else:
        lines.append(
            f"dedup: no calibrated parameters for {result.embedder}; only near-identical texts count as duplicates "
            f"({rule.derivation}). Calibrate with `memstack eval dedup --calibrate --embedder {result.embedder} "
            "--data <pairs>` and add its parameters to memstack.capture.dedup.CALIBRATED"
        )
    if configured != result.embedder:
        lines.append(f"set MEMSTACK_EMBEDDER={result.embedder} so memstack opens the store with its new model")
    return lines
