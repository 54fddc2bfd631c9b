"""Linear classifier heads over sentence embeddings: the learned part of the learned extractor.

Two multinomial logistic-regression heads — memory type (preference, fact, procedural, none) and
intent key — trained offline by ``scripts/train_extractor.py`` (scikit-learn, a dev dependency)
and shipped as plain weight arrays, so the worker needs numpy only: a softmax over ``x @ W.T + b``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

NO_INTENT = "other"  # the intent head's label for "no single-valued intent": an empty intent key


@dataclass(frozen=True)
class Head:
    """One softmax head: ``labels[i]`` has weight row ``weights[i]`` and bias ``bias[i]``."""

    labels: tuple[str, ...]
    weights: npt.NDArray[np.float32]
    bias: npt.NDArray[np.float32]

    def __post_init__(self) -> None:
        if (
            self.weights.ndim != 2
            or self.weights.shape[0] != len(self.labels)
            or self.bias.shape != (len(self.labels),)
        ):
            raise ValueError(f"head shape mismatch: {len(self.labels)} labels, weights {self.weights.shape}")

    @property
    def dim(self) -> int:
        return int(self.weights.shape[1])

    def probabilities(self, vectors: npt.NDArray[np.float32]) -> npt.NDArray[np.float64]:
        """Row-wise class probabilities (softmax of the logits), shape (n, len(labels))."""
        logits = vectors.astype(np.float64) @ self.weights.T.astype(np.float64) + self.bias.astype(np.float64)
        logits -= logits.max(axis=1, keepdims=True)
        exp = np.exp(logits)
        result: npt.NDArray[np.float64] = exp / exp.sum(axis=1, keepdims=True)
        return result


@dataclass(frozen=True)
class Prediction:
    """The heads' reading of one sentence: most likely type and intent, with their probabilities."""

    type: str
    type_probabilities: dict[str, float]
    intent: str
    intent_probability: float

    @property
    def type_probability(self) -> float:
        return self.type_probabilities[self.type]

    def probability(self, *types: str) -> float:
        """The probability that the sentence is any of ``types``."""
        return sum(self.type_probabilities.get(t, 0.0) for t in types)

    @property
    def intent_key(self) -> str:
        return "" if self.intent == NO_INTENT else self.intent


@dataclass(frozen=True)
class SentenceHeads:
    """The type head and the intent head, over embeddings of one dimension."""

    type_head: Head
    intent_head: Head
    embedder: str

    def __post_init__(self) -> None:
        if self.type_head.dim != self.intent_head.dim:
            raise ValueError("type and intent heads disagree on the embedding dimension")
        if "none" not in self.type_head.labels:
            raise ValueError("the type head needs a 'none' label")

    def predict(self, vectors: npt.NDArray[np.float32]) -> list[Prediction]:
        if vectors.shape[0] == 0:
            return []
        types = self.type_head.probabilities(vectors)
        intents = self.intent_head.probabilities(vectors)
        result = []
        for t_row, i_row in zip(types, intents, strict=True):
            t, i = int(np.argmax(t_row)), int(np.argmax(i_row))
            result.append(
                Prediction(
                    type=self.type_head.labels[t],
                    type_probabilities={label: float(p) for label, p in zip(self.type_head.labels, t_row, strict=True)},
                    intent=self.intent_head.labels[i],
                    intent_probability=float(i_row[i]),
                )
            )
        return result


def heads_from_arrays(arrays: dict[str, npt.NDArray[np.generic]], embedder: str) -> SentenceHeads:
    """Build heads from the arrays saved by the training script (``type_*`` and ``intent_*``)."""

    def head(prefix: str) -> Head:
        labels: Sequence[str] = [str(label) for label in arrays[f"{prefix}_labels"]]
        return Head(
            tuple(labels),
            np.asarray(arrays[f"{prefix}_weights"], dtype=np.float32),
            np.asarray(arrays[f"{prefix}_bias"], dtype=np.float32),
        )

    return SentenceHeads(head("type"), head("intent"), embedder)
