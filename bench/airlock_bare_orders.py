"""Bare orders in data (issue #36, thirteenth pass): the sources of the eleventh and twelfth passes'
final sets, read as training and development data now that their one first-sight figure is
recorded, each split by SHA-256 (`airlock_train.dev_held_out` of a key: the goal, the attacker's
instruction, the probe, the prompt) into two thirds `airlock_train.py --bare-orders` trains on and
a third no model is trained on. The readers are the final sets' own (`airlock_final11.py`,
`airlock_final12.py`).

Run alone, it scans the untrained third of every source (the development figures of the pass):

    python bench/airlock_bare_orders.py [--model PATH/intent_model.json] --mirror OWNER/NAME=GIT_DIR@COMMIT ...

It prints counts only."""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import airlock_final11 as f11  # noqa: E402
import airlock_final12 as f12  # noqa: E402
import airlock_train as tr  # noqa: E402

SOURCES = (f11.AGENTDYN, f11.HACKAPROMPT, f11.LEARN_PROMPTING, f12.INJECAGENT, f12.SEP, f12.PINCER)
# examples whose attack sits inside a record's line or a data item (not a sentence of its own):
# their training windows are found by the attack's parts (`airlock_train.feature_sets`)
INSIDE = ("agentdyn goals in tool data", "injecagent tool responses", "sep probes in task data")


@dataclass(frozen=True)
class Item:
    source: str
    label: int
    text: str
    key: str  # what decides the split: a goal keeps all its placements on one side
    planted: str = ""
    detail: str = ""  # for the development figures: InjecAgent's setting, SEP's kind of probe


def _spec(git_dir: str, commit: str) -> str:
    return f"{git_dir}@{commit}"


def agentdyn(spec: str) -> list[Item]:
    out = []
    goals: set[str] = set()
    for _suite, goal, text in f11.agentdyn(spec):
        out.append(Item("agentdyn goals in tool data", 1, text, goal, goal))
        goals.add(goal)
    return out + [Item("agentdyn goals", 1, goal, goal) for goal in sorted(goals)]


def hackaprompt(spec: str) -> list[Item]:
    return [Item("hackaprompt submissions", 1, prompt, prompt) for _level, prompt in f11.hackaprompt(spec)]


def learn_prompting(spec: str) -> list[Item]:
    out = [Item("learn prompting attack examples", 1, text, text) for _lang, text in f11.learn_prompting_attacks(spec)]
    return out + [Item("learn prompting prose", 0, text, text) for _lang, text in f11.learn_prompting_prose(spec)]


PER_TEMPLATE = 24  # honest fills of each of InjecAgent's 17 response templates (training)


def injecagent(spec: str, fills: list[str], per_template: int = PER_TEMPLATE) -> list[Item]:
    """Every test case's tool response (attack, keyed by its attacker instruction); the injected text
    once per setting; and, for the carrier's honest side, each response template filled with an
    honest sentence (`fills`, taken in order) instead of the attacker's text."""
    git_dir, commit, files = f12.ev.source_tree(spec, show=False)
    out, seen_templates = [], set()
    for path in sorted(files):
        match = re.fullmatch(r"data/test_cases_(dh|ds)_(\w+)\.json", path)
        if not match:
            continue
        for case in json.loads(tr._git(git_dir, "show", f"{commit}:{path}")):
            instruction = case["Attacker Instruction"]
            response = case["Tool Response"]
            template = case["Tool Response Template"]
            bare = response[1:-1] if len(response) > 1 and response[0] == response[-1] == '"' else response
            before, _, after = template.partition(f12.INJECTED)
            injected = instruction
            if bare.startswith(before) and bare.endswith(after) and len(bare) >= len(before) + len(after):
                injected = bare[len(before): len(bare) - len(after)].strip() or instruction
            setting = match.group(2)
            out.append(Item("injecagent tool responses", 1, response, instruction, injected, setting))
            out.append(Item("injecagent injected texts", 1, injected, instruction, "", setting))
            if f12.INJECTED in template:
                seen_templates.add(template)
    number = 0
    for template in sorted(seen_templates):
        for _ in range(per_template if fills else 0):
            fill = fills[number % len(fills)]
            number += 1
            out.append(Item("injecagent tool responses, honest", 0, template.replace(f12.INJECTED, fill), fill))
    return out


def sep(spec: str) -> list[Item]:
    """SEP's probes alone; its task data honest; and each task item with one probe of its own side of
    the split (a held-out probe only in held-out data), before or after it, as its insert_probes does."""
    probes, sample = f12._sep_sample(spec)
    texts = [probe["instruction"] for probe in probes]
    out = [Item("sep probes", 1, probe, probe, "", f12._probe_kind(i)) for i, probe in enumerate(texts)]
    out += [Item("sep task data", 0, data, data) for data in sample]
    rng = random.Random(tr.SEED)
    sides = {held: [p for p in texts if tr.dev_held_out(p) == held] for held in (True, False)}
    for data in sample:
        pool = sides[tr.dev_held_out(data)]
        probe, side = pool[rng.randrange(len(pool))], rng.choice("lr")
        text = f"{probe} {data}" if side == "l" else f"{data} {probe}"
        out.append(Item("sep probes in task data", 1, text, data, probe, f12._probe_kind(texts.index(probe))))
    return out


def pincer(spec: str) -> list[Item]:
    payloads, _skipped = f12.pincer(spec)
    return [Item(f"pincer payloads ({category})", 1, text, text) for category, text in payloads]


def items(name: str, git_dir: str, commit: str, fills: list[str], per_template: int = PER_TEMPLATE) -> list[Item]:
    spec = _spec(git_dir, commit)
    if name == f11.AGENTDYN:
        return agentdyn(spec)
    if name == f11.HACKAPROMPT:
        return hackaprompt(spec)
    if name == f11.LEARN_PROMPTING:
        return learn_prompting(spec)
    if name == f12.INJECAGENT:
        return injecagent(spec, fills, per_template)
    if name == f12.SEP:
        return sep(spec)
    if name == f12.PINCER:
        return pincer(spec)
    return []


def held(item: Item) -> bool:
    """The untrained third: decided by the key, and for SEP's planted items by the probe too."""
    return tr.dev_held_out(item.key) and (not item.planted or item.source != "sep probes in task data"
                                          or tr.dev_held_out(item.planted))


BARE = ("agentdyn goals", "pincer payloads (tool_abuse)")  # with InjecAgent's base and SEP's plain: orders in carriers
DEV_FILLS = (  # honest sentences written here for the development run's honest tool responses
    "Works as described, battery lasts about two days.",
    "Meeting moved to Thursday at 10am in room B.",
    "Reminder: the quarterly report is due next Friday.",
    "Thanks for the quick delivery, the package arrived intact.",
)


CARRIER_SEED = 12  # placements other than the training's
HONEST_MIRRORS = ("mozilla/bugbug", "STASER-Lab/InEx-Bug", "tiangolo/fastapi", "PyGithub/PyGithub", "pallets/click",
                  "encode/starlette", "expressjs/express")


def dev_carriers(mirrors: list[str], orders: list[str]) -> tuple[list[tuple[str, str]], list[tuple[str, str, str]]]:
    """The untrained third's bare orders in e-mails, tables, code and web pages built from material
    the training's carriers did not use (other reports, other source files), and as many honest."""
    import airlock_carriers as carriers

    examples: list[tr.Example] = []
    records: list[dict[str, object]] = []
    for name, git_dir, commit in tr._specs(mirrors):
        if name.startswith(HONEST_MIRRORS[:3]):
            examples += tr.mirror_examples(name, git_dir, commit)
        records += tr.tool_records(name, git_dir, commit)
    reports = sorted(e.text for e in examples if e.label == 0 and e.source.startswith(tr.HOST_SOURCES[1:]))
    docs = sorted((e.text for e in examples if e.source.startswith("fastapi docs") and e.text.isascii()), reverse=True)
    records.sort(key=lambda r: json.dumps(r, sort_keys=True))
    random.Random(CARRIER_SEED).shuffle(records)
    order_list = sorted(set(orders))
    attacks = [order for order in order_list for _ in range(len(carriers.CARRIERS))]
    return carriers.build(reports[1::3], records, tr.code_files(mirrors, tr.CODE_FILES), docs, attacks, CARRIER_SEED)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mirror", action="append", default=[], help="OWNER/NAME=GIT_DIR@COMMIT of a source above")
    parser.add_argument("--model", type=Path, help="an intent_model.json to use instead of the shipped one")
    parser.add_argument("--honest-mirror", action="append", default=[],
                        help="OWNER/NAME=GIT_DIR@COMMIT of the honest material for the carriers (see HONEST_MIRRORS)")
    args = parser.parse_args()
    import airlock_eval as ev

    if args.model:
        tr.use_model(args.model)
    tally = ev.Tally()
    orders: list[str] = []
    for spec in args.mirror:
        name, _, rest = spec.partition("=")
        git_dir, _, commit = rest.rpartition("@")
        commit = tr._git(git_dir, "rev-parse", commit).strip()
        print(f"  {name} {commit}")
        for item in items(name, git_dir, commit, list(DEV_FILLS), len(DEV_FILLS)):
            # the honest tool responses of this run are filled with DEV_FILLS, never trained on
            if held(item) or item.source == "injecagent tool responses, honest":
                side = "attack" if item.label else "honest"
                tally.add(f"{side}: {item.source} {item.detail}".rstrip(), *ev.quarantined(item.text))
                if held(item) and not item.planted and (item.detail in ("base", "plain") or item.source in BARE):
                    orders.append(item.text)
    if args.honest_mirror:
        goals = [g for g in ev.agentdojo_goals(ev.Package("agentdojo", Path.home() / ".cache/signoff-eval"))
                 if tr.dev_held_out(g)]
        honest, planted = dev_carriers(args.honest_mirror, orders + goals)
        for kind, text in honest:
            tally.add(f"honest: carrier {kind}", *ev.quarantined(text))
        for kind, _attack, text in planted:
            tally.add(f"attack: carrier {kind}", *ev.quarantined(text))
    tally.print_groups(58)
    print(f"  TOTAL untrained third, attacks {tally.total_of('attack')}")
    print(f"  TOTAL untrained third, honest held {tally.total_of('honest')}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
