"""An organisation's person approves a disclosure from Matrix: a live incident (the blind fixture,
tests/data/incident/kestrel-mosaik) on the run's own room server (a process of its own), Kestrel's
private room bridged over HTTP to a Matrix room on a real Synapse. Ines (Kestrel's approver) claimed
her Matrix account; she reads the draft's review and its exact command in Matrix and types it there.
From the attacker's side: her colleague Tomasz (his Matrix account claimed too, but he is not the
approver) and an unclaimed Matrix account type the very same command, and Ines first sends one
naming another digest; none of them signs anything and nothing crosses. Only her command naming the
digest shown signs, and the disclosure crosses as it was shown."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from pathlib import Path

from signoff.incident import service
from signoff.incident.workflow import Incident, new_live_run
from signoff.kernel.settings import Settings
from signoff.trust import KeyStore
from tests.support.matrix_people import Event, MatrixPerson, body_of
from tests.support.synapse import Synapse
from tests.system.bridges.matrix_world import (
    World,
    another_person,
    claim,
    open_matrix_room,
    run_until,
    until_seen,
    world_on,
)
from tests.system.incident.test_people_draft import FIXTURE

COMMAND = re.compile(r"To approve exactly this, send: (@approver approve (D-KEST-[0-9]+) #[0-9a-f]{12,})")


def _in_matrix(world: World, text: str) -> Callable[[Event], bool]:
    def match(event: Event) -> bool:
        return event["room_id"] == world.matrix_room and event.get("sender") == world.bot.user_id \
            and text in body_of(event)
    return match


def test_the_approver_approves_from_matrix_and_no_one_else_and_no_other_digest_does(
        synapse: Synapse, tmp_path: Path) -> None:
    home = tmp_path / "home"
    settings = Settings.load(home=home, env={}, cwd=tmp_path)
    keys = KeyStore(settings.keys_dir)
    with service.workspace(home / "incident", keys) as ws:
        service.setup(ws, settings, service.load_parties(FIXTURE / "incident.toml"))
    run_dir = new_live_run(home / "incident-runs", keys, home)

    with Incident(run_dir, keys, settings) as inc:  # the run's room server, a process of its own
        world = world_on(synapse, inc.run_ledger, inc.service, inc.info.rooms["kestrel"],
                         inc.secrets["user:ines.alves"], "ines")

        def crossed() -> list[str]:
            return [m["body"] for m in inc.messages("yuki", "shared") if m["body"].startswith("[disclosure D-KEST-")]

        def signed() -> list[str]:
            return [r["body"]["d_id"] for r in inc.ws.approvals("kestrel").records()]

        def relayed(name: str, text: str) -> Callable[[], bool]:
            """`text` is in the signoff room, posted as the user `name` (the server's word for who spoke)."""
            sender = inc.service.user_by_name(name).sender
            return lambda: any(m["sender"] == sender and m["body"].endswith(text) for m in world.messages())

        async def run() -> None:
            async with MatrixPerson(synapse, world.alice) as ines:
                await open_matrix_room(world, ines)
                assert inc.rooms_server is not None
                bridge = world.bridge(inc.rooms_server.url)  # as `signoff bridge matrix run --rooms-url`
                await bridge.start()
                try:
                    await claim(world, bridge, ines, world.alice_token)
                    tomasz_account = await another_person(world, ines, "tomasz")
                    mallory_account = await another_person(world, ines, "mallory")
                    async with MatrixPerson(synapse, tomasz_account) as tomasz, \
                            MatrixPerson(synapse, mallory_account) as mallory:
                        await claim(world, bridge, tomasz, inc.secrets["user:tomasz"])
                        for actor in inc.actors.values():
                            actor.beat()  # the services are live (a role mention reaches live holders only)
                        # The page's write, off the loop (it reads the rooms with a loop of its own).
                        await asyncio.to_thread(service.write, run_dir, keys, service.Write(
                            "mosaik", "yuki", "report", "Some Kestrel webhooks fail our signature check with 401."))
                        inc.pump()
                        review = await until_seen(bridge, ines, _in_matrix(world, "To approve exactly this, send: "))
                        found = COMMAND.search(body_of(review))
                        assert found is not None, body_of(review)
                        command, d_id = found.group(1), found.group(2)

                        # The same command from Tomasz (claimed: he speaks as himself) and from an
                        # unclaimed account: the approver's policy admits neither; nothing is signed.
                        for person, speaks_as in ((tomasz, "tomasz"), (mallory, "matrix-bridge")):
                            await person.say(world.matrix_room, command)
                            await run_until(bridge, relayed(speaks_as, command))
                        inc.pump()
                        await until_seen(bridge, ines, _in_matrix(world, "@tomasz You're not permitted"))
                        await until_seen(bridge, ines, _in_matrix(world, "@matrix-bridge You're not permitted"))
                        assert signed() == [] and crossed() == []

                        stale = command[:-12] + ("0" * 12 if not command.endswith("0" * 12) else "1" * 12)
                        await ines.say(world.matrix_room, stale)
                        await run_until(bridge, relayed("ines.alves", stale))
                        inc.pump()
                        refusal = await until_seen(bridge, ines, _in_matrix(world, "not signed: "))
                        assert "changed since it was shown" in body_of(refusal), body_of(refusal)
                        assert signed() == [] and crossed() == []

                        await ines.say(world.matrix_room, command)
                        await run_until(bridge, relayed("ines.alves", command))
                        inc.pump()
                        await until_seen(bridge, ines, _in_matrix(world, f"{d_id} approved by ines.alves"))
                        inc.pump()
                        [record] = inc.ws.approvals("kestrel").records()
                        assert (record["body"]["d_id"], record["body"]["approver"]) == (d_id, "ines.alves")
                        # What crossed is the draft Ines read in Matrix, as she approved it.
                        shows_draft = _in_matrix(world, f"Approve with: approve {d_id}")
                        draft = next(body_of(e) for e in ines.seen if shows_draft(e))
                        [published] = crossed()
                        text = draft.removeprefix("kestrel-agent: ").split(f"\n\nApprove with: approve {d_id}")[0]
                        assert published.startswith(
                            f"[disclosure {d_id} · kestrel · INC-0001 · approved by ines.alves]\n{text}\n\nevidence ")
                finally:
                    await bridge.close()

        asyncio.run(run())
