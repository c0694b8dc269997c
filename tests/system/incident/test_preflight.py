"""`signoff incident preflight` through the CLI: the full checklist on a scratch incident started for
real, each item pass or fail with its fix; and a changed control (a guard, the settings) found both
by the preflight and by `signoff doctor`."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest

from signoff.cli.main import main
from signoff.incident.doctor import doctor_checks
from signoff.kernel.settings import Settings
from tests.support.requires import require_sandbox

BLIND = Path(__file__).parents[2] / "data" / "incident" / "kestrel-mosaik"

CHECKLIST = [
    "organisations match their pin", "payco guard matches its pin", "shopco guard matches its pin",
    "playbooks match their pin",
    "settings match their pin", "room server up", "payco evidence server up", "shopco evidence server up",
    "approver up", "mediator up", "notary up", "payco-agent up", "shopco-agent up",
    "payco evidence server refuses shopco's token", "shopco evidence server refuses payco's token",
    "approver connected and in its rooms", "every role held",
    "sandbox denies the agent's shell: rewrite its own guard",
    "sandbox denies the agent's shell: read the other company's capture",
    "payco guard blocks a planted draft", "shopco guard blocks a planted draft",
]


def preflight(capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    code = main(["incident", "preflight", "--json"])
    result = json.loads(capsys.readouterr().out)
    return code, {c["name"]: c for c in result["checks"]} | {"ok": result["ok"]}


def scratch_runs() -> set[Path]:
    return set(Path(tempfile.gettempdir()).glob("incident-preflight-*"))


@pytest.mark.slow
def test_preflight_fails_until_set_up_then_passes(node: str, home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    require_sandbox()
    before = scratch_runs()
    code, checks = preflight(capsys)
    assert code == 1 and checks.pop("ok") is False
    assert checks["controls pinned"]["ok"] is False
    assert checks["controls pinned"]["fix"] == "run `signoff incident setup`"
    assert all(c["ok"] for n, c in checks.items() if n != "controls pinned"), checks
    assert main(["incident", "setup"]) == 0
    capsys.readouterr()
    code, checks = preflight(capsys)
    assert code == 0 and checks.pop("ok") is True
    assert list(checks) == CHECKLIST
    assert all(c["ok"] for c in checks.values()), [c for c in checks.values() if not c["ok"]]
    assert "refused" in checks["payco evidence server refuses shopco's token"]["detail"]
    assert "Read-only file system" in checks["sandbox denies the agent's shell: rewrite its own guard"]["detail"]
    assert scratch_runs() <= before  # the scratch incidents were removed
    code = main(["incident", "preflight"])
    out = capsys.readouterr().out
    assert code == 0 and out.count("PASS") == len(CHECKLIST) and "preflight passes" in out


@pytest.mark.slow
def test_a_changed_guard_and_changed_settings_fail_with_their_fix(node: str, home: Path, tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """Of the incident set up here (the blind fixture's organisations), not of the demo's."""
    require_sandbox()
    assert main(["incident", "setup", "--config", str(BLIND / "incident.toml")]) == 0
    capsys.readouterr()
    guard = home / "incident" / "kestrel" / "guard.json"
    config = json.loads(guard.read_text())
    config["name_hashes"] = []  # an agent's way to let customer names through
    guard.write_text(json.dumps(config))
    (tmp_path / "signoff.toml").write_text('[incident]\nnote = "changed after setup"\n')
    code, checks = preflight(capsys)
    assert code == 1 and checks.pop("ok") is False
    failed = {n: c for n, c in checks.items() if not c["ok"]}
    assert set(failed) == {"kestrel guard matches its pin", "settings match their pin", "services up"}, failed
    # The scratch run is of this incident, with its pinned guards: the changed one does not run.
    assert failed["services up"]["detail"] == "kestrel's guard configuration differs from its pin"
    assert failed["kestrel guard matches its pin"]["fix"].startswith("restore the guard configuration")
    assert "changed since they were pinned" in failed["settings match their pin"]["detail"]
    assert "re-run `signoff incident setup` on purpose" in failed["settings match their pin"]["fix"]
    settings = Settings.load(home=home, env={}, cwd=tmp_path)
    doctor = {c.name: c for c in doctor_checks(settings)}
    assert doctor["incident: kestrel guard matches its pin"].ok is False
    assert doctor["incident: settings match their pin"].ok is False
    assert doctor["incident: playbooks match their pin"].ok is True
