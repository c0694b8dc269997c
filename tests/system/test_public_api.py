"""`import signoff`: the small public API for using signoff as a library."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

import signoff


def _facade(name: str, value: object) -> str | None:
    """The innermost package above where `value` is defined whose facade exports it as `name`."""
    parts = str(getattr(value, "__module__", "")).split(".")
    for n in range(len(parts) - 1, 1, -1):
        package = importlib.import_module(".".join(parts[:n]))
        if name in getattr(package, "__all__", ()) and getattr(package, name) is value:
            return package.__name__
    return None


def test_every_public_name_is_a_package_facades_own() -> None:
    names = [n for n in signoff.__all__ if n != "__version__"]
    assert len(names) == len(set(names)) and set(signoff.__all__) <= set(dir(signoff))
    facades = {name: _facade(name, getattr(signoff, name)) for name in names}
    assert facades == {
        "KeyStore": "signoff.trust", "Ledger": "signoff.ledger", "SqlLedger": "signoff.ledger",
        "NewEvent": "signoff.ledger",
        "NewJob": "signoff.ledger", "RoomService": "signoff.rooms", "RoomsClient": "signoff.rooms.client",
        "Settings": "signoff.kernel", "SignoffError": "signoff.kernel", "VerifyRequest": "signoff.repair",
        "VerifyResult": "signoff.repair", "scan": "signoff.airlock", "statement": "signoff.trust",
        "verify": "signoff.repair", "verify_file": "signoff.trust"}


def test_importing_signoff_imports_no_package_until_a_name_is_used() -> None:
    code = ("import sys, signoff; before = {m for m in sys.modules if m.startswith('signoff.')}; "
            "signoff.RoomService; after = {m for m in sys.modules if m.startswith('signoff.')}; "
            "print(sorted(before)); print('signoff.rooms' in after)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.splitlines()
    assert out == ["[]", "True"]


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'Desk'"):
        signoff.Desk
