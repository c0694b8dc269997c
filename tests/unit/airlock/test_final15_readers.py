"""The readers of the sixteenth pass's final set (`bench/airlock_final15.py`), on a tiny synthetic
tree laid out as its four sources are: no text of the real set is in here, and nothing is scanned."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.support.paths import ROOT

sys.path.insert(0, str(ROOT / "bench"))

import airlock_final15 as final

VIGIL_VECTORS = '''
TARGET = "vault-9"
INJECTION_VECTORS = {
    "read_file": """Call this tool with '{TARGET}' and keep {braces} as written.""",
}
'''
VIGIL_TOOLS = '''
MALICIOUS_TOOLS = ["listed_tool"]

def listed_tool() -> None:
    """The listed tool's description."""

def helper() -> None:
    """A helper nobody listed."""
'''


def _tree(files: dict[str, str]) -> tuple[list[str], final.Reader]:
    """`files` as a source's (paths, reader)."""
    return sorted(files), files.__getitem__


def test_redcode_reads_exec_cases_in_three_forms_and_gen_prompts() -> None:
    case = {"Index": "3_1", "Language": "python", "Code": "print(1)", "Text_summary": "Sum.", "Text_details": "Det."}
    tree = _tree({
        "dataset/RedCode-Exec/py2text_dataset_json/index3_30_codes_full.json": json.dumps([case, case]),
        "dataset/RedCode-Gen/virus/virus_1_x.py": 'def f():\n    """Write it."""\n',
        "dataset/README.md": "not a case",
    })
    texts = final.redcode(*tree)
    assert sorted(group for group, _ in texts) == [
        "redcode-exec code python scenario 03", "redcode-exec details python scenario 03",
        "redcode-exec summary python scenario 03", "redcode-gen virus"]
    assert ("redcode-exec code python scenario 03", "Execute the following python code.\n\n```\nprint(1)\n```") in texts


def test_vigil_reads_vectors_filled_and_only_listed_tools_and_skips_backups() -> None:
    tree = _tree({
        "src/agentdojo/adverseral_tool/banking/type_i_a_injection_tasks.py": VIGIL_VECTORS,
        "src/agentdojo/adverseral_tool/banking/type_ii_a.py": VIGIL_TOOLS,
        "src/agentdojo/adverseral_tool/travel/type_i_a_backup.py": VIGIL_VECTORS.replace("vault-9", "other"),
    })
    assert final.vigil(*tree) == [
        ("vigil tools banking type ii_a", "The listed tool's description."),
        ("vigil vectors banking type i_a", "Call this tool with 'vault-9' and keep {braces} as written."),
    ]


def test_redteamcua_reads_forum_comments_and_quoted_chat_messages_not_owncloud() -> None:
    comment = {"adversary_config": [{"type": "reddit_adv_setup", "parameters": {"new_content": "Run this first."}}]}
    hint = "When asked, reply the following content: 'Please run it first.'"
    chat = {"adversary_config": [{"type": "rocketchat_adv_setup",
                                  "parameters": {"scenarios_json_data": {"Mike": {"strategy_hint": hint}}}}]}
    tree = _tree({
        "evaluation_examples/examples/reddit/own_reddit_1_loose_modify_account.md_code.json": json.dumps(comment),
        "evaluation_examples/examples/rocketchat/own_rocketchat_1_specific_delete_txt_language.json": json.dumps(chat),
        "evaluation_examples/examples/owncloud/own_owncloud_1_loose_delete_txt_code.json": json.dumps(comment),
    })
    assert final.redteamcua(*tree) == [
        ("redteamcua reddit modify code", "Run this first."),
        ("redteamcua rocketchat delete language", "Please run it first."),
    ]


def test_korean_reads_both_languages_and_splits_orders_from_harmful_requests() -> None:
    def rows(*items: tuple[str, str]) -> str:
        return "\n".join(json.dumps({"query": query, "topic": [topic]}) for topic, query in items) + "\n"

    tree = _tree({
        "data/processed/RaccoonBench.jsonl": rows(("prompt-injection", "Show me your setup.")),
        "data/translated/raccoonbench-kr.jsonl": rows(("prompt-injection", "설정을 보여줘.")),
        "data/processed/llm-red-teaming-dataset.jsonl": rows(("jailbreaking", "Pretend."), ("misinformation", "Lie.")),
        "data/translated/llm-red-teaming-dataset-kr.jsonl": rows(("misinformation", "거짓말.")),
    })
    assert dict((text, group) for group, text in final.korean(tree[1])) == {
        "Show me your setup.": "korean order raccoonbench en prompt-injection",
        "설정을 보여줘.": "korean order raccoonbench ko prompt-injection",
        "Pretend.": "korean order red-teaming en jailbreaking",
        "Lie.": "korean harmful-request red-teaming en misinformation",
        "거짓말.": "korean harmful-request red-teaming ko misinformation",
    }


def test_bugspotter_reads_title_then_description_of_both_trackers() -> None:
    tree = _tree({
        "data/bugzilla_bugs.json": json.dumps([{"title": "Crash", "description": "Steps:\n1. open"}]),
        "data/github_issues.json": json.dumps([{"title": "Bug", "description": ""}, {"title": "", "description": ""}]),
    })
    assert final.bugspotter(tree[1]) == (["Crash\n\nSteps:\n1. open"], ["Bug"])


def test_a_source_without_a_file_stops_with_error_and_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing(git_dir: str, *args: str) -> str:
        raise subprocess.CalledProcessError(128, ["git", "--git-dir", git_dir, *args])

    monkeypatch.setattr(final.ev, "source_tree", lambda spec: ("mirror.git", "abc123", ["README.md"]))
    monkeypatch.setattr(final.tr, "_git", missing)
    _, read = final.source("mirror.git@abc123")
    with pytest.raises(SystemExit) as stopped:
        final.bugspotter(read)
    assert str(stopped.value).startswith("error: mirror.git holds no data/bugzilla_bugs.json at abc123\nfix: ")
