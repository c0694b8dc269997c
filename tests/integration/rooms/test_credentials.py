"""Credentials that do not last forever (issue 24, rooms 7): expiry, rotation and revocation of
user tokens, agent keys and registration keys, and registration keys minted only by admins."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from signoff.cli.main import main
from signoff.kernel.clock import FixedClock
from signoff.kernel.errors import NotFoundError, RefusedError, UsageError
from signoff.kernel.settings import Settings
from signoff.ledger import SqlLedger
from signoff.rooms import RoomService
from signoff.rooms.domain.tokens import DAY, Lifetimes
from signoff.rooms.http.app import create_app
from tests.support.fixtures.rooms import World, make_world


def test_tokens_and_keys_expire_after_their_lifetime(world: World, clock: FixedClock) -> None:
    s = world.service
    clock.advance(7 * DAY - 1)
    assert s.authenticate_registration(world.registration_key).id == world.admin.id
    clock.advance(1)
    with pytest.raises(RefusedError, match="registration key expired"):
        s.authenticate_registration(world.registration_key)
    clock.advance(83 * DAY - 1)
    assert s.authenticate(world.alice_token) == world.alice
    clock.advance(1)
    for token in (world.alice_token, world.fixer_key, world.admin_token):
        with pytest.raises(RefusedError, match="token expired at"):
            s.authenticate(token)


def test_an_expired_token_is_a_401_with_a_fix(world: World, clock: FixedClock) -> None:
    http = TestClient(create_app(service=world.service))
    clock.advance(91 * DAY)
    response = http.get("/users/me", headers={"Authorization": f"Bearer {world.alice_token}"})
    assert response.status_code == 401
    body = response.json()
    assert "expired" in body["detail"] and "rotate" in body["fix"]


def test_lifetimes_are_configurable(sqlite_url: str, clock: FixedClock, tmp_path: Path) -> None:
    config = tmp_path / "signoff.toml"
    config.write_text("[rooms]\ntoken_days = 1\nregistration_key_days = 2\n")
    settings = Settings.load(home=tmp_path, db_url=sqlite_url, env={"SIGNOFF_CONFIG": str(config)})
    lifetimes = Lifetimes.from_settings(settings)
    assert (lifetimes.token, lifetimes.registration_key) == (DAY, 2 * DAY)
    ledger = SqlLedger.from_url(sqlite_url, clock)
    world = make_world(RoomService(ledger, lifetimes=lifetimes))
    clock.advance(DAY)
    with pytest.raises(RefusedError, match="expired"):
        world.service.authenticate(world.fixer_key)
    assert world.service.authenticate_registration(world.registration_key).id == world.admin.id
    ledger.close()
    config.write_text("[rooms]\ntoken_days = 0\n")
    with pytest.raises(UsageError, match="token_days"):
        Lifetimes.from_settings(Settings.load(home=tmp_path, db_url=sqlite_url,
                                              env={"SIGNOFF_CONFIG": str(config)}))


def test_rotation_replaces_the_secret_and_restarts_its_lifetime(world: World, clock: FixedClock) -> None:
    s = world.service
    clock.advance(80 * DAY)
    new_key = s.rotate_token("agent", "fixer")
    new_token = s.rotate_token("user", "alice")
    for old in (world.fixer_key, world.alice_token):
        with pytest.raises(RefusedError, match="invalid or unknown token"):
            s.authenticate(old)
    clock.advance(20 * DAY)  # past the old tokens' expiry, inside the new ones'
    assert s.authenticate(new_key) == world.fixer
    assert s.authenticate(new_token) == world.alice


def test_revoked_credentials_stop_working_at_once(world: World) -> None:
    s = world.service
    s.revoke_token("agent", "fixer")
    s.revoke_token("user", "bob")
    s.revoke_registration_key(world.registration_key)
    for token in (world.fixer_key, world.bob_token):
        with pytest.raises(RefusedError):
            s.authenticate(token)
    with pytest.raises(RefusedError):
        s.register_agent(world.registration_key, "sneaky")
    with pytest.raises(NotFoundError):  # a second revocation, or a made-up key, names nothing
        s.revoke_registration_key(world.registration_key)
    assert s.authenticate(world.alice_token) == world.alice  # others are untouched
    assert s.rotate_token("agent", "fixer").startswith("soa_")  # the owner can issue a new key


def test_a_token_used_before_is_refused_at_once_after_its_revocation_anywhere(db_url: str,
                                                                            clock: FixedClock) -> None:
    """Tokens are looked up from a cache on every request: a revocation, a rotation or a re-key made
    through another process on the same database (another replica) must still stop the old token
    on the very next request, with no notification in between (none is listened for here)."""
    here_ledger, there_ledger = SqlLedger.from_url(db_url, clock), SqlLedger.from_url(db_url, clock)
    try:
        here = RoomService(here_ledger)
        world = make_world(here)
        there = RoomService(there_ledger)
        for token, principal in ((world.fixer_key, world.fixer), (world.bob_token, world.bob),
                                 (world.alice_token, world.alice), (world.reviewer_key, world.reviewer)):
            assert here.authenticate(token) == principal  # now cached here
        there.revoke_token("agent", "fixer")
        there.revoke_token("user", "bob")
        there.rotate_token("user", "alice")
        _, new_key = there.create_agent(world.alice, "reviewer", "reviews", overwrite=True)
        for token in (world.fixer_key, world.bob_token, world.alice_token, world.reviewer_key):
            with pytest.raises(RefusedError, match="invalid or unknown token"):
                here.authenticate(token)
        assert here.authenticate(new_key).id == world.reviewer.id
        clock.advance(90 * DAY)  # a cached token still expires on time
        with pytest.raises(RefusedError, match="expired"):
            here.authenticate(new_key)
    finally:
        here_ledger.close()
        there_ledger.close()


def test_unknown_tokens_do_not_grow_the_lookup_cache(world: World) -> None:
    s = world.service
    assert s.authenticate(world.alice_token) == world.alice
    before = len(s.store._cache)
    for n in range(50):
        with pytest.raises(RefusedError):
            s.authenticate(f"soa_made-up-{n}")
    assert len(s.store._cache) == before


def test_a_user_rotates_its_own_token_over_http(world: World) -> None:
    http = TestClient(create_app(service=world.service))
    response = http.post("/users/me/token", headers={"Authorization": f"Bearer {world.bob_token}"})
    assert response.status_code == 200
    fresh = response.json()["token"]
    assert http.get("/users/me", headers={"Authorization": f"Bearer {world.bob_token}"}).status_code == 401
    assert http.get("/users/me", headers={"Authorization": f"Bearer {fresh}"}).json()["name"] == "bob"


def test_only_admins_mint_registration_keys(world: World) -> None:
    s = world.service
    http = TestClient(create_app(service=world.service))
    head = s.head()
    refused = http.post("/admin/registration-keys", headers={"Authorization": f"Bearer {world.alice_token}"})
    assert refused.status_code == 403 and refused.json()["fix"]
    with pytest.raises(RefusedError, match="only admins"):
        s.create_registration_key(world.fixer)
    assert s.head() == head
    minted = http.post("/admin/registration-keys", json={"owner_name": "bob"},
                       headers={"Authorization": f"Bearer {world.admin_token}"})
    assert minted.status_code == 200
    agent, _ = s.register_agent(minted.json()["registration_key"], "bobs-helper")
    assert agent.owner_user_id == world.bob.id


def test_cli_rotates_and_revokes(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rooms", "init", "--json"]) == 0
    boot = json.loads(capsys.readouterr().out)
    assert main(["rooms", "user", "add", "carol", "--json"]) == 0
    carol = json.loads(capsys.readouterr().out)
    assert main(["rooms", "token", "rotate", "user", "carol", "--json"]) == 0
    rotated = json.loads(capsys.readouterr().out)["token"]
    assert main(["rooms", "token", "revoke", "registration", "--key", boot["registration_key"]]) == 0
    assert main(["rooms", "token", "revoke", "registration"]) == 2
    assert "needs the key itself" in capsys.readouterr().err
    assert main(["rooms", "token", "rotate", "user", "nobody"]) != 0
    assert "no user named 'nobody'" in capsys.readouterr().err
    service = RoomService(SqlLedger.from_url(f"sqlite:///{home / 'signoff.db'}"))
    with pytest.raises(RefusedError):
        service.authenticate(carol["token"])
    assert service.authenticate(rotated).name == "carol"
    with pytest.raises(RefusedError):
        service.authenticate_registration(boot["registration_key"])
    assert main(["rooms", "token", "revoke", "user", "carol"]) == 0
    with pytest.raises(RefusedError):
        service.authenticate(rotated)
    service.ledger.close()
