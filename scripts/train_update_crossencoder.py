"""Train the offline update judge's cross-encoder (``memstack.capture.judge.cross``): all-MiniLM-L6-v2 fine-tuned
to read ``[CLS] memory [SEP] statement [SEP]`` and answer how likely the statement makes the memory no longer true.

Two steps, because the first needs memstack's capture pipeline and the second needs torch (never in memstack's own
environment; see ``train_dedup_crossencoder.py`` for the separate virtual environment and its packages)::

    # 1. the pairs as the judge reads them (each message through the offline classifier and the news step)
    .venv/bin/python scripts/train_update_crossencoder.py pairs --out judge-pairs
    # 2. fine-tune on the written pairs, score the development set after each epoch (never trained on), export int8
    ../crossenc-venv/bin/python scripts/train_update_crossencoder.py train --pairs judge-pairs \
        --epochs 3 --export src/memstack/capture/judge/data/update-crossencoder-int8.onnx

Training reads the written pairs of ``tests/capture/data/judge/pairs-*.jsonl`` and the generated direct cases of
``tests.capture.judge_templates``: for an update, the statement nearest the memory is the positive (the others are
left out: which carries the news is not labelled); every statement of a compatible case is a negative, and one more
negative per case pairs the memory with a statement of another case. The development set of ``memstack eval
updates`` (``tests/capture/data/updates-dev.jsonl``) is only scored: the threshold is chosen on it less its held-out
cases (``--held-out``, default the most recent spent blind set, ``b8-``: the lowest score superseding at most 2% of
the other cases' compatible ones), so its figure is a validation figure, not a blind one; the held-out cases are
scored at that threshold and recorded apart on the card (the news head of ``train_update_head.py`` keeps the same
cases out).
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import random
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "scripts")]
TARGET_FP = 0.02
CARD = "update-crossencoder.json"  # written beside the exported model


def log(msg: str) -> None:
    print(msg, flush=True)


# --- step 1: pairs (memstack's environment) ----------------------------------------------------------------------


AT = datetime(2026, 11, 27, 10, tzinfo=UTC)  # the time messages are read at (their dates resolve against it)


async def read_case(case: Any, classifier: Any, embedder: Any) -> tuple[list[str], int] | None:
    """The statements the judge would read of ``case.message`` (what the offline classifier captures, and what the
    news step drafts from the sentences it passed over), and which of them is nearest the memory."""
    from memstack.capture.news import _covered, _draft
    from memstack.capture.rules import statements

    found = await classifier.classify(case.message, at=AT)
    said = [c.content for c in found]
    for sentence in statements(case.message):
        if not _covered(sentence, found) and (draft := _draft(sentence, AT)) is not None:
            said.append(draft.content)
    said = list(dict.fromkeys(said))
    if not said:
        return None
    vectors = await embedder.embed([case.memory, *said])
    return said, int(np.argmax(vectors[1:] @ vectors[0]))


async def dump_pairs(out: Path) -> None:
    from tests.capture.judge_templates import template_cases

    from memstack.capture.judge.offline import as_sentence
    from memstack.capture.offline import OfflineClassifier
    from memstack.embed import get_embedder
    from memstack.evals.updates import load_cases

    data = ROOT / "tests" / "capture" / "data"
    written = [c for path in sorted((data / "judge").glob("pairs-*.jsonl")) for c in load_cases(path)]
    sets = {"train": [*written, *template_cases()], "dev": load_cases(data / "updates-dev.jsonl")}
    embedder = get_embedder("local:minilm")
    classifier = OfflineClassifier(embedder)
    out.mkdir(parents=True, exist_ok=True)
    rng = random.Random(13)
    try:
        for name, cases in sets.items():
            read = [(case, got) for case in cases if (got := await read_case(case, classifier, embedder)) is not None]
            with (out / f"{name}.jsonl").open("w", encoding="utf-8") as fh:
                for case, (said, nearest) in read:
                    row = {"id": case.id, "update": case.kind == "update", "memory": as_sentence(case.memory)}
                    for i, statement in enumerate(said):
                        fh.write(json.dumps({**row, "said": statement, "nearest": i == nearest, "cross": False}) + "\n")
                    other, (other_said, _) = read[rng.randrange(len(read))]
                    if other is not case:  # the memory against a statement about something else
                        row = {**row, "update": False, "said": other_said[0], "nearest": True, "cross": True}
                        fh.write(json.dumps(row) + "\n")
            log(f"{name}: {len(read)} cases → {out / f'{name}.jsonl'}")
    finally:
        await embedder.aclose()


# --- step 2: fine-tune (torch's environment) ---------------------------------------------------------------------


def load_rows(path: Path, *, training: bool) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    if training:  # an update's other statements are unlabelled
        rows = [r for r in rows if not (r["update"] and not r["nearest"] and not r["cross"])]
    return rows


def case_rates(rows: list[dict[str, Any]], scores: np.ndarray, threshold: float | None = None) -> dict[str, Any]:
    """Per case the best score of its statements (the pipeline supersedes when any statement does); the threshold
    (when not given: the lowest superseding at most :data:`TARGET_FP` of the compatible cases), and the share of
    updates it applies."""
    best: dict[str, tuple[bool, float]] = {}
    for row, score in zip(rows, scores, strict=True):
        if not row["cross"]:
            update, seen = best.get(row["id"], (row["update"], -1.0))
            best[row["id"]] = (update, max(seen, float(score)))
    updates = np.array([s for u, s in best.values() if u])
    compatible = np.sort(np.array([s for u, s in best.values() if not u]))[::-1]
    if threshold is None:
        allowed = int(np.floor(TARGET_FP * len(compatible)))
        threshold = float(compatible[allowed]) + 1e-6
    return {
        "threshold": round(threshold, 6),
        "updates": len(updates),
        "updates_applied": round(float(np.mean(updates >= threshold)), 3),
        "compatible": len(compatible),
        "compatible_superseded": int(np.sum(compatible >= threshold)),
    }


def held_out_rates(
    dev: list[dict[str, Any]], scores: np.ndarray, held_out: str
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The development figures with the threshold chosen on the cases whose ids do not start with ``held_out``, and
    the held-out cases' figures at that threshold (``None`` when there are none)."""
    held = np.array([bool(held_out) and r["id"].startswith(held_out) for r in dev])
    fit = case_rates([r for r, h in zip(dev, held, strict=True) if not h], scores[~held])
    if not held.any():
        return fit, None
    out = case_rates([r for r, h in zip(dev, held, strict=True) if h], scores[held], fit["threshold"])
    return fit, {k: v for k, v in out.items() if k != "threshold"}


def onnx_scores(path: Path, tok: Any, rows: list[dict[str, Any]]) -> np.ndarray:
    """The file's scores, one pair per run as at run time (dynamic int8 quantization scales activations per run,
    so a pair batched with others would score otherwise)."""
    import onnxruntime as ort
    import train_dedup_crossencoder as shared

    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    out = np.zeros(len(rows))
    for i, row in enumerate(rows):
        feeds = shared.collate(shared.encode(tok, [row["memory"]], [row["said"]]))
        out[i] = session.run(None, {k: v.numpy() for k, v in feeds.items()})[0][0]
    return out


def cmd_train(args: argparse.Namespace) -> None:
    import torch
    import train_dedup_crossencoder as shared

    torch.set_num_threads(args.threads)
    torch.set_num_interop_threads(1)
    train = load_rows(args.pairs / "train.jsonl", training=True)
    dev = load_rows(args.pairs / "dev.jsonl", training=False)
    memory, said = [r["memory"] for r in train], [r["said"] for r in train]
    target = np.array([5.0 if r["update"] else 0.0 for r in train])  # fit() trains towards score / 5
    log(f"{len(train)} training pairs ({int((target > 0).sum())} updates), {len(dev)} development pairs")
    tok = shared.tokenizer(128)
    frozen = 6 - args.train_layers
    base = shared.new_model(args.seed)
    states = shared.lower_states(base, tok, memory, said, frozen)
    dev_states = shared.lower_states(base, tok, [r["memory"] for r in dev], [r["said"] for r in dev], frozen)
    figures: dict[int, dict[str, Any]] = {}

    def on_epoch(model: Any, epoch: int) -> None:
        figures[epoch], held = held_out_rates(dev, shared.predict(model, dev_states, frozen), args.held_out)
        log(f"epoch {epoch}: development set less {args.held_out}* {figures[epoch]}; held out {held}")

    fit_args = argparse.Namespace(
        layers=6, train_layers=args.train_layers, seed=args.seed, epochs=args.epochs, batch=args.batch, lr=args.lr
    )
    started = time.perf_counter()
    model = shared.fit((states, states), target, fit_args, on_epoch)  # one order: the relation has a direction
    log(f"trained in {time.perf_counter() - started:.0f} s")
    if args.export:
        fp32 = args.export.with_suffix(".fp32.onnx")
        export_fp32(model, tok, fp32, memory[:4], said[:4])
        quantize(fp32, args.export)
        recipe = {"epochs": args.epochs, "layers_trained": args.train_layers, "lr": args.lr, "batch": args.batch}
        trained_on = {"pairs": len(train), "updates": int((target > 0).sum())}
        write_card(args.export, dev, trained_on, recipe, args.held_out)


def export_fp32(model: Any, tok: Any, out: Path, memory: list[str], said: list[str]) -> None:
    """ONNX (opset 17) with a sigmoid ``score`` output, kept in fp32 (the file quantization starts from)."""
    import torch
    import train_dedup_crossencoder as shared

    model.eval()

    class Scorer(torch.nn.Module):
        def __init__(self, inner: Any) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            logits = self.inner(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids)
            return torch.sigmoid(logits.logits[:, 0])

    sample = shared.collate(shared.encode(tok, memory, said))
    names = ["input_ids", "attention_mask", "token_type_ids"]
    torch.onnx.export(
        Scorer(model),
        tuple(sample[n] for n in names),
        str(out),
        input_names=names,
        output_names=["score"],
        dynamic_axes={**{n: {0: "batch", 1: "sequence"} for n in names}, "score": {0: "batch"}},
        opset_version=17,
        dynamo=False,
    )
    log(f"wrote {out}")


def quantize(fp32: Path, out: Path) -> None:
    """Dynamic int8, one scale per output channel: the fine-tuned layers' weights spread unevenly across channels,
    and a single scale per tensor moved the development figure by 0.15 (0.700 → 0.549)."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantize_dynamic(str(fp32), str(out), weight_type=QuantType.QInt8, per_channel=True)
    log(f"wrote {out}: {out.stat().st_size} bytes")


def cmd_quantize(args: argparse.Namespace) -> None:
    quantize(args.fp32, args.model)
    cmd_card(args)


def write_card(
    model: Path, dev: list[dict[str, Any]], trained_on: dict[str, int], recipe: dict[str, Any], held_out: str
) -> None:
    """The card beside ``model``: its sha256, and the threshold and figures of the int8 file's own development
    scores (quantization moves scores a little, so the threshold is chosen on the file that ships), the held-out
    cases apart."""
    import train_dedup_crossencoder as shared

    final, held = held_out_rates(dev, onnx_scores(model, shared.tokenizer(128), dev), held_out)
    chosen = "the development set less the held-out ids, never trained on"
    card = {
        "sha256": hashlib.sha256(model.read_bytes()).hexdigest(),
        "threshold": final.pop("threshold"),
        "about": {
            "base": "sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0)",
            "trained_on": trained_on,
            "recipe": recipe,
            "threshold": {"target_fp": TARGET_FP, "chosen_with": chosen},
            "development": final,
            **({"held_out": {"cases": f"ids {held_out}* of the development set", **held}} if held else {}),
            "how": "scripts/train_update_crossencoder.py",
        },
    }
    path = model.with_name(CARD)
    path.write_text(json.dumps(card, indent=1) + "\n", encoding="utf-8")
    log(f"wrote {path}: {json.dumps(card)}")


def cmd_card(args: argparse.Namespace) -> None:
    train = load_rows(args.pairs / "train.jsonl", training=True)
    dev = load_rows(args.pairs / "dev.jsonl", training=False)
    recipe = {"epochs": args.epochs, "layers_trained": args.train_layers, "lr": args.lr, "batch": args.batch}
    trained_on = {"pairs": len(train), "updates": sum(r["update"] for r in train)}
    write_card(args.model, dev, trained_on, recipe, args.held_out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    pairs = sub.add_parser("pairs")
    pairs.add_argument("--out", type=Path, required=True, help="a folder: train.jsonl and dev.jsonl")
    train, card = sub.add_parser("train"), sub.add_parser("card", help="(re)write the card of an exported model")
    again = sub.add_parser("quantize", help="quantize the kept fp32 file again, then write the card")
    again.add_argument("--fp32", type=Path, required=True, help="the fp32 ONNX file the train step kept")
    for p in (train, card, again):
        p.add_argument("--pairs", type=Path, required=True, help="the folder written by the pairs step")
        p.add_argument("--epochs", type=int, default=3)
        p.add_argument("--train-layers", type=int, default=3, help="top layers trained (the others stay frozen)")
        p.add_argument("--lr", type=float, default=8e-5)
        p.add_argument("--batch", type=int, default=16)
        p.add_argument("--held-out", default="b8-", help="id prefix of the development cases kept out of the threshold")
    train.add_argument("--seed", type=int, default=13)
    train.add_argument("--threads", type=int, default=2)
    train.add_argument("--export", type=Path, help="write the int8 ONNX model here, its card beside it")
    for p in (card, again):
        p.add_argument("--model", type=Path, required=True, help="the int8 ONNX model")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if args.command == "pairs":
        asyncio.run(dump_pairs(args.out))
    elif args.command == "card":
        cmd_card(args)
    elif args.command == "quantize":
        cmd_quantize(args)
    else:
        cmd_train(args)


if __name__ == "__main__":
    main()
