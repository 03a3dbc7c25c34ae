"""``memstack eval answers``: LoCoMo answer quality of a reader model with memstack's context, the whole
conversation, or nothing (see :mod:`memstack.evals.answers`)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from memstack.cli._common import echo_json
from memstack.cli.eval import eval_group, run_async

__all__ = ["answers"]


@eval_group.command("answers")
@click.option("--data", required=True, type=click.Path(dir_okay=False, path_type=Path), help="LoCoMo JSON.")
@click.option("--answer-model", required=True, help="The reader, e.g. openai:gpt-4o-mini or ollama:llama3.1.")
@click.option("--judge-model", required=True, help="The judge, e.g. openai:gpt-4o-mini.")
@click.option(
    "--mode",
    "modes",
    multiple=True,
    type=click.Choice(["memstack", "full", "none"]),
    help="Repeat for several; default: all three.",
)
@click.option("--limit", type=click.IntRange(min=1), default=None, help="Questions at most, in file order.")
@click.option("--concurrency", type=click.IntRange(min=1, max=256), default=4, show_default=True)
@click.option(
    "--cache",
    "cache_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path(".memstack-eval-cache"),
    show_default=True,
    help="Where answers and verdicts are kept: a run resumes from it, a repeated one makes no call.",
)
@click.option("--report", type=click.Path(dir_okay=False, path_type=Path), default=None, help="Write an HTML report.")
@click.option("--answers-out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write every answer with its verdict as JSON lines.")  # fmt: skip
@click.option("--backend", type=click.Choice(["sqlite", "postgres"]), default="sqlite", show_default=True)
@click.option("--yes", is_flag=True, help="Do not ask before a run with an estimated cost.")
@click.option("--json", "as_json", is_flag=True, help="The result as one JSON line, last.")
def answers(
    data: Path,
    answer_model: str,
    judge_model: str,
    modes: tuple[str, ...],
    limit: int | None,
    concurrency: int,
    cache_dir: Path,
    report: Path | None,
    answers_out: Path | None,
    backend: str,
    yes: bool,
    as_json: bool,
) -> None:
    """J (judged correct), token F1 and BLEU-1 of a reader model's answers to LoCoMo questions, per category, with
    context tokens, latency and model calls, for each mode: memstack (the context a chat turn assembles), full (the
    whole conversation), none (the question alone)."""
    from typing import cast

    from memstack.evals.answers import AnswerCache, AnswerRun, Mode, estimate, prepare, run_answers, write_report
    from memstack.evals.common import progress
    from memstack.evals.locomo import LocomoRun, load_locomo

    chosen = cast(tuple[Mode, ...], modes or ("memstack", "full", "none"))
    run = AnswerRun(
        answer_model, judge_model, cache_dir, modes=chosen, limit=limit, concurrency=concurrency,
        locomo=LocomoRun(backend=backend),
    )  # fmt: skip

    def log(line: str) -> None:
        click.echo(line, err=True)

    conversations = load_locomo(data)
    prepared = run_async(lambda: prepare(conversations, run, log))
    cache = AnswerCache(cache_dir)
    dollars = estimate(prepared, answer_model, judge_model, cache)
    if dollars is not None:
        click.echo(f"estimated cost of the calls not cached yet: ${dollars:.2f}", err=True)
        if not yes:
            if not sys.stdin.isatty():
                raise click.UsageError("a paid run needs a confirmation: pass --yes")
            click.confirm("go on?", abort=True, err=True)
    with progress("questions answered and judged", len(prepared)) as bar:
        result, rows = run_async(lambda: run_answers(prepared, run, cache=cache, progress=bar.advance))
    if answers_out is not None:
        answers_out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    if report is not None:
        write_report(report, result)
        click.echo(f"report written to {report}", err=True)
    if as_json:
        echo_json(result)
        return
    click.echo(
        f"{result['questions']} questions, {result['model_calls']} model calls ({result['cached_calls']} cached)"
    )
    for mode, m in result["modes"].items():
        o, a = m["overall"], m["adversarial"]
        click.echo(
            f"{mode:>9}: J {o['j']:.1f}  F1 {o['f1']:.1f}  BLEU-1 {o['bleu1']:.1f}  tokens {o['context_tokens']:,.0f}"
            f"  p50 {m['p50_ms']:,.0f} ms  p95 {m['p95_ms']:,.0f} ms  adversarial J {a['j']:.1f}"
        )
