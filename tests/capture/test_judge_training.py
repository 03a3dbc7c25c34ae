"""The update cross-encoder's trainer (``scripts/train_update_crossencoder.py``) chooses the card's threshold on the
development set less its held-out cases: a threshold that saw them would make their figure a fitted one."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import numpy as np

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "train_update_crossencoder.py"


def _trainer() -> ModuleType:
    spec = importlib.util.spec_from_file_location("train_update_crossencoder", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _row(case: str, update: bool) -> dict[str, object]:
    return {"id": case, "update": update, "memory": "User lives in York.", "said": "…", "nearest": True, "cross": False}


def test_the_threshold_is_chosen_without_the_held_out_cases() -> None:
    trainer = _trainer()
    rows = [_row(f"d-{i}", i % 2 == 0) for i in range(200)] + [_row("b8-c", False), _row("b8-u", True)]
    scores = np.array([0.9 if i % 2 == 0 else i / 1000 for i in range(200)] + [0.99, 0.95])
    fitted, held = trainer.held_out_rates(rows, scores, "b8-")
    # 100 compatible cases other than b8-*: the threshold supersedes at most 2 of them, all below 0.2
    assert fitted["threshold"] < 0.2 and fitted["compatible"] == 100 and fitted["compatible_superseded"] <= 2
    # the held-out compatible case scores above every other: it is superseded, not moved out of reach
    assert held == {"updates": 1, "updates_applied": 1.0, "compatible": 1, "compatible_superseded": 1}
    everything, none = trainer.held_out_rates(rows, scores, "")
    assert none is None and everything["compatible"] == 101
