"""What the chat gateway says fits IRC: lines under 512 bytes cut at their separators,
lines to one target joined while they wait, and a pace the server accepts."""

from __future__ import annotations

from dudo.chat.irc import MAX_TEXT_BYTES, SEPARATOR, IrcClient, Pacer, split_text


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
