"""Fixtures for the repair tests: the coupon repositories built from examples/ with real git."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from signoff.repair.fixture import FixtureRepo, build, examples_root


@pytest.fixture
def coupon(tmp_path: Path) -> FixtureRepo:
    return build(examples_root() / "coupon", tmp_path / "coupon-repo")


@pytest.fixture
def coupon_js(tmp_path: Path) -> FixtureRepo:
    return build(examples_root() / "coupon-js", tmp_path / "coupon-js-repo")


@pytest.fixture(scope="session", autouse=True)
def _shared_env_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    # Prepared test environments are cached by digest; share one cache across this package's tests.
    import os

    old = os.environ.get("SIGNOFF_REPAIR_ENV_CACHE")
    os.environ["SIGNOFF_REPAIR_ENV_CACHE"] = str(tmp_path_factory.mktemp("repair-envs"))
    yield
    if old is None:
        os.environ.pop("SIGNOFF_REPAIR_ENV_CACHE", None)
    else:
        os.environ["SIGNOFF_REPAIR_ENV_CACHE"] = old
