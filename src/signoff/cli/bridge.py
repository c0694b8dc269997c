"""`signoff bridge matrix`: relay a signoff room and a Matrix room both ways, and let people claim
their Matrix accounts (docs/bridges.md)."""

from __future__ import annotations

import asyncio
import importlib.util
import os
import signal
from pathlib import Path
from typing import Annotated
from urllib.parse import urlsplit

import typer

from signoff.cli.context import console, fail, print_json, settings
from signoff.cli.output import add_data_row, data_table
from signoff.ledger import SqlLedger
from signoff.rooms import RoomService
from signoff.rooms.client import HttpUserTransport, InProcessUserTransport, RoomsUserClient

app = typer.Typer(no_args_is_help=True)
matrix_app = typer.Typer(no_args_is_help=True)
app.add_typer(matrix_app, name="matrix", help="Bridge signoff rooms to a Matrix room (plain bot account).")

MATRIX_TOKEN_ENV = "SIGNOFF_MATRIX_TOKEN"  # noqa: S105  (the name of a variable, not a secret)
SIGNOFF_TOKEN_ENV = "SIGNOFF_BRIDGE_TOKEN"  # noqa: S105
USER_TOKEN_ENV = "SIGNOFF_USER_TOKEN"  # noqa: S105  (a person's own token, for their claims)
RoomsUrl = Annotated[str | None, typer.Option(
    help="A `signoff serve` URL; without it, the rooms server in this ledger.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON.")]


def _secret(name: str, what: str) -> str:
    value = os.environ.get(name, "").strip()
    if not value:
        fail(f"{name} is not set", f"export {name}=<{what}> (secrets never go on the command line)")
    return value


@matrix_app.command("run")
def run(
    room: Annotated[str, typer.Option(help="The signoff room id to bridge.")],
    matrix_room: Annotated[str, typer.Option(help="The Matrix room id (it starts with !) to bridge it to.")],
    homeserver: Annotated[str, typer.Option(help="The homeserver's client API URL, e.g. http://127.0.0.1:8008.")],
    matrix_user: Annotated[str, typer.Option(help="The bridge bot's Matrix id, e.g. @signoff:example.org.")],
    rooms_url: Annotated[str | None, typer.Option(
        help="A `signoff serve` URL; without it the bridge uses the rooms server in this ledger.")] = None,
    registration: Annotated[Path | None, typer.Option(
        help="An application-service registration (`signoff bridge matrix registration`): agents speak as "
             "puppets and the bot's token is the registration's. Without it: plain bot mode.")] = None,
) -> None:
    """Relay until interrupted (Ctrl-C or SIGTERM). Tokens come from SIGNOFF_MATRIX_TOKEN (the bot's
    Matrix access token; not needed with --registration) and SIGNOFF_BRIDGE_TOKEN (the signoff
    user the bridge posts as)."""
    _need_mautrix()
    if not matrix_room.startswith("!") or len(matrix_room) < 2:
        fail(f"{matrix_room!r} is not a Matrix room id", "pass the room's id (it starts with !), not an alias")
    if not matrix_user.startswith("@") or ":" not in matrix_user:
        fail(f"{matrix_user!r} is not a Matrix user id", "pass the bot's id, e.g. @signoff:example.org")

    from mautrix.client import ClientAPI
    from mautrix.errors import MatrixRequestError
    from mautrix.types import UserID

    from signoff.bridges.matrix import BridgeStore, MatrixBridge
    from signoff.bridges.matrix.puppets import Puppets
    from signoff.bridges.matrix.pushes import Transactions
    from signoff.bridges.matrix.registration import load

    registered = load(registration) if registration is not None else None
    if registered is not None and registered.bot != matrix_user:
        fail(f"the registration's bot is {registered.bot}, not {matrix_user}", f"pass --matrix-user {registered.bot}")
    matrix_token = _secret(MATRIX_TOKEN_ENV, "access token") if registered is None else registered.as_token
    signoff_token = _secret(SIGNOFF_TOKEN_ENV, "user token")

    ledger = SqlLedger.open(settings())
    transport = (HttpUserTransport(rooms_url, signoff_token) if rooms_url
                 else InProcessUserTransport(RoomService(ledger), signoff_token))

    async def serve() -> None:
        puppets = Puppets(registered, homeserver) if registered is not None else None
        matrix = puppets.bot if puppets is not None else ClientAPI(UserID(matrix_user), base_url=homeserver,
                                                                    token=matrix_token)
        bridge = MatrixBridge(RoomsUserClient(transport), BridgeStore(ledger, room, matrix_room), matrix, room,
                              matrix_room, puppets)
        pushes = None
        if registered is not None:
            pushes = Transactions(registered.hs_token, bridge.receive)
            where = urlsplit(registered.url or "")
            try:
                await pushes.start(where.hostname or "127.0.0.1", where.port or 80)
            except OSError as exc:
                fail(f"cannot listen at {registered.url} for the homeserver: {exc.strerror}",
                     "free the port, or write a registration with another --url (and give it to the homeserver)")
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        console.print(f"bridging room {room} <-> {matrix_room} on {homeserver}")
        try:
            await bridge.run(stop)
        except MatrixRequestError as exc:
            fail(f"the homeserver refused the bridge: {exc}",
                 "check SIGNOFF_MATRIX_TOKEN and that the bot is invited to the Matrix room")
        finally:
            if pushes is not None:
                await pushes.stop()
            await bridge.close()
        console.print(f"stopped; skipped Matrix events: {dict(bridge.skipped) or 'none'}")

    try:
        asyncio.run(serve())
    finally:
        transport.close()
        ledger.close()


def _need_mautrix() -> None:
    if importlib.util.find_spec("mautrix") is None:
        fail("the Matrix bridge needs the mautrix library", "pip install 'signoff[matrix]'")


@matrix_app.command("registration")
def registration_file(
    out: Annotated[Path, typer.Argument(help="Where to write the registration (JSON, which Synapse reads as YAML).")],
    domain: Annotated[str, typer.Option(help="The homeserver's server_name, e.g. example.org.")],
    url: Annotated[str, typer.Option(help="Where the bridge listens for the homeserver's pushes.")]
    = "http://127.0.0.1:29330",
    bot: Annotated[str, typer.Option(help="The bot's localpart (sender_localpart).")] = "signoff",
    puppet_prefix: Annotated[str, typer.Option(help="Localpart prefix of the agents' puppets.")] = "signoff_",
    force: Annotated[bool, typer.Option(help="Replace an existing file (new tokens).")] = False,
) -> None:
    """Write an application-service registration with fresh tokens (readable by its owner only)."""
    _need_mautrix()
    from signoff.bridges.matrix.registration import generate

    if out.exists() and not force:
        fail(f"{out} exists", "pass --force to replace it (then give the homeserver the new file)")
    made = generate(domain, url, bot, puppet_prefix)
    made.write(out)
    console.print(f"wrote {out}; list it in the homeserver's app_service_config_files and restart it, then run "
                  f"the bridge with --registration {out} --matrix-user {made.bot}", markup=False)


# -- identity claims ---------------------------------------------------------------------------


def _person(rooms_url: str | None) -> RoomsUserClient:
    """The caller, by their own token (SIGNOFF_USER_TOKEN): a claim is theirs to make or end."""
    token = _secret(USER_TOKEN_ENV, "your signoff user token")
    if rooms_url:
        return RoomsUserClient(HttpUserTransport(rooms_url, token))
    return RoomsUserClient(InProcessUserTransport(RoomService(SqlLedger.open(settings())), token))


@matrix_app.command("claim-code")
def claim_code(
    matrix_user: Annotated[str, typer.Option(help="Your Matrix id, e.g. @alice:example.org.")],
    bridge: Annotated[str, typer.Option(help="The bridge's signoff user name.")] = "matrix-bridge",
    rooms_url: RoomsUrl = None, as_json: JsonOpt = False,
) -> None:
    """A one-time code (valid ten minutes) that claims your Matrix account as your signoff user:
    send `claim <code>` to the bridge's bot in a direct message, from that account."""
    made = _person(rooms_url).claim_code(bridge, matrix_user)
    if as_json:
        print_json(made)
        return
    console.print(f"send this to the bridge bot in a direct message from {made['external_id']}, "
                  f"before {made['expires_at']}:\nclaim {made['code']}", markup=False)


@matrix_app.command("claims")
def claims(rooms_url: RoomsUrl = None, as_json: JsonOpt = False) -> None:
    """Your claims (a bridge's user sees those made through it; an admin sees all)."""
    found = _person(rooms_url).claims()
    if as_json:
        print_json(found)
        return
    table = data_table("claim", "matrix account", "signoff user", "bridge", "state", "since")
    for c in found:
        add_data_row(table, c["claim_id"], c["external_id"], c["user_name"], c["bridge"],
                     c["state"] if c["state"] == "active" else f"{c['state']} ({c['reason']})", c["made_at"])
    console.print(table)


@matrix_app.command("revoke")
def revoke(claim_id: str, rooms_url: RoomsUrl = None) -> None:
    """End a claim now: the Matrix account is an outsider again (its person, the bridge or an admin)."""
    ended = _person(rooms_url).revoke_claim(claim_id)
    console.print(f"claim {ended['claim_id']} of {ended['external_id']} is {ended['state']}", markup=False)
