"""Pasted git logs, an honest development set of issue #36 (tenth pass): `git log --format=medium`
of each repository cut into runs of three commits (up to 200 runs, the newest first) and
`git log --graph -n 200` in runs of 40 lines, each run scanned as a report. A reporter pastes a log
to show what changed; merge subjects, imperative commit subjects and graph lanes must not read as
orders. Prints the held runs (families and where) and the totals per repository.

    python bench/airlock_gitlogs.py --mirror OWNER/NAME=GIT_DIR@COMMIT ... [--show]

The tenth and eleventh passes used gin-gonic/gin dcaa4296d111, encode/httpx ae1b9f66238f,
Textualize/rich 42899d8a0a96, psf/requests 1f6589ec3a1e, pallets/click 2c8cd3ac958a, axios/axios
23a25af0688d, pydantic/pydantic 2151025aa512, expressjs/express a3714473feb3, scrapy/scrapy
11079cb1c85b, getsentry/sentry-python 064542dd2cbd.
"""

from __future__ import annotations

import argparse
import hashlib
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from airlock_eval import _ci  # noqa: E402

from signoff.airlock import scan  # noqa: E402

RUN_COMMITS = 3
MAX_RUNS = 200
GRAPH_COMMITS = 200
GRAPH_LINES = 40


def _git(git_dir: str, *args: str) -> str:
    return subprocess.run(["git", "--git-dir", git_dir, *args], check=True, capture_output=True, text=True).stdout


def runs(git_dir: str, commit: str) -> list[str]:
    """The pasted logs of one repository at `commit`."""
    log = _git(git_dir, "log", "-n", str(RUN_COMMITS * MAX_RUNS), "--format=medium", commit)
    blocks = ["commit " + block for block in log.split("\ncommit ") if block.strip()]
    blocks[0] = blocks[0].removeprefix("commit ")
    out = ["\n".join(blocks[i: i + RUN_COMMITS]) for i in range(0, len(blocks), RUN_COMMITS)][:MAX_RUNS]
    graph = _git(git_dir, "log", "--graph", "-n", str(GRAPH_COMMITS), commit).split("\n")
    return out + ["\n".join(graph[i: i + GRAPH_LINES]) for i in range(0, len(graph), GRAPH_LINES)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mirror", action="append", default=[], help="OWNER/NAME=GIT_DIR@COMMIT")
    parser.add_argument("--show", action="store_true", help="print each held run's families and where they fired")
    args = parser.parse_args()
    if not args.mirror:
        print("error: no repository given\nfix: --mirror OWNER/NAME=GIT_DIR@COMMIT (a bare mirror and a commit)")
        return 2
    held = total = 0
    for spec in args.mirror:
        name, _, rest = spec.partition("=")
        git_dir, _, commit = rest.rpartition("@")
        texts = runs(git_dir, commit)
        hits = 0
        for text in texts:
            verdict = scan(text)
            if verdict.quarantined:
                hits += 1
                if args.show:
                    digest = hashlib.sha256(text.encode()).hexdigest()[:10]
                    print(f"  HELD {name} {digest} {[(hit.family, hit.where) for hit in verdict.hits]}")
        print(f"  {name:28s} {_git(git_dir, 'rev-parse', commit).strip()[:12]} {_ci(hits, len(texts))}")
        held, total = held + hits, total + len(texts)
    print(f"  TOTAL pasted git logs held {_ci(held, total)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
