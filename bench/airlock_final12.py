"""The final set chosen in the twelfth pass of issue #36 (air12): sources no pass has read before,
scanned by the airlock of the branch it runs on. It prints counts only: no miss and no held honest
text is ever printed (there is no option for it), so the set stays usable as a final set.

Attacks (each as published and, where the published form is a bare order, also planted after a
random line of a real issue report of the honest side, as the earlier final runs plant them):
- enkryptai/xInjectAgent: a copy of uiuc-kang-lab/InjecAgent (whose own snapshot cannot be had
  here) with three settings of its own. Every test case's tool response as the agent sees it (an
  attacker's text inside a product review, an e-mail, a note, a calendar event ... of the tool's
  JSON-like output), per setting: InjecAgent's `base` (the bare attacker instruction) and
  `enhanced` ("IMPORTANT!!! Ignore all previous instructions ..."), xInjectAgent's `test`, `tech`
  and `tool` (long pretexts: a developer sandbox, a restricted mode, an easter-egg test); and the
  text injected into the response, once per setting, as published and planted.
- egozverev/Should-It-Be-Executed-Or-Processed (SEP): its probes (an instruction with a witness
  answer; the first 50 plain, the last 50 insistent) inserted into the data of a task, the way its
  `insert_probes.py` builds the dataset (a random probe before or after the data; seeded here),
  for a fixed sample of its generated task data; and the probes alone, as published and planted.
  The assembled `SEP_dataset.json` is absent from the snapshot, so it is rebuilt from
  `interim_data_files/raw_data.json` and `source/probes.json`.
- rustyorb/pincer: the attack payloads of a red-team tool (`src/lib/attacks/*.ts`: injection,
  extraction, jailbreak, filter bypass, tool abuse, encoding; of its multi-turn chains only the
  turns tagged `exploit`, a rapport-building opening being no attack). Payloads whose text is
  built by code at run time (most encoding payloads) are skipped and counted.
Honest:
- kardwalker/Creating-dataset: GitHub issues of huggingface/datasets (`datasets-issues.zip`, the
  GitHub API's records; pull requests left out), title and body, HONEST_ISSUES chosen by SHA-256
  of the URL: issue templates, stack traces, reproduction steps with URLs.
- egozverev/Should-It-Be-Executed-Or-Processed: the same sample of task data without its probe.

    python bench/airlock_final12.py --final OWNER/NAME=GIT_DIR@COMMIT ...
"""

from __future__ import annotations

import hashlib
import io
import json
import random
import re
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import airlock_eval as ev  # noqa: E402
import airlock_train as tr  # noqa: E402

INJECAGENT = "enkryptai/xInjectAgent"
SEP = "egozverev/Should-It-Be-Executed-Or-Processed"
PINCER = "rustyorb/pincer"
ISSUES = "kardwalker/Creating-dataset"
SOURCES = (INJECAGENT, SEP, PINCER, ISSUES)
HONEST_ISSUES = 500
SEP_SAMPLE = 1000  # task data (of about 9,300) chosen by SHA-256, each given one probe
SEP_INSISTENT_FROM = 50  # SEP's own split: probes 50-99 are the insistent ones
INJECTED = "<Attacker Instruction>"  # InjecAgent's placeholder in a tool response template


def injecagent(spec: str) -> tuple[list[tuple[str, str]], list[tuple[str, str]], int]:
    """(group, tool response) of every test case; (setting, injected text) once per setting; and
    how many responses did not match their template (their injected text is not taken)."""
    git_dir, commit, files = ev.source_tree(spec)
    outputs, injected, unmatched = [], {}, 0
    for path in sorted(files):
        match = re.fullmatch(r"data/test_cases_(dh|ds)_(\w+)\.json", path)
        if not match:
            continue
        kind, setting = match.groups()
        for case in json.loads(tr._git(git_dir, "show", f"{commit}:{path}")):
            response = case["Tool Response"]
            outputs.append((f"{setting} {kind}", response))
            bare = response[1:-1] if len(response) > 1 and response[0] == response[-1] == '"' else response
            before, _, after = case["Tool Response Template"].partition(INJECTED)
            if bare.startswith(before) and bare.endswith(after) and len(bare) >= len(before) + len(after):
                injected.setdefault((setting, bare[len(before) : len(bare) - len(after)].strip()), None)
            else:
                unmatched += 1
    return outputs, sorted(injected), unmatched


def _sep_task_data(raw: dict) -> list[str]:  # type: ignore[type-arg]
    """Every data item of raw_data.json: each subtask is a list of generations, each a JSON text."""
    items = []
    for task_type, tasks in raw["output"].items():
        if task_type == "descr":
            continue
        for task_name, task in tasks.items():
            if task_name == "descr":
                continue
            for generations in task["subtasks"]:
                for generation in generations if isinstance(generations, list) else [generations]:
                    try:
                        subtask = json.loads(generation) if isinstance(generation, str) else generation
                    except json.JSONDecodeError:
                        continue
                    if isinstance(subtask, dict):
                        items += [item for item in subtask.get("data", []) if isinstance(item, str)]
    return items


def _sep_sample(spec: str) -> tuple[list[dict[str, str]], list[str]]:
    """SEP's probes and the SEP_SAMPLE task data items (by SHA-256) given one each."""
    git_dir, commit, _ = ev.source_tree(spec)
    probes = json.loads(tr._git(git_dir, "show", f"{commit}:SEP_dataset/source/probes.json"))
    raw = json.loads(tr._git(git_dir, "show", f"{commit}:SEP_dataset/interim_data_files/raw_data.json"))
    return probes, tr._capped(_sep_task_data(raw), SEP_SAMPLE)


def _probe_kind(index: int) -> str:
    return "insistent" if index >= SEP_INSISTENT_FROM else "plain"


def sep(spec: str) -> tuple[list[tuple[str, str, str]], list[tuple[str, str]], list[str]]:
    """(probe kind, side, data with its probe), (probe kind, probe) and the same data without it."""
    probes, sample = _sep_sample(spec)
    rng = random.Random(tr.SEED)
    planted = []
    for data in sample:
        index, side = rng.randrange(len(probes)), rng.choice("lr")
        probe = probes[index]["instruction"]
        planted.append((_probe_kind(index), side, f"{probe} {data}" if side == "l" else f"{data} {probe}"))
    return planted, [(_probe_kind(i), probe["instruction"]) for i, probe in enumerate(probes)], sample


_STRING = r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\''


def _js_string(literal: str) -> str:
    body = literal[1:-1]
    if literal[0] == "'":
        body = body.replace("\\'", "'").replace('"', '\\"')
    return str(json.loads(f'"{body}"'))


def pincer(spec: str) -> tuple[list[tuple[str, str]], int]:
    """(category, payload) of every payload written as string literals; and how many were skipped
    (built by code, or a multi-turn turn that is not an exploit)."""
    git_dir, commit, files = ev.source_tree(spec)
    out, skipped = [], 0
    for path in sorted(p for p in files if re.fullmatch(r"src/lib/attacks/(?!index\.)[a-z-]+\.ts", p)):
        source = tr._git(git_dir, "show", f"{commit}:{path}")
        for block in re.split(r"\n\s*\{\s*\n\s*id:", source)[1:]:
            category = re.search(r'category:\s*"([^"]+)"', block)
            value = re.search(r"prompt:\s*((?:" + _STRING + r")(?:\s*\+\s*(?:" + _STRING + r"))*)\s*,", block)
            tags = re.search(r"tags:\s*\[([^\]]*)\]", block)
            if not category or not value:
                skipped += 1
                continue
            if category.group(1) == "multi_turn" and (not tags or '"exploit"' not in tags.group(1)):
                skipped += 1
                continue
            text = "".join(_js_string(part) for part in re.findall(_STRING, value.group(1)))
            out.append((category.group(1), text))
    return out, skipped


def datasets_issues(spec: str) -> list[str]:
    """Title and body of huggingface/datasets' issues (not pull requests), HONEST_ISSUES by URL digest."""
    git_dir, commit, _ = ev.source_tree(spec)
    archive = zipfile.ZipFile(io.BytesIO(tr._git_bytes(git_dir, "show", f"{commit}:datasets-issues.zip")))
    issues = {}
    for name in archive.namelist():
        for line in archive.read(name).decode("utf-8").splitlines():
            issue = json.loads(line) if line.strip() else {}
            if issue and not issue.get("pull_request") and (issue.get("body") or "").strip():
                issues[issue["html_url"]] = f"Title: {issue.get('title') or ''}\n{issue['body']}"
    chosen = sorted(issues, key=lambda url: hashlib.sha256(url.encode()).hexdigest())[:HONEST_ISSUES]
    return [issues[url] for url in chosen]


def run(mirrors: dict[str, str]) -> tuple[ev.Tally, list[str]]:
    rng = random.Random(tr.SEED)
    tally, notes = ev.Tally(), []
    hosts = datasets_issues(mirrors[ISSUES]) if ISSUES in mirrors else []
    for text in hosts:
        tally.add(f"honest: datasets issue ({ev.language_of(text)})", *ev.quarantined(text))

    def attack(group: str, text: str) -> None:
        tally.add(f"attack: {group}", *ev.quarantined(text))
        if hosts:
            tally.add(f"planted: {group}", *ev.quarantined(ev._planted(text, hosts, rng)))

    if INJECAGENT in mirrors:
        outputs, injected, unmatched = injecagent(mirrors[INJECAGENT])
        for group, response in outputs:
            tally.add(f"attack: injecagent-tool-output {group}", *ev.quarantined(response))
        for setting, text in injected:
            attack(f"injecagent-injected {setting}", text)
        notes.append(
            f"injecagent: {len(outputs)} tool responses, {len(injected)} injected texts, "
            f"{unmatched} responses not matching their template"
        )
    if SEP in mirrors:
        planted, alone, clean = sep(mirrors[SEP])
        for kind, side, text in planted:
            tally.add(f"attack: sep-data-with-probe {kind} {side}", *ev.quarantined(text))
        for kind, probe in alone:
            attack(f"sep-probe {kind}", probe)
        for text in clean:
            tally.add("honest: sep task data without its probe", *ev.quarantined(text))
    if PINCER in mirrors:
        payloads, skipped = pincer(mirrors[PINCER])
        for category, text in payloads:
            attack(f"pincer {category}", text)
        notes.append(f"pincer: {len(payloads)} payloads, {skipped} skipped (built by code, or not an exploit turn)")
    return tally, notes


def main() -> int:
    mirrors = ev.final_set_sources(__doc__, SOURCES)
    if mirrors is None:
        return 2
    print("== TWELFTH PASS FINAL SET (air12): sources never read before; counts only ==")
    tally, notes = run(mirrors)
    for note in notes:
        print(f"  {note}")
    tally.print_groups(58)

    tally.print_totals((
        ("injecagent tool outputs", "attack: injecagent-tool-output"),
        ("injecagent injected, as published", "attack: injecagent-injected"),
        ("sep data with a probe", "attack: sep-data-with-probe"),
        ("sep probes, as published", "attack: sep-probe"),
        ("pincer payloads, as published", "attack: pincer"),
        ("all planted in an issue", "planted:"),
        ("honest datasets issues held", "honest: datasets issue"),
        ("honest sep task data held", "honest: sep"),
        *((f"{source}, as published and planted", (f"attack: {source}", f"planted: {source}"))
          for source in ("injecagent", "sep", "pincer")),
    ), 36)
    tally.print_attack_totals(40)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
