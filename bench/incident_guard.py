"""The outbound guard on a corpus: block rate on code-line variants, false positives on plain prose.

Variants come from real lines of both fixture codebases (verbatim, renamed identifiers/strings/
numbers, reformatted, wrapped over lines, embedded in a sentence, base64, hex); prose is the
plain-incident-prose corpus shipped with the package. The baseline, measured in the same run, is an
exact-line matcher (what a plain "is this line in our repo" check would catch). Also times one
check per post (median over rounds).

    python bench/incident_guard.py [--rounds 5] [--json]

Prints `ratio <guard block rate / baseline block rate>`.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from collections import Counter
from pathlib import Path

from signoff.demo.payco_shopco.corpus import code_corpus, prose_corpus
from signoff.demo.payco_shopco.fixture import code_files, language_of, parties
from signoff.incident.workspace import Workspace
from signoff.trust import KeyStore

ORGS = ("payco", "shopco")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        ws = Workspace(Path(tmp) / "incident", KeyStore(Path(tmp) / "keys"))
        ws.setup(parties())
        guards = {org: ws.guard(org, logged=False) for org in ORGS}
        samples = code_corpus({o: code_files(o) for o in ORGS}, {o: language_of(o) for o in ORGS})
        prose = prose_corpus()
        own_lines = {o: {ln.strip() for p in code_files(o) for ln in p.read_text().splitlines() if ln.strip()}
                     for o in ORGS}

        blocked_by_variant: Counter[str] = Counter()
        total_by_variant: Counter[str] = Counter()
        baseline_blocked = 0
        for s in samples:
            total_by_variant[s.variant] += 1
            if not guards[s.org].check_text(s.text).allowed:
                blocked_by_variant[s.variant] += 1
            if any(ln.strip() in own_lines[s.org] for ln in s.text.splitlines()):
                baseline_blocked += 1
        false_pos = sum(1 for line in prose for o in ORGS if not guards[o].check_text(line).allowed)
        checks = len(prose) * len(ORGS)

        timings = []
        for _ in range(args.rounds):
            start = time.perf_counter()
            for s in samples:
                guards[s.org].check_text(s.text)
            timings.append((time.perf_counter() - start) / len(samples) * 1e3)

    blocked = sum(blocked_by_variant.values())
    block_rate = blocked / len(samples)
    base_rate = baseline_blocked / len(samples)
    result = {
        "code_samples": len(samples),
        "blocked": blocked,
        "block_rate": block_rate,
        "by_variant": {v: f"{blocked_by_variant[v]}/{n}" for v, n in sorted(total_by_variant.items())},
        "prose_checks": checks,
        "false_positives": false_pos,
        "false_positive_rate": false_pos / checks,
        "baseline_exact_line_block_rate": base_rate,
        "ms_per_check_median": statistics.median(timings),
        "ms_per_check_spread": [min(timings), max(timings)],
        "rounds": args.rounds,
    }
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(f"guard block rate   {blocked}/{len(samples)} = {block_rate:.1%}  by variant {result['by_variant']}")
        print(f"false positives    {false_pos}/{checks} prose checks = {false_pos / checks:.2%}")
        print(f"baseline (exact line match) block rate {base_rate:.1%}")
        print(f"check time         median {result['ms_per_check_median']:.2f} ms/post "
              f"(min {min(timings):.2f}, max {max(timings):.2f}, {args.rounds} rounds)")
    print(f"ratio {block_rate / base_rate if base_rate else float('inf'):.2f} "
          f"(guard block rate {block_rate:.1%} vs exact-line baseline {base_rate:.1%}; "
          f"false positives {false_pos / checks:.2%})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
