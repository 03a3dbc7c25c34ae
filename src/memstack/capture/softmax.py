"""Fitting the capture head's classifiers over sentence embeddings (:mod:`memstack.capture.head`): a multinomial
logistic regression (:func:`fit_softmax`) and a network with one hidden layer (:func:`fit_mlp`). Each example is
weighted as the caller says (how the classes share the loss is the head's own decision). Training code: nothing at
run time calls it.

The network exists because a linear read of the embedding could not tell the two halves of the capture head's data
apart: bare fragments about the user ("celiac fyi", "two cats, both rescues") and fragments of the same surface form
that are not ("celiac bread recipe?", "two cats fighting in the video lol") differ by what the fragment is about and
whose it is, which no single direction of the embedding carries. One tanh layer of :data:`HIDDEN` units, full-batch
Adam from a seeded start: deterministic, a few seconds to fit, and at run time one more small matrix product."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

__all__ = ["HIDDEN", "Network", "fit_mlp", "fit_softmax"]

Matrix = npt.NDArray[np.float32]
#: Hidden units of the network.
HIDDEN = 64
#: The network's parameters: hidden weights ``(hidden, dim)`` and bias, output weights ``(k, hidden)`` and bias.
Network = tuple[Matrix, Matrix, Matrix, Matrix]


def fit_softmax(
    vectors: Matrix, y: npt.NDArray[np.int64], k: int, sample: npt.NDArray[np.float64], *, l2: float, steps: int
) -> tuple[Matrix, Matrix]:
    """Weights ``(k, dim)`` and bias ``(k,)`` for labels ``y`` (indices below ``k``), example ``i`` weighted by
    ``sample[i]``; full-batch gradient descent with momentum, L2-regularised."""
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


def fit_mlp(
    vectors: Matrix,
    y: npt.NDArray[np.int64],
    k: int,
    sample: npt.NDArray[np.float64],
    *,
    l2: float,
    steps: int,
    hidden: int = HIDDEN,
    lr: float = 0.01,
    seed: int = 0,
) -> Network:
    """A tanh hidden layer of ``hidden`` units and a softmax over ``k`` labels, fitted by full-batch Adam from a
    start drawn with ``seed`` (so the same data gives the same network); L2 on both weight matrices."""
    rng = np.random.default_rng(seed)
    x = vectors.astype(np.float32)
    n, dim = x.shape
    params = [
        (rng.standard_normal((hidden, dim)) / np.sqrt(dim)).astype(np.float32),
        np.zeros(hidden, dtype=np.float32),
        (rng.standard_normal((k, hidden)) / np.sqrt(hidden)).astype(np.float32),
        np.zeros(k, dtype=np.float32),
    ]
    first = [np.zeros_like(p) for p in params]
    second = [np.zeros_like(p) for p in params]
    onehot = np.eye(k, dtype=np.float32)[y]
    weight = (sample / n).astype(np.float32)[:, None]
    for t in range(1, steps + 1):
        w1, b1, w2, b2 = params
        h = np.tanh(x @ w1.T + b1)
        logits = h @ w2.T + b2
        logits -= logits.max(axis=1, keepdims=True)
        p = np.exp(logits)
        p /= p.sum(axis=1, keepdims=True)
        g = (p - onehot) * weight
        gh = (g @ w2) * (1.0 - h * h)
        grads = [gh.T @ x + l2 * w1, gh.sum(axis=0), g.T @ h + l2 * w2, g.sum(axis=0)]
        for i, grad in enumerate(grads):
            first[i] = 0.9 * first[i] + 0.1 * grad
            second[i] = 0.999 * second[i] + 0.001 * grad * grad
            step = lr * (first[i] / (1 - 0.9**t)) / (np.sqrt(second[i] / (1 - 0.999**t)) + 1e-8)
            params[i] = (params[i] - step).astype(np.float32)
    return params[0], params[1], params[2], params[3]
