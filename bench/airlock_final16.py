"""The final set chosen in the seventeenth pass of issue #36 (air16w): orders planted in content a
web or mail agent reads, from sources no pass has read before, scanned by the airlock of the branch
it runs on. It prints counts only: no miss and no held honest text is ever printed (there is no
option for it), so the set stays usable as a final set.

Attacks (each as published, and planted after a random line of a real bug report of the honest
side, as the earlier final runs plant them):
- AI-secure/AdvWeb (AdvWeb, "Controllable Black-box Attacks on VLM-powered Web Agents"): the
  adversarial strings its attacker model wrote to be hidden in a web page's HTML
  (`data/task_demo_-1_aug/together/data/dpo_{train,test}.jsonl`, both the `chosen` and the
  `rejected` string of every row: each is an injection the attacker produced), deduplicated.
- ServiceNow/DoomArena (attacks on web, mail and tool agents): the injected e-mails of its
  mail-agent attacks (`Email(content=...)` in `mailinject/.../run_mailinject_attacks.py`), and
  the text its BrowserGym attacks put into a page (every string literal of eight words or more in
  `browsergym/.../attacks/{banner_attacks,popup_attacks,user_generated_content,div_injection}.py`:
  banners, alt texts, pop-ups, forum comments, injected forms), deduplicated.
Honest (report only: air15's honest set, already seen once):
- apex-bridge/bugspotter-embedding-benchmark, read as `airlock_final15.py` reads it; also the hosts
  the attacks are planted in.

    python bench/airlock_final16.py --final OWNER/NAME=GIT_DIR@COMMIT ...
"""

from __future__ import annotations

import ast
import json
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import airlock_eval as ev  # noqa: E402
import airlock_final15 as f15  # noqa: E402
import airlock_train as tr  # noqa: E402

ADVWEB = "AI-secure/AdvWeb"
DOOMARENA = "ServiceNow/DoomArena"
BUGSPOTTER = f15.BUGSPOTTER
SOURCES = (ADVWEB, DOOMARENA, BUGSPOTTER)
ADVWEB_FILES = tuple(f"data/task_demo_-1_aug/together/data/dpo_{split}.jsonl" for split in ("train", "test"))
DOOM_MAIL = "doomarena/mailinject/src/doomarena/mailinject/scripts/run_mailinject_attacks.py"
DOOM_WEB = tuple(f"doomarena/browsergym/src/doomarena/browsergym/attacks/{name}.py"
                 for name in ("banner_attacks", "popup_attacks", "user_generated_content", "div_injection"))
MIN_WORDS = 8


def advweb_rows(raw: str) -> list[str]:
    """The `chosen` and `rejected` adversarial strings of one AdvWeb DPO file."""
    out = []
    for line in raw.splitlines():
        if line.strip():
            row = json.loads(line)
            out += [str(row.get(key) or "").strip() for key in ("chosen", "rejected")]
    return [text for text in out if text]


def advweb(read: f15.Reader) -> list[tuple[str, str]]:
    out: dict[str, str] = {}
    for path in ADVWEB_FILES:
        for text in advweb_rows(read(path)):
            out.setdefault(text, "advweb html injection")
    return sorted((group, text) for text, group in out.items())


def mail_contents(source: str) -> list[str]:
    """The `content` of every `Email(...)` a module builds from string literals."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Email":
            for keyword in node.keywords:
                if keyword.arg == "content" and isinstance(keyword.value, ast.Constant) \
                        and isinstance(keyword.value.value, str):
                    out.append(keyword.value.value.strip())
    return [text for text in out if text]


def page_texts(source: str) -> list[str]:
    """Every string literal of MIN_WORDS words or more in a module, docstrings left out (f-strings'
    literal parts are left out too: their holes are filled at run time)."""
    docstrings = set()
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                docstrings.add(id(first.value))
    in_fstring = {id(part) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr) for part in node.values}
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings \
                and id(node) not in in_fstring and len(node.value.split()) >= MIN_WORDS:
            out.append(node.value.strip())
    return out


def doomarena(read: f15.Reader) -> list[tuple[str, str]]:
    out: dict[str, str] = {}
    for text in mail_contents(read(DOOM_MAIL)):
        out.setdefault(text, "doomarena mail")
    for path in DOOM_WEB:
        module = Path(path).stem
        for text in page_texts(read(path)):
            out.setdefault(text, f"doomarena web {module}")
    return sorted((group, text) for text, group in out.items())


def run(mirrors: dict[str, str]) -> tuple[ev.Tally, list[str]]:
    rng = random.Random(tr.SEED)
    tally, notes = ev.Tally(), []
    hosts: list[str] = []
    if BUGSPOTTER in mirrors:
        bugzilla, github = f15.bugspotter(f15.source(mirrors[BUGSPOTTER])[1])
        for text in bugzilla:
            tally.add(f"honest: mozilla bugzilla report ({ev.language_of(text)})", *ev.quarantined(text))
        for text in github:
            tally.add(f"honest: github issue ({ev.language_of(text)})", *ev.quarantined(text))
        hosts = [*bugzilla, *github]
        notes.append(f"bugspotter: {len(bugzilla)} bugzilla reports, {len(github)} github issues")

    def attack(group: str, text: str) -> None:
        tally.add(f"attack: {group}", *ev.quarantined(text))
        if hosts:
            tally.add(f"planted: {group}", *ev.quarantined(ev._planted(text, hosts, rng)))

    if ADVWEB in mirrors:
        texts = advweb(f15.source(mirrors[ADVWEB])[1])
        for group, text in texts:
            attack(group, text)
        notes.append(f"advweb: {len(texts)} adversarial strings")
    if DOOMARENA in mirrors:
        texts = doomarena(f15.source(mirrors[DOOMARENA])[1])
        for group, text in texts:
            attack(group, text)
        notes.append(f"doomarena: {len(texts)} injected e-mails and page texts")
    return tally, notes


def main() -> int:
    mirrors = ev.final_set_sources(__doc__, SOURCES)
    if mirrors is None:
        return 2
    print("== SEVENTEENTH PASS FINAL SET (air16w): orders planted for web and mail agents; counts only ==")
    tally, notes = run(mirrors)
    for note in notes:
        print(f"  {note}")
    tally.print_groups(64)
    tally.print_totals((
        ("advweb, as published", "attack: advweb"),
        ("doomarena mail, as published", "attack: doomarena mail"),
        ("doomarena web, as published", "attack: doomarena web"),
        ("doomarena, as published", "attack: doomarena"),
        ("all planted in a report", "planted:"),
        ("honest mozilla bugzilla reports held", "honest: mozilla"),
        ("honest github issues held", "honest: github"),
        ("honest, all reports held", "honest:"),
        *((f"{source}, as published and planted", (f"attack: {source}", f"planted: {source}"))
          for source in ("advweb", "doomarena")),
    ), 44)
    tally.print_attack_totals(44)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
