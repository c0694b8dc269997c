"""The learned detector: does a stretch of text read as instructions aimed at its reader?

A logistic regression over hashed features of the scanning views: words and word pairs of the
folded view, and character 3- and 4-grams of the plain view (so Chinese, Japanese, Hindi and other
scripts without spaces are read too). Its weights were trained by `bench/airlock_train.py` from
public corpora named by repository and commit in the manifest, byte-reproducibly; they ship as
`intent_model.json` (int16 weights, zlib, base64) and are loaded once, on first use, with the
standard library only.

The scanner scores every window of up to three consecutive sentences and the whole text (its
first `WHOLE_CHARS` characters); a window above the shipped threshold fires `instruction_intent`
and the hit names the sentences, never the words. `explain` lists the n-grams that pushed a text
up, for the owner's side and the bench, never for the public side."""

from __future__ import annotations

import base64
import itertools
import json
import math
import zlib
from array import array
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from signoff.airlock import intent_shape

BITS = 18
BUCKETS = 1 << BITS
WINDOW = 3
WHOLE_CHARS = 4000
MODEL_FILE = Path(__file__).resolve().parent / "intent_model.json"


def grams(plain: str, folded: str, *, shape: bool = False) -> list[str]:
    """The features of one text, as strings: words, word pairs, character 3- and 4-grams, and with
    `shape` (a model trained with them) the structural marks of `intent_shape`."""
    tokens = _tokens(folded)
    words = [word for word in tokens if any(ch.isalnum() for ch in word)]
    out = ["w " + word for word in words]
    out += ["b " + first + " " + second for first, second in itertools.pairwise(words)]
    padded = " " + " ".join(plain.split()) + " "
    for size in (3, 4):
        out += ["c " + padded[i : i + size] for i in range(len(padded) - size + 1)]
    if shape:
        out += intent_shape.marks(tokens)
    return out


def buckets(features: list[str]) -> set[int]:
    return {zlib.crc32(feature.encode("utf-8")) & (BUCKETS - 1) for feature in features}


def _tokens(text: str) -> list[str]:
    out: list[str] = []
    word: list[str] = []
    for ch in text:
        if ch.isalnum() or ch in "'_":
            word.append(ch)
        else:
            if word:
                out.append("".join(word))
                word = []
            if not ch.isspace():
                out.append(ch)
    if word:
        out.append("".join(word))
    return out


@dataclass(frozen=True)
class Model:
    weights: array  # type: ignore[type-arg]  # one per bucket, in units of `unit`
    bias: float
    threshold: float
    digest: str  # SHA-256 of the training manifest this model was built from
    unit: float = 1.0  # the shipped weights stay int16 in memory: loading is one copy of bytes
    shape: bool = False  # trained with the structural marks too (`intent_shape`); absent from older model files

    def margin(self, features: set[int]) -> float:
        if not features:
            return self.bias
        scale = self.unit / math.sqrt(len(features))
        return float(self.bias + scale * sum(self.weights[index] for index in features))

    def probability(self, features: set[int]) -> float:
        return 1.0 / (1.0 + math.exp(-max(-40.0, min(40.0, self.margin(features)))))


def encode_weights(weights: list[float]) -> tuple[str, float]:
    """int16 weights, zlib-compressed, base64: about a quarter of a MB for 2^18 buckets."""
    peak = max((abs(w) for w in weights), default=0.0) or 1.0
    scale = peak / 32767.0
    packed = array("h", (round(w / scale) for w in weights))
    return base64.b64encode(zlib.compress(packed.tobytes(), 9)).decode("ascii"), scale


def decode_weights(blob: str, scale: float) -> array:  # type: ignore[type-arg]
    packed = array("h")
    packed.frombytes(zlib.decompress(base64.b64decode(blob)))
    return array("d", (value * scale for value in packed))


def load(path: Path = MODEL_FILE) -> Model:
    data = json.loads(path.read_text(encoding="utf-8"))
    packed = array("h")
    packed.frombytes(zlib.decompress(base64.b64decode(data["weights"])))
    if len(packed) != BUCKETS:
        raise ValueError(f"{path.name}: {len(packed)} weights, expected {BUCKETS}")
    return Model(
        packed, float(data["bias"]), float(data["threshold"]), str(data["manifest_sha256"]), float(data["scale"]),
        bool(data.get("shape", False)),
    )


@cache
def model() -> Model:
    return load()


def windows(
    plain: list[str], folded: list[str], *, distinct: bool = False, shape: bool = False
) -> list[tuple[int, int, set[int]]]:
    """(first, last, features) for every run of up to WINDOW sentences, 1-based, plus the whole
    text (its first WHOLE_CHARS characters) when it has more than WINDOW sentences.

    Features are computed once per distinct sentence; with `distinct`, a run of the same sentences
    as an earlier run is left out (it has the same features, so the same score): a text of many
    repeated lines costs its distinct lines, not its length."""
    ids: dict[tuple[str, str], int] = {}
    per: list[set[int]] = []
    keys: list[int] = []
    for pair in zip(plain, folded, strict=True):
        if pair not in ids:
            ids[pair] = len(per)
            per.append(buckets(grams(*pair, shape=shape)))
        keys.append(ids[pair])
    out: list[tuple[int, int, set[int]]] = []
    seen: set[tuple[int, ...]] = set()
    for start in range(len(keys)):
        run = tuple(keys[start : start + WINDOW])
        if not distinct or run not in seen:
            seen.add(run)
            out.append((start + 1, start + len(run), set().union(*(per[key] for key in run))))
        if start + WINDOW >= len(keys):
            break
    if len(keys) > WINDOW:
        whole_plain = " ".join(plain)[:WHOLE_CHARS]
        whole_folded = " ".join(folded)[:WHOLE_CHARS]
        out.append((1, len(keys), buckets(grams(whole_plain, whole_folded, shape=shape))))
    return out


def strongest(
    plain: list[str], folded: list[str], current: Model | None = None, *, aimed: list[bool] | None = None
) -> tuple[float, int, int]:
    """The highest probability over the windows, and the sentences of that window (the first, on
    a tie); with `aimed` (per sentence: is it addressed to a reader?), only over windows with such
    a sentence. A repeated window scores as its first occurrence did, so it is scored once."""
    current = current or model()
    best = (0.0, 0, 0)
    for first, last, features in windows(plain, folded, distinct=True, shape=current.shape):
        if aimed is not None and not any(aimed[first - 1 : last]):
            continue
        probability = current.probability(features)
        if probability > best[0]:
            best = (probability, first, last)
    return best


def explain(plain: str, folded: str, top: int = 8, current: Model | None = None) -> list[tuple[str, float]]:
    """The n-grams of a text that pushed its score up most, with their weights (owner side only)."""
    current = current or model()
    seen: dict[str, float] = {}
    for feature in grams(plain, folded, shape=current.shape):
        index = zlib.crc32(feature.encode("utf-8")) & (BUCKETS - 1)
        seen[feature] = current.weights[index] * current.unit
    return sorted(seen.items(), key=lambda item: (-item[1], item[0]))[:top]
