"""Evaluation: `signoff notes grade` on real projects' changelog sections, each graded against a
snapshot of its own tag range, plus planted false claims and their true twins.

    python bench/notes_eval.py --mirrors DIR [--set held|dev|all] [--sections 4] [--show]

DIR holds bare clones named `owner+name/repo` (or pass `--repo owner/name=PATH`). For each project,
the newest released sections of its changelog (read at the commit named below, so the figures are
reproducible) are graded twice:

- as written: every checkable claim in a maintainer's own section is taken to be true, so each
  unsupported one is a false alarm (reported with git's reason, to be read);
- with planted claims: the release version in the heading bumped, the release date moved by three
  days, a pull request number in an item replaced by another (where git carries the item's number),
  and a sentence with a wrong commit count; each with a true twin (the right version, date, number
  and count) that must stay supported; and a wrong author and invented changes (a new item, and a
  maintainer's item with its words replaced, each crediting a real pull request of the range).

Sets, reported in this order: `blind29` (fetched on 2026-12-08 00:27-00:28 UTC, as `blind8`), `blind28` (fetched on
2026-12-08 00:27-00:28 UTC, or read from mirrors of earlier sessions that no notes set used, as `blind8`), `blind27`
(fetched on 2026-12-08 00:00-00:02 UTC, as `blind8`), `blind26` (fetched on 2026-12-08 00:01-00:03 UTC, or read from
mirrors of earlier sessions that no notes set used, as `blind8`), `blind25` (fetched on 2026-12-07 23:04-23:05 UTC,
as `blind8`), `blind24` (fetched on 2026-12-07 23:04 UTC, or read from mirrors of 14:24-20:41 UTC that no notes set
used, as `blind8`), `blind23` (fetched on 2026-12-07 20:23 UTC, as `blind8`),
`blind22` (fetched on 2026-12-07 20:10 UTC, as `blind8`), `blind20` (fetched on 2026-12-07 17:11 UTC, as `blind8`),
`blind19` and `blind19b`
(fetched on 2026-12-07 14:18 UTC, as `blind8`), `blind18` and
`blind18b` (fetched on 2026-12-07 12:30 UTC, as `blind8`), `blind17` and `blind17b` (fetched on 2026-12-07 11:38
UTC, as `blind8`), `blind16` (fetched on
2026-12-07 08:58 UTC, as `blind8`),
`blind15d` (fetched on 2026-12-07 09:51 UTC, as `blind8`), `blind15c` (fetched on
2026-12-07 09:20 UTC, as `blind8`), `blind15b` (fetched on
2026-12-07 08:56-09:11 UTC, as `blind8`), `blind15` (fetched on
2026-12-07 08:56 UTC, as `blind8`), `blind14` (fetched on
2026-12-07 07:40 UTC, as `blind8`), `blind13` (fetched on 2026-12-07 07:25 UTC, as `blind8`), `blind12` (fetched on
2026-12-07 06:15 UTC, as `blind8`), `blind11` (fetched on
2026-12-07 05:17 UTC, as `blind8`), `blind10` (fetched on
2026-12-07 05:11 UTC, as `blind8`), `blind9` (fetched on
2026-12-07 03:44 UTC, as `blind8`), `blind8` (fetched on
2026-12-07 00:36 UTC, as `blind7`; its ranges start at the previous final release, not a pre-release),
`blind7` (fetched on 2026-12-06 21:30 UTC, written and committed with `--plant-only` before the grader read
them, as `blind4`), `blind6` (fetched on 2026-12-06 20:10 UTC, written and committed with `--plant-only`
before the grader read them, as `blind4`), `blind5`
(fetched on 2026-12-06 19:50 UTC, written and committed with `--plant-only` before the grader read
them, as `blind4`), `blind4` (fetched on 2026-12-06 18:40 UTC;
its sections and plants exported with `--plant-only` and committed before the grader read them, then graded once with
`--refresh`), `blind3` and `blind2` (fetched on 2026-12-06 and graded once
before any change made for them, then no longer blind), `blind` (projects never looked at before, fetched and
configured by their heading lines only, graded once after the session's changes were done),
`fresh` (projects added after the grader was tuned, graded once, then looked at), `held` (graded
once untouched, then its false alarms were looked at and fixed:
no longer blind), `dev` (graded while the grader was written).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import subprocess
import sys
import tempfile
import unicodedata
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from signoff.kernel.errors import UsageError
from signoff.notes.facts import FactsFile, build_facts
from signoff.notes.grade import grade_text
from signoff.notes.meaning import read_claims
from signoff.notes.run import writer_task
from signoff.notes.snapshot import take_snapshot
from signoff.notes.writer import write_default


@dataclass(frozen=True)
class Project:
    repo: str  # owner/name
    commit: str  # where the changelog is read
    path: str
    tag: str  # tag name template for a version
    heading: str  # regex of a section heading line for a version ({v})
    split: str  # dev or held


PROJECTS = [
    # dev: graded while the grader was written
    Project("pallets/click", "2c8cd3ac958a7eb316d67f2d316c27086c4c0369", "CHANGES.md", "{v}", r"^## Version {v}\s*$",
            "dev"),
    Project("pallets/itsdangerous", "672971d66a2ef9f85151e53283113f33d642dabd", "CHANGES.rst", "{v}",
            r"^Version {v}\s*$", "dev"),
    Project("pytest-dev/pluggy", "e382e72789f8d791991c489d4322aa04e660b952", "CHANGELOG.rst", "{v}",
            r"^pluggy {v} \(", "dev"),
    Project("encode/starlette", "cb8f84f5284dc301ca7a31eb732b9e140769dd48", "docs/release-notes.md", "{v}",
            r"^## {v} \(", "dev"),
    Project("hynek/structlog", "025edaf799c6d6d511ab672d14c2ba8e885c4c36", "CHANGELOG.md", "{v}", r"^## \[{v}\]",
            "dev"),
    # held: graded once untouched (4 false alarms of 60, 38 of 41 planted flagged), then looked at
    Project("marshmallow-code/marshmallow", "341b927f219205704728c05cd61f04d7e9727523", "CHANGELOG.rst", "{v}",
            r"^{v} \(", "held"),
    Project("npm/node-semver", "6e05b7637396ac66522cff8731f07cfe0ef49a29", "CHANGELOG.md", "v{v}", r"^## \[{v}\]",
            "held"),
    Project("expressjs/express", "a3714473feb3d2908add734d340e7755fd85e0a3", "History.md", "v{v}", r"^{v} / ",
            "held"),
    Project("PyGithub/PyGithub", "5cdf6ab395c52efb652d0bc1f28fdf2e452b1b41", "doc/changes.rst", "v{v}",
            r"^Version {v} \(", "held"),
    # fresh: added after the grader was tuned, graded once, never tuned on
    Project("pallets/werkzeug", "1b00618e787f40dfb21eba29caf8f8be7c8e1d93", "CHANGES.rst", "{v}",
            r"^Version {v}\s*$", "fresh"),
    Project("encode/uvicorn", "e6c7ce791fc634b6eedee40e0d0207faa8a9aefd", "docs/release-notes.md", "{v}",
            r"^## {v} \(", "fresh"),
    Project("yargs/yargs", "2a4378bdc2eac9cf7d0cdfe0a52b1b25f779806a", "CHANGELOG.md", "v{v}", r"^## \[{v}\]",
            "fresh"),
    Project("koajs/koa", "e0ba8ef39d27fe5dae5492f9fe753d155124f994", "History.md", "{v}", r"^{v} / ", "fresh"),
    Project("aio-libs/yarl", "7009e844cec7959e73741102ceadff49ed914291", "CHANGES.rst", "v{v}", r"^v{v}\s*$",
            "fresh"),
    Project("python-attrs/cattrs", "82b02c07ca535a1ba656b935767d819eac9d383b", "HISTORY.md", "v{v}",
            r"^## {v} \(", "fresh"),
    # blind: fetched on 2026-12-06, configured by their heading lines only, run once after the
    # changes of that session were done, never tuned on
    Project("psf/requests", "1f6589ec3a1ee910f9a65cc3ceac60b26677bc0e", "HISTORY.md", "v{v}", r"^{v} \(", "blind"),
    Project("tj/commander.js", "ba6d13ddb4243e5913367734f8c159089ffe7834", "CHANGELOG.md", "v{v}", r"^## \[{v}\]",
            "blind"),
    Project("agronholm/anyio", "660a06d548ca72759e9d89ed722dd1ad5227afe4", "docs/versionhistory.rst", "{v}",
            r"^\*\*{v}\*\*", "blind"),
    Project("Delgan/loguru", "2a17be730e111cf874d0bf967c4c5da15b7e4670", "CHANGELOG.rst", "{v}", r"^`{v}`_ \(",
            "blind"),
    Project("jazzband/pip-tools", "c58d5d945c0f20e9713e10f5fea2491a5c984f39", "CHANGELOG.md", "v{v}",
            r"^## v{v}\s*$", "blind"),
    Project("axios/axios", "23a25af0688d1db2c396deb09229d2271cc24f6c", "CHANGELOG.md", "v{v}", r"^## \[{v}\]",
            "blind"),
    Project("pypa/packaging", "053c884615f2e83d80705251b447769ec2599653", "CHANGELOG.rst", "{v}", r"^{v} - ",
            "blind"),
    # blind2: fetched on 2026-12-06 13:05 UTC, configured by their heading lines only, graded once
    # before any change made for them
    Project("fastapi/sqlmodel", "a6469ef61bb903cbf7fd8749c70d8ceb8046c368", "docs/release-notes.md", "{v}",
            r"^## {v} \(", "blind2"),
    Project("pypa/build", "b317437d2b5cddea5c7b45f72d1ae8af915e9815", "CHANGELOG.rst", "{v}", r"^ ?{v} \(",
            "blind2"),
    Project("uuidjs/uuid", "70177807e9229dfacde2038dc1e722f1828f358a", "CHANGELOG.md", "v{v}", r"^## \[{v}\]",
            "blind2"),
    Project("jsx-eslint/eslint-plugin-react", "012ec39f962627d5312e9fbaee3eb41d9a4d8bb6", "CHANGELOG.md", "v{v}",
            r"^## \[{v}\]", "blind2"),
    # blind3: fetched on 2026-12-06 15:55 UTC, configured by their heading lines only, graded once
    # before any change made for them (the invented-feature and author work of that afternoon)
    Project("pallets/jinja", "5ef70112a1ff19c05324ff889dd30405b1002044", "CHANGES.rst", "{v}",
            r"^Version {v}\s*$", "blind3"),
    Project("pytest-dev/pytest-mock", "9b666cdeff8bd396510e8f52633915a6d57a5f3c", "CHANGELOG.rst", "v{v}",
            r"^{v}(?: \(|\s*$)", "blind3"),
    Project("motdotla/dotenv", "2fc7eac8ad77cbd5f7814355c7fa352dbcf3c358", "CHANGELOG.md", "v{v}",
            r"^## \[{v}\]", "blind3"),
    Project("winstonjs/winston", "4b963a9f5b1ef24efb6250354a108b80c0c6e7d9", "CHANGELOG.md", "v{v}",
            r"^## \[?v{v}[\] ]", "blind3"),
    # blind4: fetched on 2026-12-06 18:40 UTC, configured by their heading lines only; sections and
    # plants exported (`--plant-only`) and committed before the grader first read them
    Project("tox-dev/tox", "ccb12fc2e1bb9df0da860be4af175e9b97949fbc", "docs/changelog.rst", "{v}",
            r"^ v{v} \(", "blind4"),
    Project("pydantic/pydantic", "2151025aa51263f3016502b00010b78e4481eaa1", "HISTORY.md", "v{v}",
            r"^## v{v} \(", "blind4"),
    Project("import-js/eslint-plugin-import", "950393edcbd19a9726a8beaa5694cef2577f1e72", "CHANGELOG.md", "v{v}",
            r"^## \[{v}\]", "blind4"),
    Project("scrapy/scrapy", "11079cb1c85b9e75a39a7269943c69d1a975d485", "docs/news.rst", "{v}",
            r"^Scrapy {v} \(", "blind4"),
    Project("httpie/httpie", "e2d43c14ce14475118941ce1ad8a355f7ed2f581", "CHANGELOG.rst", "{v}",
            r"^`{v}`_ \(", "blind4"),
    # blind5: fetched on 2026-12-06 19:50 UTC, configured by their heading lines only; sections and
    # plants exported (`--plant-only`) and committed before the grader first read them
    Project("nodeca/js-yaml", "74a01992953302040be3277c08ba214a06f00b87", "CHANGELOG.md", "{v}", r"^## \[{v}\]",
            "blind5"),
    Project("sinonjs/sinon", "cf5d9e8de1a5307ed7b329b6306ee86982453db7", "CHANGES.md", "v{v}", r"^## {v}\s*$",
            "blind5"),
    Project("pytest-dev/pytest-xdist", "f63b6a25b4eb932385c6ee4651eac5c08fbd3a20", "CHANGELOG.rst", "v{v}",
            r"^pytest-xdist {v} \(", "blind5"),
    Project("python-jsonschema/jsonschema", "b37f7be6dc7966a1f1a67557976041ffe0826cb3", "CHANGELOG.rst", "v{v}",
            r"^v{v}\s*$", "blind5"),
    # blind6: fetched on 2026-12-06 20:10 UTC, configured by their heading lines only; sections and
    # plants exported (`--plant-only`) and committed before the grader first read them
    Project("executablebooks/markdown-it-py", "2c3f71ec46c4259ca375fb40c9cd47385c6c304e", "CHANGELOG.md", "v{v}",
            r"^## {v} - ", "blind6"),
    Project("yargs/yargs-parser", "60f2db5dacde1e94f960ce0941a717f3f422f865", "CHANGELOG.md", "yargs-parser-v{v}",
            r"^## \[{v}\]", "blind6"),
    Project("tox-dev/filelock", "61511ebc1cc5d40b28f8584f1078e63f2d63fb02", "docs/changelog.rst", "{v}",
            r"^ {v} \(", "blind6"),
    Project("hukkin/tomli", "920e20b1cf495b63f6d4a6aa3cd5e4ff25f5f5a7", "CHANGELOG.md", "{v}", r"^## {v}\s*$",
            "blind6"),
    # blind7: fetched on 2026-12-06 21:30 UTC, configured by their heading lines only; sections and
    # plants exported (`--plant-only`) and committed before the grader first read them
    Project("pre-commit/pre-commit", "a9bba55a3f74068b53f4bd4d831d7e05e34eae6c", "CHANGELOG.md", "v{v}",
            r"^{v} - \d{4}-", "blind7"),
    Project("nedbat/coveragepy", "210ade2b3bed97c089ba29255c9a342c5b7aee14", "CHANGES.rst", "{v}",
            r"^Version {v} \u2014 ", "blind7"),
    Project("wntrblm/nox", "a976d7ee04ab7a13634adc1016d4755a1348225f", "CHANGELOG.md", "{v}", r"^## {v}\s*$",
            "blind7"),
    Project("prettier/prettier", "4f84a934201322ca87750e2b9b25baf296da6560", "CHANGELOG.md", "{v}", r"^# {v}\s*$",
            "blind7"),
    Project("date-fns/date-fns", "dd66398305c2b015fba3c1b3d31ccff42ee8d4cf", "CHANGELOG.md", "v{v}",
            r"^## v{v} - ", "blind7"),
    # blind8: fetched on 2026-12-07 00:36 UTC, configured by their heading lines only; sections and
    # plants exported (`--plant-only`) and committed before the grader first read them
    Project("twisted/towncrier", "5534c47df69602dd35810c2b27df683e59cf4bca", "NEWS.rst", "{v}",
            r"^[Tt]owncrier {v} \(", "blind8"),
    Project("sharkdp/fd", "ee20f426ddf338ac7ead5c5f00ea49258005caaf", "CHANGELOG.md", "v{v}", r"^# {v}\s*$",
            "blind8"),
    Project("getsentry/sentry-python", "064542dd2cbdbe0b11f1cda7f47d7d2920b0c38b", "CHANGELOG.md", "{v}",
            r"^## {v}\s*$", "blind8"),
    Project("jpadilla/pyjwt", "dcc27a9d3182a2349c30b160758785c6ce7a6508", "CHANGELOG.rst", "{v}",
            r"^`v{v} <", "blind8"),
    Project("benoitc/gunicorn", "65ac1a3a4c0aa00960968c720d6e6bd2ac32f1b9", "docs/content/news.md", "{v}",
            r"^## {v} - ", "blind8"),
    Project("simonw/sqlite-utils", "56dd09702fdb9e899f577ffd51693c1f2176cb08", "docs/changelog.rst", "{v}",
            r"^{v} \(", "blind8"),
    # blind9: fetched on 2026-12-07 03:44 UTC, configured by their heading lines only; sections and
    # plants exported (`--plant-only`) and committed before the grader first read them
    Project("gin-gonic/gin", "dcaa4296d111981ffb31ac3eba90bb63e1eb5ab9", "CHANGELOG.md", "v{v}",
            r"^## Gin v{v}\s*$", "blind9"),
    Project("BurntSushi/ripgrep", "3fce3b5bb0236da2df6d99672afb8a719642eca7", "CHANGELOG.md", "{v}", r"^{v} \(",
            "blind9"),
    Project("changesets/changesets", "5322174b2722b626161ca1b9c0889ede440b30b5", "packages/cli/CHANGELOG.md",
            "@changesets/cli@{v}", r"^## {v}\s*$", "blind9"),
    Project("giampaolo/psutil", "d77cf39abb5b423bde4bb0420eba78203281376b", "docs/changelog.rst", "v{v}",
            r"^{v} \u2014 ", "blind9"),
    Project("pyparsing/pyparsing", "efd56db4e59f36b1673ce0eb0823e3afaa9d1201", "CHANGES", "{v}",
            r"^Version {v} - ", "blind9"),
    # blind10: fetched on 2026-12-07 05:11 UTC, configured by their heading lines only; sections and
    # plants exported (`--plant-only`) and committed before the grader first read them
    Project("python-semantic-release/python-semantic-release", "c74aa3b99de6d9c721f8bd6d2abfa142298b94c9",
            "CHANGELOG.rst", "v{v}", r"^v{v} \(", "blind10"),
    Project("sinatra/sinatra", "cb22afd7902b566b6eaba6c4ea89739494a65d12", "CHANGELOG.md", "v{v}", r"^## {v} / ",
            "blind10"),
    Project("elixir-ecto/ecto", "c624abf4297b27589a5a7351b55feb2316f61e1c", "CHANGELOG.md", "v{v}",
            r"^## v{v} \(", "blind10"),
    # blind11: fetched on 2026-12-07 05:17 UTC, configured by their heading lines only; sections and
    # plants exported (`--plant-only`) and committed before the grader first read them
    Project("aio-libs/aiohttp", "495e778360d1924da63e16dba0f0d76baf56a56a", "CHANGES.rst", "v{v}", r"^{v} \(",
            "blind11"),
    Project("rubocop/rubocop-rails", "a4655cb220eac63e0f1e8fb5f7bd56287e6acb56", "CHANGELOG.md", "v{v}",
            r"^## {v} \(", "blind11"),
    Project("sphinx-doc/sphinx", "e44a40eb2f810558ccd9da1425421270ccb81351", "CHANGES.rst", "v{v}",
            r"^Release {v} \(released ", "blind11"),
    # blind12: fetched on 2026-12-07 06:15 UTC, configured by their heading lines only; sections and
    # plants exported (`--plant-only`) and committed before the grader first read them
    Project("go-task/task", "b250872d9aebcd4857679553339d167478b63514", "CHANGELOG.md", "v{v}", r"^## v{v} - ",
            "blind12"),
    Project("casey/just", "4f41f609278edb6f1024e3dd7a9912946e1e7bc3", "CHANGELOG.md", "{v}", r"^\[{v}\]\(",
            "blind12"),
    Project("typescript-eslint/typescript-eslint", "56c9ed90d0aee0b5a71cfc39fc76b715b82e3ea8",
            "packages/eslint-plugin/CHANGELOG.md", "v{v}", r"^## {v} \(", "blind12"),
    Project("pygments/pygments", "6a62df1d1fc77af7e9fc61325ef376297cadffbb", "CHANGES", "{v}", r"^Version {v}\s*$",
            "blind12"),
    # blind13: fetched (or first used from /work/.mirror) on 2026-12-07 07:25 UTC, configured by their heading
    # lines only; sections and plants exported (`--plant-only`) and committed before the grader first read them
    Project("rust-lang/log", "037d7a58f6ad184abb3afc4db81d37c43a5696ec", "CHANGELOG.md", "{v}", r"^## \[{v}\] - ",
            "blind13"),
    Project("guzzle/guzzle", "2779e868a00289e1b1fd854af030c43a06f4bcb4", "CHANGELOG.md", "{v}", r"^## {v} - ",
            "blind13"),
    Project("mkdocs/mkdocs", "2862536793b3c67d9d83c33e0dd6d50a791928f8", "docs/about/release-notes.md", "{v}",
            r"^## Version {v} \(", "blind13"),
    # blind14: fetched (or first used from /work/.mirror) on 2026-12-07 07:40 UTC, configured by their heading
    # lines only; sections and plants exported (`--plant-only`) and committed before the grader first read them
    Project("square/moshi", "889013ec2edb8d8034902662a1dc8c4f3b3f8111", "CHANGELOG.md", "{v}", r"^## \[{v}\] - ",
            "blind14"),
    Project("michalmuskala/jason", "4ede42858eb19f80ec9e863aab52df466eab8608", "CHANGELOG.md", "v{v}",
            r"^## {v} \(", "blind14"),
    Project("pytest-dev/pyfakefs", "bb55fb8a87c5e5c682702b86f0ca6a8002cbbf3d", "CHANGES.md", "v{v}",
            r"^## \[Version {v}\]\(", "blind14"),
    # blind16: fetched on 2026-12-07 08:58 UTC (JavaScript/TypeScript, Go and Rust projects in Markdown),
    # configured by their heading lines only; sections and plants exported (`--plant-only`) and committed
    # before the grader first read them
    Project("vitejs/vite", "a98c8d95d552c6fa98ab66fb810f5b39ad5abf49", "packages/vite/CHANGELOG.md", "v{v}",
            r"^## (?:<small>)?\[{v}\]\(", "blind16"),
    Project("tokio-rs/tokio", "ea91b33ca57ff0581b38e735cc108f831bccbdaa", "tokio/CHANGELOG.md", "tokio-{v}",
            r"^# {v} \(", "blind16"),
    Project("uber-go/zap", "5b81b37b81b8e2ed447a6f57991e372ee4fa5c8f", "CHANGELOG.md", "v{v}", r"^## {v} \(",
            "blind16"),
    Project("clap-rs/clap", "6982fb1c98c7247e38a6d4f04191b94e30497e7b", "CHANGELOG.md", "v{v}", r"^## \[{v}\] - ",
            "blind16"),
    # blind15: fetched on 2026-12-07 08:56 UTC, configured by their heading lines only; sections and plants
    # exported (`--plant-only`) and committed before the grader first read them. jackson-databind's changelog
    # is read on its 2.18 branch (`release-notes/VERSION-2.x`; its default branch is 3.0's)
    Project("psycopg/psycopg", "c079c37c959a89a8684a3d3858cbaff7e5543e71", "docs/news.rst", "{v}",
            r"^Psycopg {v}\s*$", "blind15"),
    Project("celery/kombu", "9ee8595b835c77b4f04cfb54b40b5d446f985a35", "Changelog.rst", "v{v}", r"^{v}\s*$",
            "blind15"),
    Project("sidekiq/sidekiq", "1bb4aa06e5aa178a114a5e855f9f3d5c24f6c61b", "Changes.md", "v{v}", r"^{v}\s*$",
            "blind15"),
    Project("FasterXML/jackson-databind", "3824b115c9e93842d3fad5284ff4dcb73535d080", "release-notes/VERSION-2.x",
            "jackson-databind-{v}", r"^{v} \(", "blind15"),
    # blind15b: fetched (puma on 2026-12-07 08:56, rack and okhttp at 09:11 UTC) after blind15's fixes, configured
    # by their heading lines only; sections and plants exported (`--plant-only`) and committed before the grader
    # first read them
    Project("puma/puma", "ff2e2126ee2f0f97e21c57ce1967afde1b6f05a1", "History.md", "v{v}", r"^## {v} / ", "blind15b"),
    Project("rack/rack", "8bf4eb078498edc9105fb04add80d89c5340e60b", "CHANGELOG.md", "v{v}", r"^## \[{v}\] - ",
            "blind15b"),
    Project("square/okhttp", "1682d9bac8c03dffde2969b0b74d47649d0dbb52", "CHANGELOG.md", "parent-{v}",
            r"^## Version {v}\s*$", "blind15b"),
    # blind15c: fetched on 2026-12-07 09:20 UTC after blind15b's fix, configured by their heading lines only (the
    # section splitter taught `### 3.13.2 / ...` and "What's New in astroid 4.1.1?" as release headings, no other
    # set's sections changed); sections and plants exported (`--plant-only`) and committed before the grader read them
    Project("rspec/rspec-core", "aec5f49485d97908183dbe790a7fefb8baaa8091", "Changelog.md", "v{v}", r"^### {v} / ",
            "blind15c"),
    Project("projectlombok/lombok", "ba2d0e8d591a4bbd650228d5fd1f7e9dc73289b0", "doc/changelog.markdown", "v{v}",
            r"^### v{v} \(", "blind15c"),
    Project("pylint-dev/astroid", "94b7090f1324e998a78372343e8452ab70b9280c", "ChangeLog", "v{v}",
            r"^What's New in astroid {v}\?", "blind15c"),
    # blind15d: fetched on 2026-12-07 09:51 UTC after blind15c's fixes, configured by their heading lines only;
    # sections and plants exported (`--plant-only`) and committed before the grader first read them
    Project("pyca/pyopenssl", "499f4245a1e4ba3d067b3257f0f3cd63fed59bd0", "CHANGELOG.rst", "{v}", r"^{v} \(",
            "blind15d"),
    Project("thoughtbot/factory_bot", "967d128e3710b9918f97c75b47b11251e85c2377", "NEWS.md", "v{v}", r"^## {v} \(",
            "blind15d"),
    Project("FasterXML/jackson-core", "f4486250770035e71a0e17494e6af88ae1070b6d", "release-notes/VERSION-2.x",
            "jackson-core-{v}", r"^{v} \(", "blind15d"),
    # blind17: fetched on 2026-12-07 11:38 UTC (Go, C++, C, PHP and .NET projects), configured by their heading lines
    # only (the section splitter taught libuv's `2026.03.06, Version 1.52.1 (Stable), <hash>` and composer's
    # `### [2.10.2] 2026-07-01` as release headings, no other set's sections changed); sections and plants exported
    # (`--plant-only`) and committed before the grader first read them
    Project("prometheus/client_golang", "89c60c0554699c74fa3d4eec472b98a3108905e3", "CHANGELOG.md", "v{v}",
            r"^## {v} / ", "blind17"),
    Project("fmtlib/fmt", "60ccad511fd680cb91d8b60a315759f71c67bef9", "ChangeLog.md", "{v}", r"^# {v} - ", "blind17"),
    Project("libuv/libuv", "6179e7af87413396d5853a1c3722c8b5749336c8", "ChangeLog", "v{v}",
            r"^\d{4}\.\d{2}\.\d{2}, Version {v} ", "blind17"),
    Project("composer/composer", "eba7baa59eb1b59246cf9800b0120fe78915b6ac", "CHANGELOG.md", "{v}", r"^### \[{v}\] ",
            "blind17"),
    Project("App-vNext/Polly", "173d6d1d2e28a4697f1ac1d22da68f77ff19a0c9", "CHANGELOG.md", "{v}", r"^## {v}\s*$",
            "blind17"),
    # blind17b: fetched on 2026-12-07 11:38 UTC (Rust, Kotlin, Elixir and PHP projects), configured by their heading
    # lines only; sections and plants exported (`--plant-only`) and committed before the grader first read them.
    # axum's changelog is its crate's (`axum/CHANGELOG.md`, tags `axum-v0.8.9`) in a workspace of several crates;
    # phoenix's is read on its v1.8 branch (the default branch's is v1.9's, unreleased)
    Project("tokio-rs/axum", "3d78036dcac289d6c1d54934708acb6a5bd73686", "axum/CHANGELOG.md", "axum-v{v}",
            r"^# {v}\s*$", "blind17b"),
    Project("Kotlin/kotlinx.coroutines", "792ac67bdcd5592e5764753e623a9e8c6e4bcb29", "CHANGES.md", "{v}",
            r"^## Version {v}\s*$", "blind17b"),
    Project("phoenixframework/phoenix", "a27a0320ec8bcc874a8ae93a85f15dfdd5e91e25", "CHANGELOG.md", "v{v}",
            r"^## v{v} \(", "blind17b"),
    Project("rust-lang/regex", "2b527599eb9eea0dcc288c704584f242f26a5c61", "CHANGELOG.md", "{v}", r"^{v} \(",
            "blind17b"),
    Project("Seldaek/monolog", "57eb1028342134e701e77c617565d51b6e5a2a53", "CHANGELOG.md", "{v}", r"^### {v} \(",
            "blind17b"),
    # blind18: fetched on 2026-12-07 12:30 UTC (Python projects: a web framework, a dotenv reader, a fake-data
    # library, a request parser, an i18n library, an async library), configured by their heading lines only (no
    # change to the section splitter); sections and plants exported (`--plant-only`) and committed before the
    # grader first read them
    Project("fastapi/fastapi", "c3f316b7e814667e8ee81e03a7330d00ee61e45c", "docs/en/docs/release-notes.md", "{v}",
            r"^## {v} \(", "blind18"),
    Project("theskumar/python-dotenv", "bca6644d9aedbe287b792b756b3ae3d650cd0d3a", "CHANGELOG.md", "v{v}",
            r"^## \[{v}\] ", "blind18"),
    Project("joke2k/faker", "8ad78a632a4116e6392e6d5743524c683a2e02a1", "CHANGELOG.md", "v{v}", r"^### \[v{v} - ",
            "blind18"),
    Project("marshmallow-code/webargs", "16a002d3f5cc8177660c5881defdf492e0ceee8d", "CHANGELOG.rst", "{v}",
            r"^{v} \(", "blind18"),
    Project("python-babel/babel", "6ba6701e790f2f4b482ab5919cdf79f9cfef259b", "CHANGES.rst", "v{v}",
            r"^Version {v}\s*$", "blind18"),
    Project("python-trio/trio", "60d0c2f84854ec6ef74995663dcdce3296840485", "docs/source/history.rst", "v{v}",
            r"^[Tt]rio {v} \(", "blind18"),
    # blind18b: fetched on 2026-12-07 12:30 UTC (JavaScript projects: a test runner, an ODM, a bundler, a linter),
    # configured by their heading lines only; sections and plants exported (`--plant-only`) and committed before
    # the grader first read them. mongoose releases 6.x-9.x side by side, each its own setext section
    Project("jestjs/jest", "52db46e50404c993d3f10dd1481e861cc04ae22e", "CHANGELOG.md", "v{v}", r"^## {v}\s*$",
            "blind18b"),
    Project("Automattic/mongoose", "3e212cec87dbf710216a3c6125121aefa60a4475", "CHANGELOG.md", "{v}", r"^{v} / ",
            "blind18b"),
    Project("rollup/rollup", "89bda2cd8e9def2ea037e7dbffaf392ce9f1ddcb", "CHANGELOG.md", "v{v}", r"^## {v}\s*$",
            "blind18b"),
    Project("standard/standard", "be621152d2c0a23079296035bb26e57cebe2f319", "CHANGELOG.md", "v{v}",
            r"^## \[{v}\] ", "blind18b"),
    # blind19: fetched on 2026-12-07 14:18 UTC (Python projects: a terminal UI framework, an installer, an HTTP
    # transport, a packaging core, a string-escaping library, a date library), configured by their heading lines
    # only; sections and plants exported (`--plant-only`) and committed before the grader first read them
    Project("Textualize/textual", "1d99508b928a771b51e1a527319c6b87dcff9e05", "CHANGELOG.md", "v{v}",
            r"^## \[{v}\] - ", "blind19"),
    Project("pypa/pip", "6d309205789d368b2749d93fd6193d584811efd5", "NEWS.rst", "{v}", r"^{v} \(", "blind19"),
    Project("encode/httpcore", "98209758cc14e1a5f966fe1dfdc1064b94055d8c", "CHANGELOG.md", "{v}",
            r"^## (?:Version )?{v} \(", "blind19"),
    Project("python-poetry/poetry-core", "c4d922c3183763f19b790c5123b5f9d4f5fa9eaf", "CHANGELOG.md", "{v}",
            r"^## \[{v}\] - ", "blind19"),
    Project("pallets/markupsafe", "1251593f6b0e3b45f2cc8aba662622bc22d6a5e2", "CHANGES.rst", "{v}",
            r"^Version {v}\s*$", "blind19"),
    Project("arrow-py/arrow", "b247ad073d4c350270528edb5afff8e7f4f7d9e4", "CHANGELOG.rst", "{v}", r"^{v} \(",
            "blind19"),
    # blind19b: fetched on 2026-12-07 14:18 UTC (JavaScript/TypeScript projects: a CSS framework, a syntax
    # highlighter, a UI compiler, a query builder, a database client), configured by their heading lines only;
    # sections and plants exported (`--plant-only`) and committed before the grader first read them. svelte's
    # changelog is its package's (changesets, tags `svelte@5.56.10`), node-postgres' its `pg` package's (`pg@8.23.0`)
    Project("tailwindlabs/tailwindcss", "90f8ff41c8e2a4d17bc76921e23e9d672123da76", "CHANGELOG.md", "v{v}",
            r"^## \[{v}\] - ", "blind19b"),
    Project("highlightjs/highlight.js", "0bc57cfcfb7eab3de7b9ed07e51ff02f6dca441f", "CHANGES.md", "{v}",
            r"^## Version {v}\s*$", "blind19b"),
    Project("sveltejs/svelte", "15720b16a5ef33e3e1f4301c77b94ec375070e73", "packages/svelte/CHANGELOG.md",
            "svelte@{v}", r"^## {v}\s*$", "blind19b"),
    Project("knex/knex", "e25d54bcb707714a17f5a5744eba5c4246bb4d1d", "CHANGELOG.md", "{v}", r"^# {v} - ", "blind19b"),
    Project("brianc/node-postgres", "c9e57617bc92c2ded23a75345f50eadc527bd131", "CHANGELOG.md", "pg@{v}",
            r"^## pg@{v}\s*$", "blind19b"),
    # blind20: fetched on 2026-12-07 17:11-17:15 UTC (a Python test framework, a Python array library, a Java
    # HTML parser, a Go web framework, a Ruby site generator, a Java formatter's Gradle plugin), configured by
    # their heading lines only; sections and plants exported (`--plant-only`) and committed before the grader
    # first read them. spotless' changelog is its Gradle plugin's (`plugin-gradle/CHANGES.md`, tags
    # `gradle/8.10.0` beside `lib/...` and `maven/...`)
    Project("pytest-dev/pytest", "df87db7b0462fb764ef73fa00561adf8ad047572", "doc/en/changelog.rst", "{v}",
            r"^pytest {v} \(", "blind20"),
    Project("pydata/xarray", "b1c1dc549b62bdfc8de0bdded24f56464cf0db1a", "doc/whats-new.rst", "v{v}",
            r"^v{v} \(", "blind20"),
    Project("jhy/jsoup", "46b620860af930eedc193a705eaf7cea5aec89a6", "CHANGES.md", "jsoup-{v}", r"^## {v} \(",
            "blind20"),
    Project("labstack/echo", "05489dc1730161df26b72d1ae2a3ba6fb8178fc7", "CHANGELOG.md", "v{v}", r"^## v{v} - ",
            "blind20"),
    Project("jekyll/jekyll", "202df571314ba1d18e9fccd81d12aaad4a703c38", "History.markdown", "v{v}",
            r"^## {v} / ", "blind20"),
    Project("diffplug/spotless", "6ac5b9de0c5dbf26cc52aac4cc32600359b7f62e", "plugin-gradle/CHANGES.md",
            "gradle/{v}", r"^## \[{v}\] - ", "blind20"),
    # blind23: fetched on 2026-12-07 20:23 UTC (a JavaScript monorepo's changesets `packages/mobx/CHANGELOG.md`
    # citing commit, pull request and author per item, an Elixir job queue's `## v2.18.2 — 2024-08-16` sections
    # of prose items, a Swift library's Keep-a-Changelog with reference-style `([#911])` links, a C tool's
    # `NEWS.md` citing CVEs, authors and full hashes, a Dart formatter's undated `## 3.1.12` sections citing
    # issues, a Python library's hand-written underlined `CHANGES`), configured by their heading lines only;
    # sections and plants exported (`--plant-only`) and committed before the grader first read them
    Project("mobxjs/mobx", "01211a698b64ea94de8e5f276ff8235fcf8ddf96", "packages/mobx/CHANGELOG.md", "mobx@{v}",
            r"^## {v}$", "blind23"),
    Project("sorentwo/oban", "412b56a0c2ba4399ec39f1305b63eb285673b226", "CHANGELOG.md", "v{v}", r"^## v{v} — ",
            "blind23"),
    Project("apple/swift-argument-parser", "2f77f2fccb6e84fecff338c37b199e33e7dfd119", "CHANGELOG.md", "{v}",
            r"^## \[{v}\] - ", "blind23"),
    Project("jqlang/jq", "579e6f76cffd7643ba4002a2c3618a5ea710589a", "NEWS.md", "jq-{v}", r"^# {v}$", "blind23"),
    Project("dart-lang/dart_style", "39edc2d946a5d7bd1caf6f1695f366b00f7b873c", "CHANGELOG.md", "v{v}", r"^## {v}$",
            "blind23"),
    Project("hgrecco/pint", "6fc05335ef2820736efec7c5b9d55433acfb6aad", "CHANGES", "{v}", r"^{v} \(", "blind23"),
    # blind24: fetched on 2026-12-07 23:04 UTC (hcl, commonmark, FluentValidation) or read from mirrors fetched at
    # 14:24 (jsonpickle), 17:11 (faker) and 20:41 UTC (griffe, for repair) that no notes set used (a Ruby library's
    # GitHub-generated `* text by @user in https://.../pull/N` lists with prose under `## [v3.8.0](...) (...)`, a
    # Python library's git-changelog sections of `- text ([abc1234](.../commit/...) by Name). [PR-479](...)` items,
    # a Python library's underlined reStructuredText `CHANGES.rst` citing issues `(#N)` and pull requests `(+N)`, a
    # Go library's `## v2.24.0 (July 7, 2025)` items ending `([#N](...))`, a PHP library's Keep-a-Changelog with
    # nested items citing `(#N)`, a .NET library's plain-text `Changelog.txt`, one change a line under
    # `12.1.1 - 3 Dec 2025`), configured by their heading lines only (and the plain-text `12.1.1 - 3 Dec 2025`
    # headings split); sections and plants exported (`--plant-only`) and committed before the grader first read them
    Project("faker-ruby/faker", "9b0780388e6333ec2baaa75d5546c88d4fe05d81", "CHANGELOG.md", "v{v}",
            r"^## \[v{v}\]", "blind24"),
    Project("mkdocstrings/griffe", "b450abb0b372f594271a017153a297c75651531a", "CHANGELOG.md", "{v}",
            r"^## \[{v}\]", "blind24"),
    Project("jsonpickle/jsonpickle", "42b78e90940a28795486717b703dd223cddc5ba6", "CHANGES.rst", "v{v}", r"^v{v}$",
            "blind24"),
    Project("hashicorp/hcl", "2efc2662361a9f5fd39f5d0cd46970ce4c3f7be2", "CHANGELOG.md", "v{v}", r"^## v{v} \(",
            "blind24"),
    Project("thephpleague/commonmark", "8c812a3cd319485fa7b1110b926829013551afa3", "CHANGELOG.md", "{v}",
            r"^## \[{v}\] - ", "blind24"),
    Project("FluentValidation/FluentValidation", "ea299fe59719950018fa240dab86da414190d7f4", "Changelog.txt", "{v}",
            r"^{v} - ", "blind24"),
    # blind22: fetched on 2026-12-07 20:10 UTC (a Rust HTTP library's conventional changelog with commit links and
    # `closes`, a Go database driver's hand-written sections crediting people by name, a Ruby API framework's
    # `* [#N](...): text - [@user](...).` items, a .NET logger's `### Version 6.1.2 (2026/04/01)` lists of pull
    # requests, a Python library's plain-text `CHANGES.txt` with bare links, PHPUnit's per-series Keep-a-Changelog
    # citing issues, read on its `12.5` branch), configured by their heading lines only; sections and plants
    # exported (`--plant-only`) and committed before the grader first read them
    Project("hyperium/hyper", "8fcaf1a62787b824fdd7b95a3e7c9ea81acd3449", "CHANGELOG.md", "v{v}",
            r"^#{2,3} v{v} \(", "blind22"),
    Project("jackc/pgx", "728cefa8008f2b06aeca071cd3239862aa80f9af", "CHANGELOG.md", "v{v}", r"^# {v} \(",
            "blind22"),
    Project("ruby-grape/grape", "eb03d4ad982d4feec1f1b3aaf4f48a66e65f28c0", "CHANGELOG.md", "v{v}",
            r"^### {v} \(", "blind22"),
    Project("NLog/NLog", "01a20bc9b61c0d6296e5b6e62a0518a443b944b5", "CHANGELOG.md", "v{v}",
            r"^### Version {v} \(", "blind22"),
    Project("simplejson/simplejson", "639b2ee73b2de6b385fcd4d44e0e08054a4d8a0e", "CHANGES.txt", "v{v}",
            r"^Version {v} released ", "blind22"),
    Project("sebastianbergmann/phpunit", "45544b20764d5802107736ebe53b8e455169c1c7", "ChangeLog-12.5.md", "{v}",
            r"^## \[{v}\] - ", "blind22"),
    # blind25: fetched on 2026-12-07 23:04-23:05 UTC (lazy.nvim, Catch2, eslint, Alamofire; kotlinpoet's and
    # tracing's mirrors were fetched in an earlier session and never read for notes): a Kotlin library's
    # `## Version 2.3.0` over "Thanks to [@user][user] ..." and `_2026-03-27_`, `* New:`/`* Fix:` items ending
    # `(#N)`; a Rust crate's `# 0.3.23 (March 13, 2026)` in a workspace (tags `tracing-subscriber-0.3.23`, released
    # from its `v0.1.x` branch) with reference-style `([#3484])` links; a Lua plugin manager's release-please
    # `## [11.17.5](.../compare/...) (2025-11-06)` with `Closes [#N](.../issues/N)` and commit links; a C++ test
    # framework's `docs/release-notes.md` (`## 3.7.1` over `### Fixes`, `* text (#N)`, nested lists); a JavaScript
    # linter's generated `v10.9.0 - August 21, 2026` lines of `` [`abc1234`](.../commit/...) subject (#N) (Author
    # Name) ``; a Swift library's `## [5.11.2](.../releases/tag/5.11.2)`, "Released on 2026-04-05." and items
    # credited "Fixed by [Name](...) in Pull Request [#N](...)."), configured by their heading lines only; sections
    # and plants exported (`--plant-only`) and committed before the grader first read them
    Project("square/kotlinpoet", "be2de914ce6eb3694092ed4e0f28626cbce1ffe0", "docs/changelog.md", "{v}",
            r"^## Version {v}$", "blind25"),
    Project("tokio-rs/tracing", "54ede4d5d85a536aed5485c5213011d9ec961935", "tracing-subscriber/CHANGELOG.md",
            "tracing-subscriber-{v}", r"^# {v} \(", "blind25"),
    Project("folke/lazy.nvim", "306a05526ada86a7b30af95c5cc81ffba93fef97", "CHANGELOG.md", "v{v}",
            r"^## \[{v}\]\(", "blind25"),
    Project("catchorg/Catch2", "a6ee7e20cd4011129816df7992c1a9db2ef4b58f", "docs/release-notes.md", "v{v}",
            r"^## {v}$", "blind25"),
    Project("eslint/eslint", "c27bc926e496985eb7911c09eb60914b2e4b5d0f", "CHANGELOG.md", "v{v}", r"^v{v} - ",
            "blind25"),
    Project("Alamofire/Alamofire", "7595cbcf59809f9977c5f6378500de2ad73b7ddb", "CHANGELOG.md", "{v}",
            r"^## \[{v}\]\(", "blind25"),
    # blind26: fetched on 2026-12-08 00:01-00:03 UTC (devise, PHPMailer, javaparser, mojo; icalendar's and
    # transitions' mirrors were fetched in earlier sessions and never read for notes): a Python library's towncrier
    # reStructuredText `7.3.0 (2026-08-19)` over `~~~` groups of long items ending `` (`Issue #N <...>`_) ``; a
    # Python library's `## 0.9.3 (July 2024)` over `- Bug #N:` / `PR #N:` / `Feature #N:` items "(thanks @user)";
    # a Ruby library's `### 5.0.3 - 2026-03-16` over `* bug fixes` / `* enhancements` lists of nested items ending
    # `[#N](.../pull/N)`; a PHP library's `## Version 7.1.1 (May 18th, 2026)` over plain items, few references; a
    # Java library's setext `Version 3.28.2` over `---`, Keep-a-Changelog groups of `* text (PR [#N](...) by
    # [@user](...))` items, tags `javaparser-parent-3.28.2`; a Perl framework's `Changes` file of `9.47  2026-07-05`
    # lines over `  - Added ... (user)` items, no references), configured by their heading lines only (and mojo's
    # `9.47  2026-07-05` lines split); sections and plants exported (`--plant-only`) and committed before the
    # grader first read them
    Project("collective/icalendar", "851cb47758689b54781c0712186d1d9e2ec57dd5", "CHANGES.rst", "v{v}",
            r"^{v} \(", "blind26"),
    Project("pytransitions/transitions", "bd42b38f3627e6bca7274fb4d9af2e105f75da7c", "Changelog.md", "{v}",
            r"^## {v} \(", "blind26"),
    Project("heartcombo/devise", "7ca7ed9c174525a4d36167441b35af4a0991b6af", "CHANGELOG.md", "v{v}",
            r"^### {v} - ", "blind26"),
    Project("PHPMailer/PHPMailer", "4a489474e7ef8bbf03c1cb219d8939ea76a7fb40", "changelog.md", "v{v}",
            r"^## Version {v} \(", "blind26"),
    Project("javaparser/javaparser", "1a6b1b69d0f310e5af14163863c5596b59a103b0", "changelog.md",
            "javaparser-parent-{v}", r"^Version {v}$", "blind26"),
    Project("mojolicious/mojo", "b4de430651b722f560b1577da9018e3f402d96ab", "Changes", "v{v}", r"^{v}  \d",
            "blind26"),
    # blind27: fetched on 2026-12-08 00:00-00:02 UTC (never used for notes): a Rust crate's `# 1.12.1 (July 8th,
    # 2026)` over `### Fixed` / `### Added`, items ending `(#N)`; a C library's setext `1.7.19 (Sep 9, 2025)` over
    # `======`, `Fixes:` over `------`, items ending `see #N and #M`, `fixes #N`; an Elixir HTTP client's
    # `## v0.7.3 (2026-...)` over `### Enhancements` / `### Bug Fixes`, items opening with [`Module`] reference
    # links; a Kotlin library's `## [3.5.0] - June 10, 2026` with "Changes since `3.4.0`:" lists, `**New**:`
    # items ending `([#N](.../pull/N))` and dependency updates; a JavaScript library's bare `## 8.5.26` over
    # one-line items crediting `(by @user)`, no references; a Swift library's `## [8.11.0 - Steady
    # Flight](.../releases/tag/8.11.0) (2026-07-20)` over `#### Add` / `#### Fix`, items ending with pull requests,
    # issues and handles), configured by their heading lines only; sections and plants exported (`--plant-only`)
    # and committed before the grader first read them
    Project("tokio-rs/bytes", "d5c8ad3227afe459c09f1d0d85455abf00f0381a", "CHANGELOG.md", "v{v}", r"^# {v} \(",
            "blind27"),
    Project("DaveGamble/cJSON", "a29814f285cc531c00223743ad3c55cd38c0dc56", "CHANGELOG.md", "v{v}", r"^{v} \(",
            "blind27"),
    Project("wojtekmach/req", "a9d6ac2887d4f36d4e56019e54d7e8a7d3dc3aa0", "CHANGELOG.md", "v{v}", r"^## v{v} \(",
            "blind27"),
    Project("coil-kt/coil", "a42b7709600630cd2bed73517832442b98d4d7b5", "CHANGELOG.md", "{v}", r"^## \[{v}\] - ",
            "blind27"),
    Project("postcss/postcss", "8f3784702ecb4c5fdbdccf82d9c033a450aa08d5", "CHANGELOG.md", "{v}", r"^## {v}$",
            "blind27"),
    Project("onevcat/Kingfisher", "410984bf301f4fa224fe56277b3f8672cc465c79", "CHANGELOG.md", "{v}",
            r"^## \[{v} - ", "blind27"),
    # blind28: fetched on 2026-12-08 00:27-00:28 UTC (semver, capybara, PHP-Parser; tldextract's, responses' and
    # yamllint's mirrors were fetched in earlier sessions and never read for notes): a Go library's `## 3.4.0
    # (2025-06-27)` over `### Added` / `### Fixed`, items opening `#N:`; a Ruby library's `# Version 3.40.0` over a
    # `Release date: 2024-01-26` line and `###` groups, items signed `[Name]` or ending `- Issue N`; a PHP library's
    # setext `Version 5.8.0 (2026-06-04)` over `---`, plain items, few references; a Python library's `## 5.3.1
    # (2025-12-28)` over `* Bugfixes` / `* Features` lists of nested items ending `([#N](.../issues/N))`; a Python
    # library's setext `0.26.1` over `------`, no dates, items ending `See #N`; a Python linter's reStructuredText
    # `1.38.0 (2026-01-13)` over `---`, plain one-line items, no references), configured by their heading lines
    # only; sections and plants exported (`--plant-only`) and committed before the grader first read them
    Project("Masterminds/semver", "71f2b39f5a1f18100def1d01ef4f59576e4c6da2", "CHANGELOG.md", "v{v}", r"^## {v} \(",
            "blind28"),
    Project("teamcapybara/capybara", "b3325b198464b806f07ec2011ceb532d6d5cf4ab", "History.md", "{v}",
            r"^# Version {v}$", "blind28"),
    Project("nikic/PHP-Parser", "fbd47f7ebcbb450138d92642a0a53b72a5285dda", "CHANGELOG.md", "v{v}",
            r"^Version {v} \(", "blind28"),
    Project("john-kurkowski/tldextract", "f06eec7f1c86322554bcb4031b72a74699f04cf6", "CHANGELOG.md", "{v}",
            r"^## {v} \(", "blind28"),
    Project("getsentry/responses", "a19add7777d7d0c64eeb364f6cc9de624c33f4f8", "CHANGES", "{v}", r"^{v}$",
            "blind28"),
    Project("adrienverge/yamllint", "754ccb9992445cbdab5d2f69003b567b889653e4", "CHANGELOG.rst", "v{v}",
            r"^{v} \(", "blind28"),
    # blind29: fetched on 2026-12-08 00:27-00:28 UTC (never used for notes): a Kotlin library's setext
    # `1.10.0 / 2026-01-21` over `===`, prose paragraphs and `* item (#N)` lists thanking contributors by name; a
    # Rust HTTP client's bare `## v0.13.4` over one-line `- Add ...` / `- Fix ...` items, no references; an Elixir
    # library's `## v1.19.0 (2025-12-08)` over `### Enhancements` / `### Bug fixes`, items opening with `[Module]`,
    # security releases backported to older lines; an OCaml formatter's `## 0.29.0` over `### Fixed` / `### Added`
    # groups of wrapped items ending `(#N, @user)`; a JavaScript linter's `## 17.14.1 - 2026-07-20` over "It fixes 4
    # bugs." and `- Fixed: ... ([#N](...)) ([@user](...)).`; a Swift library's `## Nuke 13.2.0` over bold groups,
    # items ending `- https://github.com/kean/Nuke/pull/N`), configured by their heading lines only; sections and
    # plants exported (`--plant-only`) and committed before the grader first read them
    Project("Kotlin/kotlinx.serialization", "370c4e3780066b82f746cf38e4733cbe62c94f74", "CHANGELOG.md", "v{v}",
            r"^{v} / ", "blind29"),
    Project("seanmonstar/reqwest", "065a5ae5209d27d4f4e3c4409725672c49a8aa39", "CHANGELOG.md", "v{v}",
            r"^#+ v{v}$", "blind29"),
    Project("elixir-plug/plug", "a898c454a04ca5ffad306bd751a15c7ac9ff6927", "CHANGELOG.md", "v{v}",
            r"^## v{v} \(", "blind29"),
    Project("ocaml-ppx/ocamlformat", "20c4543119c82a51c2f3a9bf81620a7f31fe0e50", "CHANGES.md", "{v}", r"^## {v}$",
            "blind29"),
    Project("stylelint/stylelint", "28cff889946ec3f53036f54cc08c04c425451245", "CHANGELOG.md", "{v}",
            r"^## {v} - ", "blind29"),
    Project("kean/Nuke", "c4fc70af4ca5b7e97f6a0be84c02f6a033bd957c", "CHANGELOG.md", "{v}", r"^## Nuke {v}$",
            "blind29"),
]

# The sets measured before blind8 keep the ranges they were measured on: from the nearest tag
# `git describe` finds, which may be a pre-release (`24.8.0rc1..24.8.0` is one commit of a section
# that lists everything since 24.7.1) or a tag whose object names another (`v25.0.3-35-g<hash>` for
# gunicorn's `25.0.3`). From blind8 on, a range starts at the previous final release among the tag's
# ancestors (towncrier tags its releases on branches: its 23.11.0 range starts at 22.8.0, a superset).
_NEAREST_TAG_SETS = {"blind7", "blind6", "blind5", "blind4", "blind3", "blind2", "blind", "fresh", "held", "dev"}

# (a version over a day-month-year date is jackson-databind's plain-text heading, `2.18.2 (27-Nov-2024)`)
# (or a dated `Version` line, libuv's `2026.03.06, Version 1.52.1 (Stable), <hash>`)
# (or FluentValidation's plain `12.1.1 - 3 Dec 2025`, or eslint's generated `v10.9.0 - August 21, 2026`)
# (or a Perl `Changes` file's `9.47  2026-07-05`, mojo's)
_ANY_HEADING = re.compile(r"^(?:#{1,3} |\*\*\d|\S.*\(\d{4}-\d{2}-\d{2}\)|Version \d|\d+\.\d+(?:\.\d+)? / |pluggy \d|"
                          r"\d+\.\d+(?:\.\d+)? \(\d{1,2}-[A-Z][a-z]{2}-\d{4}\)|unreleased|Unreleased|## \[|"
                          r"\d{4}\.\d{2}\.\d{2}, Version \d|\d+\.\d+\.\d+ - \d{1,2} [A-Z][a-z]{2} \d{4}$|"
                          r"v\d+\.\d+\.\d+ - [A-Z][a-z]+ \d{1,2}, \d{4}$|"
                          r"\d+\.\d+  (?:\d{4}-\d{2}-\d{2}|UNRELEASED)$)")
# (or opens with a version: rspec-core's `### 3.13.2 / 2024-10-18`, lombok's `### v1.18.46 (April 22nd, 2026)`)
# (composer's `### [2.10.2] 2026-07-01`: a bracketed version and a date; NLog's `### Version 6.1.2 (2026/04/01)`)
_PATCH_HEADING = re.compile(r"^### (?:\[v?\d+\.\d+[^\]]*\](?:\(| \d{4}-)|v?\d+\.\d+|Version \d)")
_RULE = re.compile(r"^([=\-~^*+#])\1{2,}\s*$")
# an underlined line is a release's heading when a version is among its first three words ("Version 3.3.0 -
# ...", "15.0.0 (...)", "pluggy 1.5.0"), not a banner's last line that mentions one ("The new names are
# compatible with pyparsing versions 3.0.0 and later" above a row of `=`, pyparsing 3.3.0), or astroid's
# "What's New in astroid 4.1.1?" ("Bug fixes since 4.0rc4", sqlite-utils 4.0, is no release)
_UNDERLINED_RELEASE = re.compile(r"^\s*(?:\S+\s+){0,2}\S*\d+\.\d+|^What's [Nn]ew in \S+ v?\d+\.\d+")


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "--git-dir", str(repo), *args], capture_output=True, check=True,
                          text=True, errors="replace").stdout


def sections(text: str, heading: str, versions: list[str]) -> dict[str, str]:
    """The changelog section of each version: from its heading to the next version's heading."""
    lines = text.splitlines()
    out: dict[str, str] = {}
    for v in versions:
        rx = re.compile(heading.replace("{v}", re.escape(v)))
        start = next((i for i, line in enumerate(lines) if rx.match(line)), None)
        if start is None:
            continue
        end = len(lines)
        for j in range(start + 1, len(lines)):
            nxt = lines[j + 1] if j + 1 < len(lines) else ""
            line = lines[j]
            # a `###` line is a subsection ("### Bug Fixes"), unless it names a release as release-please
            # writes a patch release's heading ("### [20.2.9](.../compare/...) (2021-06-20)")
            is_heading = (bool(_ANY_HEADING.match(line)) and (not line.startswith("###") or
                                                              bool(_PATCH_HEADING.match(line)))) or \
                (bool(_RULE.match(nxt)) and bool(_UNDERLINED_RELEASE.match(line)))
            if is_heading and re.search(r"\d+\.\d+|nreleased", line) and \
                    not re.search(r"(?<![\w.])" + re.escape(v) + r"(?![\w.-])", line):
                end = j
                break
        while end > start + 1 and (not lines[end - 1].strip() or _RULE.match(lines[end - 1])):
            end -= 1  # the overline of the next heading (`****` above ` v4.57.2 (...)`) is not this section's
        out[v] = "\n".join(lines[start:end]).rstrip() + "\n"
    return out


def _version(tag: str, prefix: str) -> tuple[int, ...]:
    """A final release's version, to be compared (`2.0` is `2.0.0`)."""
    parts = [int(x) for x in tag[len(prefix):].split(".")]
    return tuple(parts + [0] * (3 - len(parts)))


def releases(repo: Path, project: Project, count: int) -> list[tuple[str, str, str]]:
    """(version, tag, previous tag) of the newest `count` releases with a previous tag."""
    prefix = project.tag.replace("{v}", "")
    tags = [t for t in git(repo, "tag", "--sort=-creatordate").split() if t.startswith(prefix)
            and re.fullmatch(r"\d+\.\d+(?:\.\d+)?", t[len(prefix):])]
    out = []
    for tag in tags:
        try:
            if project.split in _NEAREST_TAG_SETS:
                prev = git(repo, "describe", "--tags", "--abbrev=0", "--match", prefix + "[0-9]*", tag + "^").strip()
            else:  # the previous final release: the highest final version among the tag's ancestors (a
                # release made on a side branch, sentry-python's 2.67.1, is not where the next one starts)
                merged = set(git(repo, "tag", "--merged", tag + "^").split())
                prev = max((t for t in tags if t in merged and _version(t, prefix) < _version(tag, prefix)),
                           key=lambda t: _version(t, prefix))
        except (subprocess.CalledProcessError, ValueError):
            continue
        out.append((tag[len(prefix):], tag, prev))
        if len(out) == count:
            break
    return out


def plant(section: str, grade_of: Any, version: str) -> list[tuple[str, str, str, str]]:
    """(kind, token, false text, true twin text) pairs planted in a section."""
    out = []
    lines = section.splitlines()
    head = lines[0]
    parts = version.split(".")
    bumped = ".".join([*parts[:-1], str(int(parts[-1]) + 7)])
    out.append(("version", bumped, section.replace(head, head.replace(version, bumped), 1), section))
    m = re.search(r"(\d{4})-(\d{2})-(\d{2})", head)
    if m:
        when = date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
        # three days later, or earlier where that is the tag's own day (tailwindcss' `## [4.3.2] - 2026-06-26`,
        # prepared three days before its tag of 06-29: the later date would be true)
        tagged = date.fromisoformat(grade_of.release_day) if grade_of.release_day else None
        shift = -3 if tagged is not None and abs((when + timedelta(days=3) - tagged).days) <= 1 else 3
        wrong = (when + timedelta(days=shift)).isoformat()
        out.append(("date", wrong, section.replace(m.group(0), wrong, 1), section))
    else:
        truth = grade_of.release_day
        if truth:
            wrong = (date.fromisoformat(truth) + timedelta(days=3))
            true_line, false_line = f"\nReleased {date.fromisoformat(truth):%B %d, %Y}.\n", \
                f"\nReleased {wrong:%B %d, %Y}.\n"
            out.append(("date", f"{wrong:%B %d, %Y}", section + false_line, section + true_line))
    n = grade_of.commits
    out.append(("count", f"{n + 3} commits", section + f"\nThis release has {n + 3} commits.\n",
                section + f"\nThis release has {n} commits.\n"))
    real = grade_of.k.hashes[len(grade_of.k.hashes) // 2] if grade_of.k.hashes else None
    if real is not None:
        wrong_hash = _unknown((_shifted(real[:10], i) for i in range(1, 16)), grade_of.known_hashes)
        # a hash written as a claim: in the text or a /commit/ link (not a /blob/ or /tree/ link)
        own = re.search(r"(?<![\w/])[0-9a-f]{7,40}\b|(?<=/commit/)[0-9a-f]{7,40}\b", section)
        if own and re.search(r"[a-f]", own.group(0)) and re.search(r"\d", own.group(0)) and \
                any(x.startswith(own.group(0)) for x in grade_of.known_hashes):
            fake = _unknown((_shifted(own.group(0), i) for i in range(1, 16)), grade_of.known_hashes)
            out.append(("hash", fake, section.replace(own.group(0), fake), section))
        else:
            out.append(("hash", wrong_hash, section + f"\nThis release includes commit {wrong_hash}.\n",
                        section + f"\nThis release includes commit {real[:10]}.\n"))
    # a reference on an item's own line, else in an item of several lines (the item's words find its commit)
    for line in [*lines[1:], *_items(lines)]:
        ref = _PLANT_REF.search(line)
        if ref and grade_of.carried(line, next(g for g in ref.groups() if g)):
            number = next(g for g in ref.groups() if g)
            # the next number the item's commit does not carry (an issue's next number may be its pull request)
            wrong = next(str(int(number) + k) for k in range(1, 99) if not grade_of.carried(line, str(int(number) + k)))
            false_line = re.sub(r"(?<!\d)" + number + r"(?!\d)", wrong, line)
            out.append(("ref", wrong, section.replace(line, false_line, 1), section))
            break
    out += _plant_author(section, lines, grade_of) or _plant_name(section, lines, grade_of)
    out += _plant_feature(section, grade_of)
    out += _plant_item_feature(section, grade_of)
    out += _plant_breaking(section, grade_of)
    return out


_PLANT_REF = re.compile(r"(?<![\w/])#(\d+)\b|/pull/(\d+)|:(?:pr|pull|issue|gh):`(\d+)`|\{pr\}`(\d+)`")


def _items(lines: list[str], paragraphs: bool = False) -> list[str]:
    """The list items of several lines, each as its lines joined by newlines (as in the section); with
    `paragraphs`, the items of several paragraphs, each whole: its lines up to the next line indented
    no deeper than its marker, blank lines between its paragraphs and nested lists included."""
    out: list[str] = []
    for i, line in enumerate(lines):
        if not re.match(r"^\s*(?:[-*+]|\d+[.)])\s+", line):
            continue
        indent = len(line) - len(line.lstrip())
        j = i + 1
        while j < len(lines):
            deeper = bool(lines[j].strip()) and len(lines[j]) - len(lines[j].lstrip()) > indent
            if not (not lines[j].strip() or deeper if paragraphs else
                    deeper and not re.match(r"^\s*(?:[-*+]|\d+[.)])\s+", lines[j])):
                break
            j += 1
        while j > i + 1 and not lines[j - 1].strip():
            j -= 1
        if j > i + 1 and (not paragraphs or "\n\n" in "\n".join(lines[i:j])):
            out.append("\n".join(lines[i:j]))
    return out


# A planted credit git cannot decide: a made-up handle for a change whose author git knows by name and
# email only. The grader says "not checkable" of it, as of a true credit git ties to nobody; the bench
# reports these apart and never counts them as flagged (a not-checkable verdict is no catch).
UNDECIDABLE = "author-undecidable"

# a handle, not an npm scope (`@sinonjs/samsam` is a package: renaming it plants no false credit)
_HANDLE = re.compile(r"(?<![\w.@/])@([A-Za-z0-9][\w-]*)(?![\w/-])|:user:`([A-Za-z0-9][\w-]*)`")


def _uncoded(text: str) -> str:
    """`text` with its code (fenced blocks, inline spans; not a `:user:` role's quotes) blanked out in
    place: `@content(name)` in code is a decorator, not a credit."""
    text = re.sub(r"(?ms)^\s*```.*?^\s*```", lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
    return re.sub(r"(?<![:}`])(`+)[^`\n]*?\1", lambda m: " " * len(m.group(0)), text)


def _plant_author(section: str, lines: list[str], grade_of: Any = None) -> list[tuple[str, str, str, str]]:
    """An item credited to another person: its `@handle` swapped for another handle the section
    names (a real contributor, credited for someone else's change), else for a made-up one; never
    for someone who made the change (a co-author's handle is a true credit). A credit git cannot
    decide (a handle git ties to nobody, for an author whose account git does not state) is planted
    as `author-undecidable`: false, but git holds nothing that says so (`Truth.credit`)."""
    handles = list(dict.fromkeys(m.group(1) or m.group(2) for m in _HANDLE.finditer(_uncoded(section))))
    # a credit on the line of the item's number, else in an item whose number is in a paragraph of its
    # own (towncrier's "-- by :user:`x`." above "*Related issues and pull requests on GitHub:* :issue:`N`.")
    for line in [*lines[1:], *_items(lines, paragraphs=True)]:
        m = _HANDLE.search(_uncoded(line))
        if m is None or not re.search(r"#\d+|/pull/\d+|:pr:|:issue:|:gh:", line):
            continue
        handle = m.group(1) or m.group(2)
        if re.search(r"(?:\bissue|\breported)\s+by\s+$", line[:m.start()], re.IGNORECASE):
            continue  # who opened an issue ("#3737 issue by @mheiges") is no credit for a change: git cannot say
        # another handle than any this item credits: a second credit of the same person is no false claim
        others = [h for h in handles if h.lower() not in line.lower()] + ["morgan-delacroix"]
        said = {h: grade_of.credit(line, h, section) if grade_of is not None else "false" for h in others}
        other = next(h for h in others if said[h] != "true" or h == "morgan-delacroix")
        false_line = re.sub(r"(?<![\w-])" + re.escape(handle) + r"(?![\w-])", other, line)
        # a `:user:` role is credited as the role (the token the grader reports), `@x` as `@x`
        token = "@" + other if m.group(1) else other
        kind = "author" if said[other] == "false" else UNDECIDABLE
        return [(kind, token, section.replace(line, false_line, 1), section)]
    return []


def _plant_name(section: str, lines: list[str], grade_of: Any = None) -> list[tuple[str, str, str, str]]:
    """An item credited by name ("Patch by Adam Turner") to another person the section credits by name:
    false as git can say (the grader's `_name_credit`) when the commits the item names by number are
    all its own and that person made another change of the range and none of these; else planted as
    `author-undecidable`. An item git can decide is chosen first."""
    from signoff.notes.knowledge import same_person

    people = list(dict.fromkeys(c.token for line in lines for c in read_claims(line) if c.role == "name"))
    found: list[tuple[str, str, str, str]] = []
    for block in [b for b in _items(lines) if _PLANT_REF.search(b)]:
        mine = [p for p in people if p in block]
        others = [p for p in people if p not in block]
        refs = {g for m in _PLANT_REF.finditer(block) for g in m.groups() if g}
        made = grade_of.k.made(block, refs) if grade_of is not None and len(mine) == 1 and others else []
        made_it = [p for p in people if any(same_person(p.lower(), c.people) for c in made)]
        other = next((p for p in others if p not in made_it), None)
        if not made or other is None or mine[0] not in made_it:
            continue
        decided = all(refs & c.named for c in made) and \
            any(same_person(other.lower(), c.people) for c in grade_of.k.carriers if c not in made)
        found.append(("author" if decided else UNDECIDABLE, other,
                      section.replace(block, block.replace(mine[0], other, 1), 1), section))
    return sorted(found, key=lambda p: p[0] != "author")[:1]


def _plant_feature(section: str, grade_of: Any) -> list[tuple[str, str, str, str]]:
    """A feature no commit made, credited to a real pull request of the range (as a model mixing
    true numbers into invented text does); its twin restates that pull request's title."""
    owned = [c for c in grade_of.k.carriers if c.own]
    if not owned:
        return []
    c = owned[len(owned) // 2]
    fake = f"\n- Add a `retry_forever` option that keeps every failed upload in a local queue (#{c.own}).\n"
    title = re.sub(r"\s*\(#\d+\)\s*$", "", c.title).rstrip(".")
    true = f"\n- {title} (#{c.own}).\n"
    return [("feature", f"#{c.own}", section + fake, section + true)]


# Invented changes of several shapes (a feature, a fix, a deprecation, packaging, speed), so the
# check is not tuned to one sentence.
_INVENTED = ("Support reading settings from a YAML file in the user's config directory",
             "Fix a memory leak when a websocket connection closes during the handshake",
             "Deprecate the `legacy_mode` argument of `connect()` in favour of `strict`",
             "Add prebuilt wheels and binaries for Windows on ARM64",
             "Speed up start-up by caching the parsed plugin manifest on disk",
             "Add a `--dry-run` flag that prints the planned changes without writing them")
_ITEM_REF = re.compile(r"`#(\d+) <[^>]+>`_|\[#(\d+)\]\([^)]+\)|:(?:pr|pull|issue):`(\d+)`|"
                       r"https?://\S+/pull/(\d+)|\(#(\d+)\)|(?<![\w/])#(\d+)\b")


def _plant_item_feature(section: str, grade_of: Any) -> list[tuple[str, str, str, str]]:
    """A maintainer's own item with its words replaced by an invented change and its reference
    kept (a real pull request of the range, about something else); its twin is the item as written."""
    lines = section.splitlines()
    for i, line in enumerate(lines[1:], 1):
        marker = re.match(r"^(\s*[-*]\s+)", line)
        ref = _ITEM_REF.search(line)
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if marker is None or ref is None or (nxt.strip() and not re.match(r"^\s*[-*]\s", nxt)):
            continue  # an item on one line (a continuation would keep some of its words)
        number = next(g for g in ref.groups() if g)
        if not grade_of.carried(line, number):
            continue
        invented = _INVENTED[int(number) % len(_INVENTED)]
        false_line = f"{marker.group(1)}{invented} {ref.group(0)}"
        return [("feature", number, section.replace(line, false_line, 1), section)]
    return []


def _ref_like(section: str, number: str) -> str:
    """A reference to pull request `number` written as the section writes its first reference (a
    Sphinx role, a Markdown link, `[#N]`, `(#N)`)."""
    m = _ITEM_REF.search(section)
    if m is None:
        return f"(#{number})"
    own = next(g for g in m.groups() if g)
    return re.sub(r"(?<!\d)" + own + r"(?!\d)", number, m.group(0))


def _plant_breaking(section: str, grade_of: Any) -> list[tuple[str, str, str, str]]:
    """An invented breaking change credited to a real pull request of the range (another one than
    `_plant_feature`'s), written in the section's own reference style; its twin restates that pull
    request's title as the breaking change."""
    owned = [(c, c.own) for c in grade_of.k.carriers if c.own] or \
        [(c, min(c.named, key=int)) for c in grade_of.k.carriers if c.named and not c.backport]
    if len(owned) < 2:
        return []
    c, number = owned[len(owned) // 3]
    ref = _ref_like(section, number)
    fake = (f"\n- **Breaking:** `Session.request()` no longer accepts a `timeout` argument; pass `deadline=` "
            f"instead {ref}\n")
    title = re.sub(r"\s*\(#\d+\)\s*$", "", c.title).rstrip(".")
    return [("breaking", number, section + fake, section + f"\n- **Breaking:** {title} {ref}\n")]


def _shifted(hex_id: str, by: int) -> str:
    """A hash of the same length with its last character moved `by` along the hex digits."""
    digits = "0123456789abcdef"
    return hex_id[:-1] + digits[(digits.index(hex_id[-1]) + by) % 16]


def _unknown(candidates: Any, known: set[str]) -> str:
    """The first candidate that reads as a hash (a letter and a digit) and prefixes no commit."""
    return next(h for h in candidates if re.search(r"[a-f]", h) and re.search(r"\d", h)
                and not any(x.startswith(h) for x in known))


def writer_lines(snapshot: Path, facts: Path) -> list[str]:
    """The lines the writer drafts without a model for this range."""
    build_facts(snapshot, facts)
    return [s["text"] for s in write_default(writer_task(FactsFile(facts)))["sentences"]]


class Truth:
    """What the planter needs to know of the range (read from git, not from the grader)."""

    def __init__(self, repo: Path, prev: str, tag: str, snapshot: Path) -> None:
        from signoff.notes.grade import snapshot_knowledge

        self.k = snapshot_knowledge(snapshot)
        self.repo = repo
        self.commits = len(self.k.hashes)
        stamp = git(repo, "for-each-ref", "--format=%(creatordate:short)", f"refs/tags/{tag}").strip()
        self.release_day = stamp or None
        self.known_hashes = set(git(repo, "rev-list", "--all").split())

    def credit(self, line: str, handle: str, section: str = "") -> str:
        return credit(self.k, line, handle, section)

    def carried(self, line: str, number: str) -> bool:
        from signoff.notes.knowledge import words

        own = self.k.own_commit(words(line))
        if own is None:
            return False
        # the pull request whose merge brought the item's commit in is the item's too: mongoose 9.9.1's "#16413"
        # item is the commit saying "re: #16413", which "Merge pull request #16414 from Automattic/vkarpov15/gh-16413"
        # merged; #16414 is no wrong number for it (only the merge's own number: other numbers its message names,
        # sqlite-utils' "Compound foreign key support (PR #770)" naming #530, are no more the item's than before)
        return number in own.refs or any(m.own == number for m in self.k.carriers if len(m.parents) > 1
                                         and any(b.hash == own.hash for b in self.k._branch(m)))


def credit(k: Any, line: str, handle: str, section: str = "") -> str:
    """Whether crediting `handle` for the change `line` names is "true" (an author or co-author of
    its commits, or of the branch its merge brought in), "false" as git can say (git ties the handle
    to someone else, or states the account of who made the change, in the range or before it; or
    the section credits the handle for another change, which git says someone else made), or
    "undecidable" (a handle git ties to nobody, for an author git knows by name and email only)."""
    from signoff.notes.knowledge import _AGENTS, BOTS, same_person

    def made_by(text: str) -> list[Any]:
        made = k.made(text, {g for m in _PLANT_REF.finditer(text) for g in m.groups() if g})
        return made + [b for c in made if len(c.parents) > 1 for b in k._branch(c)]

    made = made_by(line)
    if not made or any(BOTS.search(c.author) or _AGENTS.search(c.author) for c in made):
        return "undecidable"  # no commit, or a bot's or coding agent's for whoever asked ("with @Copilot")
    if any(same_person(handle, c.people) for c in made):
        return "true"
    mine = {_key(c.author) for c in made}
    for other in section.splitlines():
        if other != line and re.search(r"(?<![\w-])" + re.escape(handle) + r"(?![\w-])", _uncoded(other)):
            theirs = {_key(c.author) for c in made_by(other)}
            if theirs and not theirs & mine:
                return "false"  # the changelog names the handle's owner, and git says they made another change
    key = _key(handle)
    # a name git gives the account (a commit named by the login itself, one word, names nobody)
    tied = k.known_as(handle) | {_key(c.author) for c in k.carriers if key in c.handles and
                                 (_key(c.author) != key or len(re.findall(r"[A-Z]?[a-z0-9]+", c.author)) > 1)}
    if tied - {_key(c.author) for c in made}:
        return "false"
    names = [[_key(w) for w in re.split(r"[\s.\-_]+", c.author) if len(_key(w)) >= 3] for c in made]
    stated = any(c.handles for c in made) or any(
        len(ws) >= 2 and all(w in a for w in ws) for ws in names for a in k.accounts)
    return "false" if stated else "undecidable"


def _key(text: str) -> str:
    """A name or handle as lower-case letters and digits, accents dropped."""
    return re.sub(r"[^a-z0-9]", "", _plain(text.lower()))


def _edit(section: str, text: str) -> dict[str, Any]:
    """`text` as the smallest edit of `section`: `section[:at] + put + section[at + cut:]`."""
    at = 0
    while at < min(len(section), len(text)) and section[at] == text[at]:
        at += 1
    tail = 0
    while tail < min(len(section), len(text)) - at and section[-1 - tail] == text[-1 - tail]:
        tail += 1
    return {"at": at, "cut": len(section) - at - tail, "put": text[at:len(text) - tail]}


def export_case(out: Path, p: Project, version: str, prev: str, tag: str, section: str, snap: Path,
                truth: Truth, graded: bool = True) -> None:
    """Write one real changelog section as a test case: the section, a minimal snapshot of its
    range (the commits with their messages and file counts, the tags, and of the authors before
    the range only those who also wrote in it, which is all "new contributors" needs), the
    planted false claims with their true twins as edits of the section, and what the grader says
    of each today (`tests/unit/notes/test_real_changelogs.py` holds it to that)."""
    from signoff.notes.documents import StreamWriter, dumps_line
    from signoff.notes.snapshot import Snapshot

    case = out / f"{p.repo.replace('/', '+')}@{version}"
    case.mkdir(parents=True, exist_ok=True)
    source = Snapshot(snap)
    commits = list(source.commits())
    header = {k: v for k, v in source.doc.header.items() if k not in ("count", "digest", "commits")}
    before = header.get("authors_before")
    if before is not None:
        emails = {c["author"]["email"] for c in commits} | {c["author"]["email"].lower() for c in commits}
        names = {c["author"]["name"] for c in commits}
        # and the GitHub accounts (no-reply addresses) that hold an in-range author's name: they tie a
        # handle to a person git otherwise knows by name only (`gaborbernat` for Bernát Gábor)
        parts = [{re.sub(r"[^a-z0-9]", "", w) for w in re.split(r"[\s.\-_]+", _plain(n).lower())} - {""}
                 for n in names]
        accounts = {e for e in before["emails"] if (m := re.match(r"^(?:\d+\+)?([^@]+)@users\.noreply\.github\.com$",
                                                                   e, re.IGNORECASE))
                    and any(len(ws) >= 2 and all(w in m.group(1).lower().replace("-", "") for w in ws) for ws in parts)}
        header["authors_before"] = {"emails": sorted(e for e in before["emails"] if e in emails or e in accounts),
                                    "names": sorted(n for n in before["names"] if n in names)}
    digest = hashlib.sha256(dumps_line(header).encode() + b"\n")
    with StreamWriter(case / "snapshot.json", header, "commits", digest) as w:
        for c in commits:
            w.add(c)
        w.close()
    suffix = Path(p.path).suffix or ".md"
    (case / f"section{suffix}").write_text(section, encoding="utf-8")
    meta = {"repo": p.repo, "changelog": {"path": p.path, "commit": p.commit}, "set": p.split,
            "version": version, "range": f"{prev}..{tag}", "tip": source.head}
    plants = plant(section, truth, version)
    if not graded:  # a blind set: the plants are written (and committed) before the grader reads them
        written = [{"kind": k, "token": t, "false": _edit(section, f), "twin": _edit(section, w)}
                   for k, t, f, w in plants]
        (case / "plants.json").write_text(json.dumps({**meta, "plants": written}, indent=1, ensure_ascii=False)
                                          + "\n", encoding="utf-8")
        return
    record_case(case, meta, section, plants, truth.repo)


def _plain(name: str) -> str:
    """A name without accents (`Bernát Gábor` is `Bernat Gabor`)."""
    return "".join(ch for ch in unicodedata.normalize("NFKD", name) if not unicodedata.combining(ch))


def _applied(section: str, edit: dict[str, Any]) -> str:
    """The text an `_edit` of `section` makes."""
    return section[:edit["at"]] + edit["put"] + section[edit["at"] + edit["cut"]:]


def record_case(case: Path, meta: dict[str, Any], section: str, plants: Any, repo: Path | None) -> dict[str, Any]:
    """Grade a case's section and its plants against its minimal snapshot and write what the grader
    says into `case.json`, with the words of the diffs it read (only the pull requests a claim names
    whose messages left it uncertain) so the test grades as the bench did with the repository."""
    from signoff.notes.grade import diff_reader, grade_with, snapshot_knowledge, subjects_reader

    mini = case / "snapshot.json"
    knowledge = snapshot_knowledge(mini)
    read: dict[str, str] = {}
    elsewhere: dict[str, list[str]] = {}  # the subjects naming a number, read from every branch (`subjects_reader`)
    if repo is not None:
        reader, subjects = diff_reader(repo), subjects_reader(repo)

        def recording(commit: str) -> set[str]:
            found = reader(commit)
            read[commit] = " ".join(sorted(found))
            return found

        def recording_subjects(number: str) -> list[str]:
            elsewhere[number] = subjects(number)
            return elsewhere[number]

        knowledge.diff_of = recording
        knowledge.subjects_elsewhere = recording_subjects
    name = meta["changelog"]["path"]
    graded = grade_with(section, name, knowledge)
    out = []
    alarms = {u["token"] for u in graded["unsupported"]}
    twin_alarms = 0
    for kind, token, false_text, twin in plants:
        bad = grade_with(false_text, name, knowledge)
        flagged = any(token in u["token"] or (token in u["sentence"] and u["kind"] == kind)
                      for u in bad["unsupported"])
        out.append({"kind": kind, "token": token, "false": _edit(section, false_text),
                    "twin": _edit(section, twin), "flagged": flagged})
        for u in grade_with(twin, name, knowledge)["unsupported"]:
            if u["token"] not in alarms:
                twin_alarms += 1
                print(f"    TWIN ALARM {kind} {u['kind']} {u['token']!r}: {u['reason']}")
    meta = {**meta, "claims": graded["claims"]["total"],
            "false_alarms": sorted({u["token"] for u in graded["unsupported"]}), "plants": out}
    if read:
        meta["diffs"] = dict(sorted(read.items()))
    if elsewhere:
        meta["elsewhere"] = dict(sorted(elsewhere.items()))
    (case / "case.json").write_text(json.dumps(meta, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    (case / "plants.json").unlink(missing_ok=True)  # graded now: case.json holds the plants and the verdicts
    for u in graded["unsupported"]:
        print(f"    FALSE ALARM {u['kind']} {u['token']!r}: {u['reason']} | {u['sentence'][:100]}")
    return {**meta, "twin_alarms": twin_alarms}


def _credit_kind(snapshot: Path, section: str, kind: str, token: str, false_text: str, twin: str) -> str | None:
    """An author plant recorded before credits were told apart is `author` where git can say it
    is false, `author-undecidable` where git cannot (`credit`, on the case's own snapshot), and
    dropped where it is no false claim the grader reads: a handle swapped into code (`@pass_context`,
    an `@overload` written as the author's handle) or a link's text (loguru's `` `@x <url>`_ ``), or
    someone who made the change (a co-author)."""
    if kind not in ("author", UNDECIDABLE):
        return kind
    from signoff.notes.grade import snapshot_knowledge

    handle = token.lstrip("@")
    line = next(x for x in false_text.splitlines() if handle in x and x not in section.splitlines())
    said = credit(snapshot_knowledge(snapshot), line, handle, section)
    if said == "true" or not re.search(r"(?<![\w-])" + re.escape(handle) + r"(?![\w-])", _uncoded(line)):
        print(f"    DROPPED, no false claim the grader reads: {token} in {line[:80]!r}")
        return None
    return "author" if said == "false" else UNDECIDABLE


def refresh(cases: Path, mirrors: Path, which: str = "all") -> None:
    """Grade each exported case again (with its repository's diffs where its mirror is at hand) and
    rewrite its record: after a change to the grader, the record is brought up to date this way. A
    case exported with `--plant-only` (its `plants.json`, no `case.json` yet) is graded the first
    time. Prints the figures of each set: false alarms on true claims, plants flagged by kind."""
    figures: dict[str, dict[str, list[int]]] = {}
    paths = sorted({p.parent for p in [*cases.glob("*/case.json"), *cases.glob("*/plants.json")]})
    for folder in paths:
        path = folder / "case.json" if (folder / "case.json").exists() else folder / "plants.json"
        meta = json.loads(path.read_text(encoding="utf-8"))
        if which != "all" and meta["set"] != which:
            continue
        section = next(path.parent.glob("section.*")).read_text(encoding="utf-8")
        plants = [(pl["kind"], pl["token"], _applied(section, pl["false"]), _applied(section, pl["twin"]))
                  for pl in meta["plants"]]
        plants = [(kind, *pl[1:]) for pl in plants
                  if (kind := _credit_kind(path.parent / "snapshot.json", section, *pl)) is not None]
        repo = mirrors / meta["repo"].replace("/", "+") / "repo"
        base = {k: v for k, v in meta.items()
                if k not in ("claims", "false_alarms", "plants", "diffs", "elsewhere")}
        print(f"  {path.parent.name}: {len(meta.get('diffs', {}))} diffs read before")
        done = record_case(path.parent, base, section, plants, repo if repo.exists() else None)
        fig = figures.setdefault(meta["set"], {"claims": [0, 0], "twins": [0, 0]})
        fig["claims"][0] += len(done["false_alarms"])
        fig["claims"][1] += done["claims"]
        fig["twins"][0] += done["twin_alarms"]
        fig["twins"][1] += len(done["plants"])
        for pl in done["plants"]:
            kind = fig.setdefault(pl["kind"], [0, 0])
            kind[0] += pl["flagged"]
            kind[1] += 1
            if not pl["flagged"]:
                print(f"    {'not flagged' if pl['kind'] == UNDECIDABLE else 'MISSED'} {pl['kind']} {pl['token']!r}")
    for name, fig in figures.items():
        alarms, claims = fig.pop("claims")
        twins, _ = fig.pop("twins")
        undecidable = fig.pop(UNDECIDABLE, [0, 0])
        flagged, planted = sum(f for f, _ in fig.values()), sum(n for _, n in fig.values())
        print(f"{name}: false alarms on true claims {alarms} of {claims}; planted false claims flagged {flagged} of "
              f"{planted} (" + ", ".join(f"{k} {f} of {n}" for k, (f, n) in sorted(fig.items())) + f"); "
              f"alarms on true twins {twins}; planted false claims git cannot decide (not counted above) "
              f"{undecidable[1]}, of them flagged {undecidable[0]}")


def run(mirrors: Path, which: str, per_project: int, show: bool,
        export: Path | None = None, read_diffs: bool = True, plant_only: bool = False,
        projects: list[str] | None = None) -> dict[str, dict[str, int]]:
    figures: dict[str, dict[str, int]] = {}
    for p in PROJECTS:
        if which != "all" and p.split != which:
            continue
        if projects and not any(name in (p.repo, p.repo.split("/")[1]) for name in projects):
            continue
        repo = mirrors / p.repo.replace("/", "+") / "repo"
        if not repo.exists():
            print(f"  {p.repo}: no mirror at {repo}, skipped")
            continue
        commit = p.commit or git(repo, "rev-parse", "HEAD").strip()
        diffs = repo if read_diffs else None
        text = git(repo, "show", f"{commit}:{p.path}")
        rels = releases(repo, p, 60)
        secs = sections(text, p.heading, [v for v, _, _ in rels])
        fig = figures.setdefault(p.split, {"true": 0, "false_alarms": 0, "planted": 0, "flagged": 0,
                                           "twins": 0, "twin_alarms": 0, "sections": 0, "not_checkable": 0,
                                           "writer_lines": 0, "writer_unsupported": 0, "their_prs": 0,
                                           "their_prs_listed": 0, "undecidable": 0, "undecidable_flagged": 0})
        done = 0
        for v, tag, prev in rels:
            if v not in secs or done == per_project:
                continue
            with tempfile.TemporaryDirectory() as tmp:
                snap = Path(tmp) / "s.json"
                try:
                    take_snapshot(repo, f"{prev}..{tag}", snap)
                except UsageError as e:  # a shallow mirror holds no older commits: not a section git can read
                    print(f"  {p.repo} {v} ({prev}..{tag}): skipped, {str(e).splitlines()[-1]}")
                    continue
                done += 1
                if plant_only and export is not None:
                    print(f"  {p.repo} {v} ({prev}..{tag}): exported, not graded")
                    export_case(export, p, v, prev, tag, secs[v], snap, Truth(repo, prev, tag, snap), graded=False)
                    continue
                graded = grade_text(secs[v], p.path, snap, diffs)
                fig["sections"] += 1
                fig["true"] += graded["claims"]["total"]
                fig["false_alarms"] += len(graded["unsupported"])
                fig["not_checkable"] += graded["claims"]["not_checkable"]
                print(f"  {p.repo} {v} ({prev}..{tag}, changelog at {commit[:12]}): "
                      f"{graded['claims']['supported']}/{graded['claims']['total']} supported, "
                      f"{graded['claims']['not_checkable']} not checkable")
                for u in graded["unsupported"]:
                    print(f"    FALSE ALARM {u['kind']} {u['token']!r}: {u['reason']} | {u['sentence'][:100]}")
                if show:
                    for u in graded["not_checkable"]:
                        print(f"    not checkable {u['kind']} {u['token']!r}: {u['why']}")
                written = writer_lines(snap, Path(tmp) / "f.json")
                ours = grade_text("\n".join(f"- {t}" for t in written), "ours.md", snap)
                theirs = {c.value for c in read_claims(secs[v]) if c.kind == "ref" and c.role != "issue"}
                mentioned = {c.value for t in written for c in read_claims(t) if c.kind == "ref"}
                for u in ours["unsupported"]:
                    print(f"    WRITER UNSUPPORTED {u['token']!r}: {u['reason']} | {u['sentence'][:90]}")
                fig["writer_lines"] += len(written)
                fig["writer_unsupported"] += len(ours["unsupported"])
                fig["their_prs"] += len(theirs)
                fig["their_prs_listed"] += len(theirs & mentioned)
                print(f"    writer: {len(written)} lines, {len(ours['unsupported'])} unsupported by the grader, "
                      f"lists {len(theirs & mentioned)} of the maintainers' {len(theirs)} pull request references")
                truth = Truth(repo, prev, tag, snap)
                if export is not None:
                    export_case(export, p, v, prev, tag, secs[v], snap, truth)
                for kind, token, false_text, twin in plant(secs[v], truth, v):
                    bad = grade_text(false_text, p.path, snap, diffs)
                    hit = any(token in u["token"] or (token in u["sentence"] and u["kind"] == kind)
                              for u in bad["unsupported"])
                    why = next((u["reason"] for u in bad["unsupported"] if token in u["token"]), "")
                    if kind == UNDECIDABLE:  # false, but git holds nothing that says so: reported apart
                        fig["undecidable"] += 1
                        fig["undecidable_flagged"] += hit
                        print(f"    planted {kind} {token!r}: {'flagged' if hit else 'not flagged'} {why}")
                    else:
                        fig["planted"] += 1
                        fig["flagged"] += hit
                        print(f"    planted {kind} {token!r}: {'flagged' if hit else 'MISSED'} {why}")
                    good = grade_text(twin, p.path, snap, diffs)
                    fig["twins"] += 1
                    fig["twin_alarms"] += not good["ok"]
                    for u in good["unsupported"] if twin != secs[v] else []:
                        print(f"    TWIN ALARM {u['kind']} {u['token']!r}: {u['reason']}")
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--mirrors", type=Path, required=True)
    sets = ["blind29", "blind28", "blind27", "blind26", "blind25", "blind24", "blind23", "blind22",
            "blind20", "blind19", "blind19b", "blind18", "blind18b", "blind17", "blind17b",
            "blind16", "blind15d", "blind15c", "blind15b", "blind15", "blind14", "blind13",
            "blind12", "blind11",
            "blind10", "blind9", "blind8", "blind7", "blind6", "blind5", "blind4", "blind3", "blind2", "blind", "fresh",
            "held", "dev"]
    parser.add_argument("--set", choices=(*sets, "all"), default="all")
    parser.add_argument("--sections", type=int, default=4)
    parser.add_argument("--show", action="store_true", help="List the claims judged not checkable too.")
    parser.add_argument("--export", type=Path, default=None,
                        help="Also write each section graded as a test case here (tests/data/notes-real).")
    parser.add_argument("--no-diffs", action="store_true",
                        help="Grade from the snapshot alone (the pull requests' diffs are not read).")
    parser.add_argument("--refresh", type=Path, default=None,
                        help="Only grade the exported cases here (of --set) again and rewrite their records.")
    parser.add_argument("--plant-only", action="store_true",
                        help="With --export: write the sections and their plants without grading them (a blind set).")
    parser.add_argument("--project", action="append", default=None, metavar="NAME",
                        help="Only this project (owner/name or name; repeatable), in whichever set holds it.")
    args = parser.parse_args()
    if args.refresh is not None:
        refresh(args.refresh, args.mirrors, args.set)
        return 0
    order = sets if args.set == "all" else [args.set]
    for which in order:
        print(f"{which} set:")
        figures = run(args.mirrors, which, args.sections, args.show, args.export, not args.no_diffs,
                      args.plant_only, args.project).get(which)
        if not figures:
            continue
        print(f"{which}: {figures['sections']} sections; false alarms on true claims {figures['false_alarms']} of "
              f"{figures['true']}; planted false claims flagged {figures['flagged']} of {figures['planted']}; "
              f"true twins with an alarm {figures['twin_alarms']} of {figures['twins']}; "
              f"not checkable {figures['not_checkable']}; planted false claims git cannot decide (not counted "
              f"above) {figures['undecidable']}, of them flagged {figures['undecidable_flagged']}")
        print(f"{which} writer (no model): {figures['writer_lines']} lines, "
              f"{figures['writer_unsupported']} unsupported; "
              f"lists {figures['their_prs_listed']} of the {figures['their_prs']} pull request references the "
              f"maintainers wrote")
    return 0


if __name__ == "__main__":
    sys.exit(main())
