"""`signoff repair verify` exit codes and JSON, `signoff demo repair`, `signoff evidence verify`."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from signoff.cli.main import main
from signoff.demo.fixture import FixtureRepo, examples_root
from signoff.demo.repair_room import asked_in
from signoff.kernel.digests import sha256_file
from signoff.ledger import SqlLedger
from signoff.repair import read_case, read_cases
from tests.support.requires import require_sandbox

HARNESS = str(examples_root() / "coupon" / "harness")


def _verify(repo: FixtureRepo, candidate: str, *extra: str) -> list[str]:
    return ["repair", "verify", "--repo", str(repo.path), "--base", "main", "--candidate", candidate,
            "--harness", HARNESS, "--expect", "test_coupon.py::test_coupon_applies_once",
            "--regression", "test_coupon.py::test_zero_coupon_keeps_total",
            "--regression", "test_coupon.py::test_empty_cart_costs_nothing", *extra]


@pytest.fixture(autouse=True)
def _sandbox() -> None:
    require_sandbox()


def test_exit_codes_and_json(home: Path, coupon: FixtureRepo, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(_verify(coupon, "genuine-fix", "--json")) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) >= {"verdict", "reasons", "stages", "fingerprint", "evidence"}
    assert set(out["stages"]) == {"base", "candidate", "regression"}
    assert out["verdict"] == "VERIFIED"
    assert out["stages"]["base"]["message"].startswith("AssertionError: a 10% coupon")
    assert out["stages"]["base"]["executions"][0]["exit_code"] == 1
    evidence = out["evidence"]

    assert main(_verify(coupon, "false-fix", "--json")) == 1
    assert json.loads(capsys.readouterr().out)["reasons"][0]["code"] == "candidate_failed"
    assert main(_verify(coupon, "false-fix", "--allow", "cart.py")) == 1
    assert "path_not_allowed" in capsys.readouterr().out
    assert main(_verify(coupon, "genuine-fix", "--approved-digest", "0" * 64)) == 3
    assert "harness_changed" in capsys.readouterr().out

    assert main(["evidence", "verify", evidence]) == 0
    assert "ok" in capsys.readouterr().out


@pytest.mark.parametrize(("args", "words"), [
    (["--candidate", "no-such-branch"], "not a commit"),
    (["--harness", "/nonexistent/harness"], "harness folder not found"),
    (["--expect", "../escape.py::t"], "leaves the harness"),
    (["--runner", "mytool {tests}"], "command template"),
    (["--repeat", "0"], "--repeat"),
    (["--approved-digest", "abc"], "64 lowercase hex"),
])
def test_bad_usage_exits_2_without_traceback(home: Path, coupon: FixtureRepo, args: list[str], words: str,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    argv = _verify(coupon, "genuine-fix")
    for i in range(0, len(args), 2):
        if args[i] in argv:
            argv[argv.index(args[i]) + 1] = args[i + 1]
        else:
            argv += args[i:i + 2]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err
    assert "fix:" in err


def test_not_a_repository(home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["repair", "verify", "--repo", str(tmp_path), "--base", "main", "--candidate", "x", "--harness", HARNESS,
            "--expect", "test_coupon.py"]
    assert main(argv) == 2
    assert "not a git repository" in capsys.readouterr().err


def test_demo_repair_then_cases_and_show(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "repair", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["ok"] is True
    assert out["verify"]["false-fix"]["verdict"] == "REJECTED"
    assert out["verify"]["genuine-fix"]["verdict"] == "VERIFIED"
    assert out["room"]["state"] == "ACCEPTED"
    assert all(Path(p).is_file() for p in out["evidence"])
    case_id = out["room"]["case_id"]
    assert main(["repair", "cases", "--json"]) == 0
    # The room flow's case, and the two the demo leaves for the visitor of `signoff serve --demo`.
    assert [c["state"] for c in json.loads(capsys.readouterr().out)] == ["ACCEPTED", "CONTRACT_PROPOSED",
                                                                        "AWAITING_REVIEW"]
    assert sorted(out["left_for_the_visitor"].values()) == ["AWAITING_REVIEW", "CONTRACT_PROPOSED"]
    assert main(["repair", "show", case_id, "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["history"][-1] == "ACCEPTED" and shown["verdicts"]["2"]["verdict"] == "VERIFIED"
    assert main(["repair", "show", "nope-99"]) == 2
    assert "no repair case" in capsys.readouterr().err


def _watched(coupon: FixtureRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Any, Any, Any]:
    """A watched room on the embedded server with a case reported: (rooms, alice, room)."""
    from signoff.kernel.settings import Settings
    from signoff.rooms import OPEN, OWNER_AND_OWNER_AGENTS, RoomService

    rooms = RoomService(SqlLedger.open(Settings.load()))
    alice, _ = rooms.create_user("alice")
    rooms.create_user("bob")
    rooms.create_agent(alice, "verifier", policy=OPEN)
    rooms.create_agent(alice, "fixer", policy=OWNER_AND_OWNER_AGENTS)
    room = rooms.create_room(alice, "coupon", agent_names=["verifier", "fixer"], user_names=["alice"])
    contract = tmp_path / "contract.toml"
    contract.write_text(
        f'name = "coupon"\nbehaviour = "coupon applied once"\nrepo = "{coupon.path}"\nbase = "main"\n'
        f'harness = "{HARNESS}"\nexpect = "test_coupon.py::test_coupon_applies_once"\n'
        'regression = ["test_coupon.py::test_zero_coupon_keeps_total"]\nallow = ["cart.py"]\n'
        'fixer_script = "coupon"\n')
    assert main(["repair", "watch", "--room", room.id, "--contract", str(contract), "--operator", "alice"]) == 0
    rooms.post_message(alice, room.id, "@verifier the coupon is applied twice")
    assert main(["repair", "run"]) == 0
    assert "coupon-01        CONTRACT_PROPOSED" in capsys.readouterr().out
    return rooms, alice, room


def test_watch_and_run_drive_a_room_case(home: Path, coupon: FixtureRepo, tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    rooms, alice, room = _watched(coupon, tmp_path, capsys)
    # The harness the contract names can be read, file by file, before approving it.
    assert main(["repair", "harness", "coupon-01"]) == 0
    shown = capsys.readouterr().out
    assert "def test_coupon_applies_once" in shown and (Path(HARNESS) / "test_coupon.py").read_text() in shown
    assert main(["repair", "harness", "coupon-01", "--json"]) == 0
    (entry,) = json.loads(capsys.readouterr().out)["files"]
    assert entry["path"] == "test_coupon.py" and entry["sha256"] == sha256_file(Path(HARNESS) / "test_coupon.py")
    # Alice sends the commands the verifier printed: each names the digest of what it showed.
    verifier = rooms.agent_by_name("verifier")
    rooms.post_message(alice, room.id, asked_in(rooms, alice, room.id, verifier, "approve", "coupon-01"))
    assert main(["repair", "run"]) == 0
    assert "coupon-01        AWAITING_REVIEW" in capsys.readouterr().out
    candidate = str((read_case(rooms.ledger, "coupon-01").last_verdict or {})["candidate"])
    accept = asked_in(rooms, alice, room.id, verifier, "accept", "coupon-01")
    assert accept.startswith(f"@verifier accept coupon-01 {candidate[:12]} #")
    rooms.post_message(alice, room.id, accept)
    assert main(["repair", "run"]) == 0
    assert "coupon-01        ACCEPTED" in capsys.readouterr().out
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "x"\nsurprise = 1\n')
    assert main(["repair", "watch", "--room", room.id, "--contract", str(bad), "--operator", "alice"]) == 2
    assert "surprise" in capsys.readouterr().err


@pytest.mark.parametrize(("args", "words"), [
    (["nobody"], "unknown repair agent"),
    (["verifier", "--decisions", "maybe"], "unknown decision mode"),
    (["verifier"], "no room is watched yet"),  # and no --room
    (["verifier", "--room", "no-such-room"], "no room no-such-room"),
    (["fixer", "--fixer", "ghost", "--room", "x"], "no agent named 'ghost'"),
])
def test_repair_agent_refuses_bad_input_clearly_and_writes_nothing(
        home: Path, args: list[str], words: str, capsys: pytest.CaptureFixture[str]) -> None:
    from signoff.kernel.settings import Settings
    from signoff.rooms import RoomService
    from signoff.rooms.client import agent_case

    ledger = SqlLedger.open(Settings.load())
    rooms = RoomService(ledger)
    alice, _ = rooms.create_user("alice")
    verifier, _ = rooms.create_agent(alice, "verifier")
    rooms.create_agent(alice, "fixer")
    before = ledger.count_events()
    assert main(["repair", "agent", *args]) == 2
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err
    assert "fix:" in err
    assert ledger.read(agent_case(verifier.id)) == [] and ledger.count_events() == before
    ledger.close()


@pytest.mark.parametrize(("args", "words"), [
    (["--room", "no-such-room", "--operator", "alice"], "no room no-such-room"),
    (["--operator", "nobody"], "no user named 'nobody'"),
    (["--operator", "alice", "--verifier", "ghost"], "no agent named 'ghost'"),
])
def test_repair_watch_refuses_an_unknown_room_person_or_agent_and_links_nothing(
        home: Path, tmp_path: Path, args: list[str], words: str, capsys: pytest.CaptureFixture[str]) -> None:
    from signoff.kernel.settings import Settings
    from signoff.rooms import RoomService

    ledger = SqlLedger.open(Settings.load())
    rooms = RoomService(ledger)
    alice, _ = rooms.create_user("alice")
    rooms.create_agent(alice, "verifier")
    room = rooms.create_room(alice, "coupon", agent_names=["verifier"], user_names=["alice"])
    contract = tmp_path / "contract.toml"
    contract.write_text('name = "coupon"\nbehaviour = "b"\nrepo = "."\nbase = "main"\nharness = "."\n'
                        'expect = "test_coupon.py::test_once"\n')
    argv = ["repair", "watch", "--contract", str(contract), *args]
    assert main(argv if "--room" in args else [*argv, "--room", room.id]) == 2
    err = capsys.readouterr().err
    assert words in err and "fix:" in err and "Traceback" not in err
    assert ledger.case_ids("repair.room.") == []
    ledger.close()


def test_the_operator_abandons_a_case_from_the_command_line_and_only_the_operator(
        home: Path, coupon: FixtureRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rooms, alice, room = _watched(coupon, tmp_path, capsys)
    # Not stuck on the fixer: nothing to resume.
    assert main(["repair", "resume", "coupon-01", "--operator", "alice"]) != 0
    err = capsys.readouterr().err
    assert "error:" in err and "fix:" in err and "CONTRACT_PROPOSED" in err and "Traceback" not in err
    # Somebody else, and the operator without a reason: refused, nothing written.
    assert main(["repair", "abandon", "coupon-01", "--operator", "bob", "--reason", "mine now"]) != 0
    assert "only the linked operator" in capsys.readouterr().err
    assert main(["repair", "abandon", "coupon-01", "--operator", "alice"]) != 0
    assert "--reason" in capsys.readouterr().err
    assert read_case(rooms.ledger, "coupon-01").state == "CONTRACT_PROPOSED"
    assert main(["repair", "abandon", "coupon-01", "--operator", "alice", "--reason", "reported twice",
                 "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"case_id": "coupon-01", "state": "ABANDONED"}
    [event] = [e for e in rooms.ledger.read("repair.case.coupon-01") if e.type == "repair.abandoned"]
    assert event.payload["by"] == alice.sender and event.payload["reason"] == "reported twice"
    assert event.payload["via"] == "cli" and event.payload["by_name"] == "alice"
    # The room is told, and opens another case for the next report.
    rooms.post_message(alice, room.id, "@verifier the coupon is applied on refunds too")
    assert main(["repair", "run"]) == 0
    out = capsys.readouterr().out
    assert "coupon-01        ABANDONED" in out
    assert [c.state for c in read_cases(rooms.ledger)] == ["ABANDONED", "CONTRACT_PROPOSED"]
    bodies = [m["body"] for m in rooms.read_messages(alice, room.id, limit=1000)]
    assert any(b.startswith("coupon-01 abandoned by alice: reported twice") for b in bodies)
    assert main(["repair", "abandon", "coupon-01", "--operator", "alice", "--reason", "again"]) != 0
    assert "already closed" in capsys.readouterr().err


def test_the_evidence_is_published_with_a_git_bundle_whose_digest_it_signs(
        home: Path, coupon: FixtureRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from signoff import git

    out_dir = tmp_path / "published"
    evidence, bundle = out_dir / "repair.intoto.json", out_dir / "repair.bundle"
    assert main(_verify(coupon, "genuine-fix", "--evidence", str(evidence), "--bundle", str(bundle), "--json")) == 0
    out = json.loads(capsys.readouterr().out)
    base, candidate = out["base"], out["candidate"]
    assert out["bundle"] == {"file": "repair.bundle", "sha256": sha256_file(bundle),
                             "refs": {"refs/heads/base": base, "refs/heads/candidate": candidate}}
    # The bundle stands alone: `git bundle verify` passes in an empty repository, and a clone has both.
    empty = tmp_path / "empty"
    git.run(tmp_path, "init", "--quiet", str(empty))
    listed = git.run(empty, "bundle", "verify", str(bundle))
    assert listed.returncode == 0 and b"complete history" in listed.stdout + listed.stderr
    assert f"{candidate} refs/heads/candidate" in git.verify_bundle(empty, bundle)
    # The source repository gained no refs from it.
    assert "refs/heads/base" not in git.output(coupon.path, "for-each-ref", "--format=%(refname)")
    # The signed statement names the bundle as a subject; `evidence verify` re-hashes it beside the file.
    envelope = json.loads(evidence.read_text())
    statement = json.loads(base64.b64decode(envelope["payload"]))
    assert {"name": "repair.bundle", "digest": {"sha256": sha256_file(bundle)}} in statement["subject"]
    assert main(["evidence", "verify", str(evidence)]) == 0
    capsys.readouterr()
    # A bundle swapped for another one after signing fails the check.
    bundle.write_bytes(bundle.read_bytes() + b"\n")
    assert main(["evidence", "verify", str(evidence)]) == 1
    assert "does not match the signed" in capsys.readouterr().out
    # A bundle path that names a folder is refused before anything runs.
    assert main(_verify(coupon, "genuine-fix", "--bundle", str(out_dir))) == 2
    assert "must name a file" in capsys.readouterr().err


def test_repair_run_takes_a_command_the_server_lost_in_a_restart_once(
        home: Path, coupon: FixtureRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`repair run` is the agents' loop: a command sent while nothing ran, which the server then
    lost in a restart (a Switch core: its stream opens with a gap and never brings it), is taken
    from the room's re-read, once, however often the run is repeated."""
    import asyncio

    from signoff.kernel.settings import Settings
    from signoff.repair import run_until_idle
    from signoff.rooms.client import InProcessTransport
    from tests.support.faulty import Faulty

    rooms, alice, room = _watched(coupon, tmp_path, capsys)
    lost = rooms.post_message(alice, room.id, "@verifier abandon coupon-01 reported twice").message_id

    def run(gap: bool) -> None:
        verifier, fixer = (Faulty(InProcessTransport(rooms, agent=rooms.agent_by_name(n)), lost={lost}, gap=gap)
                           for n in ("verifier", "fixer"))
        asyncio.run(run_until_idle(verifier, fixer, rooms.ledger, Settings.load(), "verifier", "fixer", [room.id]))

    run(gap=True)
    assert read_case(rooms.ledger, "coupon-01").state == "ABANDONED"
    run(gap=True)
    assert main(["repair", "run"]) == 0
    assert [e.type for e in rooms.ledger.read("repair.case.coupon-01")].count("repair.abandoned") == 1
    bodies = [m["body"] for m in rooms.read_messages(alice, room.id, limit=1000)]
    assert sum(b.startswith("coupon-01 abandoned by alice") for b in bodies) == 1
