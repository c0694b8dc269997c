"""The desk on a TypeScript project (examples/shoplite-ts), for real: Vitest in the sandbox with no
network, packages from the lock file (one `npm ci` per session, cached by its digest), and Prettier,
ESLint and tsc as package.json declares them.

The three boundary checks of a Node desk, and the code under test as an adversary: a candidate that
patches the test framework, exits early, forges the JUnit report or plants start-up files is never
VERIFIED.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from signoff import git
from signoff.demo.fixture import shoplite_source
from signoff.desk import measure
from signoff.kernel.settings import Settings
from tests.support.pg import socket_dir
from tests.support.requires import require_binary, require_sandbox

TEST_PATH = "tests/bug_0001.test.ts"
MODULE = "src/checkout.ts"
ALLOW = ["src/*.ts"]
HEAD = 'import { expect, test } from "vitest";\n\nimport { calculateTotal } from "../src/checkout";\n\n'
COUPON = HEAD + ('test("a coupon larger than the cart costs nothing", () => {\n'
                 '  expect(calculateTotal(200, 1, "SAVE300")).toBe(0);\n});\n')
ROUNDING = "  return Math.round(amount * 100) / 100;\n"
GENUINE = "  return Math.round(Math.max(amount, 0) * 100) / 100;\n"


@dataclass
class Shop:
    repo: Path
    base: str
    settings: Settings

    def commit(self, files: dict[str, str], test: str = COUPON) -> str:
        return git.commit_files(self.repo, self.base, {**files, TEST_PATH: test}, "fix")

    def module(self, replace: str = ROUNDING, by: str = ROUNDING, prefix: str = "") -> str:
        return prefix + (self.repo / MODULE).read_text().replace(replace, by)


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Shop]:
    require_sandbox()
    require_binary("npm", "apt-get install -y npm")
    root = tmp_path_factory.mktemp("node-desk")
    root.chmod(0o755)
    repo = root / "repo"
    shutil.copytree(shoplite_source("node"), repo, ignore=shutil.ignore_patterns("node_modules"))
    yield Shop(repo, _commit_all(repo), Settings.load(home=root / ".signoff", env={}))


def _commit_all(repo: Path) -> str:
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("GIT_")}, "GIT_AUTHOR_NAME": "t",
           "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.invalid"}
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "base"]):
        subprocess.run(["git", "-C", str(repo), *args], check=True, env=env, capture_output=True)
    return git.resolve(repo, "HEAD")


def _reproduce(shop: Shop, test: str) -> measure.Measurement:
    return measure.reproduce(shop.settings, shop.repo, shop.base, "tests", TEST_PATH, test, 60.0, "node")


def _verify(shop: Shop, cand: str, checks: bool = False, allow: list[str] = ALLOW,
            test: str = COUPON) -> measure.Measurement:
    return measure.verify_fix(shop.settings, shop.repo, shop.base, cand, "tests", TEST_PATH, test, allow,
                              checks=checks, timeout=60.0, stack="node")


# -- boundary 1: a failing assertion becomes a passing one ---------------------------------------

def test_a_failing_assertion_becomes_a_passing_one(shop: Shop) -> None:
    repro = _reproduce(shop, COUPON)
    assert repro.ok, repro.reason
    assert "expected -100 to be +0" in repro.reason
    # The baseline suite ran too, green, and it was the repository's own Vitest file.
    assert repro.detail["baseline"]["outcome"] == "passed"
    assert set(repro.detail["baseline"]["per_test"]) == {"tests/checkout.test.ts"}

    fixed = _verify(shop, shop.commit({MODULE: shop.module(by=GENUINE)}), checks=True)
    assert fixed.ok, fixed.reason
    assert fixed.detail["verdict"] == "VERIFIED"
    ran = [c["command"] for c in fixed.detail["checks"]]
    assert ran == ["prettier --check .", "eslint .", "tsc --noEmit"], ran
    assert all(c["exit_code"] == 0 for c in fixed.detail["checks"])


NOT_AN_ASSERTION = {
    "import error": ('import { expect, test } from "vitest";\n\nimport { nope } from "../src/missing";\n\n'
                     'test("x", () => {\n  expect(nope).toBe(1);\n});\n', "cannot be collected"),
    "syntax error": (HEAD + 'test("x", () => {\n  expect(calculateTotal(200, 1)).toBe(0);\n', "cannot be collected"),
    "type error": (HEAD + 'test("x", () => {\n  const cart: { total?: () => number } = {};\n'
                   '  expect(cart.total!()).toBe(calculateTotal(200, 1, "SAVE300"));\n});\n',
                   "failed without an assertion error"),
    "timeout": (HEAD + 'test("x", async () => {\n  await new Promise((r) => setTimeout(r, 5000));\n'
                '  expect(calculateTotal(200, 1, "SAVE300")).toBe(0);\n}, 100);\n',
                "failed without an assertion error"),
}


@pytest.mark.parametrize("kind", list(NOT_AN_ASSERTION))
def test_only_a_real_assertion_failure_is_a_reproduction(shop: Shop, kind: str) -> None:
    source, why = NOT_AN_ASSERTION[kind]
    m = _reproduce(shop, source)
    assert not m.ok and why in m.reason, (kind, m.reason)


# -- boundary 2: a test cannot read service credentials, the socket or instance metadata ---------

PROBE = '''import assert from "node:assert";
import {{ existsSync, readdirSync, readFileSync }} from "node:fs";
import {{ connect }} from "node:net";
import {{ test }} from "vitest";

function read(path: string): string {{
  try {{
    return readFileSync(path, "utf8").slice(0, 40);
  }} catch (e) {{
    return `denied ${{(e as {{ code?: string }}).code}}`;
  }}
}}

function list(path: string): string {{
  try {{
    return readdirSync(path).join(",");
  }} catch (e) {{
    return `denied ${{(e as {{ code?: string }}).code}}`;
  }}
}}

async function reach(sock: string): Promise<string> {{
  return new Promise((done) => {{
    const c = connect(sock, () => {{ c.end(); done("connected"); }});
    c.on("error", (e: {{ code?: string }}) => done(`denied ${{e.code}}`));
  }});
}}

test("what a hostile test can reach", async () => {{
  const seen: Record<string, unknown> = {{
    env: Object.entries(process.env)
      .filter(([k, v]) => /TOKEN|SECRET|KEY|PASSWORD/i.test(k) || /s3cret|dk[eo]_/.test(v ?? ""))
      .map(([k]) => k),
    secret: read({secret}),
    home: list({home}),
    socket: await reach({sock}),
    docker: existsSync("/var/run/docker.sock") || existsSync("/run/docker.sock"),
    uid: process.getuid?.(),
  }};
  try {{
    const r = await fetch("http://169.254.169.254/latest/meta-data/", {{ signal: AbortSignal.timeout(3000) }});
    seen.metadata = `answered ${{r.status}}`;
  }} catch (e) {{
    seen.metadata = `denied ${{String((e as {{ cause?: {{ code?: string }} }}).cause?.code ?? e)}}`;
  }}
  assert.fail("SEEN" + JSON.stringify(seen));
}});
'''


def test_a_test_cannot_read_credentials_the_socket_or_instance_metadata(
        shop: Shop, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The service's credentials on this machine: a token in the environment of the process that
    # measures, a secret file in the desk's home, and a listening Unix socket of the service.
    monkeypatch.setenv("SIGNOFF_DESK_TOKEN", "dke_" + "s3cret" * 4)
    home = shop.settings.home
    (home / "keys").mkdir(parents=True, exist_ok=True)
    secret = home / "keys" / "service.token"
    secret.write_text("dko_owner_secret_never_readable")
    # A short folder: a socket's path must fit in 108 bytes, which a deep temporary folder does not.
    sock_dir = socket_dir("signoff-node-")
    sock_dir.chmod(0o755)
    sock_path = sock_dir / "service.sock"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(sock_path))
    sock_path.chmod(0o777)
    server.listen(1)
    try:
        probe = PROBE.format(secret=json.dumps(str(secret)), home=json.dumps(str(home)),
                             sock=json.dumps(str(sock_path)))
        m = _reproduce(shop, probe)
    finally:
        server.close()
        shutil.rmtree(sock_dir, ignore_errors=True)
    message = m.detail["base"]["message"]
    assert "SEEN" in message, m.reason
    seen = json.loads(message.split("SEEN", 1)[1].split("\n")[0].strip().rstrip("'\""))
    assert seen["env"] == [], seen
    assert seen["secret"].startswith("denied") and "dko_" not in message
    assert seen["home"].startswith("denied")
    assert seen["socket"].startswith("denied")
    assert seen["docker"] is False
    assert seen["metadata"].startswith("denied"), seen
    assert seen["uid"] != 0  # untrusted code never runs as root


# -- boundary 3: a patch that passes Vitest but breaks a TypeScript return type ------------------

BROKEN_TYPE = '''  if (giftWrap && coupon === "FREEWRAP") {
    return "free";
  }
  return Math.round(Math.max(amount, 0) * 100) / 100;
'''


def test_a_patch_that_passes_vitest_but_breaks_a_return_type_is_rejected(shop: Shop) -> None:
    cand = shop.commit({MODULE: shop.module(by=BROKEN_TYPE)})
    m = _verify(shop, cand, checks=True)
    assert not m.ok
    assert m.detail["verdict"] == "VERIFIED"  # Vitest alone would have passed it
    assert m.reason.startswith("configured check failed: tsc --noEmit"), m.reason
    assert "TS2322" in m.reason


# -- the code under test as an adversary ---------------------------------------------------------

@dataclass(frozen=True)
class Attack:
    name: str
    prefix: str = ""  # code put before the (still defective) module
    files: tuple[tuple[str, str], ...] = ()  # files planted beside it (the allowlist widened to let them in)
    # integrity (INCONCLUSIVE harness_integrity) | inconclusive | neutralised (REJECTED) | raced (either
    # integrity or neutralised: which one depends on whether the forger writes before the wrapper reads)
    expect: str = "integrity"


ATTACKS = (
    Attack("patches the framework", 'import { chai } from "vitest";\n\nchai.Assertion.overwriteMethod("toBe", () '
           "=> function () {});\n"),
    # Vitest turns the exit into an error of every file that imports the module: nothing loads.
    Attack("exits early", "process.exit(0);\n", expect="inconclusive"),
    Attack("forges the report and kills the runner",
           'import { writeFileSync } from "node:fs";\n\nwriteFileSync("/work/junit.xml", '
           '`<?xml version="1.0"?><testsuites><testsuite name="t"><testcase classname="tests/bug_0001.test.ts" '
           'name="a coupon larger than the cart costs nothing"/></testsuite></testsuites>`);\n'
           'process.kill(process.ppid, "SIGKILL");\n'),
    # A detached writer that waits for the runner to end, then replaces its report.
    Attack("forges the report after the run",
           'import { spawn } from "node:child_process";\n\nspawn("/bin/sh", ["-c", `while kill -0 ${process.ppid} '
           '2>/dev/null; do :; done; echo \'<?xml version="1.0"?><testsuites/>\' > /work/junit.xml`], '
           '{ detached: true, stdio: "ignore" }).unref();\n', expect="raced"),
    # A configuration that points the tests at a fake of the module, leaving the defect in place.
    Attack("plants a runner configuration", files=(
        ("vitest.config.ts", 'export default { resolve: { alias: [{ find: /^\\.\\.\\/src\\/checkout$/, '
                             'replacement: "/work/project/src/fake.ts" }] } };\n'),
        ("src/fake.ts", "export function calculateTotal(price: number, quantity: number, coupon = \"\", wrap = false): "
                        "number {\n  const off = ({ SAVE10: 10, SAVE50: 50, SAVE300: 300 } as Record<string, number>)"
                        "[coupon] ?? 0;\n  return Math.max(price * quantity - off, 0) + (wrap ? 30 : 0);\n}\n")),
        expect="neutralised"),
    Attack("plants a framework package", files=(
        ("node_modules/vitest/package.json", '{"name": "vitest", "type": "module", "main": "index.js"}\n'),
        ("node_modules/vitest/index.js", "export const test = () => {}; export const expect = () => ({});\n")),
        expect="neutralised"),
)


@pytest.mark.parametrize("attack", ATTACKS, ids=[a.name for a in ATTACKS])
def test_node_tampering_is_never_verified(shop: Shop, attack: Attack) -> None:
    planted = dict(attack.files)
    cand = shop.commit({MODULE: shop.module(prefix=attack.prefix), **planted})
    m = _verify(shop, cand, allow=[*ALLOW, *planted])
    assert not m.ok
    if attack.expect == "inconclusive":
        assert m.detail["verdict"] == "INCONCLUSIVE", (attack.name, m.reason)
    elif attack.expect == "raced":
        # On a loaded machine the forger can win the race to the report: the canaries then go missing.
        integrity = m.reason.startswith("INCONCLUSIVE: harness_integrity")
        assert integrity or (m.detail["verdict"] == "REJECTED" and "candidate_failed" in m.reason), (
            attack.name, m.reason)
    elif attack.expect == "integrity":
        assert m.detail["verdict"] == "INCONCLUSIVE" and m.reason.startswith("INCONCLUSIVE: harness_integrity"), (
            attack.name, m.reason)
    else:
        # Never in force: the base revision's configuration and the lock file's packages ran, and
        # the unchanged defect failed the test as it is.
        assert m.detail["verdict"] == "REJECTED" and "candidate_failed" in m.reason, (attack.name, m.reason)


def test_the_desk_refuses_a_fix_inside_node_modules(tmp_path: Path) -> None:
    from signoff.demo.desk import stack_settings
    from signoff.desk.local import init_local
    from signoff.kernel.errors import RefusedError

    desk = init_local(stack_settings(tmp_path / ".signoff", "node"), source=shoplite_source("node")).desk
    base = desk.forge.head(desk.config.repo)
    desk.check_fix_files(base, {MODULE: "export {};\n"}, TEST_PATH)  # the fixer's own files are fine
    for path in ("src/node_modules/vitest/index.js", "node_modules/vitest/index.js"):
        with pytest.raises(RefusedError):
            desk.check_fix_files(base, {path: "export {};\n"}, TEST_PATH)
    with pytest.raises(RefusedError, match="is not one the fixer may change"):
        desk.check_fix_files(base, {TEST_PATH: "export {};\n"}, TEST_PATH)  # never the confirmed test


# -- Jest: the same rules on a project that declares jest (ts-jest) instead of vitest -------------

JEST_PROJECT = Path(__file__).resolve().parents[2] / "data" / "desk" / "shoplite-jest"
JEST_COUPON = ('import { calculateTotal } from "../src/checkout";\n\ntest("a coupon larger than the cart costs '
               'nothing", () => {\n  expect(calculateTotal(200, 1, "SAVE300")).toBe(0);\n});\n')


@pytest.mark.slow
def test_a_jest_project_reproduces_by_assertion_and_verifies_the_fix(tmp_path: Path) -> None:
    require_sandbox()
    require_binary("npm", "apt-get install -y npm")
    tmp_path.chmod(0o755)
    repo = tmp_path / "repo"
    shutil.copytree(JEST_PROJECT, repo)
    base = _commit_all(repo)
    shop = Shop(repo, base, Settings.load(home=tmp_path / ".signoff", env={}))
    repro = _reproduce(shop, JEST_COUPON)
    assert repro.ok and "Received: -100" in repro.reason, repro.reason
    # What is not an assertion under Jest: tests/unit/desk/test_jest_report.py (a real report).
    fixed = _verify(shop, shop.commit({MODULE: shop.module(by=GENUINE)}, JEST_COUPON), checks=True, test=JEST_COUPON)
    assert fixed.ok and fixed.detail["verdict"] == "VERIFIED", fixed.reason
    assert [c["command"] for c in fixed.detail["checks"]] == ["tsc --noEmit"]
