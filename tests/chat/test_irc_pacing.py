"""What the chat gateway says fits IRC: lines under 512 bytes cut at their separators,
lines to one target joined while they wait, and a pace the server accepts."""

from __future__ import annotations

from dudo.chat.irc import MAX_QUEUED, MAX_TEXT_BYTES, SEPARATOR, IrcClient, Pacer, split_text


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
    assert list(client.queue) == [
        ("#a", "Ana bids 3 × fives · Ben: your turn (3 × fives)"),
        ("ben", "your dice: [1] [2]"),
        ("#a", "Ben bids 4 × fives"),
    ]
    client.say("#a", "x" * 390)  # would not fit with what waits: a line of its own
    assert client.queue[-1] == ("#a", "x" * 390)


def test_the_queue_is_bounded_whoever_floods() -> None:
    """Four flooding nicks once held a channel's answers 46 s back: lines past the bound
    are dropped, counted, and what waits stays what came first."""
    client = IrcClient("127.0.0.1", 1, "dudo", ["#a"], lambda *_: None)
    for i in range(1000):
        client.say(f"nick{i % 4}", f"refused ({i})")  # alternating targets: nothing joins
    # (a line for the target of the last one waiting still joins it)
    assert len(client.queue) == MAX_QUEUED and client.dropped >= 700
    assert client.queue[0] == ("nick0", "refused (0)")


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
