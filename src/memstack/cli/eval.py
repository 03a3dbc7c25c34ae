"""``memstack eval …``: quality measurements on data passed with ``--data`` (never shipped with memstack)."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from memstack.retrieval import RetrievalSettings

__all__ = ["eval_group"]


@click.group("eval")
def eval_group() -> None:
    """Measure memstack's quality on public data sets (each prints one JSON object last with --json)."""


@eval_group.command("locomo")
@click.option("--data", "data", required=True, type=click.Path(dir_okay=False, path_type=Path), help="LoCoMo JSON.")
@click.option("--conversations", default="", help="Comma-separated sample ids to evaluate (default: all).")
@click.option("--embedder", default="local:minilm", show_default=True, help="Embedding model string.")
@click.option("--model", default=None, help="Chat model whose tokenizer counts tokens (default o200k).")
@click.option(
    "--set",
    "overrides",
    multiple=True,
    metavar="NAME=VALUE",
    help="Change a retrieval setting, e.g. --set dense_weight=0 (ablations; see RetrievalSettings).",
)
@click.option("--json", "as_json", is_flag=True, help="One JSON line per conversation, the overall result last.")
def locomo(
    data: Path, conversations: str, embedder: str, model: str | None, overrides: tuple[str, ...], as_json: bool
) -> None:
    """Retrieval hit@k / recall@k of LoCoMo evidence turns, tokens per query and recall latency."""
    from memstack.embed import get_embedder
    from memstack.evals.locomo import load_locomo, run_locomo

    settings = _settings(overrides)

    convs = load_locomo(data)
    wanted = [c.strip() for c in conversations.split(",") if c.strip()]
    if wanted:
        unknown = sorted(set(wanted) - {c.id for c in convs})
        if unknown:
            raise click.BadParameter(f"not in {data}: {', '.join(unknown)}", param_hint="--conversations")
        convs = [c for c in convs if c.id in wanted]
    total = sum(len(c.questions) for c in convs)
    with click.progressbar(length=total, label="questions", file=sys.stderr) as bar:
        job = run_locomo(convs, get_embedder(embedder), settings=settings, model=model, progress=bar.update)
        result, per_conversation = asyncio.run(job)
    if as_json:
        for line in per_conversation:
            click.echo(json.dumps(line))
        click.echo(json.dumps(result))
    else:
        _table(result, per_conversation)


def _settings(overrides: tuple[str, ...]) -> RetrievalSettings:
    from dataclasses import fields, replace

    from memstack.errors import InputError
    from memstack.retrieval import RetrievalSettings

    types = {f.name: f.type for f in fields(RetrievalSettings)}
    changes: dict[str, Any] = {}
    for item in overrides:
        name, _, raw = item.partition("=")
        if name not in types or not raw:
            raise click.BadParameter(
                f"{item!r}: write NAME=VALUE with NAME one of {', '.join(types)}", param_hint="--set"
            )
        try:
            changes[name] = int(raw) if types[name] in ("int", int) else float(raw)
        except ValueError:
            raise click.BadParameter(f"{item!r}: {raw!r} is not a number", param_hint="--set") from None
    try:
        return replace(RetrievalSettings(), **changes)
    except InputError as exc:
        raise click.BadParameter(str(exc), param_hint="--set") from None


def _table(result: dict[str, Any], per_conversation: list[dict[str, Any]]) -> None:
    keys = ("questions", "hit@5", "hit@10", "recall@5", "recall@10")
    click.echo(f"{'':14}" + "".join(f"{k:>11}" for k in keys))
    rows = [(row["conversation"], row) for row in per_conversation]
    rows += [(f"category {c}", row) for c, row in result["per_category"].items()]
    rows.append(("all", result))
    for name, row in rows:
        click.echo(f"{name:14}" + "".join(f"{row[k]:>11}" for k in keys))
    click.echo(
        f"tokens per query {result['tokens_per_query']} (full conversation {result['full_context_tokens']}); "
        f"recall latency p50 {result['p50_ms']} ms, p95 {result['p95_ms']} ms"
    )
