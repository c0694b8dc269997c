"""Agent operations (`POST /agents/{id}/ops/{name}`), each with a JSON-schema of its arguments.

Room-implicit operations act on the room the caller's connection has claimed (`connect_to_room`).
Handlers only translate arguments and call the service; every rule lives in the service.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from signoff.kernel.errors import NotFoundError, UsageError
from signoff.rooms.domain.model import Principal
from signoff.rooms.domain.references import REFERENCE_TYPES
from signoff.rooms.domain.service import RoomService
from signoff.rooms.protocol.wire import NotConnected
from signoff.rooms.storage.connections import Connection

if TYPE_CHECKING:
    from jsonschema.protocols import Validator


@dataclass
class OpContext:
    service: RoomService
    agent: Principal
    connection: Connection | None

    def room_id(self) -> str:
        conn = self.connection
        if conn is not None and not conn.rooms:
            # Its room may have been claimed through another replica a moment ago, after this one
            # cached the connection: read it again before answering that it holds none.
            self.service.connections.reload([conn.agent_id])
            conn = self.connection = self.service.connections.get(conn.agent_id, conn.id)
        if conn is None or not conn.rooms:
            raise NotConnected("call connect_to_room(room_id) with the X-Switch-Connection-Id header")
        if len(conn.rooms) > 1:
            raise UsageError("this connection covers several rooms; room-implicit operations need one",
                             "unsubscribe from the others or use a single-scope connection per room")
        return conn.rooms[0]


Handler = Callable[[OpContext, dict[str, Any]], Any]


@dataclass(frozen=True)
class Operation:
    name: str
    description: str
    schema: dict[str, Any]
    handler: Handler
    needs_connection: bool

    @functools.cached_property
    def validator(self) -> Validator:
        # Built on first use, with jsonschema imported then: a `signoff` command that never serves
        # an operation saved a quarter of a second of CPU.
        import jsonschema

        return jsonschema.Draft202012Validator(self.schema)


OPERATIONS: dict[str, Operation] = {}

S = {"type": "string"}
SN = {"type": ["string", "null"]}
B = {"type": "boolean"}
I = {"type": "integer", "minimum": 1}  # noqa: E741  (larger than a page reads one page)
LS = {"type": "array", "items": {"type": "string"}}


def op(name: str, description: str, properties: dict[str, Any] | None = None,
       required: tuple[str, ...] = (), needs_connection: bool = False) -> Callable[[Handler], Handler]:
    schema = {"type": "object", "properties": properties or {}, "required": list(required),
              "additionalProperties": False}

    def register(fn: Handler) -> Handler:
        OPERATIONS[name] = Operation(name, description, schema, fn, needs_connection)
        return fn

    return register


def validate_args(operation: Operation, args: Any) -> dict[str, Any]:
    if not isinstance(args, dict):
        raise UsageError(f"{operation.name}: the body must be a JSON object of arguments", "send {...}")
    errors = sorted(operation.validator.iter_errors(args), key=str)
    if errors:
        first = errors[0]
        where = "/".join(str(p) for p in first.absolute_path) or "arguments"
        raise UsageError(f"{operation.name}: {where}: {first.message}",
                         f"GET /agents/{{id}}/ops lists the input schema of {operation.name}")
    return args


def catalogue() -> dict[str, Any]:
    return {"operations": {o.name: {"description": o.description, "input_schema": o.schema}
                           for o in OPERATIONS.values()}}


# -- rooms -------------------------------------------------------------------------------------

@op("list_rooms", "Rooms this agent is a member of.", {"include_archived": B})
def _list_rooms(ctx: OpContext, a: dict[str, Any]) -> Any:
    return ctx.service.list_rooms(ctx.agent)


@op("connect_to_room", "Claim this connection's slot in a room (with takeover) and describe the room.",
    {"room_id": S, "include_general_instructions": B}, ("room_id",), needs_connection=True)
def _connect(ctx: OpContext, a: dict[str, Any]) -> Any:
    assert ctx.connection is not None
    detail = ctx.service.room_detail(ctx.agent, a["room_id"])
    warning = ctx.service.connections.claim(ctx.connection, a["room_id"], takeover=True)
    return {"agent_id": ctx.agent.id, "room_id": detail["id"], "name": detail["name"],
            "description": detail["description"], "participants": detail["participants"],
            "instructions": detail["instructions"], "reference_types": detail["reference_types"],
            "references": detail["references"], "documents": detail["documents"], "packages": [],
            "linked_rooms": detail["linked_rooms"], "roles": detail["roles"], "warning": warning}


@op("read_context", "Recent messages of the connected room, grouped into threads.",
    {"limit": I, "since": S, "before": S}, needs_connection=True)
def _read_context(ctx: OpContext, a: dict[str, Any]) -> Any:
    return ctx.service.read_context(ctx.agent, ctx.room_id(), a.get("limit", 50), a.get("since"), a.get("before"))


@op("list_participants", "Members of the connected room with their status.", needs_connection=True)
def _participants(ctx: OpContext, a: dict[str, Any]) -> Any:
    return ctx.service.participants(ctx.agent, ctx.room_id())


@op("get_room_detail", "Describe a room this agent is a member of.", {"room_id": S}, ("room_id",))
def _room_detail(ctx: OpContext, a: dict[str, Any]) -> Any:
    return ctx.service.room_detail(ctx.agent, a["room_id"])


@op("create_room", "Create a room owned by this agent's owner (the caller is not added unless named).",
    {"name": S, "description": S, "agent_names": LS, "user_names": LS,
     "channel_type": {"enum": ["channel_public", "channel_private", "direct"]}, "internal_only": B,
     "admin_mode": B, "instructions": SN, "group_name": SN, "bridge_id": SN, "read_visibility": S,
     "write_visibility": S, "roles": {"type": "array", "items": {"type": "object"}}},
    ("name", "description", "agent_names"))
def _create_room(ctx: OpContext, a: dict[str, Any]) -> Any:
    room = ctx.service.create_room(
        ctx.agent, a["name"], a.get("description", ""), a.get("agent_names", []), a.get("user_names", []),
        a.get("channel_type", "channel_private"), a.get("internal_only", False), a.get("instructions") or "",
        a.get("group_name"), a.get("roles", []))
    return {"id": room.id, "name": room.name, "matrix_room_id": None, "failed_attachments": [],
            "invitations": ctx.service.room_invitations(room.id)}


@op("invite_agent_to_room", "Add an agent to a room; without its owner's consent it is invited instead.",
    {"room_id": S, "agent_name": S, "include_subagents": B}, ("room_id", "agent_name"))
def _invite(ctx: OpContext, a: dict[str, Any]) -> Any:
    return ctx.service.invite_agent(ctx.agent, a["room_id"], a["agent_name"])


@op("list_invitations", "Rooms this agent is invited to (it joins once it or its owner accepts).")
def _invitations(ctx: OpContext, a: dict[str, Any]) -> Any:
    return ctx.service.invitations(ctx.agent)


@op("accept_invitation", "Join the room of an invitation.", {"invitation_id": S}, ("invitation_id",))
def _accept(ctx: OpContext, a: dict[str, Any]) -> Any:
    return ctx.service.answer_invitation(ctx.agent, a["invitation_id"], True)


@op("decline_invitation", "Decline an invitation.", {"invitation_id": S}, ("invitation_id",))
def _decline(ctx: OpContext, a: dict[str, Any]) -> Any:
    return ctx.service.answer_invitation(ctx.agent, a["invitation_id"], False)


@op("list_room_groups", "Room groups this agent's rooms may join (its owner's and those that allow it).")
def _groups(ctx: OpContext, a: dict[str, Any]) -> Any:
    return ctx.service.list_groups(ctx.agent)


@op("create_room_group", "Create a room group owned by this agent's owner; policies name it by its id.",
    {"name": S, "description": S, "color": SN, "parent_group_name": SN}, ("name",))
def _create_group(ctx: OpContext, a: dict[str, Any]) -> Any:
    return ctx.service.create_group(ctx.agent, a["name"], a.get("description", ""))


@op("add_users_to_room", "Add users to a room.", {"room_id": S, "user_names": LS}, ("room_id", "user_names"))
def _add_users(ctx: OpContext, a: dict[str, Any]) -> Any:
    added = [ctx.service.add_member(ctx.agent, a["room_id"], user_name=n).name for n in a["user_names"]]
    return {"room_id": a["room_id"], "added": added}


# -- messaging ---------------------------------------------------------------------------------

@op("post_message", "Post to the connected room; returns the server-assigned event id (the receipt).",
    {"body": S, "thread_id": SN}, ("body",), needs_connection=True)
def _post(ctx: OpContext, a: dict[str, Any]) -> Any:
    receipt = ctx.service.post_message(ctx.agent, ctx.room_id(), a["body"], a.get("thread_id"))
    return {"event_id": receipt.message_id, "sender": receipt.sender, "body": receipt.body,
            "sequence": receipt.sequence}


@op("send_targeted_message", "Post addressed to agents and/or roles; reports each target's status.",
    {"body": S, "target_names": LS, "target_roles": LS, "thread_id": SN}, ("body",), needs_connection=True)
def _targeted(ctx: OpContext, a: dict[str, Any]) -> Any:
    if not a.get("target_names") and not a.get("target_roles"):
        raise UsageError("send_targeted_message needs target_names or target_roles", "name at least one target")
    receipt = ctx.service.post_message(ctx.agent, ctx.room_id(), a["body"], a.get("thread_id"),
                                       a.get("target_names", []), a.get("target_roles", []))
    return {"event_id": receipt.message_id, "target_statuses": dict(receipt.target_statuses),
            "sender": receipt.sender, "body": receipt.body, "addressed": receipt.addressed,
            "sequence": receipt.sequence}


# -- roles -------------------------------------------------------------------------------------

@op("list_roles", "Roles of the connected room and their live holders.", needs_connection=True)
def _list_roles(ctx: OpContext, a: dict[str, Any]) -> Any:
    return ctx.service.list_roles(ctx.agent, ctx.room_id())


@op("define_role", "Define (or redefine) a role in the connected room.",
    {"name": S, "instructions": S, "exclusive": B}, ("name", "instructions"), needs_connection=True)
def _define_role(ctx: OpContext, a: dict[str, Any]) -> Any:
    ctx.service.define_role(ctx.agent, ctx.room_id(), a["name"], a["instructions"], a.get("exclusive", False))
    return {"name": a["name"]}


@op("assume_role", "Hold a role on this connection (exclusive roles have one live holder).",
    {"role": S}, ("role",), needs_connection=True)
def _assume(ctx: OpContext, a: dict[str, Any]) -> Any:
    assert ctx.connection is not None
    return ctx.service.assume_role(ctx.agent, ctx.room_id(), a["role"], ctx.connection)


@op("release_role", "Release the role this agent holds.", needs_connection=True)
def _release(ctx: OpContext, a: dict[str, Any]) -> Any:
    return ctx.service.release_role(ctx.agent)


# -- documents and references ------------------------------------------------------------------

@op("list_references", "References, documents and links of the connected room.", needs_connection=True)
def _list_refs(ctx: OpContext, a: dict[str, Any]) -> Any:
    return ctx.service.list_references(ctx.agent, ctx.room_id())


@op("load_internal_documents", "Read room documents by id (members only).", {"ids": LS}, ("ids",),
    needs_connection=True)
def _load_docs(ctx: OpContext, a: dict[str, Any]) -> Any:
    return ctx.service.load_documents(ctx.agent, a["ids"])


@op("create_room_document", "Create a document in the connected room; only its creator may change it.",
    {"name": S, "description": S, "instructions": S, "content": S}, ("name", "content"), needs_connection=True)
def _create_doc(ctx: OpContext, a: dict[str, Any]) -> Any:
    doc_id = ctx.service.create_document(ctx.agent, ctx.room_id(), a["name"], a["content"],
                                         a.get("description", ""), a.get("instructions", ""))
    return {"document_id": doc_id}


@op("update_room_document", "Update a document this agent created.",
    {"document_id": S, "name": SN, "description": SN, "instructions": SN, "content": SN}, ("document_id",),
    needs_connection=True)
def _update_doc(ctx: OpContext, a: dict[str, Any]) -> Any:
    version = ctx.service.update_document(ctx.agent, a["document_id"], a.get("content"), a.get("name"),
                                          a.get("description"), a.get("instructions"))
    return {"document_id": a["document_id"], "version": version}


@op("delete_room_document", "Delete a document this agent created.", {"document_id": S}, ("document_id",),
    needs_connection=True)
def _delete_doc(ctx: OpContext, a: dict[str, Any]) -> Any:
    ctx.service.delete_document(ctx.agent, a["document_id"])
    return {"document_id": a["document_id"], "deleted": True}


@op("list_reference_types", "Reference types this server knows.")
def _ref_types(ctx: OpContext, a: dict[str, Any]) -> Any:
    return [{"type": t, "value_schema": {"urls": ["https://..."]}} for t in REFERENCE_TYPES]


@op("create_reference", "Create a reference to external content ({urls:[...]}).",
    {"type": S, "name": S, "description": S, "instructions": S, "value": {"type": "object"},
     "read_visibility": S, "write_visibility": S}, ("type", "name", "value"))
def _create_ref(ctx: OpContext, a: dict[str, Any]) -> Any:
    ref_id = ctx.service.create_reference(ctx.agent, a["type"], a["name"], a["value"], a.get("description", ""),
                                          a.get("instructions", ""))
    return {"id": ref_id}


@op("attach_reference_to_room", "Attach a reference to a room.", {"room_id": S, "reference_id": S},
    ("room_id", "reference_id"))
def _attach_ref(ctx: OpContext, a: dict[str, Any]) -> Any:
    ctx.service.attach_reference(ctx.agent, a["room_id"], a["reference_id"])
    return {"room_id": a["room_id"], "reference_id": a["reference_id"]}


# -- room links (as in Switch 0.19) ------------------------------------------------------------

@op("link_rooms", "Link one room to another (a directed pointer with a label; no access is granted).",
    {"source_room_id": S, "target_room_id": S, "label": S}, ("source_room_id", "target_room_id", "label"))
def _link_rooms(ctx: OpContext, a: dict[str, Any]) -> Any:
    return ctx.service.link_rooms(ctx.agent, a["source_room_id"], a["target_room_id"], a["label"])


@op("unlink_rooms", "Remove the link from one room to another.", {"source_room_id": S, "target_room_id": S},
    ("source_room_id", "target_room_id"))
def _unlink_rooms(ctx: OpContext, a: dict[str, Any]) -> Any:
    ctx.service.unlink_rooms(ctx.agent, a["source_room_id"], a["target_room_id"])
    return {"ok": True}


@op("list_linked_rooms", "Rooms the connected room links to, and whether this agent may act there.",
    needs_connection=True)
def _list_linked(ctx: OpContext, a: dict[str, Any]) -> Any:
    return ctx.service.list_linked_rooms(ctx.agent, ctx.room_id())


# -- approval cards (signoff extension; not in Switch 0.19) ------------------------------------

@op("request_approval", "Post an approval card in the connected room (idempotent by request_id).",
    {"request_id": S, "title": S, "expires_at": {"type": "number"}, "responders": LS,
     "options": {"type": "array", "items": {"type": "object", "properties": {
         "id": S, "label": S, "decision": {"enum": ["accept", "decline"]}},
         "required": ["id", "label", "decision"], "additionalProperties": False}, "minItems": 1}},
    ("request_id", "title", "options", "expires_at", "responders"), needs_connection=True)
def _request_approval(ctx: OpContext, a: dict[str, Any]) -> Any:
    card = ctx.service.request_approval(ctx.agent, ctx.room_id(), a["request_id"], a["title"], a["options"],
                                        a["expires_at"], a["responders"])
    return card.to_dict()


@op("get_approval", "The state of an approval card (its outcome once decided, with the reason its "
    "responder posted with the answer, if any).", {"request_id": S}, ("request_id",))
def _get_approval(ctx: OpContext, a: dict[str, Any]) -> Any:
    card = ctx.service.approval(ctx.agent, a["request_id"]).to_dict()
    return card | {"reason": ctx.service.answer_reason(ctx.agent, a["request_id"])}


def find_operation(name: str) -> Operation:
    operation = OPERATIONS.get(name)
    if operation is None:
        raise NotFoundError(f"unknown operation {name!r}", "GET /agents/{id}/ops lists the operations")
    return operation


def call_operation(service: RoomService, agent: Principal, name: str, args: Any,
                   connection_id: str | None) -> Any:
    """Validate and run one operation as `agent`; arguments are checked before anything changes."""
    operation = find_operation(name)
    clean = validate_args(operation, args)
    conn = None
    if connection_id:
        conn = service.connections.get(agent.id, connection_id)
    elif operation.needs_connection:
        raise NotConnected("send the header X-Switch-Connection-Id with your event stream's connection id")
    return operation.handler(OpContext(service, agent, conn), clean)
