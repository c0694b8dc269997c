"""Request bodies of the rooms HTTP routes (pydantic models; unknown fields are refused)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RegisterBody(BaseModel):
    model_config = ConfigDict(extra="allow")
    name: str
    description: str = ""
    connector_type: str | None = None
    integration_profile: dict[str, Any] | None = None
    overwrite: bool = False


class BeatBody(Strict):
    connection_id: str
    cursor: int


class SlotBody(Strict):
    connection_id: str
    room_id: str
    takeover: bool = False


class LegacyMessageBody(Strict):
    room_id: str
    content: str


class UserMessageBody(Strict):
    body: str
    thread_id: str | None = None
    target_names: list[str] = Field(default_factory=list)


class AnswerBody(Strict):
    option_id: str
    digest: str  # the card's digest as it was shown to the person answering


class ClaimCodeBody(Strict):
    bridge: str
    external_id: str


class RedeemBody(Strict):
    code: str
    external_id: str


class RelayedMessageBody(Strict):
    external_id: str
    body: str
    thread_id: str | None = None


class RelayedAnswerBody(Strict):
    external_id: str
    option_id: str
    digest: str  # the card's digest as the bridge showed it
    evidence: dict[str, str] = Field(default_factory=dict)


class PolicyBody(Strict):
    policy: dict[str, Any] | None


class RoomBody(Strict):
    name: str
    description: str = ""
    agent_names: list[str] = Field(default_factory=list)
    user_names: list[str] = Field(default_factory=list)
    channel_type: str = "channel_private"
    internal_only: bool = False
    instructions: str = ""
    group_name: str | None = None


class GroupBody(Strict):
    name: str
    description: str = ""


class AllowBody(Strict):
    user_name: str


class InvitationAnswer(Strict):
    accept: bool


class RegistrationKeyBody(Strict):
    owner_name: str | None = None


class MemberBody(Strict):
    agent_name: str | None = None
    user_name: str | None = None


class UserBody(Strict):
    name: str
    display_name: str | None = None
    admin: bool = False
    external: bool = False
