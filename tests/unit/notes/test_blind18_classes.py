"""Claims the grader checks against commits in hand (no git): the classes found on the blind18 sets of
2026-12-07 (rollup's renovate items pinning another repository's commit, trio's towncrier fragment written
onto a bot's pull request, babel's merges naming the branch's owner as `owner:branch`)."""

from __future__ import annotations

from signoff.notes.knowledge import Knowledge
from signoff.notes.pulls import diff_words

from .test_knowledge_classes import _commit, _unsupported


def test_a_hash_a_dependency_update_pins_is_that_dependency_commit() -> None:
    # rollup 4.62.3 and 4.62.5 (blind18b): "#6434: chore(deps): update dtolnay/rust-toolchain digest to 4be7066
    # (@renovate[bot])" was "no commit in v4.62.2..v4.62.3 starts with 4be7066"
    k = Knowledge("v1..v2", None, [], [
        _commit(1, "chore(deps): update dtolnay/rust-toolchain digest to 4be7066 (#6434)",
                author=("renovate[bot]", "29139614+renovate[bot]@users.noreply.github.com")),
        _commit(2, "Bump the vendored parser from 1a2b3c4 to 5d6e7f8 (#6435)")])
    assert _unsupported(k, "- #6434: chore(deps): update dtolnay/rust-toolchain digest to 4be7066\n",
                        "CHANGELOG.md") == set()
    assert _unsupported(k, "- Bump the vendored parser from 1a2b3c4 to 5d6e7f8 (#6435)\n", "CHANGELOG.md") == set()
    # a hash named as this release's commit is still checked
    assert _unsupported(k, "This release includes commit 4be7066.\n", "CHANGELOG.md") == {"4be7066"}
    assert _unsupported(k, "- Fixed the build, reverting 4be7066 (#6434)\n", "CHANGELOG.md") == {"4be7066"}


BUMP = ("Bump dependencies from commit 79bdcf (#3277)", "",
        ("github-actions[bot]", "41898282+github-actions[bot]@users.noreply.github.com"))


def test_a_bot_pull_request_holding_its_own_changelog_fragment_holds_a_person_change() -> None:
    # trio 0.31.0 (blind18): "Ensure that the DTLS server does not mutate SSL context. (#3277)", told in
    # `newsfragments/3277.bugfix.rst`, which came in with github-actions' "Bump dependencies from commit 79bdcf
    # (#3277)" (a maintainer fixed what the bump broke on the bot's branch), was "git says #3277 is
    # github-actions[bot]'s 'Bump dependencies ...'"
    item = "- Ensure that the DTLS server does not mutate SSL context. (#3277)\n"
    told = Knowledge("v1..v2", None, [], [_commit(1, BUMP[0], author=BUMP[2], paths=(
        "test-requirements.txt", "newsfragments/3277.bugfix.rst", "src/trio/_dtls.py"))])
    assert _unsupported(told, item, "history.rst") == set()
    # a bot's pull request that brought no fragment of its number is the bump it says it is
    bare = Knowledge("v1..v2", None, [], [_commit(1, BUMP[0], author=BUMP[2], paths=(
        "test-requirements.txt", "newsfragments/3270.bugfix.rst"))])
    assert _unsupported(bare, item, "history.rst") == {"#3277"}


def test_a_merge_naming_its_branch_as_owner_colon_branch_states_the_owner_account() -> None:
    # babel 2.18.0 (blind18): "Docs: Remove u string prefix from docs by @verhovsky in :gh:`1174`", merged as
    # "Merge pull request #1174 from verhovsky: Remove u string prefix from docs" (GitHub's `owner:branch` head
    # label) over Boris Verkhovskiy's commits from a plain address, was "git says Boris Verkhovskiy; the
    # changelog credits @verhovsky for a change by someone else"
    boris = ("Boris Verkhovskiy", "boris.verk@gmail.com")
    k = Knowledge("v1..v2", None, [], [
        _commit(1, "Merge pull request #1174 from verhovsky: Remove u string prefix from docs",
                author=("Aarni Koskela", "akx@iki.fi"), parents=(3, 2)),
        _commit(2, "Remove u string prefix", author=boris, parents=(3,)),
        _commit(3, "Use CLDR 47 (#1210)", author=("Tomas R", "tomas@example.org"))])
    item = "* Docs: Remove u string prefix from docs by @{who} in :gh:`1174`\n"
    assert _unsupported(k, item.format(who="verhovsky"), "CHANGES.rst") == set()
    assert _unsupported(k, item.format(who="tomasr8"), "CHANGES.rst") == {"@tomasr8"}


JEST = ("- `[jest-config]` Project config validator now emits \"is not supported in an individual project "
        "configuration\" instead of \"probably a typing mistake\" for known global-only options ([#{n}]"
        "(https://github.com/jestjs/jest/pull/{n}))\n")


def test_a_pull_request_that_wrote_the_item_into_the_changelog_is_the_item_own() -> None:
    # jest 30.4.0 (blind18b): the item above, written into CHANGELOG.md by "fix: allow `collectCoverage` and
    # `coverageProvider` in project config (#16132)" itself, was "git says #16133" (the next pull request,
    # "fix: support `silent` and `verbose` as project config", whose words the item shares more)
    line = JEST.format(n=16132)
    k = Knowledge("v1..v2", None, [], [
        _commit(1, "fix: allow `collectCoverage` and `coverageProvider` in project config (#16132)",
                paths=("CHANGELOG.md", "packages/jest-config/src/normalize.ts", "packages/jest-validate/src/index.ts")),
        _commit(2, "fix: support `silent` and `verbose` as project config (#16133)",
                paths=("CHANGELOG.md", "packages/jest-config/src/ValidConfig.ts"))])
    diffs = {k.carriers[0].hash: diff_words("+" + line + "+  const known = globalOnly.has(key);\n"),
             k.carriers[1].hash: diff_words("+- `[jest-config]` Support `silent` and `verbose` as project config\n")}
    k.diff_of = lambda commit: diffs.get(commit, set())
    assert _unsupported(k, line, "CHANGELOG.md") == set()
    # the next number is still wrong: that pull request wrote another line
    assert _unsupported(k, JEST.format(n=16134), "CHANGELOG.md") != set()


def test_a_sibling_pull_request_elsewhere_saying_more_is_another_change() -> None:
    # faker 40.34.0 (blind18): the planted "#2410" for "#2409" passed, as the same contributor's "fix(pt_BR):
    # correct BBAN length so iban() generates valid Brazilian IBANs (#2410)", on a branch of its own, restates
    # the words of the range's Danish fix: it was taken for the same change made for another branch
    k = Knowledge("v40.33.2..v40.34.0", None, [], [
        _commit(1, "fix(da_DK): correct BBAN length so iban() generates valid Danish IBANs (#2409)")])
    branches = {"2410": ["fix(pt_BR): correct BBAN length so iban() generates valid Brazilian IBANs (#2410)"],
                "2411": ["fix(da_DK): correct BBAN length so iban() generates valid Danish IBANs (#2411)"]}
    k.subjects_elsewhere = lambda number: branches.get(number, [])
    item = "* Fix: correct BBAN length so `da_DK` `iban()` generates valid Danish IBANs (#{n}). Thanks @Cedric.\n"
    assert _unsupported(k, item.format(n=2409), "CHANGELOG.md") == set()
    assert _unsupported(k, item.format(n=2410), "CHANGELOG.md") == {"#2410"}
    # the same subject on another branch is the same change opened twice
    assert _unsupported(k, item.format(n=2411), "CHANGELOG.md") == set()


def test_a_release_commit_writing_the_section_wrote_no_item_of_its_own() -> None:
    # markdown-it-py 4.2.0: the planted "#395" for "#394" stays wrong, though "🚀 RELEASE v4.2.0 (#395)" wrote the
    # item into CHANGELOG.md: a release's commit writes every item of its section
    item = ("* ✨ Add `make_fence_rule()` factory for configurable fence markers in "
            "[#{n}](https://github.com/o/markdown-it-py/pull/{n})\n")
    k = Knowledge("v4.1.0..v4.2.0", None, [], [
        _commit(1, "✨ Add `make_fence_rule()` factory for configurable fence markers (#394)",
                paths=("markdown_it/rules_block/fence.py",)),
        _commit(2, "🚀 RELEASE v4.2.0 (#395)", paths=("CHANGELOG.md", "markdown_it/__init__.py")),
        _commit(3, "Prepare the next release (#396)", paths=("CHANGELOG.md", "markdown_it/__init__.py"))])
    diffs = {c.hash: diff_words("+" + item.format(n=394)) for c in k.carriers[1:]}
    k.diff_of = lambda commit: diffs.get(commit, set())
    assert _unsupported(k, item.format(n=394), "CHANGELOG.md") == set()
    assert _unsupported(k, item.format(n=395), "CHANGELOG.md") != set()
    assert _unsupported(k, item.format(n=396), "CHANGELOG.md") != set()


def test_an_item_saying_every_word_of_a_short_title_tells_that_change() -> None:
    # standard 16.0.4 (blind18b, bench): "Allow standard to run on Node 11, even though it's not officially
    # supported #1597" for the merge of #1597 titled "Support node 11" was "git says #1597 is 'Support node 11'":
    # `support` is a word every change says, and the item shares only `node` with the title
    k = Knowledge("v16.0.3..v16.0.4", None, [], [
        _commit(1, "Merge pull request #1597 from alanclarke/support-node-11", "Support node 11",
                author=("Feross Aboukhadijeh", "feross@example.org"), parents=(3, 2)),
        _commit(2, "Support node 11", author=("alanclarke", "alan@example.org"), paths=("package.json",),
                parents=(3,)),
        _commit(3, "Update eslint (#1590)"),
        *(_commit(10 + i, f"Test on node {v} in CI (#{1580 + i})", paths=(".travis.yml",))
          for i, v in enumerate((6, 8, 10, 12, 14, 16)))])
    item = "- Allow standard to run on Node {v}, even though it's not officially supported #1597\n"
    assert _unsupported(k, item.format(v=11), "CHANGELOG.md") == set()
    # an item leaving out a word or number of the title is judged as before
    assert _unsupported(k, "- Allow standard to run on Deno, with its own parser and the linter #1597\n",
                        "CHANGELOG.md") == {"#1597"}


def test_a_number_no_commit_carries_may_be_the_rebase_merged_half_of_an_item() -> None:
    # python-dotenv 1.2.2 (blind18): "Corrected the license specifier and added missing Python 3.14 classifiers in
    # package metadata by [@JYOuyang] in [#590]" tells #597 (the license) and #590, rebase-merged as James Ouyang's
    # "fix: Add missing 3.14 PyPI classifier." with no number: it was "git says #597" and "git says cpackham-atlnz"
    k = Knowledge("v1.2.1..v1.2.2", "a" * 40, [], [
        {**_commit(3, "Drop Python 3.9 support and update to PyPy 3.11 (#608)", parents=(2,)), "hash": "a" * 40},
        _commit(2, "Fix license specifier (#597)", paths=("pyproject.toml",), parents=(1,),
                author=("cpackham-atlnz", "8591+cpackham-atlnz@users.noreply.github.com")),
        _commit(1, "fix: Add missing 3.14 PyPI classifier.", author=("James Ouyang", "JYOuyang@gmail.com"),
                paths=("pyproject.toml",))])
    item = ("- Corrected the license specifier and added missing Python 3.14 classifiers in package metadata by "
            "[@{who}](https://github.com/{who}) in [#{n}](https://github.com/o/python-dotenv/pull/{n})\n")
    assert _unsupported(k, item.format(who="JYOuyang", n=590), "CHANGELOG.md") == set()
    # the number of the commit the item restates, when another: still wrong; another credit: not James Ouyang's
    assert "#608" in _unsupported(k, item.format(who="JYOuyang", n=608), "CHANGELOG.md")
    assert "@someone" in _unsupported(k, item.format(who="someone", n=590), "CHANGELOG.md")
    # (an unnumbered commit saying what the item's own commit says is no second change: the planted numbers of
    # httpie 2.2.0, gunicorn 25.2.0 and factory_bot 6.6.0 in tests/data/notes-real stay flagged)


def test_a_merged_branch_writing_the_changelog_wrote_no_item_of_its_own() -> None:
    # gunicorn 25.1.0 (blind8, bench): the planted "#3504" for "#3503" (the stash) passed once a pull request that
    # wrote the item counted: #3504's branch holds "docs: add TTIN/TTOU to changelog", which wrote #3503's line too
    item = "- Add stash, a global shared state between workers ([PR #{n}](https://github.com/o/gunicorn/pull/{n}))\n"
    k = Knowledge("25.0.3..25.1.0", "a" * 40, [], [
        {**_commit(4, "Merge pull request #3504 from benoitc/feature/dirty-ttin-ttou", parents=(3, 2)),
         "hash": "a" * 40},
        _commit(2, "docs: add TTIN/TTOU to changelog", paths=("docs/content/news.md",), parents=(1,)),
        _commit(1, "feat(dirty): add TTIN/TTOU signal support for dynamic worker scaling", parents=(3,)),
        _commit(3, "feat(dirty): add stash - global shared state between workers (#3503)")])
    diffs = {"a" * 40: diff_words("+" + item.format(n=3503) + "+- Add TTIN/TTOU signals\n+def handle_ttin(self):\n")}
    k.diff_of = lambda commit: diffs.get(commit, set())
    assert _unsupported(k, item.format(n=3503), "news.md") == set()
    assert _unsupported(k, item.format(n=3504), "news.md") != set()
