"""Honest prose about prompting, a development set of issue #36 (eleventh pass): the pages of
dair-ai/Prompt-Engineering-Guide in each of its languages (`pages/**/*.<lang>.mdx`), the pages about
attacks left out (risks, adversarial prompting, jailbreaks, injections, prompt leaks), code blocks,
components and headings removed, paragraphs joined in runs of up to five, 30 runs per language
chosen by SHA-256. Text that speaks of prompts, agents and instructions without giving any: the
eleventh pass's final set found that Learn Prompting's translated prose is held far more often than
issue reports, and this is a fair source to study that class on.

    python bench/airlock_prompting_prose.py --mirror dair-ai/Prompt-Engineering-Guide=GIT_DIR@COMMIT [--show]
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import airlock_eval as ev  # noqa: E402
import airlock_train as tr  # noqa: E402

PER_LANGUAGE = 30
_PAGE = re.compile(r"pages/.*\.([a-z]{2})\.mdx$")
_ABOUT_ATTACKS = re.compile(r"risks|adversarial|jailbreak|injection|prompt-leak")
_NOT_PROSE = re.compile(r"```.*?```|<[A-Z][^>]*>.*?</[A-Z]\w*>|<[^>]+/>", re.S)
_NOT_PROSE_START = ("import ", "<", "#", ":::", "|", "export ", "*Prompt", "*Output", "**Prompt", "**Output")


def runs(git_dir: str, commit: str) -> list[tuple[str, str]]:
    """(language, run of paragraphs)."""
    by_language: dict[str, list[str]] = {}
    for path in sorted(tr._git(git_dir, "ls-tree", "-r", "--name-only", commit).splitlines()):
        page = _PAGE.match(path)
        if page is None or _ABOUT_ATTACKS.search(path) is not None:
            continue
        paragraphs = [p.strip() for p in _NOT_PROSE.sub("", tr._git(git_dir, "show", f"{commit}:{path}")).split("\n\n")]
        prose = [p for p in paragraphs if p and not p.startswith(_NOT_PROSE_START)]
        by_language.setdefault(page.group(1), []).extend(
            "\n\n".join(prose[i: i + 5]) for i in range(0, len(prose), 5))
    return [(language, text) for language, texts in sorted(by_language.items())
            for text in tr._capped(texts, PER_LANGUAGE)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mirror", required=True, help="dair-ai/Prompt-Engineering-Guide=GIT_DIR@COMMIT")
    parser.add_argument("--show", action="store_true", help="print each held run's families and its opening")
    args = parser.parse_args()
    git_dir, _, commit = args.mirror.partition("=")[2].rpartition("@")
    print(f"  dair-ai/Prompt-Engineering-Guide {tr._git(git_dir, 'rev-parse', commit).strip()}")
    tally = ev.Tally()
    for language, text in runs(git_dir, commit):
        hit, families = ev.quarantined(text)
        tally.add(f"honest prose about prompting, {language}", hit, families)
        if hit and args.show:
            print(f"  HELD {language} {families}: {text[:200]!r}")
    tally.print_groups(44)
    print(f"  TOTAL held {ev._ci(*tally.total())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
