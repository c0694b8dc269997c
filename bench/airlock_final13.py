"""The final set chosen in the thirteenth pass of issue #36 (air13): sources no pass has read before,
scanned by the airlock of the branch it runs on. It prints counts only: no miss and no held honest
text is ever printed (there is no option for it), so the set stays usable as a final set.

Attacks (each as published and, except a tool's returned JSON, also planted after a random line of
a real bug report of the honest side, as the earlier final runs plant them):
- xjzzzzzzzz/MCPSafety (MCP-SafetyBench): its attack tasks against real MCP servers. The text an
  attacker controls, by where the agent reads it: a poisoned tool description
  (`mcp_server_modifications[].modification_description`), a tool's injected return value
  (`modification_return`, as the JSON the tool hands back), the description of a tool the attacker
  adds (`mcp_server_additions.description`), and, for the tasks whose attack is none of these nor
  a manipulated host (no modification, addition or host-side key), the user-layer request itself
  (`question`). Host-side attacks (replayed or tampered calls, a rug pull's code, an attacker's
  server named by the task) carry no text of the attacker in the task and are counted as skipped.
- y0mingzhang/prompt-extraction ("Effective Prompt Extraction from Language Models"): its
  hand-written extraction queries, the ones GPT-4 generated, the queries built to evade an n-gram
  output filter, and the queries it sent to Bard, Bing Chat, ChatGPT and Claude in ten languages
  (`attacks/real-services/*/*-prompt.txt`).
- kyahikaru/hinglish-prompt-injection-detector: its stealth attacks in Hinglish, Hindi and
  English (`data/hinglish-stealth-250.csv`, `data/hinglish-stealth-110-heldout.csv`), by category.
Honest:
- fayola21/farsec (FARSEC, "Text Filtering and Ranking for Security Bug Report Prediction"): real
  bug reports of Chromium's tracker (`resources/data1/chromium/chromium-{nsbr,sbr}-{new,old}/*.txt`,
  security and other bugs) and of four Apache JIRA projects (Ambari, Camel, Derby, Wicket),
  HONEST_REPORTS of each chosen by SHA-256 of the path. The Chromium reports are also the hosts the
  attacks are planted in.
- kyahikaru/hinglish-prompt-injection-detector: its 500 clean Hinglish queries
  (`data/hinglish-clean-500.csv`), honest text that is not an issue report.

    python bench/airlock_final13.py --final OWNER/NAME=GIT_DIR@COMMIT ...
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import random
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import airlock_eval as ev  # noqa: E402
import airlock_train as tr  # noqa: E402

MCP = "xjzzzzzzzz/MCPSafety"
EXTRACTION = "y0mingzhang/prompt-extraction"
HINGLISH = "kyahikaru/hinglish-prompt-injection-detector"
FARSEC = "fayola21/farsec"
SOURCES = (MCP, EXTRACTION, HINGLISH, FARSEC)
HONEST_REPORTS = 500
# keys of an MCP-SafetyBench task whose attack is made by a manipulated host or an attacker's
# server (retrieval-agent deception), not by a text the task carries
MCP_HOST_KEYS = ("replay_injection", "data_tampering", "wrong_arguments_intent_injection",
                 "wrong_function_intent_injection", "identity_spoofing", "mcp_server_update", "mcp_servers")
CHROMIUM_REPORT = re.compile(r"resources/data1/chromium/chromium-(?:nsbr|sbr)-(?:new|old)/[^/]+\.txt")
JIRA_REPORT = re.compile(r"resources/data1/(ambari|camel|derby|wicket)/\1-(?:nsbr|sbr)-(?:new|old)/[^/]+\.txt")
REAL_SERVICE_PROMPT = re.compile(r"attacks/real-services/([^/]+)/([a-z]{2})-prompt\.txt")


def mcp_texts(tasks: list[dict]) -> tuple[list[tuple[str, str]], int]:  # type: ignore[type-arg]
    """(group, attacker text) of MCP-SafetyBench's attack tasks, deduplicated; and how many tasks
    carry no text of the attacker (a manipulated host)."""
    out: dict[tuple[str, str], None] = {}
    skipped = 0
    for task in tasks:
        category = str(task["attack_category"])
        found = False
        for change in task.get("mcp_server_modifications") or []:
            if isinstance(change.get("modification_description"), str):
                out[(f"mcp-tool-description {category}", change["modification_description"])] = None
                found = True
            if "modification_return" in change:
                value = change["modification_return"]
                text = value if isinstance(value, str) else json.dumps(value, indent=2, ensure_ascii=False)
                out[(f"mcp-tool-return {category}", text)] = None
                found = True
        added = task.get("mcp_server_additions")
        for tool in added if isinstance(added, list) else [added] if added else []:
            if isinstance(tool.get("description"), str):
                out[(f"mcp-added-tool {category}", tool["description"])] = None
                found = True
        if not found and not any(key in task for key in MCP_HOST_KEYS):
            out[(f"mcp-user-request {category}", str(task["question"]))] = None
            found = True
        skipped += not found
    return [(group, text.strip()) for group, text in out if text.strip()], skipped


def mcp_safetybench(spec: str) -> tuple[list[tuple[str, str]], int]:
    git_dir, commit, files = ev.source_tree(spec)
    tasks = []
    for path in sorted(p for p in files if p.startswith("mcpuniverse/benchmark/configs/") and p.endswith(".json")):
        task = json.loads(tr._git(git_dir, "show", f"{commit}:{path}"))
        if isinstance(task, dict) and "attack_category" in task:
            tasks.append(task)
    return mcp_texts(tasks)


def extraction(spec: str) -> list[tuple[str, str]]:
    """(group, query) of the extraction attacks, deduplicated (its `selected.json` is a subset of
    the generated ones)."""
    git_dir, commit, files = ev.source_tree(spec)

    def load(path: str) -> object:
        return json.loads(tr._git(git_dir, "show", f"{commit}:{path}"))

    out: dict[str, str] = {}
    for group, path in (("handwritten", "attacks/attacks.json"), ("gpt4-generated", "attacks/generated.json")):
        for text in load(path):  # type: ignore[attr-defined]
            out.setdefault(str(text).strip(), group)
    for attack in load("attacks/5-gram-attacks.json"):  # type: ignore[attr-defined]
        out.setdefault(str(attack["attack-string"]).strip(), f"ngram-evasion {attack['attack-type']}")
    for path in sorted(files):
        match = REAL_SERVICE_PROMPT.fullmatch(path)
        if match:
            out.setdefault(tr._git(git_dir, "show", f"{commit}:{path}").strip(), f"real-service {match.group(2)}")
    return sorted((group, text) for text, group in out.items() if text)


def hinglish_rows(raw: str) -> list[tuple[str, str]]:
    """(category, text) of one of its CSV files."""
    rows = csv.DictReader(io.StringIO(raw))
    return [(row["category"], row["hinglish"].strip()) for row in rows if row["hinglish"].strip()]


def hinglish(spec: str) -> tuple[list[tuple[str, str]], list[str]]:
    """Its stealth attacks (category, text), deduplicated, and its clean queries."""
    git_dir, commit, _ = ev.source_tree(spec)

    def rows(path: str) -> list[tuple[str, str]]:
        return hinglish_rows(tr._git(git_dir, "show", f"{commit}:{path}"))

    attacks = sorted({*rows("data/hinglish-stealth-250.csv"), *rows("data/hinglish-stealth-110-heldout.csv")})
    return attacks, [text for _, text in rows("data/hinglish-clean-500.csv")]


def chosen_paths(files: list[str], pattern: re.Pattern[str], count: int = HONEST_REPORTS) -> list[str]:
    """The `count` paths matching `pattern` with the smallest SHA-256: a fixed, content-defined sample."""
    matching = [path for path in files if pattern.fullmatch(path)]
    return sorted(matching, key=lambda path: hashlib.sha256(path.encode()).hexdigest())[:count]


def farsec(spec: str) -> tuple[list[str], list[str]]:
    """HONEST_REPORTS Chromium reports and as many of the four Apache JIRA projects."""
    git_dir, commit, files = ev.source_tree(spec)

    def read(paths: list[str]) -> list[str]:
        texts = (tr._git(git_dir, "show", f"{commit}:{path}").strip() for path in paths)
        return [text for text in texts if text]

    return read(chosen_paths(files, CHROMIUM_REPORT)), read(chosen_paths(files, JIRA_REPORT))


def run(mirrors: dict[str, str]) -> tuple[ev.Tally, list[str]]:
    rng = random.Random(tr.SEED)
    tally, notes = ev.Tally(), []
    hosts: list[str] = []
    if FARSEC in mirrors:
        hosts, jira = farsec(mirrors[FARSEC])
        for text in hosts:
            tally.add(f"honest: chromium report ({ev.language_of(text)})", *ev.quarantined(text))
        for text in jira:
            tally.add("honest: apache jira report", *ev.quarantined(text))

    def attack(group: str, text: str, plant: bool = True) -> None:
        tally.add(f"attack: {group}", *ev.quarantined(text))
        if hosts and plant:
            tally.add(f"planted: {group}", *ev.quarantined(ev._planted(text, hosts, rng)))

    if MCP in mirrors:
        texts, skipped = mcp_safetybench(mirrors[MCP])
        for group, text in texts:
            attack(group, text, plant=not group.startswith("mcp-tool-return"))
        notes.append(f"mcp-safetybench: {len(texts)} attacker texts, {skipped} host-side tasks without one")
    if EXTRACTION in mirrors:
        queries = extraction(mirrors[EXTRACTION])
        for group, text in queries:
            attack(f"extraction {group}", text)
        notes.append(f"prompt-extraction: {len(queries)} queries")
    if HINGLISH in mirrors:
        stealth, clean = hinglish(mirrors[HINGLISH])
        for category, text in stealth:
            attack(f"hinglish {category}", text)
        for text in clean:
            tally.add("honest: hinglish clean query", *ev.quarantined(text))
        notes.append(f"hinglish: {len(stealth)} stealth attacks, {len(clean)} clean queries")
    return tally, notes


def main() -> int:
    mirrors = ev.final_set_sources(__doc__, SOURCES)
    if mirrors is None:
        return 2
    print("== THIRTEENTH PASS FINAL SET (air13): sources never read before; counts only ==")
    tally, notes = run(mirrors)
    for note in notes:
        print(f"  {note}")
    tally.print_groups(64)

    tally.print_totals((
        ("mcp poisoned tool descriptions", "attack: mcp-tool-description"),
        ("mcp injected tool returns", "attack: mcp-tool-return"),
        ("mcp added tools' descriptions", "attack: mcp-added-tool"),
        ("mcp user-layer requests", "attack: mcp-user-request"),
        ("mcp, as published", "attack: mcp"),
        ("extraction, as published", "attack: extraction"),
        ("extraction in other languages, as published", "attack: extraction real-service"),
        ("hinglish stealth, as published", "attack: hinglish"),
        ("all planted in a report", "planted:"),
        ("honest chromium reports held", "honest: chromium"),
        ("honest apache jira reports held", "honest: apache jira"),
        ("honest hinglish clean queries held", "honest: hinglish"),
        *((f"{source}, as published and planted", (f"attack: {source}", f"planted: {source}"))
          for source in ("mcp", "extraction", "hinglish")),
    ), 44)
    tally.print_attack_totals(44)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
