"""A live watch of a room asks whether its reader may still read after each read and before it sends
what it read: a sign-out that lands between the question and the read never lets through a message
posted after it (tests/system/web/test_who_is_in.py met that race on a loaded machine)."""

from __future__ import annotations

import asyncio

from tests.support.fixtures.rooms import World


def test_a_message_posted_after_the_reader_was_signed_out_is_never_sent(world: World) -> None:
    service = world.service
    signed_out = False
    asked = 0

    async def allowed() -> bool:
        # The answer is taken first; the sign-out and a new message then land before the watch's
        # next step, the worst order a busy server can give.
        nonlocal signed_out, asked
        asked += 1
        answer = not signed_out
        if asked == 1:
            signed_out = True
            service.post_message(world.fixer, world.room_id, "sent after the person signed out")
        return answer

    async def watch() -> list[str]:
        sent = []
        async for message in service.watch_room(world.alice, world.room_id, after=service.head(), poll=0.05,
                                                 allowed=allowed):
            sent.append(message["body"])
        return sent

    sent = asyncio.run(asyncio.wait_for(watch(), 30))
    assert sent == []
    assert asked == 2  # the second question, after the read that met the message, ended the watch


def test_a_reader_still_signed_in_gets_the_messages_read_before_each_question(world: World) -> None:
    service = world.service
    service.post_message(world.fixer, world.room_id, "posted while signed in")
    asked = 0

    async def allowed() -> bool:
        nonlocal asked
        asked += 1
        return asked == 1

    async def watch() -> list[str]:
        return [m["body"] async for m in service.watch_room(world.alice, world.room_id, after=0, poll=0.05,
                                                              allowed=allowed)]

    assert "posted while signed in" in asyncio.run(asyncio.wait_for(watch(), 30))
