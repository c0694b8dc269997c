"""Issue #36, sixteenth pass (a candidate): the airlock's learned detector on semantic features.

The shipped detector (`signoff.airlock.intent`) reads surface n-grams. This one reads the same
windows (runs of up to three sentences, and a long text's first 4000 characters) as the mean of
their tokens' static embeddings from the PyPI wheel `wordllama` 0.4.0.post1, which ships its
weights inside the wheel (`wordllama/weights/l2_supercat_256.safetensors`, 32,000 LLaMA-2
tokens x 256 dimensions, float16; the tokenizer `wordllama/tokenizers/l2_supercat_tokenizer_config.json`).
They are read straight from the installed package with `safetensors` and `tokenizers`:
`WordLlama.load()` looks for the tokenizer elsewhere and downloads it from the Hugging Face hub,
which the airlock must never do. A tiny MLP (256 -> 32 tanh -> 1, numpy, class-balanced
minibatch SGD, seeded) scores a window; its weights are a small JSON file.

Trained from the same sources as the shipped detector (`airlock_train.load_all`, the same
mirrors, packages and options), the same training windows (`airlock_train.feature_sets`: a
text's whole, an honest report's aimed windows first, a planted attack's own windows), and the
same threshold rule (`airlock_train.macro_threshold` over honest texts scored by a model trained
without their source group and its near copies, strongest aimed window as the scanner reads it).

    OPENBLAS_NUM_THREADS=1 python bench/airlock_embed.py --out DIR [airlock_train.py's --mirror ... options]

Byte for byte: inputs are the sorted examples of `airlock_train.prepare`, the initial weights and
the minibatch order come from one seeded generator, numpy runs in one thread (the script sets it
before numpy is imported), and the weights are written as float32 bytes in base64 with the JSON's
keys sorted. `--embed-cache DIR` keeps the embedded windows on disk by the corpus's SHA-256.
The variants of docs/airlock.md's sixteenth pass: AIRLOCK_EMBED_POOL=mean+max (the elementwise
maximum of the tokens' vectors too), AIRLOCK_EMBED_HIDDEN, AIRLOCK_EMBED_EPOCHS."""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # one summation order, the same bytes every time
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("RAYON_NUM_THREADS", "1")

import argparse
import base64
import hashlib
import importlib.util
import json
import math
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import airlock_train as tr  # noqa: E402

from signoff.airlock import intent, signals  # noqa: E402

WORDLLAMA = "wordllama 0.4.0.post1"
WEIGHTS = "weights/l2_supercat_256.safetensors"
TOKENIZER = "tokenizers/l2_supercat_tokenizer_config.json"
DIMS = 256
MAX_POOL = os.environ.get("AIRLOCK_EMBED_POOL", "mean") == "mean+max"
FEATURES = 2 * DIMS if MAX_POOL else DIMS
HIDDEN = int(os.environ.get("AIRLOCK_EMBED_HIDDEN", "32"))
EPOCHS = int(os.environ.get("AIRLOCK_EMBED_EPOCHS", "6"))
BATCH = 128
RATE = 0.05
MOMENTUM = 0.9
L2 = 1e-4
SEED = 36
DEFAULT_TARGET = tr.TARGET_FALSE_POSITIVES


# --- the embeddings ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Table:
    vectors: np.ndarray  # (32000, 256) float32
    tokenizer: object  # tokenizers.Tokenizer


@cache
def table() -> Table:
    """The wheel's own files, read without importing wordllama (nothing is downloaded)."""
    from safetensors.numpy import load_file
    from tokenizers import Tokenizer

    spec = importlib.util.find_spec("wordllama")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("wordllama is not installed: pip install wordllama==0.4.0.post1")
    root = Path(next(iter(spec.submodule_search_locations)))
    vectors = load_file(str(root / WEIGHTS))["embedding.weight"].astype(np.float32)
    return Table(vectors, Tokenizer.from_file(str(root / TOKENIZER)))


def sums(texts: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per text: the sum of its tokens' vectors (float64), how many tokens it has, and the
    elementwise maximum over its tokens (a salient word is not averaged away by a long report)."""
    current = table()
    encoded = current.tokenizer.encode_batch(texts, add_special_tokens=False)  # type: ignore[attr-defined]
    out = np.zeros((len(texts), DIMS), dtype=np.float64)
    counts = np.zeros(len(texts), dtype=np.float64)
    peaks = np.full((len(texts), DIMS), -np.inf, dtype=np.float32)
    for i, one in enumerate(encoded):
        ids = one.ids
        if ids:
            rows = current.vectors[ids]
            out[i] = rows.sum(axis=0, dtype=np.float64)
            counts[i] = len(ids)
            peaks[i] = rows.max(axis=0)
    return out, counts, peaks


def _unit(total: np.ndarray, count: float, peak: np.ndarray, max_pool: bool) -> np.ndarray:
    if count == 0:
        return np.zeros(2 * DIMS if max_pool else DIMS, dtype=np.float32)
    mean = total / count
    norm = float(np.linalg.norm(mean)) or 1.0
    if not max_pool:
        return (mean / norm).astype(np.float32)
    return np.concatenate([mean / norm, peak]).astype(np.float32)


def window_vectors(plain: list[str], max_pool: bool = MAX_POOL) -> list[tuple[int, int, np.ndarray]]:
    """(first, last, vector) for the windows `intent.windows` scores, in its order (not distinct):
    every run of up to WINDOW sentences, then the whole text when it has more than WINDOW."""
    if not plain:
        return []
    distinct = sorted(set(plain))
    totals, counts, peaks = sums(distinct)
    at = {sentence: i for i, sentence in enumerate(distinct)}
    keys = [at[s] for s in plain]
    out = []
    for start in range(len(keys)):
        run = keys[start : start + intent.WINDOW]
        total = totals[run].sum(axis=0)
        vector = _unit(total, float(counts[run].sum()), peaks[run].max(axis=0), max_pool)
        out.append((start + 1, start + len(run), vector))
        if start + intent.WINDOW >= len(keys):
            break
    if len(keys) > intent.WINDOW:
        whole_total, whole_count, whole_peak = sums([" ".join(plain)[: intent.WHOLE_CHARS]])
        out.append((1, len(keys), _unit(whole_total[0], float(whole_count[0]), whole_peak[0], max_pool)))
    return out


# --- the classifier -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Net:
    w1: np.ndarray  # (DIMS, HIDDEN)
    b1: np.ndarray
    w2: np.ndarray  # (HIDDEN,)
    b2: float
    threshold: float = 1.0
    max_pool: bool = False

    def probabilities(self, x: np.ndarray) -> np.ndarray:
        hidden = np.tanh(x.astype(np.float64) @ self.w1 + self.b1)
        margin = np.clip(hidden @ self.w2 + self.b2, -40.0, 40.0)
        return 1.0 / (1.0 + np.exp(-margin))


def fit(x: np.ndarray, y: np.ndarray, weight: np.ndarray) -> Net:
    """Class-balanced minibatch SGD with momentum, seeded; float64 throughout."""
    rng = np.random.default_rng(SEED)
    w1 = rng.normal(0.0, 1.0 / math.sqrt(FEATURES), (FEATURES, HIDDEN))
    b1 = np.zeros(HIDDEN)
    w2 = rng.normal(0.0, 1.0 / math.sqrt(HIDDEN), HIDDEN)
    b2 = 0.0
    positives = float(weight[y == 1].sum()) or 1.0
    negatives = float(weight[y == 0].sum()) or 1.0
    balanced = weight * np.where(y == 1, len(y) / (2.0 * positives), len(y) / (2.0 * negatives))
    velocity = [np.zeros_like(w1), np.zeros_like(b1), np.zeros_like(w2), 0.0]
    xs = x.astype(np.float64)
    for epoch in range(EPOCHS):
        order = rng.permutation(len(y))
        rate = RATE / (1.0 + 0.5 * epoch)
        for start in range(0, len(order), BATCH):
            batch = order[start : start + BATCH]
            xb, yb, wb = xs[batch], y[batch], balanced[batch]
            hidden = np.tanh(xb @ w1 + b1)
            probability = 1.0 / (1.0 + np.exp(-np.clip(hidden @ w2 + b2, -40.0, 40.0)))
            grad_out = (probability - yb) * wb / len(batch)
            grad_w2 = hidden.T @ grad_out + L2 * w2
            grad_b2 = float(grad_out.sum())
            grad_hidden = np.outer(grad_out, w2) * (1.0 - hidden * hidden)
            grad_w1 = xb.T @ grad_hidden + L2 * w1
            grad_b1 = grad_hidden.sum(axis=0)
            grads = [grad_w1, grad_b1, grad_w2, grad_b2]
            for k, grad in enumerate(grads):
                velocity[k] = MOMENTUM * velocity[k] - rate * grad
            w1 = w1 + velocity[0]
            b1 = b1 + velocity[1]
            w2 = w2 + velocity[2]
            b2 = b2 + float(velocity[3])
    return Net(w1, b1, w2, b2)


def _pack(array: np.ndarray) -> str:
    return base64.b64encode(np.ascontiguousarray(array, dtype="<f4").tobytes()).decode("ascii")


def _unpack(blob: str, shape: tuple[int, ...]) -> np.ndarray:
    return np.frombuffer(base64.b64decode(blob), dtype="<f4").astype(np.float64).reshape(shape)


def dump(net: Net, manifest_sha256: str) -> str:
    data = {
        "embeddings": WORDLLAMA + " " + WEIGHTS,
        "hidden": HIDDEN,
        "features": FEATURES,
        "pool": "mean+max" if MAX_POOL else "mean",
        "w1": _pack(net.w1),
        "b1": _pack(net.b1),
        "w2": _pack(net.w2),
        "b2": round(float(np.float32(net.b2)), 9),
        "threshold": net.threshold,
        "manifest_sha256": manifest_sha256,
    }
    return json.dumps(data, sort_keys=True) + "\n"


def load(path: Path) -> Net:
    data = json.loads(path.read_text(encoding="utf-8"))
    hidden = int(data["hidden"])
    features = int(data.get("features", DIMS))
    return Net(_unpack(data["w1"], (features, hidden)), _unpack(data["b1"], (hidden,)), _unpack(data["w2"], (hidden,)),
               float(data["b2"]), float(data["threshold"]), data.get("pool") == "mean+max")


def strongest(plain: list[str], folded: list[str], net: Net, aimed: list[bool] | None = None) -> tuple[float, int, int]:
    """As `intent.strongest`: the highest probability over the windows aimed at a reader."""
    chosen = [(first, last, vector) for first, last, vector in window_vectors(plain, net.max_pool)
              if aimed is None or any(aimed[first - 1 : last])]
    if not chosen:
        return (0.0, 0, 0)
    probabilities = net.probabilities(np.stack([vector for _, _, vector in chosen]))
    best = int(np.argmax(probabilities))
    return (float(probabilities[best]), chosen[best][0], chosen[best][1])


# --- training -----------------------------------------------------------------------------------------


def training_windows(example: tr.Example) -> list[np.ndarray]:
    """The vectors of the windows `airlock_train.feature_sets` trains the n-gram model on."""
    plain, folded = tr.views(example.text)
    if not plain:
        return []
    every = window_vectors(plain)
    out = [every[-1][2]] if len(plain) > intent.WINDOW else [every[0][2]]
    if example.label == 0 and len(plain) > intent.WINDOW:
        aimed = signals.addressed(plain, folded)
        ranked = sorted(every[:-1], key=lambda w: not any(aimed[w[0] - 1 : w[1]]))
        out += [vector for _, _, vector in ranked[: tr.MAX_WINDOWS]]
    if example.planted and len(plain) > intent.WINDOW:
        attack = set(tr.views(example.planted)[0])
        inside = example.source == tr.TOOL_ATTACKS or example.source.startswith(tr.INSIDE_SOURCES)
        parts = [sentence for sentence in attack if len(sentence) >= tr.MIN_PART] if inside else []
        for first, last, vector in every[:-1]:
            window = plain[first - 1 : last]
            if attack & set(window) or any(part in line for part in parts for line in window):
                out.append(vector)
    return out


def aimed_windows(example: tr.Example) -> np.ndarray:
    """The vectors of the windows the scanner would score (distinct, aimed at a reader)."""
    plain, folded = tr.views(example.text)
    if not plain:
        return np.zeros((0, FEATURES), dtype=np.float32)
    aimed = signals.addressed(plain, folded)
    seen: set[bytes] = set()
    out = []
    for first, last, vector in window_vectors(plain):
        if any(aimed[first - 1 : last]) and vector.tobytes() not in seen:
            seen.add(vector.tobytes())
            out.append(vector)
    return np.stack(out) if out else np.zeros((0, FEATURES), dtype=np.float32)


@dataclass
class Embedded:
    x: np.ndarray  # training rows
    y: np.ndarray
    weight: np.ndarray
    owner: np.ndarray  # example index of each row
    honest: dict[int, np.ndarray]  # example index -> its aimed windows (honest examples only)


def embed_all(examples: list[tr.Example], cache_dir: Path | None, digest: str) -> Embedded:
    pool = "mm" if MAX_POOL else "m"
    path = cache_dir / f"embedded-{digest[:16]}-{pool}.npz" if cache_dir else None
    if path and path.exists():
        data = np.load(path)
        honest = {int(k[2:]): data[k] for k in data.files if k.startswith("h_")}
        return Embedded(data["x"], data["y"], data["weight"], data["owner"], honest)
    rows: list[np.ndarray] = []
    ys: list[int] = []
    weights: list[float] = []
    owners: list[int] = []
    honest: dict[int, np.ndarray] = {}
    heavy = set(tr.HEAVY_HONEST)
    started = time.monotonic()
    for i, example in enumerate(examples):
        for vector in training_windows(example):
            rows.append(vector)
            ys.append(example.label)
            weights.append(float(tr.HEAVY) if example.source in heavy else 1.0)
            owners.append(i)
        if example.label == 0:
            honest[i] = aimed_windows(example)
        if i % 2000 == 0:
            print(f"  embedded {i}/{len(examples)} ({time.monotonic() - started:.0f} s)", file=sys.stderr, flush=True)
    out = Embedded(np.stack(rows), np.array(ys, dtype=np.float64), np.array(weights), np.array(owners), honest)
    if path:
        path.parent.mkdir(parents=True, exist_ok=True)
        np.savez(path, x=out.x, y=out.y, weight=out.weight, owner=out.owner,
                 **{f"h_{k}": v for k, v in honest.items()})
    return out


def score_texts(net: Net, windows: np.ndarray) -> float:
    return float(net.probabilities(windows).max()) if len(windows) else 0.0


def honest_folds(examples: list[tr.Example]) -> Iterator[tuple[str, set[int], set[int]]]:
    """(group, its examples, what a model scoring them must not see: them and their near copies) for
    every source group with honest texts, as `airlock_train`'s threshold rule folds them."""
    for group in sorted({tr.group_of(e.source) for e in examples if e.label == 0}):
        members = {i for i, e in enumerate(examples) if tr.group_of(e.source) == group}
        yield group, members, members | tr.near_copies(examples, group)


def out_of_source_threshold(examples: list[tr.Example], data: Embedded) -> tuple[float, dict[str, list[float]]]:
    """`airlock_train`'s rule: each honest group scored by a net trained without it and its near copies."""
    by_group: dict[str, list[float]] = {}
    for group, members, excluded in honest_folds(examples):
        keep = np.array([int(owner) not in excluded for owner in data.owner])
        net = fit(data.x[keep], data.y[keep], data.weight[keep])
        by_group[group] = [score_texts(net, data.honest[i]) for i in sorted(members) if examples[i].label == 0]
        print(f"  fold {group}: {len(by_group[group])} honest", file=sys.stderr, flush=True)
    return tr.macro_threshold(by_group), by_group


def source_counts(examples: list[tr.Example]) -> dict[str, dict[str, int]]:
    counts: dict[str, list[int]] = {}
    for example in examples:
        counts.setdefault(example.source, [0, 0])[example.label] += 1
    return {source: {"attacks": c[1], "honest": c[0]} for source, c in sorted(counts.items())}


def corpus_digest(examples: list[tr.Example]) -> str:
    """SHA-256 of the sorted training corpus (a candidate's cache key and manifest entry)."""
    corpus = hashlib.sha256()
    for example in examples:
        corpus.update(f"{example.source}\0{example.label}\0{example.text}\0".encode())
    return corpus.hexdigest()


def write_candidate(out: Path, stem: str, manifest: dict[str, object], dump_model: Callable[[str], str],
                    threshold: float, by_group: dict[str, list[float]]) -> None:
    """Write STEM_manifest.json and STEM_model.json (which records the manifest's SHA-256), keys sorted,
    and print the out-of-source rates the threshold gives each honest group."""
    manifest_bytes = (json.dumps(manifest, indent=1, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{stem}_manifest.json").write_bytes(manifest_bytes)
    (out / f"{stem}_model.json").write_text(dump_model(hashlib.sha256(manifest_bytes).hexdigest()), encoding="utf-8")
    rates = {group: sum(s >= threshold for s in scores) / len(scores) for group, scores in by_group.items() if scores}
    print(json.dumps({"threshold": threshold, "out_of_source_rates": rates}, indent=1))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mirror", action="append", default=[], help="owner/name=GIT_DIR@COMMIT (repeatable)")
    parser.add_argument("--package", action="append", default=[], choices=tr.OPTIONAL_PACKAGES)
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache/signoff-eval")
    parser.add_argument("--embed-cache", type=Path, default=None, help="keep the embedded windows here")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--tool-outputs", action="store_true")
    parser.add_argument("--bare-orders", action="store_true")
    parser.add_argument("--requests", action="store_true")
    parser.add_argument("--target", type=float, default=DEFAULT_TARGET,
                        help="the honest groups' average out-of-source rate the threshold allows (beside the n-gram "
                        "model, as an add-on: a tenth of its 0.01)")
    args = parser.parse_args()
    tr.TARGET_FALSE_POSITIVES = args.target  # macro_threshold reads it
    examples, sources = tr.load_all(args.mirror, args.cache, tuple(args.package), with_tool_outputs=args.tool_outputs,
                                    bare_orders=args.bare_orders, requests=args.requests)
    examples = sorted(set(examples), key=lambda e: (e.source, e.label, e.text))
    digest = corpus_digest(examples)
    print(f"{len(examples)} examples, corpus {digest}", file=sys.stderr, flush=True)
    data = embed_all(examples, args.embed_cache, digest)
    print(f"{len(data.y)} training windows", file=sys.stderr, flush=True)
    threshold, by_group = out_of_source_threshold(examples, data)
    net = fit(data.x, data.y, data.weight)
    net = Net(net.w1, net.b1, net.w2, net.b2, threshold)
    manifest = {
        "algorithm": f"MLP {FEATURES}-{HIDDEN} tanh-1, minibatch SGD {BATCH} with momentum {MOMENTUM}, rate {RATE}, "
        f"{EPOCHS} epochs, L2 {L2}, class-balanced, seed {SEED}",
        "features": f"mean of the window's token vectors ({WORDLLAMA}, {WEIGHTS}), unit length"
        + (", and their elementwise maximum" if MAX_POOL else ""),
        "threshold_rule": "airlock_train.macro_threshold over honest texts scored out of source"
        + (f", at {args.target}" if args.target != DEFAULT_TARGET else ""),
        "threshold": threshold,
        "examples": source_counts(examples),
        "corpus_sha256": digest,
        "sources": sources,
    }
    write_candidate(args.out, "embed", manifest, lambda sha: dump(net, sha), threshold, by_group)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
