"""Fitting a multinomial logistic regression over sentence embeddings: the trainer of the capture head
(:mod:`memstack.capture.head`). Full-batch gradient descent with momentum, L2-regularised, each example weighted as
the caller says (how the classes share the loss is the head's own decision). Training code: nothing at run time
calls it."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

__all__ = ["fit_softmax"]

Matrix = npt.NDArray[np.float32]


def fit_softmax(
    vectors: Matrix, y: npt.NDArray[np.int64], k: int, sample: npt.NDArray[np.float64], *, l2: float, steps: int
) -> tuple[Matrix, Matrix]:
    """Weights ``(k, dim)`` and bias ``(k,)`` for labels ``y`` (indices below ``k``), example ``i`` weighted by
    ``sample[i]``."""
    x = vectors.astype(np.float64)
    n = len(y)
    onehot = np.eye(k)[y]
    w = np.zeros((k, x.shape[1]))
    b = np.zeros(k)
    vw, vb = np.zeros_like(w), np.zeros_like(b)
    lr, momentum = 2.0, 0.9
    for _ in range(steps):
        logits = x @ w.T + b
        logits -= logits.max(axis=1, keepdims=True)
        p = np.exp(logits)
        p /= p.sum(axis=1, keepdims=True)
        g = (p - onehot) * sample[:, None] / n
        vw = momentum * vw - lr * (g.T @ x + l2 * w)
        vb = momentum * vb - lr * g.sum(axis=0)
        w += vw
        b += vb
    return w.astype(np.float32), b.astype(np.float32)
