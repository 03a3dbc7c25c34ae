"""A self-contained HTML page comparing the modes of one ``memstack eval answers`` run: J per category, context
tokens per question and latency, as bar charts in inline SVG (no script, no network), and the figures as tables."""

from __future__ import annotations

import html
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["write_report"]

_COLOURS = {"memstack": "#2563eb", "full": "#9333ea", "none": "#9ca3af"}


def _bars(title: str, groups: Sequence[str], series: dict[str, list[float]], unit: str, top: float = 0.0) -> str:
    """Grouped horizontal bars: one group per label, one bar per mode; the full width is ``top`` (default: the
    largest value)."""
    modes = list(series)
    top = top or max((v for values in series.values() for v in values), default=0.0) or 1.0
    row, gap, left, width = 16, 12, 150, 420
    height = len(groups) * (len(modes) * row + gap) + 30
    out = [f'<svg role="img" aria-label="{html.escape(title)}" width="{left + width + 90}" height="{height}">']
    y = 24
    for g, label in enumerate(groups):
        out.append(f'<text x="0" y="{y + row * len(modes) / 2 + 4}" font-size="12">{html.escape(label)}</text>')
        for mode in modes:
            value = series[mode][g]
            w = max(1.0, width * value / top)
            out.append(
                f'<rect x="{left}" y="{y}" width="{w:.1f}" height="{row - 3}" fill="{_COLOURS.get(mode, "#555")}"/>'
            )
            out.append(f'<text x="{left + w + 4:.1f}" y="{y + row - 5}" font-size="11">{value:,.1f}{unit}</text>')
            y += row
        y += gap
    out.append("</svg>")
    return "".join(out)


def _legend(modes: Sequence[str]) -> str:
    items = (f'<span><i style="background:{_COLOURS.get(m, "#555")}"></i>{html.escape(m)}</span>' for m in modes)
    return f'<p class="legend">{"".join(items)}</p>'


def _table(result: dict[str, Any]) -> str:
    head = "<tr><th>mode</th><th>J</th><th>F1</th><th>BLEU-1</th><th>tokens / question</th><th>p50</th><th>p95</th>"
    head += "<th>adversarial J</th></tr>"
    rows = []
    for mode, m in result["modes"].items():
        o, a = m["overall"], m["adversarial"]
        rows.append(
            f"<tr><td>{html.escape(mode)}</td><td>{o['j']:.1f}</td><td>{o['f1']:.1f}</td><td>{o['bleu1']:.1f}</td>"
            f"<td>{o['context_tokens']:,.0f}</td><td>{m['p50_ms']:,.0f} ms</td><td>{m['p95_ms']:,.0f} ms</td>"
            f"<td>{a['j']:.1f} ({a['questions']})</td></tr>"
        )
    return f"<table>{head}{''.join(rows)}</table>"


def write_report(path: Path, result: dict[str, Any]) -> None:
    """Write the page for ``result`` (the JSON of ``memstack eval answers``) to ``path``."""
    modes = list(result["modes"])
    categories = sorted({c for m in result["modes"].values() for c in m["per_category"]}, key=int)
    names = [f"{result['modes'][modes[0]]['per_category'][c]['name']} ({c})" for c in categories] + ["overall (1-4)"]
    j = {
        mode: [m["per_category"][c]["j"] if c in m["per_category"] else 0.0 for c in categories] + [m["overall"]["j"]]
        for mode, m in result["modes"].items()
    }
    tokens = {mode: [m["overall"]["context_tokens"]] for mode, m in result["modes"].items()}
    latency = {mode: [m["p50_ms"], m["p95_ms"]] for mode, m in result["modes"].items()}
    title = f"LoCoMo answers: {result['answer_model']} reading, {result['judge_model']} judging"
    page = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>
<style>
body {{ font: 14px system-ui, sans-serif; margin: 2rem; color: #111; }}
table {{ border-collapse: collapse; margin: 1rem 0; }} td, th {{ border: 1px solid #ddd; padding: 4px 8px; }}
.legend span {{ margin-right: 1rem; }}
.legend i {{ display: inline-block; width: 12px; height: 12px; margin-right: 4px; }}
</style></head><body>
<h1>{html.escape(title)}</h1>
<p>{result["questions"]} questions; {result["model_calls"]} model calls made, {result["cached_calls"]} answered from
the cache. J: percent of answers the judge labels correct (categories 1-4); adversarial questions apart.</p>
{_legend(modes)}
{_table(result)}
<h2>J per category (%)</h2>
{_bars("J per category", names, j, "", top=100.0)}
<h2>Context tokens per question</h2>
{_bars("Context tokens per question", ["tokens"], tokens, "")}
<h2>Latency per question (context + answer)</h2>
{_bars("Latency", ["p50", "p95"], latency, " ms")}
</body></html>
"""
    Path(path).write_text(page, encoding="utf-8")
