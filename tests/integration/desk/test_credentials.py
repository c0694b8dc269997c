"""Desk credentials: a revoked token authenticates no more, and only that token is revoked."""

from __future__ import annotations

from pathlib import Path

import pytest

from signoff.desk.credentials import Credentials
from signoff.kernel.errors import Unauthenticated
from signoff.kernel.settings import Settings
from signoff.ledger import SqlLedger


def test_a_revoked_credential_is_unknown_and_the_others_still_work(tmp_path: Path) -> None:
    ledger = SqlLedger.open(Settings.load(home=tmp_path / ".signoff", env={}, cwd=tmp_path))
    creds = Credentials(ledger)
    alice, bob = creds.issue("owner", "alice"), creds.issue("owner", "bob")
    assert creds.authenticate(alice).name == "alice"
    creds.revoke(alice)
    with pytest.raises(Unauthenticated, match="unknown credential"):
        creds.authenticate(alice)
    assert creds.authenticate(bob).name == "bob"
    # issued again under the same name, the new token is a new credential; the revoked one stays revoked
    again = creds.issue("owner", "alice")
    assert creds.authenticate(again).name == "alice"
    with pytest.raises(Unauthenticated):
        creds.authenticate(alice)
