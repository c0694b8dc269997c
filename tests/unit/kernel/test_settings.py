from pathlib import Path

import pytest

from signoff.kernel import UsageError
from signoff.kernel.settings import Settings


def test_defaults_put_state_under_dot_signoff(tmp_path: Path) -> None:
    s = Settings.load(env={}, cwd=tmp_path)
    assert s.home == tmp_path / ".signoff"
    assert s.db_url == f"sqlite:///{tmp_path / '.signoff' / 'signoff.db'}"


def test_environment_overrides_toml(tmp_path: Path) -> None:
    (tmp_path / "signoff.toml").write_text('[signoff]\nhome = "state"\n[agents.fixer]\nprovider = "openai"\n')
    s = Settings.load(env={}, cwd=tmp_path)
    assert s.home == tmp_path / "state"
    assert s.section("agents", "fixer") == {"provider": "openai"}
    assert s.section("agents", "missing") == {}
    s2 = Settings.load(env={"SIGNOFF_HOME": str(tmp_path / "elsewhere")}, cwd=tmp_path)
    assert s2.home == tmp_path / "elsewhere"


def test_bad_toml_and_bad_db_url_are_clear_errors(tmp_path: Path) -> None:
    (tmp_path / "signoff.toml").write_text("[signoff\n")
    with pytest.raises(UsageError, match="not valid TOML"):
        Settings.load(env={}, cwd=tmp_path)
    with pytest.raises(UsageError, match="unsupported database URL"):
        Settings.load(env={"SIGNOFF_DB": "mysql://x"}, cwd=tmp_path / "nowhere")
    with pytest.raises(UsageError, match="SIGNOFF_CONFIG"):
        Settings.load(env={"SIGNOFF_CONFIG": str(tmp_path / "nope.toml")}, cwd=tmp_path)
