"""Python environments for the sandbox (being written)."""

from __future__ import annotations

from typing import Any


def prepare_python_env(*args: Any, **kwargs: Any) -> Any:
    raise NotImplementedError("prepare_python_env is being written")
