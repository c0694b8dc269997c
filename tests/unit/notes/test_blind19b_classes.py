"""Claims the grader reads and checks (no git): the classes found on the blind19b set of 2026-12-07
(JavaScript/TypeScript changelogs: tailwindcss, highlight.js, svelte, knex, node-postgres), and the planted
false claims the whole bench still missed after blind18 (pygments, yargs, trio, jest)."""

from __future__ import annotations

from signoff.notes.knowledge import Knowledge, carried_refs
from signoff.notes.meaning import read_claims
from signoff.notes.pulls import diff_words

from .test_knowledge_classes import _commit, _unsupported


def _counts(text: str) -> list[tuple[str, str]]:
    return [(c.token, c.role) for c in read_claims(text) if c.kind == "count"]


def test_additions_alone_are_things_added_not_lines() -> None:
    # highlight.js 11.11.0 (blind19b): "enh(css) add all properties listed on MDN (96 additions including
    # anchor-name, aspect-ratio, ...)" was "git says 3830 lines added"
    assert _counts("enh(css) add all properties listed on MDN (96 additions including anchor-name, aspect-ratio)") == []
    assert _counts("- 12 new deletions of deprecated keywords") == []
    # beside the other side of git's line totals, or of the files changed, they are the range's lines
    assert _counts("This release: 120 additions and 30 deletions.") == [("120 additions", "lines_added"),
                                                                        ("30 deletions", "lines_deleted")]
    assert _counts("5 files changed, 120 insertions(+), 30 deletions(-)") == [
        ("5 files changed", "files_changed"), ("120 insertions", "lines_added"), ("30 deletions", "lines_deleted")]
    assert _counts("120 lines added since 1.0") == [("120 lines added", "lines_added")]


SCROLLBAR = ("- Add `scrollbar-{auto,thin,none}` utilities for `scrollbar-width`, and `scrollbar-thumb-*` color "
             "utilities for `scrollbar-color` ([#19981](https://github.com/o/tailwindcss/pull/19981), "
             "[#{n}](https://github.com/o/tailwindcss/pull/{n}))\n")


def test_a_css_colour_in_a_commit_body_is_no_reference() -> None:
    # tailwindcss 4.3.0 (blind19b): the item above with #20019 (a follow-up pull request outside the range) was
    # "git says #0000": the commit's body says the variable is "registered with `@property` (initial value `#0000`)"
    assert carried_refs("registered with `@property` (initial value `#0000`), see #0 and #012 and #12") == {"12"}
    k = Knowledge("v4.2.4..v4.3.0", None, [], [
        _commit(1, "Add scrollbar-width and scrollbar-color utilities (#19981)",
                "Both are registered with `@property` (initial value `#0000`), matching the gradient stops.")])
    assert _unsupported(k, SCROLLBAR.replace("{n}", "20019"), "CHANGELOG.md") == set()


def test_a_release_commit_collecting_the_section_says_nothing_of_a_change() -> None:
    # svelte 5.56.10 (blind19b): the planted "Add a `--dry-run` flag that prints the planned changes without writing
    # them [#18617]" for "fix: transform expressions inside labeled statements during server compilation (#18617)"
    # passed: changesets' "Version Packages (#18640)", which carries #18617 in its body and deletes the release's
    # `.changeset/*.md` files, gave #18617 the words `print`, `run` and `writ`
    k = Knowledge("svelte@5.56.9..svelte@5.56.10", None, [], [
        _commit(1, "Version Packages (#18640)", "# Releases\n## svelte@5.56.10\n\n### Patch Changes\n\n"
                "- fix: transform expressions inside labeled statements during server compilation ([#18617](u))\n",
                paths=(".changeset/printer-comments.md", ".changeset/run-faster-writes.md",
                       "packages/svelte/CHANGELOG.md", "packages/svelte/package.json")),
        _commit(2, "fix: transform expressions inside labeled statements during server compilation (#18617)",
                "close: #18615", paths=(".changeset/clear-badgers-type.md",
                                        "packages/svelte/src/compiler/server/visitors/LabeledStatement.js"))])
    k.diff_of = lambda commit: diff_words("+\t\t\t\tnode.body = context.visit(node.body);\n")
    item = "- {text} [#18617](https://github.com/sveltejs/svelte/pull/18617)\n"
    invented = "Add a `--dry-run` flag that prints the planned changes without writing them"
    assert _unsupported(k, item.format(text=invented), "CHANGELOG.md") == {"#18617", "/pull/18617"}
    true = "fix: transform expressions inside labeled statements during server compilation"
    assert _unsupported(k, item.format(text=true), "CHANGELOG.md") == set()


def test_the_parts_of_code_git_does_not_hold_tie_nothing() -> None:
    # svelte 5.56.8 (blind19b): the planted "Add a `retry_forever` option that keeps every failed upload in a local
    # queue (#18556)" passed for "fix: call `onerror` and provide a working `reset` when hydrating a failed boundary",
    # whose long body says "keeps", "retry" and "failed": `retry` is a part of `retry_forever`, which git holds
    # nowhere, and ties nothing
    body = ("Once hydrated as failed, the boundary can never leave that state. This is what keeps the error page "
            "mounted. The tests flip a flag before calling `reset`: that is the intended retry pattern.")
    k = Knowledge("v1..v2", None, [], [
        _commit(1, "fix: call `onerror` and provide a working `reset` when hydrating a failed boundary (#18556)",
                body, paths=("packages/svelte/src/internal/client/dom/blocks/boundary.js",))])
    k.diff_of = lambda commit: diff_words("+\t\tqueue_micro_task(() => this.#onerror?.(error, reset));\n"
                                          "+\t#create_reset(failed) {\n")
    item = "- Add a `retry_forever` option that keeps every failed upload in a local queue (#18556).\n"
    assert _unsupported(k, item, "CHANGELOG.md") == {"#18556"}
    # code the item names that git holds is the change's, whatever else it says
    told = "- Call `onerror` and retry with a working `reset` once a failed boundary hydrates (#18556).\n"
    assert _unsupported(k, told, "CHANGELOG.md") == set()


def test_a_closing_keyword_is_no_word_of_the_change() -> None:
    # knex 3.2.10 (blind19b): the planted "Fix a memory leak when a websocket connection closes during the handshake
    # #6433" for an issue the commit "fix: bump lodash to ^4.18.1, close #6433 (#6446)" closes passed: `close`, the
    # closing keyword, was taken for a word of the change
    k = Knowledge("3.2.9..3.2.10", None, [], [
        _commit(1, "fix: bump lodash to ^4.18.1, close #6433 (#6446)", paths=("package.json",))])
    item = "- Fix a memory leak when a websocket connection closes during the handshake #6433\n"
    assert _unsupported(k, item, "CHANGELOG.md") == {"#6433"}
    assert _unsupported(k, "- Bump lodash to fix a vulnerability #6433\n", "CHANGELOG.md") == set()


def test_a_file_name_alone_ties_no_item_of_five_words() -> None:
    # trio 0.32.0 (blind18, bench): the planted "Add prebuilt wheels and binaries for Windows on ARM64 `#3345`" for
    # "Drop 3.9 support (#3345)" passed: the pull request edits `src/trio/_core/_io_windows.py`, and the item, of five
    # words, was too short to be judged by a word met in the paths alone
    k = Knowledge("v0.31.0..v0.32.0", None, [], [
        _commit(1, "Drop 3.9 support (#3345)", "Removes the shims for Python 3.9.",
                paths=("src/trio/_core/_io_windows.py", "src/trio/_util.py", "pyproject.toml"))])
    k.diff_of = lambda commit: diff_words("@@ -1 +1 @@ class WindowsIOManager:\n-if sys.version_info < (3, 10):\n"
                                          "+requires-python = \">=3.10\"\n")
    item = "- {text} (`#3345 <https://github.com/python-trio/trio/issues/3345>`__)\n"
    invented = "Add prebuilt wheels and binaries for Windows on ARM64"
    assert _unsupported(k, item.format(text=invented), "history.rst") == {"#3345", "/issues/3345"}
    # a word the messages say, or the diff holds besides the file's, ties the item
    assert _unsupported(k, item.format(text="Drop the Windows shims for Python 3.9"), "history.rst") == set()
    assert _unsupported(k, item.format(text="Raise requires-python on Windows builds"), "history.rst") == set()
