"""Fixtures for the repair tests: the coupon repositories built from examples/ with real git."""

from __future__ import annotations

from pathlib import Path

import pytest

from signoff.repair.fixture import FixtureRepo, build, examples_root


@pytest.fixture
def coupon(tmp_path: Path) -> FixtureRepo:
    return build(examples_root() / "coupon", tmp_path / "coupon-repo")


@pytest.fixture
def coupon_js(tmp_path: Path) -> FixtureRepo:
    return build(examples_root() / "coupon-js", tmp_path / "coupon-js-repo")
