"""What the chat gateway says fits IRC: lines under 512 bytes cut at their separators,
lines to one target joined while they wait, and a pace the server accepts."""

from __future__ import annotations

from dudo.chat.casemap import casemapping
from dudo.chat.irc import MAX_QUEUED, MAX_TEXT_BYTES, SEPARATOR, IrcClient, Pacer, split_text
from dudo.chat.saying import SayQueue


def test_long_text_is_cut_at_separators_then_spaces_and_fits_in_bytes() -> None:
    parts = [f"Player{i} [1] [2] [3] [4] [5]" for i in range(40)]
    lines = split_text(SEPARATOR.join(parts))
    assert len(lines) > 1
    assert all(len(line.encode()) <= MAX_TEXT_BYTES for line in lines)
    assert SEPARATOR.join(lines).split(SEPARATOR) == parts  # nothing lost, cut between parts
    one_word = "ü" * 300  # two bytes each: cut inside, on a character boundary
    cut = split_text(one_word)
    assert "".join(cut) == one_word and all(len(c.encode()) <= MAX_TEXT_BYTES for c in cut)
    assert split_text("a\nb") == ["a", "b"]  # a newline always ends a line


def test_the_pace_a_burst_then_one_line_per_interval() -> None:
    now = [0.0]
    pacer = Pacer(lines_per_s=2.0, burst=3, clock=lambda: now[0])
    for _ in range(3):
        assert pacer.wait() == 0.0
        pacer.take()
    assert pacer.wait() == 0.5  # the fourth waits for the bucket
    now[0] = 0.5
    assert pacer.wait() == 0.0
    pacer.take()
    now[0] = 100.0
    pacer.wait()
    assert pacer.tokens == 3  # a long silence refills to the burst, not beyond


def test_lines_for_one_target_join_while_they_wait() -> None:
    client = IrcClient("127.0.0.1", 1, "dudo", ["#a"], lambda *_: None)
    client.say("#a", "Ana bids 3 × fives")
    client.say("#a", "Ben: your turn (3 × fives)")
    client.say("ben", "your dice: [1] [2]")
    client.say("#a", "Ben bids 4 × fives")
    assert _drain(client) == [
        ("#a", "Ana bids 3 × fives · Ben: your turn (3 × fives) · Ben bids 4 × fives"),
        ("ben", "your dice: [1] [2]"),
    ]
    client.say("#a", "a")
    client.say("#a", "x" * 398)  # would not fit with what waits: a line of its own
    assert _drain(client) == [("#a", "a"), ("#a", "x" * 398)]


def test_the_queue_is_bounded_whoever_floods() -> None:
    """Four flooding nicks once held a channel's answers 46 s back: lines past the bound
    are dropped, counted, and what waits stays what came first."""
    client = IrcClient("127.0.0.1", 1, "dudo", ["#a"], lambda *_: None)
    for i in range(1000):
        client.say(f"nick{i % 4}", f"refused ({i})" + "x" * 380)  # too long to join
    assert len(client.queue) == 40 and client.dropped == 960  # ten a person
    assert client.queue.peek() == ("nick0", "refused (0)" + "x" * 380)
    for i in range(MAX_QUEUED):  # a channel always has room: people take half at most
        client.say(f"n{i}", "y" * 399)
    client.say("#a", "the channel's line")
    assert ("#a", "the channel's line") in list(client.queue)
    assert len(client.queue) <= MAX_QUEUED


def test_people_flooding_in_private_wait_their_turn_behind_the_channel() -> None:
    """Issue 50, item 13: four nicks asking for help in private held the channel's
    `!table` answer 15 s back. Lines now go in turns: a channel's waits for at most one
    private line, and each person's for one line of each other person."""
    queue = SayQueue(most=200)
    for i in range(40):
        queue.add(f"flood{i % 4}", f"help {i}")
    queue.add("#dudo", "Table t1: waiting for players (1/2)")
    order = [target for target, _ in _drain_queue(queue)]
    assert order[:9] == ["#dudo"] + ["flood0", "flood1", "flood2", "flood3"] * 2
    # A channel line that comes while people's lines go out waits for one of them at most.
    for i in range(40):
        queue.add(f"flood{i % 4}", f"help {i}")
    queue.peek()
    queue.pop()
    queue.add("#dudo", "Ben bids 4 × fives")
    assert [t for t, _ in _drain_queue(queue)][:2] == ["#dudo", "flood1"]


def test_a_turn_call_goes_after_the_lines_waiting_for_its_player() -> None:
    """Issue 54: "Ana: your turn" went before Ana's dice for the round when the channel
    had the turn. A channel line addressed to someone waits for their lines waiting;
    lines for others keep their turn behind it."""
    queue = SayQueue(most=200)
    queue.add("Ben", "Table t · round 2 · your dice: [5]")
    queue.add("Ana", "Table t · round 2 · your dice: [3] [4]")
    queue.add("#dudo", "Ana: your turn (open the round)")
    assert _drain_queue(queue) == [
        ("Ana", "Table t · round 2 · your dice: [3] [4]"),
        ("#dudo", "Ana: your turn (open the round)"),
        ("Ben", "Table t · round 2 · your dice: [5]"),
    ]  # fmt: skip
    # Named inside a line, not addressed: the channel keeps its turn.
    queue.add("Ana", "help")
    queue.add("#dudo", "Round 3 · Ana: 1 die")
    assert [t for t, _ in _drain_queue(queue)] == ["#dudo", "Ana"]


def test_a_turn_call_joined_after_another_line_on_irc_still_waits_for_its_players_dice() -> None:
    """IRC joins a channel's waiting lines with " · ", which a board's line holds too:
    who a line is addressed to is read from each line as it was said, so "Ana: your
    turn" joined after "Ben bids" still waits for Ana's dice (it went first, read from
    the joined text), and "Round 3 · Ana: 1 die" is still addressed to nobody. Put
    back after a failed send, a joined line keeps what it was made of."""
    client = IrcClient("127.0.0.1", 1, "dudo", ["#a"], lambda *_: None)
    client.say("Ben", "Table t · round 2 · your dice: [5]")
    client.say("Ana", "Table t · round 2 · your dice: [3] [4]")
    client.say("#a", "Ben bids 2 × fours")
    client.say("#a", "Ana: your turn (to beat: 2 × fours by Ben)")
    queue = client.queue
    turn = "Ben bids 2 × fours · Ana: your turn (to beat: 2 × fours by Ben)"
    taken = queue.take()
    assert taken == ("Ana", "Table t · round 2 · your dice: [3] [4]")
    queue.put_back(*taken)  # a cut connection: first again, in its turn
    assert _drain_queue(queue) == [
        ("Ana", "Table t · round 2 · your dice: [3] [4]"),
        ("#a", turn),
        ("Ben", "Table t · round 2 · your dice: [5]"),
    ]
    client.say("Ana", "help")
    client.say("#a", "Round 3 · Ana: 1 die")  # named, not addressed: the channel's turn
    assert [t for t, _ in _drain_queue(queue)] == ["#a", "Ana"]
    client.say("#a", "Ben bids 3 × fives")
    client.say("#a", "Ana: your turn (to beat: 3 × fives by Ben)")
    taken = queue.take()  # nothing waits for Ana: the joined line goes
    assert taken is not None and taken[0] == "#a"
    client.say("Ana", "Table t · round 3 · your dice: [2]")  # while it was being sent
    queue.put_back(*taken)  # it did not go: still addressed to Ana, whose dice go first
    assert [t for t, _ in _drain_queue(queue)] == ["Ana", "#a"]


def _drain_queue(queue: SayQueue) -> list[tuple[str, str]]:
    out = []
    while (line := queue.peek()) is not None:
        out.append(line)
        queue.pop()
    return out


def _drain(client: IrcClient) -> list[tuple[str, str]]:
    return _drain_queue(client.queue)


def test_nicks_are_compared_as_the_server_says() -> None:
    """Issue 50, item 1: ngIRCd announces CASEMAPPING=ascii, where "Ana[" and "Ana{" are
    two people; rfc1459 makes them one. Unknown mappings fold least (ASCII letters)."""
    assert casemapping("ascii")("Ana[") != casemapping("ascii")("Ana{")
    assert casemapping("ascii")("ANA") == "ana"
    assert casemapping("rfc1459")("Ana[~") == casemapping("rfc1459")("ana{^")
    assert casemapping("rfc1459-strict")("Ana[") == "ana{"
    assert casemapping("rfc1459-strict")("a~") != casemapping("rfc1459-strict")("a^")
    assert casemapping("strict-rfc1459") is casemapping("rfc1459-strict")
    assert casemapping("rfc8265")("ＡＮＡ") == casemapping("rfc8265")("ana") == "ana"
    assert casemapping("rfc8265")("Ána") == casemapping("rfc8265")("A\u0301na")
    assert casemapping("ascii", utf8="rfc8265")("Ána") == "ána"
    assert casemapping("something-new")("Ana[") == "ana["  # least folding
    assert casemapping(None)("Ana{") == "ana{"


def test_the_rooms_follow_the_servers_mapping() -> None:
    """A seat held by "Ana[" is not "Ana{"'s under ascii (ngIRCd), and is under rfc1459."""
    from dudo.chat.room import Room

    room = Room("#Dudo", table="t1", seats={"h": 0}, nicks={"h": "Ana["})
    assert room.player_of_nick("ana[") == "h" and room.player_of_nick("Ana{") is None
    room.fold = casemapping("rfc1459")
    assert room.player_of_nick("Ana{") == "h"


def test_the_server_announces_its_mapping() -> None:
    from irc.client import Event
    from irc.features import FeatureSet

    told = []
    client = IrcClient("127.0.0.1", 1, "dudo", ["#a"], lambda *_: None,
                       on_casemapping=told.append)  # fmt: skip

    class Conn:
        features = FeatureSet()

    Conn.features.load(["dudo", "CASEMAPPING=rfc1459", "are supported"])
    client._features(Conn(), Event("featurelist", "irc.test", "dudo", []))
    assert told == [casemapping("rfc1459")] and client.fold is casemapping("rfc1459")


def test_accounts_and_departures_reach_the_gateway() -> None:
    """IRCv3 ``account-tag``: a line from someone logged in names the account; a QUIT,
    a PART or a KICK of someone else tells the gateway the nick is gone."""
    from irc.client import Event

    heard: list[tuple[str, str, str, str | None]] = []
    gone: list[tuple[str, str | None]] = []
    client = IrcClient("127.0.0.1", 1, "dudo", ["#a"], lambda *m: heard.append(m),
                       on_gone=lambda nick, channel: gone.append((nick, channel)))  # fmt: skip

    class Conn:
        def get_nickname(self) -> str:
            return "dudo"

    tagged = [{"key": "account", "value": "ana-acct"}, {"key": "time", "value": "x"}]
    client._message(Conn(), Event("pubmsg", "ana!u@h", "#a", ["!dudo"], tags=tagged))
    client._message(Conn(), Event("pubmsg", "eve!u@h", "#a", ["!dudo"]))
    client._message(Conn(), Event("privmsg", "ana!u@h", "dudo", ["odds"], tags=tagged))
    assert heard == [("#a", "ana", "!dudo", "ana-acct"), ("#a", "eve", "!dudo", None),
                     ("dudo", "ana", "odds", "ana-acct")]  # fmt: skip
    client._quit(Conn(), Event("quit", "ana!u@h", None, ["bye"]))
    client._parted(Conn(), Event("part", "ben!u@h", "#a", []))
    client._parted(Conn(), Event("part", "dudo!u@h", "#a", []))  # ourselves: not a player
    client._kicked(Conn(), Event("kick", "op!u@h", "#a", ["cid", "go"]))
    assert gone == [("ana", None), ("ben", "#a"), ("cid", "#a")]


def test_where_a_nick_connects_from_is_kept_past_its_quit() -> None:
    """Issue 54, item 8: a seat left mid-game is taken back by the same nick from the
    same user@host; the client notes it from what the nick sends, and keeps it after
    they quit (their seat waits for them)."""
    gone: list[str] = []
    heard: list[str] = []
    client = IrcClient("127.0.0.1", 1, "dudo", ["#a"], lambda t, nick, text, a: heard.append(nick),
                       on_gone=lambda nick, channel: gone.append(nick))  # fmt: skip

    class Event:
        def __init__(self, kind: str, source: str, *arguments: str) -> None:
            self.type, self.source, self.target = kind, source, "#a"
            self.arguments, self.tags = list(arguments), []

    client._message(None, Event("pubmsg", "Ben!~ben@198.51.100.7", "!join"))
    assert heard == ["Ben"] and client.mask_of("ben") == "~ben@198.51.100.7"
    client._quit(None, Event("quit", "Ben!~ben@198.51.100.7", "bye"))
    assert gone == ["Ben"] and client.mask_of("BEN") == "~ben@198.51.100.7"
