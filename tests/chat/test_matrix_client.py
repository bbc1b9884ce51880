"""The Matrix transport on its own, against a stand-in for the homeserver's API: who is
heard (and what is not a command), where a player's dice may go, how lines are shown
(display names, mentions that notify), and a board edited in place. The same on a real
Synapse: tests/integration/test_matrix.py."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from mautrix.errors import MatrixConnectionError, MatrixRequestError, MLimitExceeded

from dudo.chat.matrix import MatrixClient, strip_reply

BOT, ANA, BEN = "@dudo:example.org", "@ana:example.org", "@ben:example.org"
ROOM, ROOM_ID = "#dudo:example.org", "!public:example.org"


class FakeAPI:
    """What the client asks of the homeserver, recorded; the rooms' members as set."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, dict[str, Any]]] = []
        self.txns: dict[str, str] = {}  # transaction id -> the event it made
        self.members: dict[str, set[str]] = {}
        self.joined: list[str] = []
        self.left: list[str] = []
        self.made = 0

    async def send_message_event(
        self, room_id: str, kind: Any, content: dict[str, Any], txn_id: str | None = None
    ) -> str:
        if txn_id is not None and txn_id in self.txns:  # a homeserver's idempotent PUT
            return self.txns[txn_id]
        if str(kind) == "m.reaction":
            relates = content["m.relates_to"]
            made = await self.react(room_id, relates["event_id"], relates["key"])
        else:
            self.sent.append((room_id, content))
            made = f"$event{len(self.sent)}"
        if txn_id is not None:
            self.txns[txn_id] = made
        return made

    async def react(self, room_id: str, event_id: str, key: str) -> str:
        self.sent.append((room_id, {"reaction": key, "on": event_id}))
        return f"$event{len(self.sent)}"

    async def get_joined_members(self, room_id: str) -> dict[str, Any]:
        return {user: {} for user in self.members.get(room_id, set())}

    async def create_room(self, **asked: Any) -> str:
        self.made += 1
        room_id = f"!made{self.made}:example.org"
        self.members[room_id] = {BOT, *asked["invitees"]}
        return room_id

    async def join_room(self, room_id: str, **_: Any) -> str:
        self.joined.append(room_id)
        return room_id

    async def leave_room(self, room_id: str, **_: Any) -> None:
        self.left.append(room_id)


def client() -> tuple[MatrixClient, FakeAPI, list[tuple[str, str, str, str | None]]]:
    heard: list[tuple[str, str, str, str | None]] = []
    made = MatrixClient(
        "http://hs", BOT, [ROOM], lambda *a: heard.append(a), token="t",
        welcome=lambda user: f"{user}: your dice come here",
    )  # fmt: skip
    api = FakeAPI()
    made.api = api  # type: ignore[assignment]
    made.room_ids, made.names = {ROOM: ROOM_ID}, {ROOM_ID: ROOM}
    made.display = {ANA: "Ana", BEN: "Ben <b>"}
    return made, api, heard


def message(sender: str, body: str, **content: Any) -> dict[str, Any]:
    return {"type": "m.room.message", "sender": sender, "event_id": "$x",
            "content": {"msgtype": "m.text", "body": body, **content}}  # fmt: skip


def test_commands_are_heard_from_people_not_from_notices_edits_or_strangers_rooms() -> None:
    matrix, _, heard = client()
    matrix._event(ROOM_ID, message(ANA, "!join"))
    matrix._event(ROOM_ID, message(ANA, "3 5", msgtype="m.notice"))  # another bot's
    edit = {"rel_type": "m.replace", "event_id": "$old"}
    matrix._event(ROOM_ID, message(ANA, "!dudo", **{"m.relates_to": edit}))
    matrix._event("!elsewhere:example.org", message(BEN, "!start"))  # not a room of ours
    matrix.direct[BEN] = "!dm:example.org"
    matrix._event("!dm:example.org", message(BEN, "dice"))  # ben's own direct room
    matrix._event("!dm:example.org", message(ANA, "dice"))  # ...not ana's
    reply = "> <@ben:example.org> Table x\n> more\n\n!dudo"
    matrix._event(ROOM_ID, message(ANA, reply))
    assert heard == [
        (ROOM, ANA, "!join", ANA),
        (BOT, BEN, "dice", BEN),
        (ROOM, ANA, "!dudo", ANA),
    ]
    assert strip_reply("plain\n> not a quote") == "plain\n> not a quote"


def test_a_reaction_is_a_command_only_on_the_board_and_only_its_buttons() -> None:
    matrix, _, heard = client()
    matrix.boards[ROOM_ID] = ["$board", "text", 1]

    def react(on: str, key: str) -> None:
        relates = {"rel_type": "m.annotation", "event_id": on, "key": key}
        event = {"type": "m.reaction", "sender": ANA, "event_id": "$r",
                 "content": {"m.relates_to": relates}}  # fmt: skip
        matrix._event(ROOM_ID, event)

    react("$board", "👎 dudo")
    react("$board", "👍")  # not a button
    react("$older", "🎯 calza")  # not the board
    react("$board", "🎯 calza")
    assert [h[2] for h in heard] == ["!dudo", "!calza"]


def test_a_line_addressed_to_someone_mentions_them_others_are_notices_shown_by_name() -> None:
    matrix, _, _ = client()
    called = matrix.render(f"{ANA}: your turn (to beat: 3 × fives by {BEN})")
    assert called["msgtype"] == "m.text"  # notifies (push rules ignore notices)
    assert called["m.mentions"] == {"user_ids": [ANA]}  # only the one addressed
    assert called["body"] == "Ana: your turn (to beat: 3 × fives by Ben <b>)"
    assert '<a href="https://matrix.to/#/@ben:example.org">Ben &lt;b&gt;</a>' in (
        called["formatted_body"]
    )  # a display name is text, never markup
    news = matrix.render(f"Round 2 · {BEN} lost a die.")
    assert news["msgtype"] == "m.notice" and news["m.mentions"] == {"user_ids": []}
    assert news["body"] == "Round 2 · Ben <b> lost a die."  # the full stop is not the id's


def test_dice_go_only_to_a_room_of_that_player_and_the_bot() -> None:
    async def scenario() -> None:
        matrix, api, _ = client()
        matrix.registered = True
        # Ben invited the bot to a "direct" room that Ana is in too.
        matrix.direct[BEN] = "!shared:example.org"
        api.members["!shared:example.org"] = {BOT, BEN, ANA}
        await matrix._send(BEN, "Table t · round 1 · your dice: ⚀ ⚁")
        assert api.left == ["!shared:example.org"]
        rooms = [room for room, _ in api.sent]
        assert "!shared:example.org" not in rooms
        # One message: the intro, then the dice (one of the homeserver's allowance).
        assert rooms == ["!made1:example.org"]
        assert api.sent[0][1]["body"].splitlines() == [
            "Ben <b>: your dice come here", "Table t · round 1 · your dice: ⚀ ⚁"]  # fmt: skip
        assert api.members["!made1:example.org"] == {BOT, BEN}
        await matrix._send(BEN, "Table t · round 2 · your dice: ⚀")  # the same room again
        assert api.made == 1 and api.sent[-1][0] == "!made1:example.org"

    asyncio.run(scenario())


def test_an_invitation_to_a_direct_chat_is_taken_anything_else_declined() -> None:
    async def scenario() -> None:
        matrix, api, _ = client()

        def invite(sender: str, direct: bool) -> dict[str, Any]:
            me = {"type": "m.room.member", "state_key": BOT, "sender": sender,
                  "content": {"membership": "invite", "is_direct": direct}}  # fmt: skip
            return {"invite_state": {"events": [me]}}

        await matrix._invited("!dm:example.org", invite(ANA, True))
        await matrix._invited("!group:example.org", invite(BEN, False))
        await matrix._invited("!second:example.org", invite(ANA, True))  # she has one
        assert api.joined == ["!dm:example.org"] and matrix.direct == {ANA: "!dm:example.org"}
        assert api.left == ["!group:example.org", "!second:example.org"]
        # She leaves it: forgotten (a new one is made when her dice are next told).
        left = {"type": "m.room.member", "state_key": ANA, "sender": ANA,
                "content": {"membership": "leave"},
                "unsigned": {"prev_content": {"membership": "join"}}}  # fmt: skip
        matrix._member("!dm:example.org", left, quiet=False)
        assert ANA not in matrix.direct

    asyncio.run(scenario())


def test_the_board_is_edited_in_place_within_a_round_and_new_each_round() -> None:
    async def scenario() -> None:
        matrix, api, _ = client()
        await matrix._put_board(ROOM, "round 1 · no bid yet", 1)
        first = matrix.boards[ROOM_ID][0]
        assert [c.get("reaction") for _, c in api.sent[1:]] == ["👎 dudo", "🎯 calza"]
        await matrix._put_board(ROOM, "round 1 · to beat: 2 × threes", 1)
        edit = api.sent[-1][1]
        assert edit["m.relates_to"] == {"rel_type": "m.replace", "event_id": first}
        assert edit["m.new_content"]["body"] == "round 1 · to beat: 2 × threes"
        await matrix._put_board(ROOM, "round 1 · to beat: 2 × threes", 1)  # unchanged
        assert api.sent[-1][1] is edit
        await matrix._put_board(ROOM, "round 2 · no bid yet", 2)
        assert matrix.boards[ROOM_ID][0] != first and "m.relates_to" not in api.sent[-3][1]

    asyncio.run(scenario())


def test_lines_queued_for_one_room_go_as_one_message_and_a_full_queue_drops() -> None:
    matrix, _, _ = client()
    matrix.say(ROOM, "one")
    matrix.say(ANA, "dice")
    matrix.say(ROOM, "two")  # joined to the room's line waiting, a person's between
    matrix.board(ROOM, "b1", 1)
    matrix.board(ROOM, "b2", 1)  # a board still waiting is replaced
    assert sorted(matrix.queue) == [(ROOM, "one\ntwo"), (ANA, "dice")]
    assert matrix.boards_due == {ROOM: ("b2", 1)}
    for n in range(300):  # people's lines together: half the queue at most
        matrix.say(f"@p{n}:example.org", "x")
    assert len(matrix.queue) == 101 and matrix.dropped == 201  # 1 room, 100 people
    for n in range(300):
        matrix.say(f"#room{n}:example.org", "x")
    assert len(matrix.queue) == 200 and matrix.dropped == 600 - 198


def test_display_names_are_clean_text_and_look_alikes_are_told_apart_by_id() -> None:
    matrix, _, _ = client()
    matrix.display[ANA] = "Ana\nTable t · round 1 · your dice: [6] [6]"  # a forged line
    assert "\n" not in matrix.name_of(ANA) and len(matrix.name_of(ANA)) <= 32
    matrix.display[ANA] = "\u202e"  # nothing but a hidden character: the id's name
    assert matrix.name_of(ANA) == "ana"
    matrix.display[ANA] = "Ben <b>"  # Ana calls herself what Ben is called
    said = matrix.render(f"{ANA}: your turn")["body"]
    assert said == f"Ben <b> ({ANA}): your turn"


def test_a_line_said_while_a_message_is_being_sent_is_not_lost_with_it() -> None:
    """The sender once read the queue's head, awaited the homeserver, then dropped the
    head: a line said meanwhile had been joined to that message, and went unsaid."""

    async def scenario() -> None:
        matrix, api, _ = client()
        matrix.registered = True
        slow = api.send_message_event
        on_its_way = asyncio.Event()

        async def send(room_id: str, kind: Any, content: dict[str, Any], **kw: Any) -> str:
            on_its_way.set()
            await asyncio.sleep(0.05)
            return await slow(room_id, kind, content, **kw)

        api.send_message_event = send  # type: ignore[method-assign]
        sender = asyncio.create_task(matrix._send_forever())
        matrix.say(ROOM, "one")
        await asyncio.wait_for(on_its_way.wait(), 10)  # "one" is on its way (not a guess
        matrix.say(ROOM, "two")  # of how long that takes: a loaded machine took longer)
        for _ in range(200):
            if len(api.sent) >= 2:
                break
            await asyncio.sleep(0.05)
        sender.cancel()
        assert [c["body"] for _, c in api.sent] == ["one", "two"]

    asyncio.run(scenario())


def test_a_room_it_may_not_join_is_skipped_and_the_others_are_played() -> None:
    """One configured room refusing the bot (invite-only, banned) once kept the whole
    gateway from syncing, and a 403 logged it out (a password login made a new device
    at every retry)."""
    from mautrix.errors import MForbidden

    async def scenario() -> None:
        matrix, api, _ = client()
        matrix.wanted = ["#closed:example.org", ROOM]
        matrix.room_ids, matrix.names = {}, {}

        async def join_room(room: str, **_: Any) -> str:
            if room == "#closed:example.org":
                raise MForbidden(403, "You are not invited to this room.")
            return ROOM_ID

        async def members(room_id: str) -> dict[str, Any]:
            return {}

        api.join_room = join_room  # type: ignore[method-assign]
        api.get_joined_members = members  # type: ignore[method-assign,assignment]
        api.api = type("HTTP", (), {"token": "t"})()  # type: ignore[attr-defined]
        await matrix._connect()
        assert matrix.room_ids == {ROOM: ROOM_ID} and api.api.token == "t"  # type: ignore[attr-defined]

    asyncio.run(scenario())


def test_a_new_display_name_reaches_the_table_whichever_room_says_it_first() -> None:
    """Issue 54, item 4: a display name changed mid-game never reached the table ("Mateo
    G: your turn" while the board and the reveal said "mateo"). Matrix sends the change
    in every room the person is in; their dice room's came first, was taken as that
    room's alone, and the channel's own event then changed nothing."""
    matrix, _, _ = client()
    renamed: list[tuple[str, str | None]] = []
    matrix.on_renamed = lambda user, room: renamed.append((user, room))
    matrix.direct[ANA] = "!dice:example.org"

    def member(room_id: str, name: str, was: str) -> dict[str, Any]:
        event = {"type": "m.room.member", "state_key": ANA, "sender": ANA,
                 "content": {"membership": "join", "displayname": name},
                 "unsigned": {"prev_content": {"membership": "join", "displayname": was}}}
        return {"timeline": {"events": [event]}}  # fmt: skip

    sync = {"rooms": {"join": {"!dice:example.org": member("!dice:example.org", "Ana G", "Ana"),
                               ROOM_ID: member(ROOM_ID, "Ana G", "Ana")}}}  # fmt: skip
    asyncio.run(matrix._handle(sync, history=False))
    assert renamed == [(ANA, None)]  # everywhere she plays: once
    assert matrix.name_of(ANA) == "Ana G"
    # A name set in the channel alone is that channel's.
    asyncio.run(matrix._handle({"rooms": {"join": {ROOM_ID: member(ROOM_ID, "Ana R", "Ana G")}}},
                               history=False))  # fmt: skip
    assert renamed[-1] == (ANA, ROOM)


def test_a_429_loses_no_line_no_button_and_no_first_line_of_a_dice_room() -> None:
    """Issue 54, item 2: under a homeserver's rate limit a 429 lost what it interrupted:
    a new board's second button (the retry saw the same board and sent nothing), and the
    "your dice come here" line of a dice room just made (the next line found the room).
    Each is said once when the 429 has been waited out, the wait the one it asked for."""

    async def scenario() -> None:
        matrix, api, _ = client()
        matrix.registered = True
        matrix.retry_after = 0.05
        refuse = {"react": [2], "send": [2, 4]}  # which calls of each kind get a 429
        calls = {"react": 0, "send": 0}
        waits: list[float] = []
        real_sleep = asyncio.sleep

        async def sleep(seconds: float) -> None:
            waits.append(seconds)
            await real_sleep(min(seconds, 0.01))

        def limited(kind: str, call: Any) -> Any:
            async def wrapped(*args: Any, **kwargs: Any) -> Any:
                calls[kind] += 1
                if calls[kind] in refuse[kind]:
                    raise MLimitExceeded(429, "Too Many Requests")
                return await call(*args, **kwargs)

            return wrapped

        api.react = limited("react", api.react)  # type: ignore[method-assign]
        api.send_message_event = limited("send", api.send_message_event)  # type: ignore[method-assign]
        asyncio_sleep, asyncio.sleep = asyncio.sleep, sleep  # type: ignore[assignment]
        try:
            sender = asyncio.create_task(matrix._send_forever())
            matrix.board(ROOM, "round 1 · no bid yet", 1)  # 4th send refused, then 2nd react
            matrix.say(BEN, "Table t · round 1 · your dice: [1] [2]")  # 2nd send refused
            matrix.say(ROOM, "Ben: your turn (open the round)")
            for _ in range(200):
                await real_sleep(0.01)
                if not matrix.queue and not matrix.boards_due and calls["react"] >= 3:
                    break
            sender.cancel()
        finally:
            asyncio.sleep = asyncio_sleep  # type: ignore[assignment]
        bodies = [c.get("body") for _, c in api.sent if "body" in c]
        reactions = [c["reaction"] for _, c in api.sent if "reaction" in c]
        assert reactions == ["👎 dudo", "🎯 calza"], api.sent  # both, once each
        # The dice room's first message: what it is for, then the dice; once.
        first = "Ben <b>: your dice come here\nTable t · round 1 · your dice: [1] [2]"
        assert bodies.count(first) == 1, bodies
        # The lines went before the board (a turn call names the bid to beat too), and
        # each 429 was waited out as long as it asked, no longer.
        turn = bodies.index("Ben: your turn (open the round)")
        assert turn < bodies.index("round 1 · no bid yet"), bodies
        assert waits == [0.05] * 3, waits

    asyncio.run(scenario())


def test_a_turn_call_waits_for_its_dice_and_boards_wait_for_quiet_while_limited() -> None:
    """Issue 54, item 1: under Synapse's default limit the room's turn call went before
    the dice it asks to play, and each board took the message the next turn call needed.
    A turn call now waits for the lines waiting for its player (their dice), the other
    players' dice go after it; while a 429 is recent, boards wait until two of the
    homeserver's intervals passed without a message; a board's buttons that a 429 cut
    short go when no line waits, while its round is played."""
    matrix, _, _ = client()
    matrix.say(ANA, "Table t · round 2 · your dice: [3]")
    matrix.say(BEN, "Table t · round 2 · your dice: [5]")
    matrix.say(ROOM, f"Round 2 · 2 dice\n{BEN}: your turn (open the round)")
    assert [matrix.queue.take() for _ in range(3)] == [
        (BEN, "Table t · round 2 · your dice: [5]"),  # the player called: first
        (ROOM, f"Round 2 · 2 dice\n{BEN}: your turn (open the round)"),
        (ANA, "Table t · round 2 · your dice: [3]"),  # not called now: after it
    ]  # fmt: skip

    now = time.monotonic()
    matrix.boards = {ROOM_ID: ["$board", "round 2 · to beat: 2 × fives", 2, 2]}
    matrix.boards_due = {ROOM: ("round 2 · to beat: 3 × fives", 2)}
    assert matrix._board_hold() == 0.0  # never limited: at once
    matrix.limited_at, matrix.pace_s, matrix.last_sent = now, 5.0, now
    assert 9.0 < matrix._board_hold() <= 10.0  # two intervals of quiet first
    matrix.last_sent = now - 11
    assert matrix._board_hold() == 0.0  # quiet long enough
    matrix.limited_at = now - 61  # the last 429 long ago: no longer limited
    matrix.last_sent = now
    assert matrix._board_hold() == 0.0
    # Buttons owed: while the round is played; moot once a later round's board waits.
    assert matrix._owed_buttons() is None
    matrix.boards[ROOM_ID][3] = 1
    assert matrix._owed_buttons() == ROOM_ID
    matrix.boards_due = {ROOM: ("round 3 · no bid yet", 3)}
    assert matrix._owed_buttons() is None


def test_a_send_whose_answer_was_lost_is_not_made_twice_and_a_refused_button_not_retried() -> None:
    """Issue 54, item 3: the homeserver stopped after it took a button but before it
    answered; the retry (a new transaction id) was refused as a second one
    (M_DUPLICATE_ANNOTATION) and retried twice a second for ever, holding every line
    back. A retry now carries the same transaction id (the homeserver answers with the
    event it has), and a button refused for good is not asked for again."""

    async def scenario() -> None:
        matrix, api, _ = client()
        matrix.registered = True
        put = api.send_message_event
        calls: list[str] = []

        async def lossy(room_id: str, kind: Any, content: dict[str, Any], **kw: Any) -> str:
            calls.append(str(kind))
            made = await put(room_id, kind, content, **kw)
            if len(calls) == 2:  # the first button: taken, its answer lost
                raise MatrixConnectionError("connection reset")
            if len(calls) == 4:  # the second: refused for good
                raise MatrixRequestError("M_FORBIDDEN")
            return made

        api.send_message_event = lossy  # type: ignore[method-assign]
        real_sleep = asyncio.sleep
        asyncio_sleep, asyncio.sleep = asyncio.sleep, lambda s: real_sleep(0)  # type: ignore[assignment]
        try:
            sender = asyncio.create_task(matrix._send_forever())
            matrix.board(ROOM, "round 1 · no bid yet", 1)
            for _ in range(100):
                await real_sleep(0.01)
            matrix.say(ROOM, "Ben: your turn (open the round)")  # not held back
            for _ in range(50):
                await real_sleep(0.01)
            sender.cancel()
        finally:
            asyncio.sleep = asyncio_sleep  # type: ignore[assignment]
        reactions = [c["reaction"] for _, c in api.sent if "reaction" in c]
        assert reactions == ["👎 dudo", "🎯 calza"], api.sent  # each made once
        assert calls.count("m.reaction") == 3, calls  # one retry, none after the refusal
        assert api.sent[-1][1]["body"] == "Ben: your turn (open the round)"

    asyncio.run(scenario())
