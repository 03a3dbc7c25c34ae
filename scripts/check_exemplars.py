"""Check that memstack's written example sentences are not taken from evaluation data.

``memstack.capture.exemplars`` promises that its sentences were written for memstack, never taken from evaluation
data; this script holds it to that. Every example sentence is compared with every text in the evaluation files under
``--data`` (searched recursively):

- ``*.json`` (LoCoMo and the like): every string in the document, whole and split into sentences (turns, image
  captions, observations, summaries, questions, answers);
- ``*.csv`` (STS-B: ``s1,s2,score``) and ``*.tsv`` (PAWS: ``id<TAB>s1<TAB>s2<TAB>label``): every text column.

Texts are compared as lower-cased words (apostrophes kept, other punctuation dropped). An example is
*near-verbatim* when, against some text or sentence of one,

- the sets of words overlap with a Jaccard index of at least ``--jaccard`` (default 0.6), or
- they share a run of ``--ngram`` words (default 6), or, for an example shorter than that, the example's whole
  run of words appears in the text, or
- at least ``--containment`` (default 0.8) of the words of an example of five words or more appear in the same
  order in a text at most three times as long: a real sentence cut down ("I ran a race for charity last week"
  from "I ran a race for the children's charity last week, it was great").

It prints each near-verbatim example with the closest text and where that text is, then exits 1; it exits 0 when
none is. The evaluation data stays outside the project (pass its folder with ``--data``); nothing here is a test,
because the data may be absent. Run it after changing the exemplars::

    .venv/bin/python scripts/check_exemplars.py --data path/to/eval

``--module`` checks another module's sentences (every string in its module-level tuples, lists and mappings);
``--jsonl FILE …`` checks the ``text`` of every line of written training data instead (the capture head's)::

    .venv/bin/python scripts/check_exemplars.py --data path/to/eval --jsonl tests/capture/data/capture_train/*.jsonl
"""

from __future__ import annotations

import argparse
import csv
import importlib
import json
import re
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from memstack.capture.dedup import common_subsequence

_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)*")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_MIN_CONTAINED = 5  # shorter examples ("I'm vegetarian.") are inside countless sentences by chance
_MAX_STRETCH = 3  # ... and a few words are in order in any long enough text: compare with texts at most 3x as long


def words(text: str) -> tuple[str, ...]:
    """Words with their contractions whole ("that's"): a verbatim check counts what a reader sees as a word, where
    :func:`memstack.text.words` splits "that's" in two and would make short sentences look long enough to match."""
    return tuple(_WORD.findall(text.lower().replace("\u2019", "'")))


@dataclass(frozen=True, slots=True)
class Unit:
    """One text of the evaluation data (a whole string or one of its sentences) and where it is."""

    where: str
    text: str
    words: tuple[str, ...]


def _strings(node: object, path: str) -> Iterator[tuple[str, str]]:
    if isinstance(node, str):
        yield path, node
    elif isinstance(node, Mapping):
        for key, value in node.items():
            yield from _strings(value, f"{path}.{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _strings(value, f"{path}[{i}]")


def _texts(path: Path) -> Iterator[tuple[str, str]]:
    if path.suffix == ".json":
        yield from _strings(json.loads(path.read_text(encoding="utf-8")), "")
    elif path.suffix in (".csv", ".tsv"):
        with path.open(newline="", encoding="utf-8") as fh:
            reader = csv.reader(fh, delimiter="\t" if path.suffix == ".tsv" else ",", quoting=csv.QUOTE_MINIMAL)
            for line, row in enumerate(reader, start=1):
                for col, cell in enumerate(row):
                    if len(words(cell)) > 1:
                        yield f":{line}:{col + 1}", cell


def load_units(data: Path) -> list[Unit]:
    """Every text under ``data``, whole and, when it has several, each sentence."""
    units: list[Unit] = []
    for path in sorted(p for p in data.rglob("*") if p.suffix in (".json", ".csv", ".tsv") and p.is_file()):
        name = str(path.relative_to(data))
        for where, text in _texts(path):
            parts = [text, *_SENTENCE_END.split(text)]
            for part in dict.fromkeys(p.strip() for p in parts if p.strip()):
                if toks := words(part):
                    units.append(Unit(f"{name}{where}", part, toks))
    return units


def examples(module_name: str) -> list[str]:
    """The example sentences of ``module_name``: every string in its module-level tuples, lists and mappings."""
    module = importlib.import_module(module_name)
    found: list[str] = []

    def walk(value: object) -> None:
        if isinstance(value, str):
            found.append(value)
        elif isinstance(value, Mapping):
            for item in value.values():
                walk(item)
        elif isinstance(value, (tuple, list, frozenset, set)):
            for item in value:
                walk(item)

    for name in getattr(module, "__all__", [n for n in vars(module) if not n.startswith("_")]):
        value = getattr(module, name)
        if isinstance(value, (Mapping, tuple, list, frozenset, set)):
            walk(value)
    return list(dict.fromkeys(found))


def jsonl_texts(paths: list[Path]) -> list[str]:
    """The ``text`` of every line of ``paths`` (JSON lines)."""
    return [json.loads(line)["text"] for path in paths for line in path.read_text("utf-8").splitlines() if line.strip()]


def _ngrams(toks: tuple[str, ...], n: int) -> set[str]:
    return {" ".join(toks[i : i + n]) for i in range(len(toks) - n + 1)}


@dataclass(frozen=True, slots=True)
class Finding:
    example: str
    why: str
    unit: Unit


def check(sentences: list[str], units: list[Unit], *, jaccard: float, ngram: int, containment: float) -> list[Finding]:
    """The near-verbatim examples, each with the closest text of the data."""
    corpus = "\n".join(" " + " ".join(u.words) + " " for u in units)
    starts: list[int] = []
    offset = 0
    for u in units:
        starts.append(offset)
        offset += len(" ".join(u.words)) + 3
    by_word: dict[str, list[int]] = {}
    for i, u in enumerate(units):
        for w in set(u.words):
            by_word.setdefault(w, []).append(i)
    findings: list[Finding] = []
    for sentence in sentences:
        toks = words(sentence)
        if not toks:
            continue
        mine = set(toks)
        # Jaccard: only units sharing a word can reach the threshold
        shared: dict[int, int] = {}
        for w in mine:
            for i in by_word.get(w, ()):
                shared[i] = shared.get(i, 0) + 1
        best, best_unit = 0.0, None
        for i, n in shared.items():
            score = n / len(mine | set(units[i].words))
            if score > best:
                best, best_unit = score, units[i]
        if best_unit is not None and best >= jaccard:
            findings.append(Finding(sentence, f"word-set Jaccard {best:.2f}", best_unit))
            continue
        if len(toks) >= _MIN_CONTAINED:
            # the example's words, in its order, inside one longer text: a real sentence cut down
            need = containment * len(toks)
            held = max(
                (
                    (common_subsequence(toks, units[i].words), i)
                    for i, n in shared.items()
                    if n >= containment * len(mine) and len(units[i].words) <= _MAX_STRETCH * len(toks)
                ),
                default=(0, -1),
            )
            if held[0] >= need:
                findings.append(Finding(sentence, f"{held[0]} of its {len(toks)} words in order", units[held[1]]))
                continue
        runs = _ngrams(toks, ngram) if len(toks) >= ngram else {" ".join(toks)}
        for run in sorted(runs):
            at = corpus.find(f" {run} ")
            if at >= 0:
                i = max(0, _bisect(starts, at))
                findings.append(Finding(sentence, f"shares the run {run!r}", units[i]))
                break
    return findings


def _bisect(starts: list[int], at: int) -> int:
    lo, hi = 0, len(starts)
    while lo < hi:
        mid = (lo + hi) // 2
        if starts[mid] <= at:
            lo = mid + 1
        else:
            hi = mid
    return lo - 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--data", type=Path, required=True, help="folder of evaluation data (searched recursively)")
    parser.add_argument("--module", default="memstack.capture.exemplars", help="module whose sentences to check")
    parser.add_argument("--jaccard", type=float, default=0.6, help="word-set Jaccard that counts as near-verbatim")
    parser.add_argument("--ngram", type=int, default=6, help="length of a shared run of words that counts")
    parser.add_argument("--jsonl", type=Path, nargs="+", help="written training data to check (each line's text)")
    parser.add_argument(
        "--containment", type=float, default=0.8, help="share of an example's words found in order in one text"
    )
    args = parser.parse_args(argv)
    if not args.data.is_dir():
        parser.error(f"--data {args.data} is not a folder")
    units = load_units(args.data)
    if not units:
        parser.error(f"no .json, .csv or .tsv texts under {args.data}")
    sentences = jsonl_texts(args.jsonl) if args.jsonl else examples(args.module)
    findings = check(sentences, units, jaccard=args.jaccard, ngram=args.ngram, containment=args.containment)
    for f in findings:
        print(f"near-verbatim: {f.example!r}\n  {f.why}: {f.unit.text!r}\n  at {f.unit.where}")
    source = f"{len(args.jsonl)} files" if args.jsonl else args.module
    print(
        f"{len(sentences)} examples of {source} against {len(units)} texts under {args.data}: "
        f"{len(findings)} near-verbatim"
    )
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
