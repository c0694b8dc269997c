"""Development figures for overrides in other languages and plain-word override orders (issue #36,
sixth pass): the shipped airlock, the same with its learned detector silenced (rules alone), and the
reading of `override.py` alone (its hits say `override cues`, `role assigned` or `dictated answer`),
on development sources only.

Attacks (as published, and each planted after a random line of an honest report, the way the final
run plants its attacks):
- XSafety's goal hijacks and role-play orders in nine languages (Jarviswang94/Multilingual_safety_benchmark;
  the shipped model was trained on them, so the whole airlock's figure on them is a training-set
  figure; the rules alone and the new reading were never written from them),
- TaskTracker's injection triggers, each followed by one of its secondary tasks translated into
  French, German, Arabic, Italian and Spanish (microsoft/TaskTracker; never trained on by the
  shipped model),
- the OWASP LLM Top 10 attack prompts of dagnelli/ai-ethical-hacker (seventh pass; never trained
  on): overrides, role play, prompt leaks asked as questions, web payloads (XSS, SQL, command,
  template injection) the model is asked to write, agent actions.
Honest: FastAPI's documentation in its 24 languages (tiangolo/fastapi), Bugzilla and webcompat reports
(mozilla/bugbug), GitHub issues of npm packages (InEx-Bug), our tune/hard negatives, and (ninth pass)
Sphinx's messages, tldr's pages and The Art of Command Line in their translations (with --held-out:
only the third of these no model is trained on).

The final-run sources (deepset, JailbreakBench, the payload lists ...) and the sources issue #36
holds out are never read here.

    python bench/airlock_lang.py --mirror OWNER/NAME=GIT_DIR@COMMIT ... [--per 200] [--show-misses SOURCE]
        [--held-out] [--model PATH/intent_model.json]
"""

from __future__ import annotations

import argparse
import random
import sys
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import airlock_eval as ev  # noqa: E402
import airlock_train as tr  # noqa: E402

from signoff.airlock import detect, intent  # noqa: E402

XSAFETY = "Jarviswang94/Multilingual_safety_benchmark"
TASK_TRACKER = "microsoft/TaskTracker"
FASTAPI = "tiangolo/fastapi"
HOSTS = ("mozilla/bugbug", "STASER-Lab/InEx-Bug-A-Human-Annotated-Dataset-of-Intrinsic-and-Extrinsic-Bugs-in-the-NPM"
         "-Ecosystem")
NEW_WHERE = ("override cues", "role assigned", "dictated answer")  # where the new reading (`override.py`) says it fired


def _xsafety_by_language(git_dir: str, commit: str) -> list[tuple[str, str]]:
    out = []
    for path in tr._git(git_dir, "ls-tree", "-r", "--name-only", commit).splitlines():
        kind = path.rsplit("/", 1)[-1].removesuffix(".csv").removesuffix("_n")
        if path.endswith(".csv") and kind in tr.XSAFETY:
            rows = tr.csv.reader(tr.io.StringIO(tr._git(git_dir, "show", f"{commit}:{path}").lstrip("\ufeff")))
            texts = [row[0] for row in rows if row and not row[0].rstrip().endswith(("?", "？", "؟"))]
            out += [(f"xsafety {kind.lower()} {path.split('/')[0]}", t) for t in texts]
    return out


def load(
    mirrors: list[str], per: int, held_out: bool = False
) -> tuple[list[tuple[str, str]], list[tuple[str, str]], list[str]]:
    attacks: list[tuple[str, str]] = []
    honest: list[tuple[str, str]] = []
    hosts: list[str] = []
    for spec in mirrors:
        name, _, rest = spec.partition("=")
        git_dir, _, commit = rest.rpartition("@")
        commit = tr._git(git_dir, "rev-parse", commit).strip()
        print(f"  {name} {commit}")
        if held_out and name in (XSAFETY, TASK_TRACKER, tr.OWASP_PROMPTS):
            # only the third no model is trained on (`airlock_train.dev_held_out`); XSafety is trained on
            if name == TASK_TRACKER:
                texts = tr._capped(tr._task_tracker(git_dir, commit))
                found = [("tasktracker trigger + translated task", t) for t in texts]
            elif name == tr.OWASP_PROMPTS:
                found = [(f"owasp prompts {file}", t) for file, t in tr.owasp_prompts(git_dir, commit)]
            else:
                found = []
            attacks += [(group, t) for group, t in found if tr.dev_held_out(t)]
        elif name == XSAFETY:
            grouped: dict[str, list[str]] = {}
            for group, text in _xsafety_by_language(git_dir, commit):
                grouped.setdefault(group, []).append(text)
            attacks += [(group, t) for group, texts in sorted(grouped.items()) for t in tr._capped(texts, per)]
        elif name == TASK_TRACKER:
            attacks += [("tasktracker trigger + translated task", t)
                        for t in tr._capped(tr._task_tracker(git_dir, commit), per * 3)]
        elif name == tr.OWASP_PROMPTS:
            attacks += [(f"owasp prompts {file}", t) for file, t in tr.owasp_prompts(git_dir, commit)]
        elif name == FASTAPI:
            files = tr._git(git_dir, "ls-tree", "-r", "--name-only", commit).splitlines()
            for language in sorted({p.split("/")[1] for p in files if p.startswith("docs/") and p.count("/") >= 3}):
                docs = tr._translated_docs(git_dir, commit, [p for p in files if p.startswith(f"docs/{language}/")],
                                           per_language=40)
                honest += [(f"fastapi docs {language}", e.text) for e in docs]
        elif name in (tr.SPHINX, tr.TLDR, tr.COMMAND_LINE):
            # ninth pass: honest text in many languages; with --held-out only the third no model is trained on
            found = [(e.source.split(" (")[0], e.text) for e in tr.mirror_examples(name, git_dir, commit)
                     if e.label == 0 and not e.source.startswith(("commits", "issue templates"))]
            if held_out:
                readers = {tr.SPHINX: tr._sphinx_messages, tr.TLDR: tr._tldr_pages, tr.COMMAND_LINE:
                           tr._readme_translations}
                files = tr._git(git_dir, "ls-tree", "-r", "--name-only", commit).splitlines()
                found = [(f"{name} (development third)", t) for t in readers[name](git_dir, commit, files)
                         if tr.dev_held_out(t)]
            honest += found
        elif name in HOSTS:
            found = [e for e in tr.mirror_examples(name, git_dir, commit) if e.label == 0
                     and e.source.startswith(tr.HOST_SOURCES)]
            honest += [(e.source, e.text) for e in found]
            hosts += [e.text for e in found]
    honest += [(e.source, e.text) for e in tr.authored_examples() if e.label == 0]
    return attacks, honest, hosts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mirror", action="append", default=[], help="owner/name=GIT_DIR@COMMIT")
    parser.add_argument("--per", type=int, default=200, help="attacks per source and language")
    parser.add_argument("--show-misses", default="", help="list the misses of development sources starting so")
    parser.add_argument("--show-held", default="", help="list the honest texts held of sources starting so")
    parser.add_argument("--held-out", action="store_true",
                        help="attacks: only the development third no model is trained on (TaskTracker, OWASP prompts)")
    parser.add_argument("--model", type=Path, help="an intent_model.json to use instead of the shipped one")
    args = parser.parse_args()
    attacks, honest, hosts = load(args.mirror, args.per, args.held_out)
    rng = random.Random(tr.SEED)
    if args.model:
        chosen = intent.load(args.model)
        intent.model = lambda: chosen  # type: ignore[assignment]
        print(f"  model {args.model} threshold {chosen.threshold}")
    shipped = intent.model
    silent = replace(shipped(), threshold=2.0)
    whole, rules, new = ev.Tally(), ev.Tally(), ev.Tally()

    def judge(group: str, text: str) -> None:
        hits = detect(text)
        whole.add(group, bool(hits), tuple(h.family for h in hits))
        new.add(group, any(h.where.startswith(NEW_WHERE) for h in hits))
        intent.model = lambda: silent  # type: ignore[assignment]
        try:
            alone = [h for h in detect(text) if h.family != "instruction_intent"]
        finally:
            intent.model = shipped
        rules.add(group, bool(alone))
        if args.show_misses and group.startswith(args.show_misses) and not hits:
            print(f"    MISS {group}: {text[:200]!r}")
        if args.show_held and group.startswith(args.show_held) and hits:
            print(f"    HELD {group} {[(h.family, h.where) for h in hits]}: {text[:300]!r}")

    for group, text in attacks:
        judge(f"attack {group}", text)
        if hosts:
            judge("attack planted in a report", ev._planted(text, hosts, rng))
    for group, text in honest:
        judge(f"honest {group}", text)
    print("  group                                              airlock            rules alone   new reading")
    for key in sorted(whole.counts):
        print(f"  {key[:50]:50s} {ev._pct(*whole.counts[key])}  {ev._pct(*rules.counts[key])}"
              f"  {ev._pct(*new.counts[key])}")
    for side in ("attack", "honest"):
        keys = [k for k in whole.counts if k.startswith(side)]
        print(f"  ALL {side:46s} {ev._ci(*whole.total(keys))}  rules {ev._pct(*rules.total(keys))}"
              f"  new {ev._pct(*new.total(keys))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
