"""Goal hijacks and translated injection examples, a development set of issue #36 (twelfth pass): the
shapes of the eleventh pass's final set (one HackAPrompt team's submissions, Learn Prompting's
translated prompt-hacking examples) from fair sources of the same kind, none of them a final-set
source, a held-out source of the issue or a training source of the learned detector:

- HackAPrompt 2023 submissions of three other teams (goal hijacks that make a model say "I have been
  PWNED", the secret key asked for): terjanq/hack-a-prompt (`public/data/submissions*.json`, every
  JSON the team submitted), myfoostrong/hackaprompt-2023 (`submission.json`),
  kitsuiwebster/hackaprompt-2023; and the JSON blocks of each one's write-ups (`*.md`); every
  prompt once.
- dair-ai/Prompt-Engineering-Guide: the example prompts of its pages about attacks (risks/adversarial,
  prompt injection, prompt leaking, jailbreaking) in English and each translation (German, Spanish,
  French, Portuguese, Russian, Japanese, Chinese, Korean, Turkish, Finnish, Catalan, Italian,
  Arabic): the code blocks, not those labelled as the model's output; an example left in English in
  a translation counts once, as English. (Its other pages are the honest set of
  `bench/airlock_prompting_prose.py`.)

Each source is split by SHA-256 of the text: the **unread part** (first hex digit 8-f) is reported
first and its misses are never printed; the development part (0-7) is the one read and fixed on.
Each attack as published and planted after a random line of a Bugzilla or InEx-Bug report (the
hosts of `bench/airlock_lang.py`).

    python bench/airlock_hijacks.py --mirror OWNER/NAME=GIT_DIR@COMMIT ... [--show-misses]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import airlock_eval as ev  # noqa: E402
import airlock_lang as lang  # noqa: E402
import airlock_train as tr  # noqa: E402

TERJANQ = "terjanq/hack-a-prompt"
MYFOOSTRONG = "myfoostrong/hackaprompt-2023"
KITSUIWEBSTER = "kitsuiwebster/hackaprompt-2023"
GUIDE = "dair-ai/Prompt-Engineering-Guide"
SOURCES = (TERJANQ, MYFOOSTRONG, KITSUIWEBSTER, GUIDE, *lang.HOSTS)
_ATTACK_PAGE = re.compile(r"(?:ar-)?pages/(?:risks/adversarial|prompts/adversarial-prompting)(?:/[a-z-]+)?"
                          r"\.([a-z]{2})\.mdx$")
_CODE_BLOCK = re.compile(r"```[a-z]*\n(.*?)```", re.S)
# the label before a block of the model's answer, in the guide's languages
_OUTPUT_LABEL = re.compile(r"output|ausgabe|salida|sortie|sortida|saída|uscita|вывод|출력|出力|输出|çıktı|çıkış|"
                           r"tulos|الإخراج|المخرجات|الناتج", re.I)


def unread(text: str) -> bool:
    """The half of each source never read (its misses are never printed): SHA-256 first hex 8-f."""
    return hashlib.sha256(text.encode()).hexdigest()[0] >= "8"


def _level_prompts(data: object) -> list[str]:
    """Every `{"level_N": {"prompt": ...}}` prompt in a submission JSON (or a list of them)."""
    if isinstance(data, list):
        return [p for item in data for p in _level_prompts(item)]
    if not isinstance(data, dict):
        return []
    out = []
    for key, entry in data.items():
        prompt = entry.get("prompt") if isinstance(entry, dict) else None
        if str(key).startswith("level_") and isinstance(prompt, str) and prompt.strip():
            out.append(prompt.strip())
    return out


def hackaprompt(spec: str) -> list[str]:
    git_dir, commit, files = ev.source_tree(spec, show=False)
    documents = []
    for path in files:
        if path.endswith(".json") and (path.startswith("public/data/submissions") or path == "submission.json"):
            documents.append(tr._git(git_dir, "show", f"{commit}:{path}"))
        elif path.endswith(".md"):  # the JSON blocks of a write-up
            documents += re.findall(r"```json\n(.*?)```", tr._git(git_dir, "show", f"{commit}:{path}"), re.S)
    out: list[str] = []
    for document in documents:
        try:
            data = json.loads(document)
        except json.JSONDecodeError:  # a block cut short in the write-up
            continue
        out += [p for p in dict.fromkeys(_level_prompts(data)) if p not in out]
    return out


def guide_examples(spec: str) -> list[tuple[str, str]]:
    """(language, example prompt) of the guide's pages about attacks; English pages first."""
    git_dir, commit, files = ev.source_tree(spec, show=False)
    pages = sorted((m.group(1) != "en", p) for p in files if (m := _ATTACK_PAGE.match(p)))
    out, seen = [], set()
    for _, path in pages:
        language = _ATTACK_PAGE.match(path).group(1)  # type: ignore[union-attr]
        page = tr._git(git_dir, "show", f"{commit}:{path}")
        for block in _CODE_BLOCK.finditer(page):
            before = [line for line in page[: block.start()].splitlines() if line.strip()]
            if before and _OUTPUT_LABEL.search(before[-1]):
                continue
            text = block.group(1).strip()
            if (len(text.split()) >= 3 or len(text) >= 12) and text not in seen:
                seen.add(text)
                out.append((language, text))
    return out


def attacks(mirrors: dict[str, str]) -> list[tuple[str, str]]:
    """(group, text) of every source given."""
    out = []
    for name in (TERJANQ, MYFOOSTRONG, KITSUIWEBSTER):
        if name in mirrors:
            out += [(f"hackaprompt {name.split('/')[0]}", text) for text in hackaprompt(mirrors[name])]
    if GUIDE in mirrors:
        out += [(f"guide {language}", text) for language, text in guide_examples(mirrors[GUIDE])]
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mirror", action="append", default=[], help="OWNER/NAME=GIT_DIR@COMMIT of a source above")
    parser.add_argument("--show-misses", action="store_true", help="print the development part's misses")
    args = parser.parse_args()
    mirrors = ev.named_sources(args.mirror, SOURCES)
    if mirrors is None:
        return 2
    for name, spec in sorted(mirrors.items()):
        print(f"  {name} {ev.source_tree(spec, show=False)[1]}")
    hosts = lang.load([f"{n}={mirrors[n]}" for n in lang.HOSTS if n in mirrors], 0)[2]
    rng = random.Random(tr.SEED)
    parts = {"UNREAD": ev.Tally(), "development": ev.Tally()}
    for group, text in attacks(mirrors):
        part = "UNREAD" if unread(text) else "development"
        tally = parts[part]
        hit, families = ev.quarantined(text)
        tally.add(f"published {group}", hit, families)
        if not hit and args.show_misses and part == "development":
            print(f"    MISS {group}: {text[:300]!r}")
        if hosts:
            planted = ev._planted(text, hosts, rng)
            hit, families = ev.quarantined(planted)
            tally.add(f"planted {group.split(' ')[0]}", hit, families)
    for part, tally in parts.items():
        print(f"== {part} part ==")
        tally.print_groups(36)
        for side in ("published", "planted"):
            keys = [k for k in tally.counts if k.startswith(side)]
            print(f"  TOTAL {part} {side:28s} {ev._ci(*tally.total(keys))}")
        print(f"  families fired: {dict(tally.fired.most_common())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
