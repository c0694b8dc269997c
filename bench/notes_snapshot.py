"""Benchmark: snapshot + facts of a generated 20,000-commit repository (with merge commits, bodies
and annotated tags, all of which the snapshot reads) against `git log --numstat` alone, measured in
the same run (goal: at most 1.3x on a quiet machine, 1.5x under load), and verifier
throughput in sentences/second.

    python bench/notes_snapshot.py [--commits 20000] [--runs 3] [--keep DIR]

Prints `ratio <ours/baseline>` with medians, spread and run count.
"""

from __future__ import annotations

import argparse
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from signoff import git
from signoff.notes.facts import FactsFile, snapshot_and_facts
from signoff.notes.verify import Verifier
from signoff.notes.writer import write_default

MERGE_EVERY, TAG_EVERY, MERGE_MARKS = 50, 1000, 10_000_000


def generate(repo: Path, commits: int, seed: int = 7) -> None:
    """A history built with git fast-import: each commit edits one to three of 400 text files (a
    few lines each) and has a body, sometimes adds a binary blob, renames or deletes a file; every
    50th is followed by a merge commit naming a pull request, and every 1,000th is tagged
    (annotated), so the snapshot reads merges, bodies and tags as it does on a real project."""
    rng = random.Random(seed)
    repo.mkdir(parents=True, exist_ok=True)
    git.run(repo, "init", "-q", "-b", "main")
    files: dict[str, list[str]] = {}
    names = [f"src/mod{i:03d}/file{i:03d}.py" for i in range(400)]
    people = [(f"Dev {i}", f"dev{i}@example.org") for i in range(12)]
    stream = []
    when = 1_700_000_000
    prev = 0
    for n in range(1, commits + 1):
        who = people[rng.randrange(len(people))]
        when += rng.randrange(60, 3600)
        ops: list[bytes] = []
        for _ in range(rng.randint(1, 3)):
            name = names[rng.randrange(len(names))]
            lines = files.setdefault(name, [])
            for _ in range(rng.randint(1, 6)):
                if lines and rng.random() < 0.3:
                    del lines[rng.randrange(len(lines))]
                else:
                    lines.insert(rng.randint(0, len(lines)), f"value_{n}_{rng.randrange(10**6)} = {n}\n")
            data = "".join(lines).encode()
            ops.append(f"M 100644 inline {name}\ndata {len(data)}\n".encode() + data + b"\n")
        if n % 97 == 0:
            blob = bytes(rng.randrange(256) for _ in range(64)) + b"\0"
            ops.append(f"M 100644 inline assets/blob{n % 5}.bin\ndata {len(blob)}\n".encode() + blob + b"\n")
        if n % 251 == 0 and files:
            old = rng.choice(sorted(files))
            new = old.replace(".py", f"_r{n}.py")
            ops.append(f"R {old} {new}\n".encode())
            files[new] = files.pop(old)
            names[names.index(old)] = new
        message = f"Change {n}: edit {len(ops)} files (#{n})\n\nWhy: body text for change {n}.\n".encode()
        head = (f"commit refs/heads/main\nmark :{n}\nauthor {who[0]} <{who[1]}> {when} +0000\n"
                f"committer {who[0]} <{who[1]}> {when} +0000\ndata {len(message)}\n").encode() + message
        if n > 1:
            head += f"from :{prev}\n".encode()
        stream.append(head + b"".join(ops) + b"\n")
        prev = n
        if n % MERGE_EVERY == 0:
            # A merge commit naming a pull request, as a merged branch leaves it (no diff of its own).
            mark = MERGE_MARKS + n
            text = f"Merge pull request #{n} from dev/topic-{n}\n\nChange {n} as a pull request\n".encode()
            stream.append((f"commit refs/heads/main\nmark :{mark}\nauthor {who[0]} <{who[1]}> {when} +0000\n"
                           f"committer {who[0]} <{who[1]}> {when} +0000\ndata {len(text)}\n").encode() + text
                          + f"from :{n}\nmerge :{n - 1}\n\n".encode())
            prev = mark
        if n % TAG_EVERY == 0:
            text = f"Release 1.{n // TAG_EVERY}.0\n".encode()
            stream.append((f"tag 1.{n // TAG_EVERY}.0\nfrom :{prev}\ntagger {who[0]} <{who[1]}> {when} +0000\n"
                           f"data {len(text)}\n").encode() + text + b"\n")
    git.run(repo, "fast-import", "--quiet", input_=b"".join(stream), timeout=3600)
    git.run(repo, "reset", "-q", "--hard", "main", timeout=3600)


def timed(fn: object) -> float:
    start = time.perf_counter()
    fn()  # type: ignore[operator]
    return time.perf_counter() - start


def cpu_now() -> float:
    """CPU seconds of this process and its finished children (git): less sensitive to a busy machine
    than wall time, reported beside it."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--commits", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--sentences", type=int, default=5_000)
    parser.add_argument("--keep", type=Path, default=None, help="Keep the generated repository here.")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="notes-bench-"))
    repo = args.keep or work / "repo"
    try:
        if not (repo / ".git").exists():
            t = timed(lambda: generate(repo, args.commits))
            print(f"generated {args.commits} commits in {t:.1f} s")

        def baseline() -> None:
            # Plain `git log` on purpose: it is what the snapshot is measured against (merges
            # included, as the snapshot reads them; the snapshot also reads the tags and bodies).
            subprocess.run(["git", "-C", str(repo), "log", "--numstat", "HEAD"],
                           stdout=subprocess.DEVNULL, check=True)

        def ours() -> None:
            # What `signoff notes run` and the scout do: both files in one pass over git's output.
            snapshot_and_facts(repo, None, work / "snapshot.json", work / "facts.json")

        base_t, ours_t, base_cpu, ours_cpu = [], [], [], []
        baseline()  # warm the page cache for both sides
        for _ in range(args.runs):
            c0 = cpu_now()
            base_t.append(timed(baseline))
            c1 = cpu_now()
            ours_t.append(timed(ours))
            c2 = cpu_now()
            base_cpu.append(c1 - c0)
            ours_cpu.append(c2 - c1)
        facts = FactsFile(work / "facts.json")
        counts = {(f["metric"], f["scope"]): f["value"] for f in facts.facts() if f["kind"] == "count"}
        print(f"snapshot+facts: {counts[('commits', 'range')]} commits, {len(facts.ids)} facts, "
              f"{(work / 'snapshot.json').stat().st_size / 1e6:.1f} MB snapshot")

        written = write_default({"range": "HEAD", "facts": facts.facts()[:200] + [
            f for f in facts.facts() if f["kind"] in ("count", "derived")]})["sentences"]
        sentences = [{"id": f"S{i + 1}", "text": s["text"], "facts": s["cites"]}
                     for i, s in enumerate(written * (args.sentences // max(1, len(written)) + 1))][:args.sentences]
        t_init = time.perf_counter()
        verifier = Verifier(work / "snapshot.json", work / "facts.json", {f for s in sentences for f in s["facts"]})
        t_ready = time.perf_counter()
        results = [verifier.check(s) for s in sentences]
        t_done = time.perf_counter()
        assert all(r["ok"] for r in results), "the scripted writer's sentences must verify"
        rate = len(sentences) / (t_done - t_ready)

        mb, mo = statistics.median(base_t), statistics.median(ours_t)
        print(f"git log --numstat: median {mb:.2f} s (min {min(base_t):.2f}, max {max(base_t):.2f}); "
              f"snapshot+facts: median {mo:.2f} s (min {min(ours_t):.2f}, max {max(ours_t):.2f}); "
              f"runs {args.runs}; goal <= 1.3x quiet, <= 1.5x under load")
        cb, co = statistics.median(base_cpu), statistics.median(ours_cpu)
        print(f"cpu time (git + python): git log median {cb:.2f} s, snapshot+facts median {co:.2f} s, "
              f"cpu ratio {co / cb:.2f}")
        print(f"verify: {len(sentences)} sentences in {t_done - t_ready:.2f} s = {rate:,.0f} sentences/s "
              f"(after recomputing facts from the snapshot once in {t_ready - t_init:.2f} s)")
        print(f"ratio {mo / mb:.2f}")
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
