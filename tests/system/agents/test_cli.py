"""`signoff doctor` on the agents' settings (it runs the tools it checks: a system test); the other
`signoff agents` commands are tested in process in tests/integration/agents/test_cli.py."""

from __future__ import annotations

import json

from signoff.cli.main import main


def test_doctor_reports_agents(configure, capsys, monkeypatch) -> None:
    monkeypatch.delenv("NO_SUCH_KEY_FOR_TEST", raising=False)
    configure('[agents.fixer]\nprovider = "anthropic"\nmodel = "claude-x"\napi_key_env = "NO_SUCH_KEY_FOR_TEST"\n')
    code = main(["doctor", "--json"])
    out = capsys.readouterr().out
    checks = {c["name"]: c for c in json.loads(out)["checks"]}
    assert checks["agents offline"]["ok"] and "writer" in checks["agents offline"]["detail"]
    fixer = checks["agent fixer"]
    assert not fixer["ok"] and "$NO_SUCH_KEY_FOR_TEST is not set" in fixer["detail"]
    assert "NO_SUCH_KEY_FOR_TEST" in fixer["fix"] and code == 1
    assert checks["agent budget"]["ok"]
