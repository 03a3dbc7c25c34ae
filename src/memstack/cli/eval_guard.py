"""``memstack eval guard``: false positives on ordinary text and attacks caught, by the default guard, in one run
(:mod:`memstack.evals.guard`)."""

from __future__ import annotations

from pathlib import Path

import click

from memstack.cli._common import echo_json
from memstack.cli.eval import eval_group, run_async

__all__ = ["guard_command"]

_FILE = click.Path(dir_okay=False, path_type=Path)


@eval_group.command("guard")
@click.option("--locomo", multiple=True, type=_FILE, help="LoCoMo JSON: every turn is ordinary text (repeatable).")
@click.option("--stsb", multiple=True, type=_FILE, help="STS-B CSV: both sentences of each pair (repeatable).")
@click.option("--paws", multiple=True, type=_FILE, help="PAWS TSV: both sentences of each pair (repeatable).")
@click.option("--texts", multiple=True, type=_FILE, help="A text file, one ordinary text per line (repeatable).")
@click.option("--attacks", multiple=True, type=_FILE, help='Attack file {"attacks": [...], "benign": [...]}.')
@click.option("--rules-only", is_flag=True, help="The phrase rules alone (the default guard adds the semantic head).")
@click.option("--examples", default=0, show_default=True, help="Print up to N flagged ordinary texts per set.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object as the last line.")
def guard_command(
    locomo: tuple[Path, ...],
    stsb: tuple[Path, ...],
    paws: tuple[Path, ...],
    texts: tuple[Path, ...],
    attacks: tuple[Path, ...],
    rules_only: bool,
    examples: int,
    as_json: bool,
) -> None:
    """How often the content guard flags ordinary text, and how many attacks it catches.

    Last line: {"guard", "ordinary": {set: {"texts", "flagged", "rate", "quarantined", "kept_flagged"}},
    "ordinary_rate", "attacks": {file: {"attacks", "caught", "quarantined", "kept_flagged", "benign",
    "benign_flagged"}}}.
    """
    from memstack.evals.guard import attack_set, ordinary_sets, tally
    from memstack.guard import RULES, ContentGuard

    async def main() -> dict[str, object]:
        guard: ContentGuard = RULES
        if not rules_only:
            from memstack.embed import get_embedder
            from memstack.guard import SemanticGuard

            guard = SemanticGuard(get_embedder("local:minilm"))  # type: ignore[arg-type]
        sets = (
            ordinary_sets(locomo=locomo, stsb=stsb, paws=paws, texts=texts) if (locomo or stsb or paws or texts) else {}
        )
        ordinary = {name: tally(guard, items, examples=examples) for name, items in sets.items()}
        caught: dict[str, dict[str, object]] = {}
        for path in attacks:
            bad, good = attack_set(path)
            hit, miss = tally(guard, bad), tally(guard, good)
            caught[path.name] = {
                "attacks": hit.texts,
                "caught": hit.flagged,
                "quarantined": hit.quarantined,
                "kept_flagged": hit.kept_flagged,
                "benign": miss.texts,
                "benign_flagged": miss.flagged,
            }
        for name, result in ordinary.items():
            for text in result.examples:
                click.echo(f"flagged in {name}: {text[:160]}", err=True)
        total = sum(r.texts for r in ordinary.values())
        return {
            "guard": guard.name,
            "ordinary": {name: r.to_json() for name, r in ordinary.items()},
            "ordinary_rate": round(sum(r.flagged for r in ordinary.values()) / total, 5) if total else None,
            "attacks": caught,
        }

    if not (locomo or stsb or paws or texts or attacks):
        raise click.UsageError("give ordinary text (--locomo, --stsb, --paws, --texts) and/or --attacks FILE")
    result = run_async(main)
    if as_json:
        echo_json(result)
        return
    for name, figures in result["ordinary"].items():  # type: ignore[attr-defined]
        click.echo(
            f"{name}: {figures['flagged']} of {figures['texts']} flagged ({figures['rate']:.3%}; "
            f"{figures['quarantined']} quarantined, {figures['kept_flagged']} kept marked)"
        )
    for name, figures in result["attacks"].items():  # type: ignore[attr-defined]
        click.echo(
            f"{name}: {figures['caught']} of {figures['attacks']} attacks caught ({figures['quarantined']} "
            f"quarantined), {figures['benign_flagged']} of {figures['benign']} look-alikes flagged"
        )
