"""The repair service's own rules (no sandbox): verify_fix runs only with a harness a person
approved exactly as this home shows it; a repository is named in a room by a URL without credentials."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from signoff.demo.fixture import examples_root
from signoff.kernel.errors import RefusedError
from signoff.kernel.settings import Settings
from signoff.repair import HarnessApproval, VerifyRequest, freeze, harness_content, harness_store, verify_fix
from signoff.repair.jobs import repository_link
from signoff.repair.service import CARD_TEXT, public_url
from signoff.rooms.domain.bound import MAX_CONTENT


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


@pytest.mark.parametrize("approval", [
    HarnessApproval("card-1", False, None, None, "waiting for a listed responder"),  # not answered
    HarnessApproval("card-1", True, _sha256("another harness"), "alice"),  # approves other content
    HarnessApproval("card-1", True, None, "alice"),  # binds no content
])
def test_verify_fix_refuses_a_harness_not_approved_as_shown_and_runs_nothing(tmp_path: Path,
                                                                            approval: HarnessApproval) -> None:
    settings = Settings.load(home=tmp_path / ".signoff", env={}, cwd=tmp_path)
    digest = freeze(examples_root() / "coupon" / "harness", harness_store(settings)).digest
    request = VerifyRequest(repo=tmp_path / "no-repo", base="main", candidate="fix", harness=None,
                            expect="test_coupon.py::test_coupon_applies_once", frozen_digest=digest)
    with pytest.raises(RefusedError, match="is not approved by 'card-1'") as refused:
        verify_fix(settings, request, approval)
    assert "request_harness_approval" in (refused.value.fix or "")
    assert not settings.evidence_dir.exists() or not list(settings.evidence_dir.iterdir())
    # What a person approves is the harness as this home shows it, files and texts.
    assert "def test_coupon_applies_once" in harness_content(settings, digest)


def test_a_harness_card_holds_what_the_gate_lets_a_card_hold() -> None:
    assert CARD_TEXT == MAX_CONTENT


def test_a_repository_url_is_shown_without_credentials_and_a_local_path_not_at_all() -> None:
    assert public_url("https://u:p@example.org:8443/o/r.git?token=x#y") == "https://example.org:8443/o/r.git"
    assert public_url("git@github.com:o/r.git") == "git@github.com:o/r.git"
    assert public_url("ssh://git@host/o/r") == "ssh://host/o/r"
    for unshown in ("/home/alice/src/shop", "file:///srv/shop.git", "https://", "ext::sh -c evil", "http://h:99999/"):
        assert public_url(unshown) == ""


def test_a_repository_reference_is_a_web_address_or_nothing() -> None:
    base = "a" * 40
    assert repository_link("git@github.com:o/r.git", base) == (
        "github", ["https://github.com/o/r", f"https://github.com/o/r/commit/{base}"])
    assert repository_link("ssh://git@gitlab.example.org:2222/o/r.git", base) == ("url", ["https://gitlab.example.org/o/r"])
    assert repository_link("http://git.example.org:8080/r/", "main") == ("url", ["http://git.example.org:8080/r"])
    assert repository_link("shop", base) is None  # a folder name: the contract document names it
    assert repository_link("https://github.com/", base) is None
