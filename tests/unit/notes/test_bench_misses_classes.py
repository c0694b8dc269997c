"""Planted false claims the whole bench still missed at f722f513 (jest #15918 and #15832), each as the class of
false claim the grader could not see, with the true claims of the same shape that must stay supported."""

from __future__ import annotations

from signoff.notes.knowledge import Knowledge
from signoff.notes.pulls import diff_words

from .test_knowledge_classes import _commit, _unsupported

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
