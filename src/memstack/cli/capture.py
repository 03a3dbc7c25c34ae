"""Commands of memory capture: ``memstack bench capture``, ``memstack eval memories`` and ``memstack eval capture``.

Each prints one JSON object as their last line with ``--json``; progress goes to stderr.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import click

from memstack.bench.capture import NO_SAVE_MESSAGES
from memstack.cli._common import echo_json
from memstack.errors import MemstackError

__all__ = ["bench_capture", "eval_capture", "eval_memories", "register"]


@click.command("capture")
@click.option("--messages", type=click.IntRange(min=1), default=500, show_default=True, help="Timed turns.")
@click.option("--chat-ms", type=click.FloatRange(min=0), default=20.0, show_default=True, help="Simulated chat work.")
@click.option("--warmup", type=click.IntRange(min=0), default=20, show_default=True)
@click.option(
    "--cold",
    type=click.IntRange(1, len(NO_SAVE_MESSAGES)),
    default=20,
    show_default=True,
    help="First messages after start, timed as the cold detection (each text new).",
)
@click.option("--embedder", default="local:minilm", show_default=True, help="Embedding model string.")
@click.option("--classifier", default=None, help="offline (default) or a model string.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as one JSON object on the last line.")
def bench_capture(
    messages: int, chat_ms: float, warmup: int, cold: int, embedder: str, classifier: str | None, as_json: bool
) -> None:
    """What memory capture costs a chat turn when nothing is saved: the detection itself, cold (first messages after
    start) and warm, and the latency it adds to the turn (start + awaiting the result).

    Last line: {"messages","p50_ms","p99_ms",...,"detect_cold_p50_ms","detect_p50_ms",...}; see
    memstack.bench.capture."""
    from memstack.bench.capture import CaptureBenchConfig, run_capture_bench

    spec = None if classifier in (None, "offline") else classifier
    try:
        cfg = CaptureBenchConfig(
            messages=messages, chat_ms=chat_ms, warmup=warmup, cold=cold, embedder=embedder, classifier=spec
        )
        result = asyncio.run(run_capture_bench(cfg))
    except MemstackError as exc:
        raise click.ClickException(str(exc)) from exc
    if as_json:
        echo_json(result)
        return
    for key, value in result.items():
        click.echo(f"{key:>18}  {value}")


@click.command("memories")
@click.option("--data", "data", required=True, type=click.Path(dir_okay=False, path_type=Path), help="LoCoMo JSON.")
@click.option("--embedder", default="local:minilm", show_default=True, help="Embedding model string.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object as the last line.")
def eval_memories(data: Path, embedder: str, as_json: bool) -> None:
    """Memory retrieval (layer 6) on LoCoMo observations: dense, lexical and hybrid hit@k / recall@k.

    Last line: {"questions","memories","lexical_weight","dense","lexical","hybrid","sweep","p50_ms","p99_ms"}."""
    from memstack.embed import get_embedder
    from memstack.evals.memories import load_observations, run_memories

    async def main() -> dict[str, Any]:
        sets = load_observations(data)
        emb = get_embedder(embedder)
        total = sum(len(s.questions) for s in sets)
        try:
            with click.progressbar(length=total, label="questions", file=sys.stderr) as bar:
                return await run_memories(sets, emb, progress=bar.update)
        finally:
            await emb.aclose()

    try:
        result = asyncio.run(main())
    except MemstackError as exc:
        raise click.ClickException(str(exc)) from exc
    if as_json:
        echo_json(result)
        return
    click.echo(f"{result['questions']} questions over {result['memories']} memories")
    rows = {"dense": result["dense"], "lexical": result["lexical"], **result["sweep"]}
    for name, row in rows.items():
        click.echo(f"{name:>12}  " + "  ".join(f"{k} {v:.3f}" for k, v in row.items()))


@click.command("capture")
@click.option(
    "--data",
    "data",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="JSON Lines, one case a line: {id, message, at, points: [{text, keys, category}], not}.",
)
@click.option("--classifier", default="offline", show_default=True, help="offline, or a model string for the LLM.")
@click.option("--embedder", default="local:minilm", show_default=True, help="Embedding model string.")
@click.option(
    "--report", type=click.Path(dir_okay=False, path_type=Path), default=None, help="Each case's outcome (JSONL)."
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object as the last line.")
@click.option("--progress/--no-progress", default=True, help="Progress bar on stderr.")
def eval_capture(
    data: Path, classifier: str, embedder: str, report: Path | None, as_json: bool, progress: bool
) -> None:
    """Send each case's message in a chat turn (at its time) to a fresh user, read back the memories stored, and
    score them against the case's gold points: point recall, precision, distortion (an invented or shifted date, a
    phrase the case rules out, an added negation, a fact with a part dropped), fused memories; per category.

    Last line: {"cases","points","stored","point_recall","precision","distorted","distortion","fused",…,
    "distorted_by","per_category","no_point_cases","no_point_cases_stored",…,"p50_ms","p95_ms","classifier"}.
    """
    from memstack.evals.capture import load_cases, run_capture, write_report
    from memstack.evals.common import progress as progress_bar

    try:
        cases = load_cases(data)
        with progress_bar("cases", len(cases), enabled=progress) as bar:
            summary, outcomes = asyncio.run(
                run_capture(cases, embedder=embedder, classifier=classifier, progress=bar.advance)
            )
    except MemstackError as exc:
        raise click.ClickException(str(exc)) from exc
    if report is not None:
        write_report(report, outcomes)
    if as_json:
        echo_json(summary)
        return
    for outcome in outcomes:
        for point, hit in zip(outcome.case.points, outcome.recalled, strict=True):
            if not hit:
                click.echo(f"{outcome.case.id}: missed {point.text!r}")
        for memory in outcome.memories:
            if memory.distorted:
                click.echo(f"{outcome.case.id}: distorted {memory.content!r} ({'; '.join(memory.distorted)})")
    click.echo(
        f"{summary['cases']} cases ({summary['classifier']}): point recall {summary['point_recall']:.3f} of "
        f"{summary['points']}, precision {summary['precision']:.3f} and distortion {summary['distortion']:.3f} of "
        f"{summary['stored']} stored, {summary['fused']} fused; p50 {summary['p50_ms']} ms"
    )


def register(main: click.Group) -> None:
    """Add ``bench capture``, ``eval memories`` and ``eval capture`` to their groups, creating a group no other
    module made yet."""
    for group_name, command in (("bench", bench_capture), ("eval", eval_memories), ("eval", eval_capture)):
        group = main.commands.get(group_name)
        if not isinstance(group, click.Group):
            group = click.Group(group_name, help="Measuring commands; each prints one JSON object as its last line.")
            main.add_command(group)
        group.add_command(command)
