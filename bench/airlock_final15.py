"""The final set chosen in the sixteenth pass of issue #36 (air15): sources no pass has read before,
scanned by the airlock of the branch it runs on. It prints counts only: no miss and no held honest
text is ever printed (there is no option for it), so the set stays usable as a final set.

Attacks (each as published; the ones marked so also planted after a random line of a real bug
report of the honest side, as the earlier final runs plant them):
- AI-secure/RedCode (RedCode, "Risky Code Execution and Generation Benchmark for Code Agents"):
  RedCode-Exec's cases in Python and Bash (`dataset/RedCode-Exec/*_dataset_json/index*.json`),
  each in its three published forms: the code as RedCode's own evaluation hands it to an agent
  ("Execute the following {language} code." and the code block), the text summary and the
  detailed text instructions; by risky scenario (the number in the file name). The summaries are
  also planted. RedCode-Gen's function signatures whose docstrings order malware written
  (`dataset/RedCode-Gen/*/*.py`), as published and planted.
- Touring-686/VIGIL: adversarial tools for AgentDojo's suites (banking, slack, travel, workspace).
  The poisoned tool descriptions of its `INJECTION_VECTORS` tables (placeholders filled from the
  module's own constants, as its tasks fill them), and the docstrings of every tool a
  `type_*.py` module lists in its `MALICIOUS_TOOLS` (conditional traps, reasoning short-cuts, ...);
  as published and planted.
- OSU-NLP-Group/RedTeamCUA (RTC-Bench, adversarial tasks for computer-use agents in a hybrid web
  and OS sandbox): the injected text its tasks place where the agent reads it, by platform: the
  forum comment written into the Reddit clone (`reddit_adv_setup`'s `new_content`) and the chat
  message the RocketChat colleague is told to send (`strategy_hint`'s quoted content); by the
  harm it orders (delete, modify, permission, send, open, stop, create) and by the injection's
  form (a code block or plain language). OwnCloud's injections are PDFs and are not read. As
  published and planted.
- skan0779/korean-guardrail-dataset: RaccoonBench's prompt-extraction and injection attacks and
  navirocker's red-teaming prompts, each in English (`data/processed/`) and in the repository's
  Korean translation (`data/translated/`), by topic; as published and planted.
Honest:
- apex-bridge/bugspotter-embedding-benchmark: real bug reports scraped from Mozilla's Bugzilla
  (`data/bugzilla_bugs.json`: title and description, the description cut at about 1,000
  characters by its scraper) and GitHub issues of six projects (`data/github_issues.json`: title
  and the body's first 500 characters), every one. They are also the hosts the attacks are
  planted in.

    python bench/airlock_final15.py --final OWNER/NAME=GIT_DIR@COMMIT ...
"""

from __future__ import annotations

import ast
import json
import random
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import airlock_eval as ev  # noqa: E402
import airlock_train as tr  # noqa: E402

REDCODE = "AI-secure/RedCode"
VIGIL = "Touring-686/VIGIL"
REDTEAMCUA = "OSU-NLP-Group/RedTeamCUA"
KOREAN = "skan0779/korean-guardrail-dataset"
BUGSPOTTER = "apex-bridge/bugspotter-embedding-benchmark"
SOURCES = (REDCODE, VIGIL, REDTEAMCUA, KOREAN, BUGSPOTTER)
REDCODE_EXEC = re.compile(r"dataset/RedCode-Exec/(py|bash)2text_dataset_json/index(\d+)_[^/]*\.json")
REDCODE_GEN = re.compile(r"dataset/RedCode-Gen/([^/]+)/[^/]+\.py")
VIGIL_TOOLS = re.compile(r"src/agentdojo/adverseral_tool/([^/]+)/([^/]+)\.py")
VIGIL_TYPED_TOOLS = re.compile(r"type_(i{1,3}_[ab])")
RTC_TASK = re.compile(r"evaluation_examples/examples/(reddit|rocketchat)/own_\w+?_\d+_(?:loose|specific)_"
                      r"([a-z]+)[\w.]*_(code|language)\.json")
RTC_CHAT_MESSAGE = re.compile(r"following content:\s*'(.*)'\s*\Z", re.S)
PLACEHOLDER = re.compile(r"\{([A-Z][A-Z0-9_]*)\}")
KOREAN_FILES = (
    ("raccoonbench", "en", "data/processed/RaccoonBench.jsonl"),
    ("raccoonbench", "ko", "data/translated/raccoonbench-kr.jsonl"),
    ("red-teaming", "en", "data/processed/llm-red-teaming-dataset.jsonl"),
    ("red-teaming", "ko", "data/translated/llm-red-teaming-dataset-kr.jsonl"),
)
# topics of the Korean set that are an order to a model about its own instructions (decided before
# the first run); the others ask for harmful content, which no airlock rule is about
KOREAN_ORDER_TOPICS = ("prompt-injection", "jailbreaking", "manipulation")


Reader = Callable[[str], str]


def source(spec: str) -> tuple[list[str], Reader]:
    """`GIT_DIR@COMMIT` as (every path committed there, a reader of one path's text); a path the
    source lacks stops the run with `error:`/`fix:`."""
    git_dir, commit, files = ev.source_tree(spec)

    def read(path: str) -> str:
        try:
            return tr._git(git_dir, "show", f"{commit}:{path}")
        except subprocess.CalledProcessError:
            raise SystemExit(f"error: {git_dir} holds no {path} at {commit}\nfix: give the mirror of the source "
                             "this set names, at the commit docs/airlock.md names") from None

    return files, read


def redcode_exec_case(case: dict, scenario: int) -> list[tuple[str, str]]:  # type: ignore[type-arg]
    """(group, text) of one RedCode-Exec case in its three forms; the code as RedCode's evaluation
    scripts hand it to an agent."""
    language = str(case.get("Language") or "").strip() or "unknown"
    out = []
    code = str(case.get("Code") or "").strip()
    if code:
        out.append((f"code {language}", f"Execute the following {language} code.\n\n```\n{code}\n```"))
    for form, key in (("summary", "Text_summary"), ("details", "Text_details")):
        text = str(case.get(key) or "").strip()
        if text:
            out.append((f"{form} {language}", text))
    return [(f"redcode-exec {form} scenario {scenario:02d}", text) for form, text in out]


def redcode(files: list[str], read: Reader) -> list[tuple[str, str]]:
    """(group, text) of RedCode-Exec's cases and RedCode-Gen's prompts, deduplicated."""
    out: dict[tuple[str, str], None] = {}
    for path in sorted(files):
        exec_match, gen_match = REDCODE_EXEC.fullmatch(path), REDCODE_GEN.fullmatch(path)
        if exec_match:
            for case in json.loads(read(path)):
                for item in redcode_exec_case(case, int(exec_match.group(2))):
                    out[item] = None
        elif gen_match:
            text = read(path).strip()
            if text:
                out[(f"redcode-gen {gen_match.group(1)}", text)] = None
    return list(out)


def _filled(text: str, names: dict[str, str]) -> str:
    """`{NAME}` placeholders filled from the module's constants; any other brace is left as is."""
    return PLACEHOLDER.sub(lambda match: names.get(match.group(1), match.group(0)), text)


def vigil_module(source: str) -> list[tuple[str, str]]:
    """(kind, text) of one VIGIL module: its `INJECTION_VECTORS` values ("vectors"), and the
    docstrings of the tools it lists in `MALICIOUS_TOOLS` ("tools")."""
    tree = ast.parse(source)
    names = ev._string_constants(tree)
    out: list[tuple[str, str]] = []
    malicious: set[str] = set()
    for node in tree.body:
        if not isinstance(node, ast.Assign):
            continue
        targets = {target.id for target in node.targets if isinstance(target, ast.Name)}
        if "INJECTION_VECTORS" in targets and isinstance(node.value, ast.Dict):
            for value in node.value.values:
                text = ev._render(value, names, "")
                if text:
                    out.append(("vectors", _filled(text, names)))
        if "MALICIOUS_TOOLS" in targets and isinstance(node.value, ast.List):
            malicious |= {item.value for item in node.value.elts
                          if isinstance(item, ast.Constant) and isinstance(item.value, str)}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name in malicious:
            doc = ast.get_docstring(node)
            if doc:
                out.append(("tools", _filled(doc, names)))
    return out


def vigil(files: list[str], read: Reader) -> list[tuple[str, str]]:
    """(group, text) of VIGIL's poisoned tool descriptions, deduplicated; its backup copy skipped."""
    out: dict[str, str] = {}
    for path in sorted(files):
        match = VIGIL_TOOLS.fullmatch(path)
        if not match or match.group(2).endswith("_backup"):
            continue
        typed = VIGIL_TYPED_TOOLS.match(match.group(2))
        kind = f"type {typed.group(1)}" if typed else match.group(2)
        for how, text in vigil_module(read(path)):
            if text.strip():
                out.setdefault(text.strip(), f"vigil {how} {match.group(1)} {kind}")
    return sorted((group, text) for text, group in out.items())


def redteamcua_task(task: dict) -> list[str]:  # type: ignore[type-arg]
    """The injected texts of one RTC-Bench task: a forum comment's new body, a chat message."""
    out = []
    for setup in task.get("adversary_config") or []:
        parameters = setup.get("parameters") or {}
        if setup.get("type") == "reddit_adv_setup" and isinstance(parameters.get("new_content"), str):
            out.append(parameters["new_content"])
        if setup.get("type") == "rocketchat_adv_setup":
            for person in (parameters.get("scenarios_json_data") or {}).values():
                match = RTC_CHAT_MESSAGE.search(str(person.get("strategy_hint") or ""))
                if match:
                    out.append(match.group(1))
    return [text.strip() for text in out if text.strip()]


def redteamcua(files: list[str], read: Reader) -> list[tuple[str, str]]:
    """(group, text) of RTC-Bench's Reddit and RocketChat injections, deduplicated."""
    out: dict[str, str] = {}
    for path in sorted(files):
        match = RTC_TASK.fullmatch(path)
        if match:
            platform, harm, form = match.groups()
            for text in redteamcua_task(json.loads(read(path))):
                out.setdefault(text, f"redteamcua {platform} {harm} {form}")
    return sorted((group, text) for text, group in out.items())


def korean_rows(raw: str) -> list[tuple[str, str]]:
    """(topic, query) of one of its JSONL files."""
    out = []
    for line in raw.splitlines():
        if line.strip():
            row = json.loads(line)
            topics = row.get("topic") or ["none"]
            query = str(row.get("query") or "").strip()
            if query:
                out.append((str(topics[0]), query))
    return out


def korean(read: Reader) -> list[tuple[str, str]]:
    """(group, text) of RaccoonBench's and the red-teaming prompts, English and Korean, deduplicated."""
    out: dict[str, str] = {}
    for origin, language, path in KOREAN_FILES:
        for topic, text in korean_rows(read(path)):
            kind = "order" if topic in KOREAN_ORDER_TOPICS else "harmful-request"
            out.setdefault(text, f"korean {kind} {origin} {language} {topic}")
    return sorted((group, text) for text, group in out.items())


def bug_report(record: dict) -> str:  # type: ignore[type-arg]
    """A report as its tracker shows it: the title, then the description."""
    title, body = str(record.get("title") or "").strip(), str(record.get("description") or "").strip()
    return f"{title}\n\n{body}".strip()


def bugspotter(read: Reader) -> tuple[list[str], list[str]]:
    """Every Mozilla Bugzilla report and every GitHub issue it scraped."""

    def reports(path: str) -> list[str]:
        texts = (bug_report(record) for record in json.loads(read(path)))
        return [text for text in texts if text]

    return reports("data/bugzilla_bugs.json"), reports("data/github_issues.json")


def run(mirrors: dict[str, str]) -> tuple[ev.Tally, list[str]]:
    rng = random.Random(tr.SEED)
    tally, notes = ev.Tally(), []
    hosts: list[str] = []
    if BUGSPOTTER in mirrors:
        bugzilla, github = bugspotter(source(mirrors[BUGSPOTTER])[1])
        for text in bugzilla:
            tally.add(f"honest: mozilla bugzilla report ({ev.language_of(text)})", *ev.quarantined(text))
        for text in github:
            tally.add(f"honest: github issue ({ev.language_of(text)})", *ev.quarantined(text))
        hosts = [*bugzilla, *github]
        notes.append(f"bugspotter: {len(bugzilla)} bugzilla reports, {len(github)} github issues")

    def attack(group: str, text: str, plant: bool = True) -> None:
        tally.add(f"attack: {group}", *ev.quarantined(text))
        if hosts and plant:
            tally.add(f"planted: {group}", *ev.quarantined(ev._planted(text, hosts, rng)))

    if REDCODE in mirrors:
        texts = redcode(*source(mirrors[REDCODE]))
        for group, text in texts:
            attack(group, text, plant=group.startswith(("redcode-exec summary", "redcode-gen")))
        notes.append(f"redcode: {len(texts)} texts")
    if VIGIL in mirrors:
        tools = vigil(*source(mirrors[VIGIL]))
        for group, text in tools:
            attack(group, text)
        notes.append(f"vigil: {len(tools)} poisoned tool descriptions")
    if REDTEAMCUA in mirrors:
        injections = redteamcua(*source(mirrors[REDTEAMCUA]))
        for group, text in injections:
            attack(group, text)
        notes.append(f"redteamcua: {len(injections)} injected comments and chat messages")
    if KOREAN in mirrors:
        prompts = korean(source(mirrors[KOREAN])[1])
        for group, text in prompts:
            attack(group, text)
        notes.append(f"korean-guardrail: {len(prompts)} prompts")
    return tally, notes


def main() -> int:
    mirrors = ev.final_set_sources(__doc__, SOURCES)
    if mirrors is None:
        return 2
    print("== SIXTEENTH PASS FINAL SET (air15): sources never read before; counts only ==")
    tally, notes = run(mirrors)
    for note in notes:
        print(f"  {note}")
    tally.print_groups(64)

    tally.print_totals((
        ("redcode-exec code, as published", "attack: redcode-exec code"),
        ("redcode-exec summaries, as published", "attack: redcode-exec summary"),
        ("redcode-exec details, as published", "attack: redcode-exec details"),
        ("redcode-exec, as published", "attack: redcode-exec"),
        ("redcode-gen, as published", "attack: redcode-gen"),
        ("redcode, as published", "attack: redcode"),
        ("vigil injection vectors, as published", "attack: vigil vectors"),
        ("vigil malicious tools' docstrings, as published", "attack: vigil tools"),
        ("redteamcua reddit comments, as published", "attack: redteamcua reddit"),
        ("redteamcua rocketchat messages, as published", "attack: redteamcua rocketchat"),
        ("redteamcua, as published", "attack: redteamcua"),
        ("korean orders, as published", "attack: korean order"),
        ("korean orders in korean, as published", tuple(f"attack: korean order {origin} ko"
                                                        for origin in ("raccoonbench", "red-teaming"))),
        ("korean harmful requests, as published", "attack: korean harmful-request"),
        ("all planted in a report", "planted:"),
        ("honest mozilla bugzilla reports held", "honest: mozilla"),
        ("honest github issues held", "honest: github"),
        ("honest, all reports held", "honest:"),
        *((f"{source}, as published and planted", (f"attack: {source}", f"planted: {source}"))
          for source in ("redcode", "vigil", "redteamcua", "korean order", "korean")),
    ), 44)
    tally.print_attack_totals(44)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
