"""Answering an approval card as a person does: with the digest of the card as they were shown it
(the rooms server refuses an answer for any other card)."""

from __future__ import annotations

from typing import Any

from signoff.rooms.client import RoomsUserClient


def answer_as_shown(person: RoomsUserClient, request_id: str, option_id: str) -> dict[str, Any]:
    """The person reads the card, then answers exactly what they read."""
    return person.answer(request_id, option_id, person.approval(request_id)["digest"])


def answer_in(service: Any, user: Any, request_id: str, option_id: str) -> dict[str, Any]:
    """The same on a rooms service in process (`RoomService`, a person's `Principal`)."""
    result: dict[str, Any] = service.answer_approval(user, request_id, option_id,
                                                     service.approval(user, request_id).digest)
    return result
