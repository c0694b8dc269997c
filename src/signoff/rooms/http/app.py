"""The rooms HTTP server: Switch agent protocol (revision 1) under /agents, user endpoints under
/users/me, owner/admin endpoints under /admin. Other packages add their own routers:

    app = create_app(ledger, settings, routers=[my_router])

and reach the service from a request with `Depends(get_service)` (or `request.app.state.rooms`),
the caller with `Depends(current_principal)` / `Depends(current_user)`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Iterable
from typing import Annotated, Any

import anyio.to_thread
from fastapi import APIRouter, Depends, FastAPI, Header, Query, Request, Response
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse, StreamingResponse

from signoff.kernel import metrics
from signoff.kernel.clock import Clock
from signoff.kernel.errors import (
    ConflictError,
    InvalidRequest,
    NotFoundError,
    RefusedError,
    SignoffError,
    Unauthenticated,
    UsageError,
)
from signoff.kernel.settings import Settings
from signoff.kernel.wire import bearer_token
from signoff.ledger import SqlLedger
from signoff.rooms.domain.model import Principal
from signoff.rooms.domain.service import RoomService
from signoff.rooms.domain.tokens import Lifetimes
from signoff.rooms.http import ops
from signoff.rooms.http.bodies import (
    AllowBody,
    AnswerBody,
    BeatBody,
    ClaimCodeBody,
    GroupBody,
    InvitationAnswer,
    LegacyMessageBody,
    MemberBody,
    PolicyBody,
    RedeemBody,
    RegisterBody,
    RegistrationKeyBody,
    RelayedAnswerBody,
    RelayedMessageBody,
    RoomBody,
    SlotBody,
    UserBody,
    UserMessageBody,
)
from signoff.rooms.http.errors import install_error_handlers
from signoff.rooms.http.guard import BodyGuard
from signoff.rooms.protocol import wire as protocol
from signoff.rooms.protocol.operations import call_operation, catalogue, find_operation
from signoff.rooms.protocol.streams import StreamParams, frames, open_stream, visible
from signoff.rooms.storage.connections import HEARTBEAT_INTERVAL

# -- dependencies usable by other packages' routers --------------------------------------------

def get_service(request: Request) -> RoomService:
    service: RoomService = request.app.state.rooms
    return service


def current_principal(
    service: Annotated[RoomService, Depends(get_service)],
    authorization: Annotated[str | None, Header()] = None,
) -> Principal:
    token = bearer_token(authorization)
    try:
        return service.authenticate(token)
    except RefusedError as exc:
        raise Unauthenticated(exc.message, exc.fix) from exc


def current_user(principal: Annotated[Principal, Depends(current_principal)]) -> Principal:
    if principal.kind != "user":
        raise RefusedError("this endpoint is for people (user tokens), not agent keys", "use a user token")
    return principal


def _agent_for_path(principal: Principal, agent_id: str) -> Principal:
    if principal.kind != "agent":
        raise RefusedError("agent endpoints need an agent api key", "use the api_key returned by POST /agents")
    if principal.id != agent_id:
        raise RefusedError(f"this key belongs to agent {principal.id}, not {agent_id}",
                           "use your own agent id in the path")
    return principal


Svc = Annotated[RoomService, Depends(get_service)]
Caller = Annotated[Principal, Depends(current_principal)]
User = Annotated[Principal, Depends(current_user)]


# -- agent protocol ----------------------------------------------------------------------------

agents = APIRouter()


@agents.post("/agents")
def register_agent(body: RegisterBody, service: Svc, authorization: Annotated[str | None, Header()] = None
                   ) -> dict[str, Any]:
    try:
        owner = service.authenticate_registration(bearer_token(authorization))
    except RefusedError as exc:
        raise Unauthenticated(exc.message, exc.fix) from exc
    agent, key = service.create_agent(owner, body.name, body.description, profile=body.integration_profile,
                                      overwrite=body.overwrite)
    return {"id": agent.id, "api_key": key}


@agents.get("/agents/{agent_id}/events", response_model=None)
async def agent_events(
    request: Request, agent_id: str, service: Svc, caller: Caller,
    connection_id: str | None = None, scope: str = "single", filter: str = "all",
    start_from: str = "head", spawn_capable: bool = False, protocol_: Annotated[str | None, Query(
        alias="protocol")] = None, protocol_accepts: str | None = None, client: str | None = None,
    client_version: str | None = None, rooms: str | None = None,
    wait: Annotated[float | None, Query(ge=0, le=60)] = None,
    last_event_id: Annotated[str | None, Header()] = None, accept: Annotated[str | None, Header()] = None,
) -> Response:
    agent = _agent_for_path(caller, agent_id)
    params = StreamParams(connection_id, scope, filter, start_from, last_event_id, spawn_capable, protocol_,
                          protocol_accepts, client, client_version, [r for r in (rooms or "").split(",") if r])
    try:
        opened = await open_stream(service, agent, params)
    except protocol.ProtocolMismatch as exc:
        return JSONResponse({"detail": exc.body}, status_code=409)
    keepalive: float = request.app.state.keepalive_seconds
    conn = opened.connection

    if "text/event-stream" not in (accept or ""):
        # Legacy long poll: one batch of events, or 204 after the wait (the server's keepalive, or
        # less when the caller asks: a client polling many rooms in turn cannot wait on each).
        key = f"agent:{agent.id}"
        cursor = opened.cursor
        try:
            deadline = asyncio.get_running_loop().time() + (keepalive if wait is None else min(wait, keepalive))
            while True:
                seen = service.notifier.version(key)
                batch = await run_in_threadpool(service.agent_events, agent.id, cursor)
                shown = [e for e in batch if visible(service, conn, e)]
                if batch:
                    cursor = conn.cursor = batch[-1]["sequence"]
                if shown:
                    metrics.count("signoff_rooms_deliveries_total", len(shown), transport="poll")
                    return JSONResponse({"events": shown})
                left = deadline - asyncio.get_running_loop().time()
                if left <= 0:
                    return Response(status_code=204)
                # A client waiting in a long poll is alive: without this, a wait longer than the
                # heartbeat TTL lets the sweep kill the connection the poll was meant to keep.
                try:
                    service.connections.beat(agent.id, conn.id, cursor)
                except (NotFoundError, ConflictError):
                    return Response(status_code=204)
                await service.notifier.wait(key, seen, min(left, HEARTBEAT_INTERVAL))
        finally:
            await run_in_threadpool(service.connections.detach, conn, opened.token)

    async def sse() -> AsyncIterator[bytes]:
        async for item in frames(service, opened, keepalive):
            if item.event is None:
                yield protocol.KEEPALIVE
                continue
            metrics.count("signoff_rooms_deliveries_total", transport="sse")
            yield protocol.frame(item.event, item.data, item.id)

    return StreamingResponse(sse(), media_type="text/event-stream",
                             headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})


@agents.post("/agents/{agent_id}/connection/beat")
def beat(agent_id: str, body: BeatBody, service: Svc, caller: Caller) -> dict[str, Any]:
    agent = _agent_for_path(caller, agent_id)
    conn = service.connections.beat(agent.id, body.connection_id, body.cursor)
    return {"ok": True, "rooms": list(conn.rooms), "cursor": conn.cursor}


@agents.post("/agents/{agent_id}/connection/subscribe")
def subscribe(agent_id: str, body: SlotBody, service: Svc, caller: Caller) -> dict[str, Any]:
    agent = _agent_for_path(caller, agent_id)
    conn = service.connections.get(agent.id, body.connection_id)
    service.require_read(agent, body.room_id)
    warning = service.connections.claim(conn, body.room_id, body.takeover)  # claim wakes the streams
    return {"ok": True, "rooms": list(conn.rooms), "warning": warning}


@agents.post("/agents/{agent_id}/connection/unsubscribe")
def unsubscribe(agent_id: str, body: SlotBody, service: Svc, caller: Caller) -> dict[str, Any]:
    agent = _agent_for_path(caller, agent_id)
    conn = service.connections.get(agent.id, body.connection_id)
    service.connections.unclaim(conn, body.room_id)
    return {"ok": True, "rooms": list(conn.rooms)}


@agents.get("/agents/{agent_id}/ops")
def list_ops(agent_id: str, caller: Caller) -> dict[str, Any]:
    _agent_for_path(caller, agent_id)
    return catalogue()


@agents.post("/agents/{agent_id}/ops/{name}")
async def call_op(request: Request, agent_id: str, name: str, service: Svc,
                  authorization: Annotated[str | None, Header()] = None,
                  x_switch_connection_id: Annotated[str | None, Header()] = None) -> Any:
    raw = await request.body()
    return await run_in_threadpool(_operation_call, service, authorization, agent_id, name, raw,
                                   x_switch_connection_id)


def _operation_call(service: RoomService, authorization: str | None, agent_id: str, name: str, raw: bytes,
                    connection_id: str | None) -> dict[str, Any]:
    """Authentication and the operation in one worker thread (a sync dependency would take a hop of
    its own), with one freshness check for both: they are the hot path of every post."""
    with service.store.one_freshness_check():
        agent = _agent_for_path(current_principal(service, authorization), agent_id)
        find_operation(name)
        try:
            args = json.loads(raw) if raw.strip() else {}
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise InvalidRequest(f"malformed JSON body: {exc}", "send a JSON object of arguments") from exc
        return {"result": call_operation(service, agent, name, args, connection_id)}


@agents.post("/agents/{agent_id}/message")
def legacy_message(agent_id: str, body: LegacyMessageBody, service: Svc, caller: Caller) -> dict[str, Any]:
    agent = _agent_for_path(caller, agent_id)
    receipt = service.post_message(agent, body.room_id, body.content)
    return {"ok": True, "event_id": receipt.message_id}


@agents.get("/agents/{agent_id}/rooms/{room_id}/history")
def agent_history(agent_id: str, room_id: str, service: Svc, caller: Caller, after: int = 0,
                  limit: int = 100) -> dict[str, Any]:
    agent = _agent_for_path(caller, agent_id)
    return {"messages": service.read_messages(agent, room_id, after, limit)}


# -- people --------------------------------------------------------------------------------------

users = APIRouter()


@users.get("/users/me")
def me(user: User) -> dict[str, Any]:
    return {"id": user.id, "name": user.name, "display_name": user.display_name, "is_admin": user.is_admin}


@users.get("/users/me/rooms")
def my_rooms(user: User, service: Svc) -> dict[str, Any]:
    return {"rooms": service.list_rooms(user)}


@users.post("/users/me/rooms")
def create_room(body: RoomBody, user: User, service: Svc) -> dict[str, Any]:
    room = service.create_room(user, body.name, body.description, body.agent_names, body.user_names,
                               body.channel_type, body.internal_only, body.instructions, body.group_name)
    return {"id": room.id, "name": room.name, "invitations": service.room_invitations(room.id)}


@users.post("/users/me/rooms/{room_id}/members")
def add_member(room_id: str, body: MemberBody, user: User, service: Svc) -> dict[str, Any]:
    if body.agent_name is not None and body.user_name is None:
        invited = service.invite_agent(user, room_id, body.agent_name)
        return {"room_id": room_id, "member_id": invited["agent_id"], "kind": "agent",
                "status": invited["status"], "invitation_id": invited["invitation_id"]}
    member = service.add_member(user, room_id, body.agent_name, body.user_name)
    return {"room_id": room_id, "member_id": member.id, "kind": member.kind, "status": "joined"}


@users.get("/users/me/invitations")
def my_invitations(user: User, service: Svc) -> dict[str, Any]:
    return {"invitations": service.invitations(user)}


@users.post("/users/me/invitations/{invitation_id}")
def answer_invitation(invitation_id: str, body: InvitationAnswer, user: User, service: Svc) -> dict[str, Any]:
    return service.answer_invitation(user, invitation_id, body.accept)


@users.get("/users/me/room-groups")
def my_groups(user: User, service: Svc) -> dict[str, Any]:
    return {"room_groups": service.list_groups(user)}


@users.post("/users/me/room-groups")
def create_group(body: GroupBody, user: User, service: Svc) -> dict[str, Any]:
    return service.create_group(user, body.name, body.description)


@users.post("/users/me/room-groups/{group_id}/allowed-owners")
def allow_group_owner(group_id: str, body: AllowBody, user: User, service: Svc) -> dict[str, Any]:
    return service.allow_group_owner(user, group_id, body.user_name)


@users.post("/users/me/token")
def rotate_my_token(user: User, service: Svc) -> dict[str, Any]:
    """A new token for the caller; the one it used stops working."""
    return {"token": service.rotate_token("user", user.name)}


@users.post("/users/me/rooms/{room_id}/messages")
def user_post(room_id: str, body: UserMessageBody, user: User, service: Svc) -> dict[str, Any]:
    receipt = service.post_message(user, room_id, body.body, body.thread_id, body.target_names)
    return {"event_id": receipt.message_id, "sequence": receipt.sequence,
            "target_statuses": dict(receipt.target_statuses)}


@users.get("/users/me/rooms/{room_id}/messages")
def user_read(room_id: str, user: User, service: Svc, after: int = 0, limit: int = 100) -> dict[str, Any]:
    return {"messages": service.read_messages(user, room_id, after, limit)}


@users.get("/users/me/rooms/{room_id}")
def user_room(room_id: str, user: User, service: Svc) -> dict[str, Any]:
    return service.room_detail(user, room_id)


@users.get("/users/me/rooms/{room_id}/approvals")
def room_approvals(room_id: str, user: User, service: Svc, after: int = 0, limit: int = 100) -> dict[str, Any]:
    return {"approvals": service.room_approvals(user, room_id, after, limit)}


@users.get("/users/me/approvals")
def my_approvals(user: User, service: Svc) -> dict[str, Any]:
    return {"approvals": [c.to_dict() for c in service.pending_approvals(user)]}


@users.get("/users/me/approvals/{request_id:path}")
def approval(request_id: str, user: User, service: Svc) -> dict[str, Any]:
    return service.approval(user, request_id).to_dict()


@users.post("/users/me/approvals/{request_id:path}")
def answer(request_id: str, body: AnswerBody, user: User, service: Svc) -> dict[str, Any]:
    return service.answer_approval(user, request_id, body.option_id, body.digest)


# -- identity claims and what a bridge relays under them (see claims) ------------------------

@users.post("/users/me/claims/codes")
def claim_code(body: ClaimCodeBody, user: User, service: Svc) -> dict[str, Any]:
    return service.claims.issue_code(user, body.bridge, body.external_id)


@users.post("/users/me/claims/redeem")
def redeem_claim(body: RedeemBody, user: User, service: Svc) -> dict[str, Any]:
    return service.claims.redeem(user, body.code, body.external_id)


@users.get("/users/me/claims")
def my_claims(user: User, service: Svc) -> dict[str, Any]:
    return {"claims": service.claims.claims(user)}


@users.post("/users/me/claims/{claim_id}/revoke")
def revoke_claim(claim_id: str, user: User, service: Svc) -> dict[str, Any]:
    return service.claims.revoke(user, claim_id)


@users.post("/users/me/relayed/rooms/{room_id}/messages")
def relayed_post(room_id: str, body: RelayedMessageBody, user: User, service: Svc) -> dict[str, Any]:
    receipt, claim = service.claims.relay_message(user, room_id, body.external_id, body.body, body.thread_id)
    return {"event_id": receipt.message_id, "sequence": receipt.sequence, "sender": receipt.sender,
            "claim": claim}


@users.post("/users/me/relayed/approvals/{request_id:path}")
def relayed_answer(request_id: str, body: RelayedAnswerBody, user: User, service: Svc) -> dict[str, Any]:
    return service.claims.relay_answer(user, request_id, body.external_id, body.option_id, body.digest,
                                       body.evidence)


# -- owners and admins -------------------------------------------------------------------------

admin = APIRouter()


@admin.put("/admin/agents/{agent_id}/addressing-policy")
def put_policy(agent_id: str, body: PolicyBody, caller: Caller, service: Svc) -> dict[str, Any]:
    return {"agent_id": agent_id, "policy": service.set_policy(caller, agent_id, body.policy)}


@admin.get("/admin/agents/{agent_id}/addressing-policy")
def get_policy(agent_id: str, user: User, service: Svc) -> dict[str, Any]:
    record = service.agent_record(agent_id)
    if not (user.is_admin or user.id == record["owner_user_id"]):
        raise RefusedError("only the agent's owner or an admin may read its policy", "use the owner's token")
    return {"agent_id": agent_id, "policy": record["addressing_policy"]}


@admin.post("/admin/users")
def add_user(body: UserBody, user: User, service: Svc) -> dict[str, Any]:
    if not user.is_admin:
        raise RefusedError("only admins create users", "ask an admin")
    created, token = service.create_user(body.name, body.display_name, body.admin, body.external)
    return {"id": created.id, "name": created.name, "token": token}


@admin.post("/admin/registration-keys")
def add_registration_key(user: User, service: Svc, body: RegistrationKeyBody | None = None) -> dict[str, Any]:
    owner = service.user_by_name(body.owner_name) if body is not None and body.owner_name else None
    return {"registration_key": service.create_registration_key(user, owner)}


# -- the app -------------------------------------------------------------------------------------

async def housekeeping(service: RoomService, interval: float) -> None:
    """Evict lapsed connections, expire approval cards, pick up other processes' events (the
    server runs it; so does any other process that streams from the embedded server)."""
    while True:
        await asyncio.sleep(interval)
        try:
            await run_in_threadpool(service.connections.sweep)
            await run_in_threadpool(service.expire_approvals)
            await run_in_threadpool(service.refresh)
        except SignoffError:
            continue


def _housekeeping_seconds(settings: Settings | None, default: float) -> float:
    value = (settings.section("rooms") if settings is not None else {}).get("housekeeping_seconds", default)
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 3600:
        raise UsageError(f"[rooms] housekeeping_seconds must be a number of seconds from 0 to 3600, not {value!r}",
                         f"set housekeeping_seconds = {HEARTBEAT_INTERVAL} in signoff.toml")
    return float(value)


# Requests run their database work in worker threads (anyio's default limit is 40). Posts that
# arrive together commit together (`RoomStore.group_append`), and each worker holds one post, so
# the limit caps a group: measured on 2 cores with PostgreSQL, 40 threads gave groups of about 19
# and 255 posts/s accepted at 400/s offered, 100 gave groups of about 30 and 296/s. Waiting threads
# hold no database connection (the group's leader does the work).
WORKER_THREADS = 100


def create_app(ledger: SqlLedger | None = None, settings: Settings | None = None,
               routers: Iterable[APIRouter] = (), service: RoomService | None = None,
               clock: Clock | None = None, keepalive_seconds: float = 15.0,
               housekeeping_seconds: float = HEARTBEAT_INTERVAL) -> FastAPI:
    """The rooms server. Pass a ledger (or settings to open one) or a ready service; `routers`
    are included after the rooms routes and share its service and auth dependencies. Settings'
    `[rooms] housekeeping_seconds` overrides `housekeeping_seconds`."""
    housekeeping_seconds = _housekeeping_seconds(settings, housekeeping_seconds)
    if service is None:
        if ledger is None:
            ledger = SqlLedger.open(settings or Settings.load())
        service = RoomService(ledger, clock, Lifetimes.from_settings(settings))

    @contextlib.asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        anyio.to_thread.current_default_thread_limiter().total_tokens = WORKER_THREADS
        task = asyncio.create_task(housekeeping(service, housekeeping_seconds))
        try:
            with service.store.fanout():  # on PostgreSQL: other replicas' events, as they commit
                yield
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    app = FastAPI(title="signoff rooms", version=protocol.SERVER_VERSION, lifespan=lifespan)
    app.add_middleware(BodyGuard)
    app.state.rooms = service
    app.state.settings = settings
    app.state.keepalive_seconds = keepalive_seconds

    install_error_handlers(app)

    ops.install(app, service.ledger, settings, service.head)

    app.include_router(agents)
    app.include_router(users)
    app.include_router(admin)
    for router in routers:
        app.include_router(router)
    return app


def app_from_env() -> FastAPI:
    """Factory for `uvicorn --factory signoff.rooms.http.app:app_from_env` (settings from the environment)."""
    return create_app(settings=Settings.load())
