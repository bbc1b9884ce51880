"""The Matrix transport on its own, against a stand-in for the homeserver's API: who is
heard (and what is not a command), where a player's dice may go, how lines are shown
(display names, mentions that notify), and a board edited in place. The same on a real
Synapse: tests/integration/test_matrix.py."""

from __future__ import annotations

import asyncio
from typing import Any

from dudo.chat.matrix import MatrixClient, strip_reply

BOT, ANA, BEN = "@dudo:example.org", "@ana:example.org", "@ben:example.org"
ROOM, ROOM_ID = "#dudo:example.org", "!public:example.org"


class FakeAPI:
    """What the client asks of the homeserver, recorded; the rooms' members as set."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, dict[str, Any]]] = []
        self.members: dict[str, set[str]] = {}
        self.joined: list[str] = []
        self.left: list[str] = []
        self.made = 0

    async def send_message_event(self, room_id: str, kind: Any, content: dict[str, Any]) -> str:
        self.sent.append((room_id, content))
        return f"$event{len(self.sent)}"

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
        assert rooms == ["!made1:example.org", "!made1:example.org"]  # the intro, the dice
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
    matrix.say(ROOM, "two")
    matrix.say(ANA, "dice")
    matrix.board(ROOM, "b1", 1)
    matrix.board(ROOM, "b2", 1)  # a board still waiting is replaced
    assert [t for t, _ in matrix.queue] == [ROOM, ANA, f"board:{ROOM}"]
    assert matrix.queue[0][1] == "one\ntwo" and '"b2"' in matrix.queue[2][1]
    for n in range(300):
        matrix.say(f"@p{n}:example.org", "x")
    assert len(matrix.queue) == 200 and matrix.dropped == 103


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

        async def send(room_id: str, kind: Any, content: dict[str, Any]) -> str:
            await asyncio.sleep(0.05)
            return await slow(room_id, kind, content)

        api.send_message_event = send  # type: ignore[method-assign]
        sender = asyncio.create_task(matrix._send_forever())
        matrix.say(ROOM, "one")
        await asyncio.sleep(0.02)  # "one" is on its way
        matrix.say(ROOM, "two")
        await asyncio.sleep(0.3)
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
