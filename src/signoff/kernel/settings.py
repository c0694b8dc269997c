"""Settings from environment variables and an optional `signoff.toml`.

Precedence, highest first: explicit arguments, environment variables (`SIGNOFF_*`), the TOML file,
built-in defaults. The TOML file is `signoff.toml` in the working directory unless `SIGNOFF_CONFIG`
names another. State lives under `.signoff/` in the working directory unless `--home` or
`SIGNOFF_HOME` moves it.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from signoff.kernel.errors import UsageError

CONFIG_NAME = "signoff.toml"


@dataclass(frozen=True)
class Settings:
    home: Path
    db_url: str
    config_path: Path | None = None
    raw: dict[str, Any] = field(default_factory=dict)

    @property
    def keys_dir(self) -> Path:
        return self.home / "keys"

    @property
    def evidence_dir(self) -> Path:
        return self.home / "evidence"

    def section(self, *names: str) -> dict[str, Any]:
        """A nested table of the TOML file, e.g. section("agents", "fixer"); {} when absent."""
        node: Any = self.raw
        for name in names:
            if not isinstance(node, dict):
                return {}
            node = node.get(name, {})
        return node if isinstance(node, dict) else {}

    @classmethod
    def load(
        cls,
        home: str | os.PathLike[str] | None = None,
        db_url: str | None = None,
        env: dict[str, str] | None = None,
        cwd: Path | None = None,
    ) -> Settings:
        env = dict(os.environ) if env is None else env
        cwd = cwd or Path.cwd()
        config_path = _config_path(env, cwd)
        raw = _read_toml(config_path) if config_path else {}
        core = raw.get("signoff", {}) if isinstance(raw.get("signoff"), dict) else {}

        home_value = home or env.get("SIGNOFF_HOME") or core.get("home") or ".signoff"
        home_path = Path(home_value)
        if not home_path.is_absolute():
            home_path = (cwd / home_path).resolve()

        url = db_url or env.get("SIGNOFF_DB") or core.get("db") or f"sqlite:///{home_path / 'signoff.db'}"
        if not isinstance(url, str) or not url.startswith(("sqlite:", "postgresql")):
            raise UsageError(
                f"unsupported database URL {url!r}",
                "use sqlite:///PATH or postgresql://USER@HOST/DB in SIGNOFF_DB or [signoff] db",
            )
        return cls(home=home_path, db_url=url, config_path=config_path, raw=raw)


def _config_path(env: dict[str, str], cwd: Path) -> Path | None:
    named = env.get("SIGNOFF_CONFIG")
    if named:
        path = Path(named)
        if not path.is_file():
            raise UsageError(f"SIGNOFF_CONFIG names {path}, which is not a file", "fix the path or unset it")
        return path
    local = cwd / CONFIG_NAME
    return local if local.is_file() else None


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{path} is not valid TOML: {exc}", "fix the file or move it aside") from exc
