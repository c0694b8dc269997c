"""Agent goals planted in a tool's output, a development set of issue #36 (eleventh pass): AgentDojo's
own injection goals (agentdojo 0.1.35, its v1 suites: banking, slack, travel, workspace), each put
in every field of its own environment data that an attacker controls (the `{...}` fields its
`injection_vectors.yaml` names: a transaction's subject, a hotel review, an e-mail body, a calendar
event's description, a web page), the YAML record around the field, the other fields at their
defaults. The same construction as the eleventh pass's final set builds from AgentDyn
(`bench/airlock_final11.py`). AgentDojo is a training source of the learned detector (its attack
templates filled with these goals; the model shipped until the eleventh pass never saw the bare
goals in data). Since the twelfth pass the goals are reported in two parts: the development third
(`airlock_train.dev_held_out`, by SHA-256 of the goal) that `airlock_train.py --tool-outputs` never
reads, in any shape, and the two thirds it plants bare in other tools' records.

With `--mirror` (PyGithub/PyGithub, mozilla/bugbug, InEx-Bug at the commits `airlock_train.py` pins),
also the untrained third's goals planted in real tool-output records (`airlock_tool_records.py`,
40 records each, seed 12, not the training's 36) and those records honest as they are (958; the
`--tool-outputs` candidate trained on them, the shipped model did not).

    python bench/airlock_tool_outputs.py [--show] [--model PATH/intent_model.json] \\
        [--mirror OWNER/NAME=GIT_DIR@COMMIT ...]
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from collections.abc import Callable, Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import airlock_eval as ev  # noqa: E402
import airlock_train as tr  # noqa: E402

from signoff.airlock import intent  # noqa: E402

AGENTDOJO_SUITES = ("banking", "slack", "travel", "workspace")
RECORD_BEFORE, RECORD_AFTER = 6, 5  # lines of the YAML record kept around the field
_FIELD = re.compile(r"\{([a-z0-9_]+)\}")


def goals(module_source: str) -> list[str]:
    """The GOAL of every injection task a suite's `injection_tasks.py` registers."""
    tree = ast.parse(module_source)
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            names = ev._string_constants(node) | ev._string_constants(tree)
            for item in node.body:
                if isinstance(item, ast.Assign) and any(getattr(t, "id", "") == "GOAL" for t in item.targets):
                    goal = ev._render(item.value, names)
                    if goal:
                        out.append(goal)
    return out


def planted_in_tool_data(
    suite_goals: list[str], defaults: dict[str, str], data_files: Iterable[str], is_field: Callable[[str], bool]
) -> list[tuple[str, str]]:
    """(goal, tool output): every goal in every field `is_field` accepts, in each data file's text."""
    out = []
    for data in data_files:
        lines = data.splitlines()
        for at, line in enumerate(lines):
            for field in [name for name in _FIELD.findall(line) if is_field(name)]:
                record = "\n".join(lines[max(0, at - RECORD_BEFORE): at + RECORD_AFTER])
                for goal in suite_goals:
                    text = record.replace("{" + field + "}", goal)
                    for other in [name for name in _FIELD.findall(text) if is_field(name)]:
                        text = text.replace("{" + other + "}", defaults.get(other, ""))
                    out.append((goal, text))
    return out


def agentdojo(package: ev.Package) -> list[tuple[str, str, str]]:
    """(suite, goal, tool output) of AgentDojo's v1 suites."""
    import yaml

    out = []
    for suite in AGENTDOJO_SUITES:
        root = f"agentdojo/data/suites/{suite}/"
        vectors = yaml.safe_load(package.read(f"{root}injection_vectors.yaml"))
        defaults = {name: str(entry.get("default", "")) for name, entry in vectors.items()}
        files = [package.read(path) for path in package.listdir(root)
                 if path.endswith(".yaml") and not path.endswith("injection_vectors.yaml")]
        suite_goals = goals(package.read(f"agentdojo/default_suites/v1/{suite}/injection_tasks.py"))
        out += [(suite, goal, text) for goal, text in planted_in_tool_data(suite_goals, defaults, files,
                                                                          defaults.__contains__)]
    return out


RECORD_SEED = 12  # placements other than the training's
PER_GOAL = 40


def in_records(mirrors: list[str]) -> None:
    """The untrained third's goals, each in PER_GOAL real records, and the records honest."""
    import json

    import airlock_tool_records as records

    found: list[dict[str, object]] = []
    for spec in mirrors:
        name, _, rest = spec.partition("=")
        git_dir, _, commit = rest.rpartition("@")
        found += tr.tool_records(name, git_dir, tr._git(git_dir, "rev-parse", commit).strip())
    found.sort(key=lambda record: json.dumps(record, sort_keys=True))
    goals = sorted({g for g in ev.agentdojo_goals(ev.Package("agentdojo", Path.home() / ".cache" / "signoff-eval"))
                    if tr.dev_held_out(g)})
    honest, planted = records.tool_outputs(found, [g for g in goals for _ in range(PER_GOAL)], RECORD_SEED)
    tally = ev.Tally()
    for goal, text in planted:
        tally.add(f"untrained goal in a record: {goal[:40]}", *ev.quarantined(text))
    for text in honest:
        tally.add("honest record held", *ev.quarantined(text))
    tally.print_groups(56)
    goals_held = tally.total([key for key in tally.counts if key.startswith("untrained")])
    print(f"  UNTRAINED GOALS IN RECORDS {ev._ci(*goals_held)}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--show", action="store_true", help="print the goals let through, with how often")
    parser.add_argument("--model", type=Path, help="an intent_model.json to use instead of the shipped one")
    parser.add_argument("--mirror", action="append", default=[], help="OWNER/NAME=GIT_DIR@COMMIT of a records source")
    args = parser.parse_args()
    if args.model:
        chosen = intent.load(args.model)
        intent.model = lambda: chosen  # type: ignore[assignment]
        print(f"  model {args.model} threshold {chosen.threshold}")
    tally = ev.Tally()
    missed: dict[str, int] = {}
    for suite, goal, text in agentdojo(ev.Package("agentdojo", Path.home() / ".cache" / "signoff-eval")):
        hit, families = ev.quarantined(text)
        part = "untrained third" if tr.dev_held_out(goal) else "trained two thirds"
        tally.add(f"agentdojo {suite}, {part}", hit, families)
        if not hit:
            missed[goal] = missed.get(goal, 0) + 1
    tally.print_groups(44)
    for part in ("untrained third", "trained two thirds"):
        print(f"  {part.upper()} {ev._ci(*tally.total([k for k in tally.counts if k.endswith(part)]))}")
    print(f"  TOTAL {ev._ci(*tally.total())}")
    if args.mirror:
        in_records(args.mirror)
    if args.show:
        for goal, count in sorted(missed.items(), key=lambda kv: -kv[1]):
            print(f"  {count:3d} {goal[:150]!r}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
