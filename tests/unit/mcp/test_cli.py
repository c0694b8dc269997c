"""`signoff mcp` refuses bad configuration with an error and a fix, before serving anything."""

from __future__ import annotations

from pathlib import Path

import pytest

from signoff.cli.main import main


@pytest.mark.parametrize(("args", "env", "message"), [
    # With none of the three set, stdio serves the local home's own agent (test_local_home.py).
    ([], {"SIGNOFF_AGENT_KEY": "k"},
     "error: no rooms agent configured (missing SIGNOFF_ROOMS_URL, SIGNOFF_AGENT_ID)"),
    ([], {"SIGNOFF_ROOMS_URL": "http://127.0.0.1:1", "SIGNOFF_AGENT_ID": "a"},
     "error: no rooms agent configured (missing SIGNOFF_AGENT_KEY)"),
    (["--url", "ftp://x"], {"SIGNOFF_AGENT_ID": "a", "SIGNOFF_AGENT_KEY": "k"}, "error: bad rooms URL 'ftp://x'"),
    (["--transport", "http"], {}, "error: no rooms server URL"),
    (["--transport", "http", "--url", "http://127.0.0.1:1", "--agent-id", "a"], {}, "error: --agent-id is for stdio"),
    (["--transport", "http", "--url", "http://127.0.0.1:1", "--port", "70000"], {},
     "error: port 70000 is out of range"),
])
def test_bad_configuration(home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                           args: list[str], env: dict[str, str], message: str) -> None:
    for name in ("SIGNOFF_ROOMS_URL", "SIGNOFF_AGENT_ID", "SIGNOFF_AGENT_KEY"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    code = main(["mcp", *args])
    err = capsys.readouterr().err
    assert code == 2
    assert message in " ".join(err.split()) and "fix:" in err
    assert "Traceback" not in err
