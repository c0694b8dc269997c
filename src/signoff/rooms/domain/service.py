"""The rooms domain service: a thin facade over the aggregates, each in its own module.

- identities (`identities`): users, agents, addressing policies;
- credentials (`tokens`): bearer tokens and registration keys;
- membership (`membership`): rooms, members, read and manage rights, availability;
- messages (`messages`), documents (`documents`), roles (`roles`), references (`references`), room
  links (`links`);
- approvals (`approvals`): approval cards and their decisions;
- claims (`claims`): chat accounts claimed by people, through a bridge user;
- delivery (`delivery`): each agent's durable event stream.

Every change is a ledger event under a `rooms.*` case; the query tables follow through the
projector before the call returns, so a caller reads its own writes. Usable in-process (workflows
call it directly) and behind the HTTP app (`signoff.rooms.http.app`). This module holds only what spans
several aggregates.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from signoff.kernel.clock import Clock
from signoff.kernel.errors import ConflictError
from signoff.ledger import SqlLedger
from signoff.rooms.domain.approvals import Approvals
from signoff.rooms.domain.claims import Claims
from signoff.rooms.domain.documents import Documents
from signoff.rooms.domain.groups import Groups
from signoff.rooms.domain.identities import Identities
from signoff.rooms.domain.links import Links
from signoff.rooms.domain.membership import Membership
from signoff.rooms.domain.messages import Messages
from signoff.rooms.domain.model import Principal
from signoff.rooms.domain.people_roles import PeopleRoles
from signoff.rooms.domain.references import References
from signoff.rooms.domain.roles import Roles
from signoff.rooms.domain.tokens import Credentials, Lifetimes
from signoff.rooms.storage.delivery import Streams
from signoff.rooms.storage.store import RoomStore
from signoff.rooms.storage.tables import rooms_users


class RoomService:
    def __init__(self, ledger: SqlLedger, clock: Clock | None = None, lifetimes: Lifetimes | None = None) -> None:
        self.store = store = RoomStore(ledger, clock)
        self.ledger, self.clock = store.ledger, store.clock
        self.notifier, self.connections, self.projector = store.notifier, store.connections, store.projector
        self.identities = identities = Identities(store)
        self.credentials = credentials = Credentials(store, identities, lifetimes)
        self.groups = groups = Groups(store, identities)
        self.membership = membership = Membership(store, identities, groups)
        self.roles = roles = Roles(store, identities, membership)
        self.messages = messages = Messages(store, identities, membership, roles)
        documents = Documents(store, membership)
        self.links = links = Links(store, membership)
        self.references = references = References(store, membership, documents, links)
        self.people_roles = people_roles = PeopleRoles(store)
        self.approvals = approvals = Approvals(store, identities, membership, messages, people_roles)
        self.streams = streams = Streams(store)
        self.claims = Claims(store, identities, membership, messages, approvals)

        # The public surface, one name per operation (each defined in its aggregate's module).
        self.create_user, self.user, self.user_by_name, self.users = (
            identities.create_user, identities.user, identities.user_by_name, identities.users)
        self.agent, self.agent_by_name, self.agent_record, self.create_agent = (
            identities.agent, identities.agent_by_name, identities.agent_record, identities.create_agent)
        self.set_policy, self.policy = identities.set_policy, identities.policy
        self.policies = identities.policies
        self.authenticate, self.authenticate_registration = (
            credentials.authenticate, credentials.authenticate_registration)
        self.create_registration_key = credentials.create_registration_key
        self.rotate_token, self.revoke_token = credentials.rotate, credentials.revoke
        self.revoke_registration_key = credentials.revoke_registration_key
        self.room, self.is_member, self.require_read = membership.room, membership.is_member, membership.require_read
        self.create_room, self.add_member, self.remove_member = (
            membership.create_room, membership.add_member, membership.remove_member)
        self.invite_agent, self.invitations, self.answer_invitation = (
            membership.invite_agent, membership.invitations, membership.answer_invitation)
        self.room_invitations = membership.room_invitations
        self.create_group, self.group, self.allow_group_owner, self.list_groups = (
            groups.create_group, groups.group, groups.allow_owner, groups.list_groups)
        self.members, self.list_rooms, self.status, self.participants = (
            membership.members, membership.list_rooms, membership.status, membership.participants)
        self.post_message, self.read_messages, self.message = (
            messages.post_message, messages.read_messages, messages.message)
        self.read_context, self.watch_room = messages.read_context, messages.watch_room
        self.search_messages = messages.search_messages
        self.create_document, self.update_document, self.delete_document = (
            documents.create_document, documents.update_document, documents.delete_document)
        self.load_documents, self.documents = documents.load_documents, documents.documents
        self.define_role, self.list_roles = roles.define_role, roles.list_roles
        self.assume_role, self.release_role = roles.assume_role, roles.release_role
        self.create_reference, self.attach_reference, self.list_references = (
            references.create_reference, references.attach_reference, references.list_references)
        self.link_rooms, self.unlink_rooms, self.list_linked_rooms = (
            links.link_rooms, links.unlink_rooms, links.list_linked_rooms)
        self.request_approval, self.approval, self.pending_approvals = (
            approvals.request_approval, approvals.approval, approvals.pending_approvals)
        self.answer_approval, self.expire_approvals = approvals.answer_approval, approvals.expire_approvals
        self.answer_reason = approvals.answer_reason
        self.grant_person_role, self.revoke_person_role = people_roles.grant, people_roles.revoke
        self.people_role_table = people_roles.table
        self.room_approvals = approvals.room_approvals
        self.head, self.agent_events, self.recent_events = streams.head, streams.agent_events, streams.recent_events
        self.last_agent_seq, self.subscribe = streams.last_agent_seq, streams.subscribe

    def refresh(self) -> int:
        """Apply events other processes wrote (the server calls this periodically)."""
        return self.projector.catch_up()

    def init(self, admin_name: str = "admin", display_name: str = "Administrator") -> dict[str, str]:
        """Create the first admin user and a registration key it owns; refuse when already done."""
        if self.store.one(select(rooms_users.c.user_id).where(rooms_users.c.is_admin.is_(True))) is not None:
            raise ConflictError("rooms are already initialised (an admin user exists)",
                                "use `signoff rooms user add` for more users")
        admin, token = self.create_user(admin_name, display_name, admin=True)
        key = self.create_registration_key(admin)
        return {"admin_user_id": admin.id, "admin_token": token, "registration_key": key}

    def register_agent(self, registration_key: str, name: str, description: str = "",
                       profile: dict[str, Any] | None = None, overwrite: bool = False) -> tuple[Principal, str]:
        """POST /agents: a registration key's owner registers (or, with overwrite, re-keys) an agent.
        New agents start owner-only, as in Switch."""
        owner = self.authenticate_registration(registration_key)
        return self.create_agent(owner, name, description, profile=profile, overwrite=overwrite)

    def room_detail(self, actor: Principal, room_id: str) -> dict[str, Any]:
        room = self.require_read(actor, room_id)  # once: the parts below are read unchecked
        refs = self.references.references_of(actor, room_id)
        return {
            "id": room.id, "room_id": room.id, "name": room.name, "description": room.description,
            "instructions": room.instructions, "channel_type": room.channel_type,
            "internal_only": room.internal_only, "group_name": room.group_name, "group_id": room.group_id,
            "owner_user_id": room.owner_user_id, "participants": self.membership.participants_of(room_id),
            "roles": self.roles.roles_for(actor, room_id), **refs,
        }
