"""Durability on both databases (SQLite and PostgreSQL) and the `signoff rooms` CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from signoff.cli.main import main
from signoff.ledger import SqlLedger
from signoff.rooms import OPEN, RoomService
from tests.support.fixtures.rooms import make_world


def test_events_and_sequences_survive_a_restart(db_url: str) -> None:
    ledger = SqlLedger.from_url(db_url)
    world = make_world(RoomService(ledger))
    receipts = [world.service.post_message(world.fixer, world.room_id, f"m{i}", target_names=["reviewer"])
                for i in range(3)]
    before = world.service.agent_events(world.reviewer.id, 0)
    ledger.close()
    # A new process: same rows, same sequence numbers; new sequences continue after them.
    reopened = RoomService(SqlLedger.from_url(db_url))
    assert reopened.agent_events(world.reviewer.id, 0) == before
    resumed = reopened.agent_events(world.reviewer.id, receipts[0].sequence or 0)
    assert [e["payload"]["message_id"] for e in resumed] == [r.message_id for r in receipts[1:]]
    nxt = reopened.post_message(reopened.agent(world.fixer.id), world.room_id, "after restart")
    assert (nxt.sequence or 0) > (receipts[-1].sequence or 0)
    # The tables are a projection: rebuilding from the events gives the same streams.
    reopened.projector.rebuild()
    assert reopened.agent_events(world.reviewer.id, 0)[: len(before)] == before
    reopened.ledger.close()



def test_every_recipient_reads_its_own_envelope_from_the_tables_after_a_rebuild(db_url: str) -> None:
    """A pass shares one encoded envelope among the recipients that see the same one (addressed or
    not) and, on PostgreSQL, sends each shared envelope once: no recipient may get another's."""
    ledger = SqlLedger.from_url(db_url)
    world = make_world(RoomService(ledger))
    service = world.service
    third, _ = service.create_agent(world.alice, "third", "watches", policy=OPEN)
    service.add_member(world.alice, world.room_id, agent_name="third")
    bodies = ['plain', 'quote " and \\ backslash', 'caf\u00e9 \u2028 \U0001f600']
    first = None
    for i, body in enumerate(bodies):
        receipt = service.post_message(world.fixer, world.room_id, body, target_names=[["reviewer"], ["third"], []][i],
                                       thread_id=first)  # the later ones reply in the first one's thread
        first = first or receipt.message_id
    agents = (world.reviewer.id, third.id)
    before = {a: service.agent_events(a, 0) for a in agents}
    history = service.read_messages(world.alice, world.room_id)
    ledger.close()
    rebuilt = RoomService(SqlLedger.from_url(db_url))
    rebuilt.projector.rebuild()  # one pass over every event: messages to many recipients together
    rebuilt.ledger.close()
    reopened = RoomService(SqlLedger.from_url(db_url))  # nothing in memory: the rows as stored
    after = {a: reopened.agent_events(a, 0) for a in agents}
    assert after == before
    assert reopened.read_messages(reopened.user(world.alice.id), world.room_id) == history
    assert [m["body"] for m in history][-3:] == ["@reviewer " + bodies[0], "@third " + bodies[1], bodies[2]]
    seen = {a: [(e["payload"]["body"], e["payload"]["addressed"]) for e in after[a] if e["type"] == "message"]
            for a in agents}
    threads = [e["payload"]["thread_id"] for e in after[third.id] if e["type"] == "message"]
    assert threads == [None, first, first]
    sent = ["@reviewer " + bodies[0], "@third " + bodies[1], bodies[2]]
    assert seen[world.reviewer.id] == [(sent[0], True), (sent[1], False), (sent[2], False)]
    assert seen[third.id] == [(sent[0], False), (sent[1], True), (sent[2], False)]
    reopened.ledger.close()


def test_cli_init_and_user_add(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rooms", "init", "--json"]) == 0
    boot = json.loads(capsys.readouterr().out)
    assert set(boot) == {"admin_user_id", "admin_token", "registration_key"}
    assert main(["rooms", "init", "--json"]) == 4  # already initialised: a clear conflict
    assert "already initialised" in capsys.readouterr().err
    assert main(["rooms", "user", "add", "carol", "--json"]) == 0
    carol = json.loads(capsys.readouterr().out)
    assert carol["name"] == "carol" and carol["token"].startswith("sou_")
    assert main(["rooms", "user", "add", "Bad Name"]) == 2
    assert "bad user name" in capsys.readouterr().err
    service = RoomService(SqlLedger.from_url(f"sqlite:///{home / 'signoff.db'}"))
    assert service.authenticate(carol["token"]).name == "carol"
    assert service.authenticate_registration(boot["registration_key"]).id == boot["admin_user_id"]


def test_an_upgraded_database_replays_its_events_into_the_new_access_columns(sqlite_url: str) -> None:
    from alembic import command
    from alembic.config import Config

    from signoff.ledger.engine import MIGRATIONS

    ledger = SqlLedger.from_url(sqlite_url)
    world = make_world(RoomService(ledger))
    world.service.define_role(world.fixer, world.room_id, "scribe", "notes")
    with ledger.engine.connect() as conn:  # back to the schema before rooms_0002
        config = Config()
        config.set_main_option("script_location", str(MIGRATIONS))
        config.attributes["connection"] = conn
        command.downgrade(config, "rooms_0001")
        conn.commit()
    ledger.close()
    upgraded = SqlLedger.from_url(sqlite_url)  # migrates to the newest schema on open
    service = RoomService(upgraded)
    assert service.authenticate(world.alice_token) == world.alice
    assert service.authenticate_registration(world.registration_key).id == world.admin.id
    assert [r["defined_by"] for r in service.roles.roles(world.room_id)] == [world.fixer.sender]
    assert [m.name for m in service.members(world.room_id)] == ["fixer", "reviewer", "alice", "bob"]
    upgraded.close()
