"""Planted false claims the whole bench still missed (at f722f513 jest #15918 and #15832; at ad835de1 pytest #14004
and #12444, spotless #2940), each as the class of false claim the grader could not see, with the true claims of the
same shape that must stay supported."""

from __future__ import annotations

from collections.abc import Callable

from signoff.notes.knowledge import Knowledge
from signoff.notes.pulls import MOVED, diff_words, evidence, words
from signoff.notes.told import ENTRY_MARK, told_for, told_words

from .test_knowledge_classes import _commit, _hash, _unsupported

INVENTED = "Support reading settings from a YAML file in the user's config directory"


def _range_saying(words: str, n: int) -> list[dict[str, object]]:
    """`n` commits of a range each saying `words` (in their subject and paths), as most of jest's say
    `config` and `file`."""
    return [_commit(100 + i, f"fix({words.split()[0]}): handle {words} case {i} (#{100 + i})",
                    paths=(f"packages/jest-{words.split()[0]}/src/{words.split()[-1]}{i}.ts",)) for i in range(n)]


def test_words_most_commits_of_the_range_say_tie_no_item() -> None:
    # jest 30.3.0 (bench, blind18b): the planted "Support reading settings from a YAML file in the user's config
    # directory #15918" for "fix: Keep CLI coverage output when using `--json` with `--outputFile` (#15918)" passed:
    # it shares `file` with the title and `config` with the paths (`packages/jest-config/...`), two words most of the
    # range's commits say; the diff holds nothing more of it
    pull = _commit(1, "fix: Keep CLI coverage output when using `--json` with `--outputFile` (#15918)",
                   paths=("packages/jest-config/src/normalize.ts", "e2e/__tests__/coverageReport.test.ts"))
    k = Knowledge("v30.2.0..v30.3.0", None, [], [pull, *_range_saying("config file", 12)])
    k.diff_of = lambda commit: diff_words("@@ -1 +1 @@ function normalize(config) {\n"
                                          "-  if (argv.json) coverageReporters = [];\n"
                                          "+  if (argv.json && !argv.outputFile) config.coverageReporters = [];\n")
    item = "- {text} [#15918](https://github.com/jestjs/jest/pull/15918)\n"
    assert _unsupported(k, item.format(text=INVENTED), "CHANGELOG.md") == {"#15918", "/pull/15918"}
    # a true item saying those words too is told by its diff (pypa/packaging 26.3's "Reject requirements and markers
    # with a trailing line break" for "fix(parser): require true end of input", whose paths say both words)
    told = "Keep the coverage output with `--json` when an output file is configured"
    assert _unsupported(k, item.format(text=told), "CHANGELOG.md") == set()
    # and so is one sharing a word of the change itself beside them
    k2 = Knowledge("v30.2.0..v30.3.0", None, [], [pull, *_range_saying("config file", 12)])
    k2.diff_of = lambda commit: diff_words("-  if (argv.json) coverageReporters = [];\n"
                                           "+  if (argv.json && !argv.outputFile) coverageReporters = [];\n"
                                           "+  // config file reporters kept for the coverage summary\n")
    kept = "Keep reporters from the config file when coverage is written as JSON"
    assert _unsupported(k2, item.format(text=kept), "CHANGELOG.md") == set()


def _diff_of(path: str, lines: list[str]) -> str:
    return f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -1 +1 @@\n" + \
        "".join(f"+{line}\n" for line in lines)


def test_a_dependency_lock_file_names_packages_not_the_change() -> None:
    # jest 30.2.0 (bench, blind18b): the planted "Speed up start-up by caching the parsed plugin manifest on disk
    # #15832" for "chore: update React Native testing example project (#15832)" passed: the diff, 838 lines of
    # `yarn.lock`, holds `cache`, `parse`, `plugin` and `start` as the names of pinned packages
    pinned = ["\"@babel/plugin-transform-parameters@^7.0.0\":", "  resolved cacache-18.0.0.tgz",
              "\"parse-json@^5.2.0\":", "\"react-native-start@0.81.0\":", "\"metro-cache@0.83.1\":"]
    example = ["  \"dependencies\": {", "    \"react-native\": \"0.81.0\"", "npx react-native start --reset-cache"]
    diff = _diff_of("yarn.lock", pinned) + _diff_of("examples/react-native/package.json", example[:2]) + \
        _diff_of("docs/TutorialReactNative.md", example[2:])
    k = Knowledge("v30.1.3..v30.2.0", None, [], [
        _commit(1, "chore: update React Native testing example project (#15832)",
                paths=("yarn.lock", "examples/react-native/package.json", "docs/TutorialReactNative.md"))])
    k.diff_of = lambda commit: diff_words(diff)
    item = "- {text} ([#15832](https://github.com/jestjs/jest/pull/15832))\n"
    invented = "Speed up start-up by caching the parsed plugin manifest on disk"
    assert _unsupported(k, item.format(text=invented), "CHANGELOG.md") == {"#15832", "/pull/15832"}
    # what the rest of the diff holds still ties a true item
    true = "The React Native example starts with a reset cache and a newer react-native"
    assert _unsupported(k, item.format(text=true), "CHANGELOG.md") == set()


def test_a_lock_file_still_counts_in_the_size_of_a_diff() -> None:
    # fastapi/sqlmodel 0.0.35 (bench): "Drop support for Python 3.9 (#1766)", 229 files and 771 lines of `uv.lock`, is
    # a diff so large (1,000 words or more) that what it holds ties nothing; without the lock file it is not
    code = [f"def helper_{i}(value_{i}): return legacy_{i}_mode" for i in range(300)]
    pinned = [f"name = \"package{i}x\"" for i in range(800)]
    words = diff_words(_diff_of("sqlmodel/main.py", code) + _diff_of("uv.lock", pinned))
    assert len(words) >= 1000 > len(diff_words(_diff_of("sqlmodel/main.py", code)))
    assert "package0x" not in words  # a pinned package's name is no word of the change


def _reads(diffs: dict[int, str]) -> Callable[[str], set[str]]:
    """A repository's diff reader (`grade.diff_reader`) over diffs in hand: their words and what they wrote for
    each number (`told.told_words`)."""
    by_hash = {_hash(n): diff for n, diff in diffs.items()}
    return lambda commit: diff_words(by_hash.get(commit, "")) | told_words(by_hash.get(commit, ""))


def _pytest_14004() -> Knowledge:
    fixed = _commit(1, "fix: assign conftest fixtures to Directory nodes during collection", "Fixes #14004.",
                    paths=("changelog/14004.bugfix.rst", "src/_pytest/fixtures.py"))
    deprecated = _commit(2, "deprecate: string-based nodeid/baseid fixture APIs with legacy fallback",
                         paths=("changelog/14004.deprecation.rst", "src/_pytest/fixtures.py"))
    k = Knowledge("8.3.0..9.1.0", None, [], [fixed, deprecated])
    k.diff_of = _reads({
        1: _diff_of("changelog/14004.bugfix.rst", [
            "Fixed conftest.py fixture scoping when :confval:`testpaths` points outside of the rootdir.",
            "Previously, fixtures from nested conftest.py files would incorrectly leak to sibling directories."]) +
        _diff_of("src/_pytest/fixtures.py", ["    config = self.config", "    directory = node.path.parent",
                                             "    for file in directory.iterdir():"]),
        2: _diff_of("changelog/14004.deprecation.rst", [
            "Passing ``baseid`` to :class:`~pytest.FixtureDef` or ``nodeid`` strings to fixture registration APIs "
            "is now deprecated.", "Use the ``node`` parameter instead for fixture scoping."]) +
        _diff_of("src/_pytest/fixtures.py", ["    warnings.warn(NODEID_DEPRECATED, stacklevel=2)"])})
    return k


def test_an_item_the_fragment_of_its_issue_never_said_is_about_something_else() -> None:
    # pytest 9.1.0 (blind20, bench): the planted "Support reading settings from a YAML file in the user's config
    # directory #14004" passed: an issue is told as its symptom, so its item was judged by the diffs of the commits
    # carrying it, which hold `config`, `directory` and `file` (3 of 7); the range's fragments for #14004 are the
    # maintainers' sentences for it, rendered as its items, and say none of `read`, `setting`, `yaml`, `user`
    item = "- `#14004 <https://github.com/pytest-dev/pytest/issues/14004>`_: {text}\n"
    assert _unsupported(_pytest_14004(), item.format(text=INVENTED), "doc/en/changelog.rst") == \
        {"#14004", "/issues/14004"}
    # both of the maintainers' items, each its fragment's text, stay supported
    for told in ("Passing ``baseid`` to :class:`~pytest.FixtureDef` or ``nodeid`` strings to fixture registration "
                 "APIs is now deprecated.",
                 "Fixed conftest.py fixture scoping when :confval:`testpaths` points outside of the rootdir."):
        assert _unsupported(_pytest_14004(), item.format(text=told), "doc/en/changelog.rst") == set()
    # and so does an item retelling the fix's title (a fragment is not all git says of the change)
    titled = "Conftest fixtures are now assigned to the Directory nodes during collection."
    assert _unsupported(_pytest_14004(), item.format(text=titled), "doc/en/changelog.rst") == set()


def test_a_fragment_a_typo_sweep_rewords_is_still_the_issue_s_sentence() -> None:
    # pytest 9.0.3 (blind20, bench): the planted "... YAML file ... #12444" passed: a sweep of typos across 36
    # files (`doc: fix ~75 typos and grammar issues across documentation`) rewords `changelog/12444.bugfix.rst`, so
    # carries #12444, and its 544-word diff holds 5 of the item's 7 words; the lines it changed are the fragment's
    fix = _commit(1, "Fix pytest.approx to correctly take account Mapping keys order to compare them (#13815) "
                  "(#14142)", paths=("changelog/12444.bugfix.rst", "src/_pytest/python_api.py"))
    sweep = _commit(2, "doc: fix ~75 typos and grammar issues across documentation (#14179)",
                    paths=("changelog/12444.bugfix.rst", "doc/en/how-to/usage.rst"))
    k = Knowledge("9.0.2..9.0.3", None, [], [sweep, fix])
    k.diff_of = _reads({
        1: _diff_of("changelog/12444.bugfix.rst", ["Fixed :func:`pytest.approx` which now correctly takes into "
                                                   "account :class:`~collections.abc.Mapping` keys order."]),
        2: "diff --git a/changelog/12444.bugfix.rst b/changelog/12444.bugfix.rst\n@@ -1 +1 @@\n"
           "-Fixed :func:`pytest.approx` which now correctly take into account Mapping keys order.\n"
           "+Fixed :func:`pytest.approx` which now correctly takes into account Mapping keys order.\n" +
           _diff_of("doc/en/how-to/usage.rst", ["Read the settings from the configuration file in your user "
                                                "directory, as a YAML or INI file."])})
    item = "- `#12444 <https://github.com/pytest-dev/pytest/issues/12444>`_: {text}\n"
    assert _unsupported(k, item.format(text=INVENTED), "doc/en/changelog.rst") == {"#12444", "/issues/12444"}
    told = "Fixed :func:`pytest.approx` which now correctly takes into account Mapping keys order to compare them."
    assert _unsupported(k, item.format(text=told), "doc/en/changelog.rst") == set()


def _spotless_2940() -> Knowledge:
    merged = _commit(1, "Fix #2940 - Parse standard git year output in LicenseHeaderStep (#2961)",
                     paths=("plugin-gradle/CHANGES.md", "lib/src/main/java/com/diffplug/spotless/generic/"
                            "LicenseHeaderStep.java", "testlib/src/test/java/com/diffplug/spotless/generic/"
                            "LicenseHeaderStepTest.java"))
    k = Knowledge("gradle/8.6.0..gradle/8.7.0", None, [], [merged])
    k.diff_of = _reads({1: "diff --git a/plugin-gradle/CHANGES.md b/plugin-gradle/CHANGES.md\n"
                           "@@ -11,0 +12,2 @@ We adhere to the keepachangelog format, reading each user's file\n"
                           "+- Parse standard git year output in LicenseHeaderStep. "
                           "([#2940](https://github.com/diffplug/spotless/issues/2940))\n+\n" +
                           _diff_of("testlib/src/test/java/LicenseHeaderStepTest.java", [
                               "    git.setDirectory(root).setFile(\"config\");",
                               "    clearGitConfig(user); read(settingsOf(user));"])})
    return k


def test_an_item_the_changelog_entry_of_its_issue_s_commit_never_said_is_about_something_else() -> None:
    # spotless 8.7.0 (blind20, bench): the planted "Support reading settings from a YAML file in the user's config
    # directory #2940" passed: it shares no word with "Fix #2940 - Parse standard git year output in
    # LicenseHeaderStep", but the diff's test sets up a git repository (`setDirectory`, `setFile`,
    # `clearGitConfig`, `user`): 4 of its 7 words. The commit added the entry for #2940 to the changelog itself.
    item = "- {text} ([#2940](https://github.com/diffplug/spotless/issues/2940))\n"
    assert _unsupported(_spotless_2940(), item.format(text=INVENTED), "plugin-gradle/CHANGES.md") == \
        {"#2940", "/issues/2940"}
    assert _unsupported(_spotless_2940(), item.format(text="Parse standard git year output in LicenseHeaderStep."),
                        "plugin-gradle/CHANGES.md") == set()
    # an entry reworded later shares a word with the one the commit wrote: the symptom told of the same change
    symptom = "The license header's year is no longer lost when git prints its standard date output."
    assert _unsupported(_spotless_2940(), item.format(text=symptom), "plugin-gradle/CHANGES.md") == set()


def test_what_a_diff_wrote_for_each_number() -> None:
    # an entry wrapped over lines, its number on the last; a paragraph after a blank line continuing it (astroid's
    # "Closes #2967" under its entry); the lines around, named by hunk headers, wrote nothing; a fragment linking
    # another (aiohttp's symlinks) holds a path, not a sentence
    diff = ("diff --git a/ChangeLog b/ChangeLog\n@@ -5,0 +6,5 @@ What's New in astroid 4.1.2?\n"
            "+* Fix RecursionError in ``_compute_mro()`` on circular\n+  class hierarchies.\n+\n+  Closes #2967\n"
            "+* Speed up inference (#2970)\n"
            "diff --git a/CHANGES/12.bugfix.rst b/CHANGES/12.bugfix.rst\nnew file mode 120000\n@@ -0,0 +1 @@\n"
            "+11.bugfix.rst\n")
    found = told_words(diff)
    assert told_for(found, "2967", ENTRY_MARK) >= {"recursionerror", "circular", "hierarchi", "clos"}
    assert "new" not in told_for(found, "2967", ENTRY_MARK) and "inferenc" not in told_for(found, "2967", ENTRY_MARK)
    assert told_for(found, "2970", ENTRY_MARK) == words("speed inference")
    assert told_for(found, "12") == set() and told_for(found, "2967") == set()
    # kept apart: a repository's diff words are the same with them, and a diff's size does not count them
    assert not diff_words(diff) & found


def _awk(entry: str) -> Knowledge:
    """pygments 2.18.0's "awk: recognize ternary operator", pushed by its author (no pull request named), fixing
    #2687, with the line it wrote into `CHANGES` (`entry`); another maintainer lands others' branches unnumbered."""
    georg = ("Georg Brandl", "georg@example.org")
    jean = ("Jean Abou Samra", "jean@example.org")
    k = Knowledge("2.17.1..2.18.0", None, [], [
        _commit(1, "awk: recognize ternary operator", "Fixes #2687", author=georg, committer=georg,
                paths=("CHANGES", "pygments/lexers/textedit.py")),
        _commit(2, "Add Luau lexer", author=("N. V. Lang", "nvl@example.org"), committer=jean,
                paths=("pygments/lexers/luau.py",)),
        _commit(3, "Fix TOML lexer for dotted keys", author=("Eric Wieser", "ew@example.org"), committer=jean,
                paths=("pygments/lexers/configs.py",))])
    k.diff_of = _reads({1: "diff --git a/CHANGES b/CHANGES\n@@ -23,0 +24 @@ Version 2.18.0\n" + entry +
                           _diff_of("pygments/lexers/textedit.py", ["            (r'\\?|:', Operator),"])})
    return k


def test_an_entry_the_item_s_own_commit_wrote_names_its_number() -> None:
    # pygments 2.18.0 (bench): the planted "Awk: recognize ternary operator (#2688)" for "(#2687)" passed: the
    # commit names no pull request, so a number above the issue it fixes may be the pull request a rebase lost;
    # but the commit wrote the item's entry into `CHANGES` itself, citing #2687, and no commit carries #2688
    wrote = "+  * Awk: recognize ternary operator (#2687)\n"
    item = "- Updated lexers:\n\n  * Awk: recognize ternary operator (#{n})\n"
    assert _unsupported(_awk(wrote), item.format(n=2688)) == {"#2688"}
    assert _unsupported(_awk(wrote), item.format(n=2687)) == set()
    # an item naming the entry's number beside another, an entry citing both, or a commit that wrote no entry
    # for the item (another's line) leave a number no commit carries unjudged, as before
    assert _unsupported(_awk(wrote), item.format(n="2687, #2688")) == set()
    assert _unsupported(_awk("+  * Awk: recognize ternary operator (#2687, #2688)\n"), item.format(n=2688)) == set()
    assert _unsupported(_awk("+  * Luau: new lexer (#2601)\n"), item.format(n=2688)) == set()


_MOVE = ("diff --git a/yargs b/yargs\n@@ -1,4 +1,2 @@\n"
         "-// TODO: consolidate on using a helpers file at some point in the future, which\n"
         "-Yargs.applyExtends = (config, cwd, mergeExtends) => {\n"
         "-  return applyExtends(config, cwd, mergeExtends, cjsPlatformShim)\n"
         "+// This file gets hit in node versions below node 12.17.0\n"
         "+// because conditional exports are not fully supported\n"
         "+module.exports = require('./yargs.cjs');\n"
         "diff --git a/yargs.cjs b/yargs.cjs\nnew file mode 100644\n@@ -0,0 +1,3 @@\n"
         "+// TODO: consolidate on using a helpers file at some point in the future, which\n"
         "+Yargs.applyExtends = (config, cwd, mergeExtends) => {\n"
         "+  return applyExtends(config, cwd, mergeExtends, cjsPlatformShim);\n"
         "diff --git a/package.json b/package.json\n@@ -26 +26 @@\n"
         "-        \"require\": \"./yargs\"\n+        \"require\": \"./yargs.cjs\"\n"
         "diff --git a/.github/workflows/ci.yaml b/.github/workflows/ci.yaml\n@@ -16 +16 @@ jobs:\n"
         "-        node: [12, 14, 16]\n+        node: [14, 16, 18, 20, 22, 24]\n")


def _yargs() -> Knowledge:
    k = Knowledge("v17.7.2..v17.7.3", None, [], [
        _commit(1, "fix: use entry point with file extension for anything that supports exports (#2514)",
                "Fixes breakage with Node.js 26 importing plain `yargs` file.",
                author=("John Gee", "john@example.org"),
                paths=(".github/workflows/ci.yaml", "package.json", "test/helpers.cjs", "yargs", "yargs.cjs")),
        _commit(2, "chore: bump version for release", author=("John Gee", "john@example.org"),
                paths=("CHANGELOG.md", "package.json"))])
    k.diff_of = lambda commit: diff_words(_MOVE) if commit == _hash(1) else set()
    return k


def test_code_moved_and_a_file_s_type_say_nothing_of_the_change() -> None:
    # yargs 17.7.3 (bench): the planted "Support reading settings from a YAML file in the user's config directory
    # (#2514)" passed: besides `file` of the title, it met `yaml` in the path `.github/workflows/ci.yaml`, whose
    # extension says the file's type, and its diff holds `config` only in code moved from `yargs` to `yargs.cjs`
    item = "- {text} ([#2514](https://github.com/yargs/yargs/issues/2514))\n"
    assert _unsupported(_yargs(), item.format(text=INVENTED), "CHANGELOG.md") == {"#2514", "/issues/2514"}
    told = "use entry point with file extension for anything that supports exports"
    assert _unsupported(_yargs(), item.format(text=told), "CHANGELOG.md") == set()
    # what the diff changed still ties an item (the node versions CI runs, the module the package requires)
    changed = "Run CI on node 18 to 24 and require the yargs.cjs module where exports are not supported"
    assert _unsupported(_yargs(), item.format(text=changed), "CHANGELOG.md") == set()


def test_what_a_diff_moves_and_a_path_s_extension() -> None:
    found = diff_words(_MOVE)
    assert "config" not in found and MOVED + "config" in found and "conditional" in found  # moved, counted apart
    # re-indented, a line changes scope (log's `#[cfg(feature = "kv_std")]` moved into a module): changed
    scoped = diff_words("diff --git a/src/kv/value.rs b/src/kv/value.rs\n@@ -418 +418 @@\n"
                        "-#[cfg(feature = \"kv_std\")]\n+#[cfg(feature = \"std\")]\n@@ -464,0 +465 @@\n"
                        "+    #[cfg(feature = \"kv_std\")]\n")
    assert "kv_std" in scoped
    # a changelog's entries moved under the release's heading are still its words (sqlite-utils' "Release 4.2")
    filed = diff_words("diff --git a/docs/changelog.rst b/docs/changelog.rst\n@@ -3 +3,2 @@\n"
                       "-- Fixed type annotations for replace_with (:issue:`602`)\n+4.2\n@@ -9,0 +10 @@\n"
                       "+- Fixed type annotations for replace_with (:issue:`602`)\n")
    assert "annot" in filed and not any(w.startswith(MOVED) for w in filed)
    # an extension is no word of a path, but shows a kind of change: `.rst` documentation, `.pyi` typing
    assert "yaml" not in evidence([], [".github/workflows/ci.yaml"])
    assert "lint" in evidence([], [".github/workflows/lint.yaml"])
    assert words("documentation type") <= evidence([], ["docs/usage.rst", "src/pkg/api.pyi"])
    assert words("readme") <= evidence([], ["README.md"]) and "github" in evidence([], [".github"])
