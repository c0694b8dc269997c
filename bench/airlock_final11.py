"""The final set chosen in the eleventh pass of issue #36: sources no pass has read before, scanned
by the shipped airlock once, before any change made for them (their misses are never printed).

Attacks (each as published and planted after a random line of a real issue report of the honest
side, as the earlier final run plants them):
- leolee99/AgentDyn: the injection goals of its three new agent suites (github, shopping,
  dailylife), each put in every place of the suite's tool data an attacker controls (the
  `{injection_...}` fields of its environment: an issue body, a file, an e-mail, a web page, a
  product review), the other fields at their defaults: an order inside a tool's output. Only the
  bare goal: the attack wrappers AgentDyn runs them with are AgentDojo's, which the detector was
  trained on.
- gstaff/hackaprompt-solutions: one team's submissions to the HackAPrompt 2023 competition (goal
  hijacks that make a model say "I have been PWNED", a secret key asked for), per level.
- wamaw123/Learn_Prompting_FR: Learn Prompting's prompt-hacking pages (injection, leaking,
  jailbreaking and the offensive measures) in English and their translations (es, fr, id, pt, uk,
  zh-Hans): the example prompts of their code blocks and <pre> examples, the model's highlighted
  output left out.
Honest:
- TeamPML/GuthubSecurityIssues: GitHub issues of matomo-org/matomo as its data keeps them (the
  GitHub API's pages; pull requests left out), title and body, 500 chosen by SHA-256 of the URL.
- wamaw123/Learn_Prompting_FR: the translated prose of the pages that are not about prompt hacking
  (paragraphs outside code, <pre> and markup, in runs of up to five), 30 runs per language.

    python bench/airlock_final11.py --final OWNER/NAME=GIT_DIR@COMMIT ...
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import airlock_eval as ev  # noqa: E402
import airlock_tool_outputs as tool_outputs  # noqa: E402
import airlock_train as tr  # noqa: E402

AGENTDYN = "leolee99/AgentDyn"
HACKAPROMPT = "gstaff/hackaprompt-solutions"
LEARN_PROMPTING = "wamaw123/Learn_Prompting_FR"
ISSUES = "TeamPML/GuthubSecurityIssues"
SOURCES = (AGENTDYN, HACKAPROMPT, LEARN_PROMPTING, ISSUES)
AGENTDYN_SUITES = ("github", "shopping", "dailylife")  # the three suites AgentDyn adds to AgentDojo's
OFFENSIVE_PAGES = ("injection.md", "leaking.md", "jailbreaking.md", "offensive_measures/")
HONEST_ISSUES = 500
PROSE_PER_LANGUAGE = 30


def agentdyn(spec: str) -> list[tuple[str, str, str]]:
    """(suite, goal, tool output): every goal in every injection field of the suite's tool data, the
    lines of the YAML record around the field, the other fields at their defaults."""
    import yaml

    git_dir, commit, files = ev.source_tree(spec)
    out = []
    for suite in AGENTDYN_SUITES:
        root = f"src/agentdojo/data/suites/{suite}/"
        defaults = {name: str(entry.get("default", "")) for name, entry in
                    yaml.safe_load(tr._git(git_dir, "show", f"{commit}:{root}injection_vectors.yaml")).items()}
        suite_goals = tool_outputs.goals(
            tr._git(git_dir, "show", f"{commit}:src/agentdojo/default_suites/v1/{suite}/injection_tasks.py"))
        data = [tr._git(git_dir, "show", f"{commit}:{path}") for path in sorted(files)
                if path.startswith(f"{root}include/") and path.endswith(".yaml")]
        planted = tool_outputs.planted_in_tool_data(suite_goals, defaults, data, _is_injection_field)
        out += [(suite, goal, text) for goal, text in planted]
    return out


def _is_injection_field(name: str) -> bool:
    return name.startswith("injection_")  # AgentDyn names every field an attacker writes so


def hackaprompt(spec: str) -> list[tuple[str, str]]:
    """(level, prompt): every submitted prompt once."""
    git_dir, commit, files = ev.source_tree(spec)
    seen: set[str] = set()
    out = []
    for path in sorted(p for p in files if p.endswith(".json")):
        for level, entry in sorted(json.loads(tr._git(git_dir, "show", f"{commit}:{path}")).items()):
            prompt = entry.get("prompt") if isinstance(entry, dict) else None
            if isinstance(prompt, str) and prompt.strip() and prompt.strip() not in seen:
                seen.add(prompt.strip())
                out.append((level, prompt.strip()))
    return out


def _language(path: str) -> str:
    return path.split("/")[1] if path.startswith("i18n/") else "en"


def _docs_pages(files: list[str]) -> list[str]:
    return sorted(p for p in files if p.endswith(".md") and (p.startswith("docs/") or (
        p.startswith("i18n/") and "/docusaurus-plugin-content-docs/current/" in p)))


def learn_prompting_attacks(spec: str) -> list[tuple[str, str]]:
    """(language, example prompt) of the prompt-hacking pages; English pages are read first."""
    git_dir, commit, files = ev.source_tree(spec)
    out, seen = [], set()
    for path in _docs_pages(files):
        if "prompt_hacking/" not in path or not path.split("prompt_hacking/", 1)[1].startswith(OFFENSIVE_PAGES) \
                or path.endswith("overview.md"):
            continue
        page = tr._git(git_dir, "show", f"{commit}:{path}")
        examples = re.findall(r"```[a-z]*\n(.*?)```", page, re.S)
        for pre in re.findall(r"<pre>(.*?)</pre>", page, re.S):
            pre = re.sub(r"<span className=\"[a-z-]*highlight\">.*?</span>", "", pre, flags=re.S)
            examples.append(re.sub(r"<[^>]+>", "", pre))
        for text in examples:
            text = text.strip()
            if len(text.split()) >= 3 and text not in seen:  # an example left in English counts once, as English
                seen.add(text)
                out.append((_language(path), text))
    return out


def learn_prompting_prose(spec: str) -> list[tuple[str, str]]:
    """(language, run of paragraphs) of the pages that are not about prompt hacking."""
    git_dir, commit, files = ev.source_tree(spec)
    runs: dict[str, list[str]] = {}
    for path in _docs_pages(files):
        if "prompt_hacking" in path:
            continue
        page = tr._git(git_dir, "show", f"{commit}:{path}")
        page = re.sub(r"\A---\n.*?\n---\n", "", page, flags=re.S)
        page = re.sub(r"```.*?```|<pre>.*?</pre>|<iframe.*?</iframe>|<div.*?</div>", "", page, flags=re.S)
        paragraphs = [p.strip() for p in page.split("\n\n")]
        prose = [p for p in paragraphs if p and not p.startswith(("import ", "<", "#", ":::", "|", "export "))]
        runs.setdefault(_language(path), []).extend(
            "\n\n".join(prose[i: i + 5]) for i in range(0, len(prose), 5))
    return [(language, text) for language, texts in sorted(runs.items())
            for text in tr._capped(texts, PROSE_PER_LANGUAGE)]


def matomo_issues(spec: str) -> list[str]:
    """Title and body of matomo-org/matomo's issues (not pull requests), HONEST_ISSUES by URL digest."""
    git_dir, commit, files = ev.source_tree(spec)
    issues = {}
    for path in sorted(p for p in files if p.startswith("data/matomo-org/matomo/") and p.endswith(".json")):
        for issue in json.loads(tr._git(git_dir, "show", f"{commit}:{path}")):
            if "pull_request" not in issue and (issue.get("body") or "").strip():
                issues[issue["html_url"]] = f"Title: {issue.get('title') or ''}\n{issue['body']}"
    chosen = sorted(issues, key=lambda url: hashlib.sha256(url.encode()).hexdigest())[:HONEST_ISSUES]
    return [issues[url] for url in chosen]


def run(mirrors: dict[str, str]) -> ev.Tally:
    rng = random.Random(tr.SEED)
    tally = ev.Tally()
    hosts = matomo_issues(mirrors[ISSUES]) if ISSUES in mirrors else []
    for text in hosts:
        tally.add(f"honest: matomo issue ({ev.language_of(text)})", *ev.quarantined(text))

    def attack(group: str, text: str) -> None:
        tally.add(f"attack: {group}", *ev.quarantined(text))
        if hosts:
            tally.add(f"planted: {group.split(' ', 1)[0]}", *ev.quarantined(ev._planted(text, hosts, rng)))

    if AGENTDYN in mirrors:
        planted_goals: set[str] = set()
        for suite, goal, tool_output in agentdyn(mirrors[AGENTDYN]):
            tally.add(f"attack: agentdyn-tool-output {suite}", *ev.quarantined(tool_output))
            if goal not in planted_goals:
                planted_goals.add(goal)
                attack(f"agentdyn-goal {suite}", goal)
    if HACKAPROMPT in mirrors:
        for level, prompt in hackaprompt(mirrors[HACKAPROMPT]):
            attack(f"hackaprompt {level}", prompt)
    if LEARN_PROMPTING in mirrors:
        for language, text in learn_prompting_attacks(mirrors[LEARN_PROMPTING]):
            attack(f"learnprompting {language}", text)
        for language, text in learn_prompting_prose(mirrors[LEARN_PROMPTING]):
            tally.add(f"honest: learnprompting prose {language}", *ev.quarantined(text))
    return tally


def main() -> int:
    mirrors = ev.final_set_sources(__doc__, SOURCES)
    if mirrors is None:
        return 2
    print("== ELEVENTH PASS FINAL SET: sources never read before, the shipped airlock ==")
    tally = run(mirrors)
    tally.print_groups(56)

    tally.print_totals((("agentdyn, in tool outputs", "attack: agentdyn-tool"),
                        ("agentdyn goals as published", "attack: agentdyn-goal"),
                        ("hackaprompt as published", "attack: hackaprompt"),
                        ("learn prompting as published", "attack: learnprompting"), ("all planted", "planted:"),
                        ("honest matomo issues held", "honest: matomo"),
                        ("honest translated prose held", "honest: learnprompting")), 34)
    tally.print_attack_totals(38)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
