"""``memstack eval …``: quality measurements on data passed with ``--data`` (never shipped with memstack).

Each command prints one JSON object as its LAST line of stdout with ``--json``; progress goes to stderr. Add a
subcommand with ``@eval_group.command("name")``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from memstack.cli._common import echo_json
from memstack.errors import MemstackError

if TYPE_CHECKING:
    from memstack.recall import RecallSettings

__all__ = ["eval_group", "run_async"]

T = TypeVar("T")


def run_async(make: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run a coroutine for a command; memstack errors become a one-line message and exit status 1."""
    try:
        return asyncio.run(make())
    except MemstackError as exc:
        raise click.ClickException(str(exc)) from exc


def _data_option(help_text: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    return click.option("--data", "data", required=True, type=click.Path(path_type=Path), help=help_text)


@click.group("eval")
def eval_group() -> None:
    """Measure memstack's quality on public data sets (each prints one JSON object last with --json)."""


@eval_group.command("locomo")
@click.option("--data", "data", required=True, type=click.Path(dir_okay=False, path_type=Path), help="LoCoMo JSON.")
@click.option("--conversations", default="", help="Comma-separated sample ids to evaluate (default: all).")
@click.option("--backend", type=click.Choice(["sqlite", "postgres"]), default="sqlite", show_default=True)
@click.option(
    "--database-url", default=None, help="With --backend postgres: a scratch database (default: an embedded server)."
)
@click.option("--embedder", default="local:minilm", show_default=True, help="Embedding model string.")
@click.option("--model", default=None, help="Chat model whose tokenizer counts tokens (default o200k).")
@click.option(
    "--set",
    "overrides",
    multiple=True,
    metavar="NAME=VALUE",
    help="Change a recall setting, e.g. --set dense_weight=0 or --set memory_weight=0 (ablations; see "
    "RetrievalSettings and RecallSettings).",
)
@click.option("--json", "as_json", is_flag=True, help="One JSON line per conversation, the overall result last.")
def locomo(
    data: Path,
    conversations: str,
    backend: str,
    database_url: str | None,
    embedder: str,
    model: str | None,
    overrides: tuple[str, ...],
    as_json: bool,
) -> None:
    """Recall hit@k / recall@k of LoCoMo evidence turns through the public API (ingest, then recall), tokens of
    the memory and summary layers per query, and recall latency."""
    from memstack.evals.common import progress
    from memstack.evals.locomo import LocomoRun, load_locomo, run_locomo

    settings = _settings(overrides)
    convs = load_locomo(data)
    wanted = [c.strip() for c in conversations.split(",") if c.strip()]
    if wanted:
        unknown = sorted(set(wanted) - {c.id for c in convs})
        if unknown:
            raise click.BadParameter(f"not in {data}: {', '.join(unknown)}", param_hint="--conversations")
        convs = [c for c in convs if c.id in wanted]
    total = sum(len(c.turns) + len(c.questions) for c in convs)
    run = LocomoRun(backend=backend, database_url=database_url, embedder=embedder, recall=settings, model=model)
    with progress("turns imported, questions asked", total) as bar:
        result, per_conversation = run_async(lambda: run_locomo(convs, run, progress=bar.advance))
    if as_json:
        for line in per_conversation:
            echo_json(line)
        echo_json(result)
    else:
        _table(result, per_conversation)


def _settings(overrides: tuple[str, ...]) -> RecallSettings:
    from dataclasses import fields, replace

    from memstack.errors import InputError
    from memstack.recall import RecallSettings
    from memstack.retrieval import RetrievalSettings

    outer = {f.name: f.type for f in fields(RecallSettings) if f.name != "retrieval"}
    inner = {f.name: f.type for f in fields(RetrievalSettings)}
    changes: dict[str, Any] = {}
    retrieval: dict[str, Any] = {}
    for item in overrides:
        name, _, raw = item.partition("=")
        kind = inner.get(name) or outer.get(name)
        if kind is None or not raw:
            raise click.BadParameter(
                f"{item!r}: write NAME=VALUE with NAME one of {', '.join([*inner, *outer])}", param_hint="--set"
            )
        try:
            value = int(raw) if kind in ("int", int) else float(raw)
        except ValueError:
            raise click.BadParameter(f"{item!r}: {raw!r} is not a number", param_hint="--set") from None
        (retrieval if name in inner else changes)[name] = value
    try:
        base = RecallSettings()
        return replace(base, retrieval=replace(base.retrieval, **retrieval), **changes)
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


@eval_group.command("dedup")
@_data_option("STS-B CSV (s1,s2,score) or PAWS TSV (id,s1,s2,label).")
@click.option("--format", "fmt", type=click.Choice(["stsb", "paws"]), default="stsb", show_default=True)
@click.option("--embedder", default=None, help="Embedder spec (default: the configured one, local:minilm).")
@click.option("--calibrate", is_flag=True, help="Derive the rule's parameters from this (training) file instead.")
@click.option("--min-precision", default=0.80, show_default=True, help="With --calibrate: precision to keep.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object as the last line.")
@click.option("--progress/--no-progress", default=True, help="Progress bar on stderr.")
def dedup_command(
    data: Path, fmt: str, embedder: str | None, calibrate: bool, min_precision: float, as_json: bool, progress: bool
) -> None:
    """Decide duplicate / not for every pair with the production dedup rule.

    Last line: {"pairs","threshold","precision","recall","f1"}. With --calibrate, prints how the parameters are
    derived and ends with them as JSON (paste into memstack.capture.dedup.CALIBRATED).
    """
    from memstack.capture.dedup import DedupRule
    from memstack.config import Config
    from memstack.embed import get_embedder
    from memstack.evals import dedup as ev
    from memstack.evals.common import emit

    async def main() -> None:
        pairs = ev.load_pairs(data, fmt)
        emb = get_embedder(embedder or Config.resolve().embedder)
        try:
            cosines = await ev.embed_pairs(emb, pairs, show_progress=progress)
        finally:
            await emb.aclose()
        if calibrate:
            params, lines = ev.calibrate(emb.name, pairs, [float(c) for c in cosines], min_precision=min_precision)
            for line in lines:
                click.echo(line)
            emit(
                {
                    "embedder": params.embedder,
                    "weights": dict(params.weights),
                    "bias": params.bias,
                    "threshold": params.threshold,
                    "min_order": params.min_order,
                    "update_cosine": params.update_cosine,
                }
            )
            return
        result = ev.evaluate(DedupRule.for_embedder(emb.name), pairs, [float(c) for c in cosines])
        detail = result.pop("detail")
        if as_json:
            emit({"detail": detail})
            emit(result)
        else:
            click.echo(json.dumps(detail, indent=2))
            click.echo(
                f"{result['pairs']} pairs: precision {result['precision']:.3f}, recall {result['recall']:.3f}, "
                f"F1 {result['f1']:.3f} (threshold {result['threshold']})"
            )

    run_async(main)


@eval_group.command("extraction")
@_data_option("LoCoMo JSON (a list of conversations with 'conversation' and 'observation').")
@click.option("--classifier", default=None, help="offline (default) or a model string, e.g. openai:gpt-4o-mini.")
@click.option("--limit", type=int, default=None, help="Only the first N turns (quick runs).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object as the last line.")
@click.option("--progress/--no-progress", default=True, help="Progress bar on stderr.")
def extraction_command(data: Path, classifier: str | None, limit: int | None, as_json: bool, progress: bool) -> None:
    """Run the configured classifier over every LoCoMo turn against the turns cited by 'observation'.

    Last line: {"turns","precision","recall","f1","p50_ms","p99_ms"}.
    """
    from memstack.capture import get_classifier
    from memstack.config import Config
    from memstack.evals import extraction as ev
    from memstack.evals.common import emit

    async def main() -> None:
        turns = ev.load_turns(data)[:limit] if limit else ev.load_turns(data)
        spec = classifier or Config.resolve().classifier_model
        clf = get_classifier(None if spec == "offline" else spec)
        try:
            result = await ev.evaluate(clf, turns, show_progress=progress)
        finally:
            await clf.aclose()
        detail = result.pop("detail")
        if as_json:
            emit({"detail": detail})
            emit(result)
        else:
            click.echo(json.dumps(detail, indent=2))
            click.echo(
                f"{result['turns']} turns ({detail['classifier']}): precision {result['precision']:.3f}, "
                f"recall {result['recall']:.3f}, F1 {result['f1']:.3f}; p50 {result['p50_ms']} ms, "
                f"p99 {result['p99_ms']} ms"
            )

    run_async(main)


@eval_group.command("updates")
@_data_option("JSON Lines, one case a line: {id, kind (update|compatible), memory, category, message}.")
@click.option("--classifier", default="offline", show_default=True, help="offline, or a model string for the LLM.")
@click.option(
    "--update-model",
    default=None,
    help="The update judge: offline or a model string (default: the engine's, following --classifier).",
)
@click.option("--embedder", default="local:minilm", show_default=True, help="Embedding model string.")
@click.option(
    "--report",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write each case's outcome here (JSONL).",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object as the last line.")
@click.option("--progress/--no-progress", default=True, help="Progress bar on stderr.")
def updates_command(
    data: Path,
    classifier: str,
    update_model: str | None,
    embedder: str,
    report: Path | None,
    as_json: bool,
    progress: bool,
) -> None:
    """Send each case's message in a chat turn to a fresh user holding its memory, and check whether the memory
    was superseded (it must be for an update, never for a compatible case) and the news stored.

    Last line: {"cases","updates","updates_applied","update_rate",…,"compatible","compatible_superseded",…,
    "p50_ms","p95_ms","classifier","judge"}.
    """
    from memstack.evals.common import emit
    from memstack.evals.common import progress as progress_bar
    from memstack.evals.updates import load_cases, run_updates, write_report

    try:
        cases = load_cases(data)
    except MemstackError as exc:
        raise click.ClickException(str(exc)) from exc
    with progress_bar("cases", len(cases), enabled=progress) as bar:
        summary, outcomes = run_async(
            lambda: run_updates(
                cases, embedder=embedder, classifier=classifier, update_model=update_model, progress=bar.advance
            )
        )
    if report is not None:
        write_report(report, outcomes)
    if as_json:
        emit(summary)
        return
    for o in outcomes:
        if not o.correct:
            what = "not applied" if o.kind == "update" else "superseded"
            click.echo(f"{o.id}: {o.kind} {what}; memories now: {' | '.join(o.memories)}")
    click.echo(
        f"{summary['cases']} cases ({summary['classifier']}, judge {summary['judge']}): "
        f"{summary['updates_applied']} of {summary['updates']} "
        f"updates applied ({summary['update_rate']:.1%}), {summary['compatible_superseded']} of "
        f"{summary['compatible']} compatible superseded; p50 {summary['p50_ms']} ms"
    )


@eval_group.command("supersedes")
@_data_option("LoCoMo-format JSON (e.g. ../shared/eval/locomo/locomo-dev.json).")
@click.option("--classifier", default="offline", show_default=True, help="offline, or a model string for the LLM.")
@click.option("--update-model", default=None, help="The update judge: offline or a model string.")
@click.option("--embedder", default="local:minilm", show_default=True, help="Embedding model string.")
@click.option("--limit", type=click.IntRange(min=1), default=None, help="Only the first N conversations.")
@click.option(
    "--report",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write each memory replaced here (JSONL).",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object as the last line.")
@click.option("--progress/--no-progress", default=True, help="Progress bar on stderr.")
def supersedes_command(
    data: Path,
    classifier: str,
    update_model: str | None,
    embedder: str,
    limit: int | None,
    report: Path | None,
    as_json: bool,
    progress: bool,
) -> None:
    """Chat every user turn of each conversation in order and list every memory the turns replaced.

    Last line: {"conversations","turns","memories","superseded","superseded_per_1000_turns","seconds","judge"}.
    """
    from memstack.evals.common import emit
    from memstack.evals.common import progress as progress_bar
    from memstack.evals.locomo_data import read_locomo
    from memstack.evals.supersedes import scan_conversations, write_report

    try:
        conversations = read_locomo(data)[:limit]
    except MemstackError as exc:
        raise click.ClickException(str(exc)) from exc
    total = sum(1 for c in conversations for t in c.turns if t.speaker == c.user_speaker)
    with progress_bar("turns", total, enabled=progress) as bar:
        summary, found = run_async(
            lambda: scan_conversations(
                conversations,
                embedder=embedder,
                classifier=classifier,
                update_model=update_model,
                progress=bar.advance,
            )
        )
    if report is not None:
        write_report(report, found)
    if as_json:
        emit(summary)
        return
    for f in found:
        click.echo(f"{f.conversation}: {f.before!r} → {f.after!r} ({f.note})")
    click.echo(
        f"{summary['turns']} turns of {summary['conversations']} conversations ({summary['judge']}): "
        f"{summary['superseded']} memories replaced of {summary['memories']}"
    )


@eval_group.command("temporal")
@click.option("--users", default=40, show_default=True, type=click.IntRange(1, 10_000), help="Synthetic users.")
@click.option("--seed", default=7, show_default=True, type=int, help="The generator's seed (same seed, same suite).")
@click.option("--backend", type=click.Choice(["sqlite", "postgres"]), default="sqlite", show_default=True)
@click.option(
    "--database-url", default=None, help="With --backend postgres: a scratch database (default: an embedded server)."
)
@click.option("--embedder", default="local:minilm", show_default=True, help="Embedding model string.")
@click.option(
    "--method",
    type=click.Choice(["recall", "search"]),
    default="recall",
    show_default=True,
    help="recall: memories ranked as the chat context ranks them; search: cosine similarity alone.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object as the last line.")
@click.option("--progress/--no-progress", default=True, help="Progress bar on stderr.")
def temporal_command(
    users: int,
    seed: int,
    backend: str,
    database_url: str | None,
    embedder: str,
    method: str,
    as_json: bool,
    progress: bool,
) -> None:
    """ "As of" retrieval on a generated suite (no data needed): synthetic users whose lives change over dated
    sessions (moves, jobs, partners, pets, plans), written through the public API with explicit times, asked what
    holds now, what held as of a past date, and what came before or after a named value; top-1 accuracy and the
    stale-fact rate (a superseded memory ranked above its successor), beside an add-only store of the same lives.

    Last line: {"users","seed","questions","memories","kinds","current_top1","as_of_top1","ordering_top1",
    "stale_rate","per_kind","add_only","backend","embedder","method","writes","p50_ms","seconds"}.
    """
    from memstack.evals.common import emit
    from memstack.evals.common import progress as progress_bar
    from memstack.evals.temporal import TemporalRun, run_temporal
    from memstack.evals.temporal_data import generate

    run = TemporalRun(
        users=users, seed=seed, backend=backend, database_url=database_url, embedder=embedder, method=method
    )
    total = users + len(generate(users, seed)[1])
    with progress_bar("users written, questions asked", total, enabled=progress) as bar:
        summary = run_async(lambda: run_temporal(run, progress=bar.advance))
    if as_json:
        emit(summary)
        return
    for kind, row in summary["per_kind"].items():
        click.echo(f"{kind:8} {row['questions']:5} questions, top-1 {row['top1']:.3f}, stale {row['stale_rate']:.2%}")
    plain = summary["add_only"]
    click.echo(f"add-only store, current questions: top-1 {plain['top1']:.3f}, stale {plain['stale_rate']:.2%}")
