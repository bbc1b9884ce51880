"""The chat gateway (``dudo irc``) on a real IRC server (ngIRCd) and a real redis-server,
under a Redis user of its own: people in channels play whole games against the bot
service, each told only their own dice; two channels play at once; a ``kill -9`` of the
gateway mid-game and a restart go on with the game in the channel."""

from __future__ import annotations

import json
import re
import time
import urllib.request
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import redis

from dudo.ops import admin
from dudo.wire import keys

from ..irc import IrcPerson, IrcServer
from ..servers import RedisServer, free_port
from .procs import Workers, wait_for
from .test_gateway_acl import denied

DICE_TOLD = re.compile(r"round (\d+) · your dice: ((?:\[\d\] ?)+)")
TURN = re.compile(r"^(\S+): your turn \((.*)\)$")


def move(people: dict[str, IrcPerson], channel: str, nick: str, standing: str) -> None:
    """A plain player: opens with the smallest bid, chooses right, else calls Dudo."""
    person = people[nick]
    if "open the round" in standing:
        person.say(channel, "1 2")
    elif "!dir" in standing:
        person.say(channel, "!dir +")
    else:
        person.say(channel, "!dudo")


def play_until_over(
    people: dict[str, IrcPerson], channel: str, timeout: float = 240, stop_after: int = 0
) -> str | None:
    """Answer every turn the channel calls for our people until a winner is named (its
    line), or, with ``stop_after``, after that many moves (None). Every line the watcher
    got since the last call is read, in order, once. A move the gateway could not write
    (Redis away) is made again a moment later, as a person would."""
    moves = 0
    last: dict[str, str] = {}
    for piece in channel_pieces(next(iter(people.values())), channel, timeout, "no winner"):
        if piece.startswith("Winner:"):
            return piece
        called = TURN.match(piece)
        unreachable = re.match(r"^(\S+): the game service is unreachable", piece)
        if called and called.group(1) in people:
            last[called.group(1)] = called.group(2)
            move(people, channel, called.group(1), called.group(2))
            moves += 1
            if stop_after and moves >= stop_after:
                return None
        elif unreachable and unreachable.group(1) in last:
            time.sleep(0.5)
            move(people, channel, unreachable.group(1), last[unreachable.group(1)])
    raise AssertionError("unreachable: channel_pieces ends only by raising")


def channel_pieces(
    person: IrcPerson, channel: str, timeout: float, waiting_for: str
) -> Iterator[str]:
    """What the channel told ``person`` from where the last reader stopped, piece by
    piece (the gateway joins lines with " · "), waiting for more; AssertionError after
    ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        while person.read_upto >= len(person.seen):
            assert time.monotonic() < deadline, f"{waiting_for} in {timeout} s: {person.seen[-10:]}"
            time.sleep(0.02)
        _, target, text = person.seen[person.read_upto]
        person.read_upto += 1
        if target == channel:
            yield from text.split(" · ")


def open_and_play(person: IrcPerson, moves: int, channel: str = "#dudo") -> str:
    """``person`` opens a table against two bots in ``channel``, starts it and makes
    ``moves`` moves; returns the table's id."""
    person.say(channel, "!new classic bots 2 dice 3")
    table = person.wait_for(rf"{person.nick} opens table (\S+) ")[2].split()[3]
    # The bots take their seats through the bot service, a moment later: a start typed
    # before then waits for them ("the game begins when they sit").
    person.say(channel, "!start")
    person.wait_for("The game begins")
    assert play_until_over({person.nick: person}, channel, stop_after=moves) is None
    return table


def next_turn(person: IrcPerson, channel: str = "#dudo", timeout: float = 60) -> str:
    """Read on from where the last reader stopped until the channel calls ``person``'s
    turn; what it said stands (the bid to beat, or what to do)."""
    for piece in channel_pieces(person, channel, timeout, f"{person.nick}'s turn never came"):
        called = TURN.match(piece)
        if called and called.group(1) == person.nick:
            return called.group(2)
    raise AssertionError("unreachable: channel_pieces ends only by raising")


def dice_told(person: IrcPerson) -> dict[int, list[str]]:
    """Round -> the dice the gateway told this person privately."""
    told = {}
    for sender, target, text in person.seen:
        if sender == "dudo" and target == person.nick:
            found = DICE_TOLD.search(text)
            assert found is not None, text
            told[int(found.group(1))] = found.group(2).split()
    return told


def reveals(person: IrcPerson, channel: str) -> list[str]:
    """Every reveal said in the channel, whole: from "— DUDO by" to "N counted"."""
    said = (x for _, target, x in person.seen if target == channel)
    return reveal_runs(piece for text in said for piece in text.split(" · "))


def reveal_runs(pieces: Iterable[str]) -> list[str]:
    """The reveals among pieces of what was said, in order, each joined by " · "."""
    found: list[str] = []
    current: list[str] | None = None
    for piece in pieces:
        if piece.startswith(("— DUDO by", "— CALZA by")):
            current = [piece]
        elif current is not None:
            current.append(piece)
        if current is not None and "counted" in piece:
            found.append(" · ".join(current))
            current = None
    return found


def test_two_people_and_a_bot_play_a_whole_game_while_another_channel_plays_too(
    deployment: tuple[Workers, str], irc_server: IrcServer, real_redis: redis.Redis
) -> None:
    workers, url = deployment
    workers.irc("irc-1", irc_server.address, "--channel", "#dudo", "--channel", "#two", url=url)
    ana = IrcPerson(irc_server.port, "ana", "#dudo")
    ben = IrcPerson(irc_server.port, "ben", "#dudo")
    cleo = IrcPerson(irc_server.port, "cleo", "#two")
    ana.say("#dudo", "!new classic bots 1 dice 2")
    ana.wait_for(r"ana opens table (\S+) \(classic, 6 seats, 1 bot\)")
    ben.say("#dudo", "!join")
    ana.wait_for(r"ben joins")
    cleo.say("#two", "!new classic bots 2 dice 1")
    cleo.wait_for(r"cleo opens table")
    cleo.say("#two", "!start")
    ana.say("#dudo", "!start")
    ana.wait_for(r"The game begins: ana, ben, ")

    winner = play_until_over({"ana": ana, "ben": ben}, "#dudo")
    assert winner is not None and winner.startswith("Winner: ")
    assert play_until_over({"cleo": cleo}, "#two") is not None  # the other channel's game

    # Each person was told their dice every round they had some, privately, and they
    # were their own: that round's reveal in the channel shows the same dice for them.
    shown = reveals(ana, "#dudo")
    for person in (ana, ben):
        told = dice_told(person)
        assert told and 1 in told
        for round_no, dice in told.items():
            hand = re.search(rf"{person.nick} ((?:\[\d\] ?)+)", shown[round_no - 1])
            assert hand is not None and hand.group(1).split() == dice, (person.nick, shown)
    # Nobody but the dice's owner is ever sent them: every private line is one's own.
    for person in (ana, ben, cleo):
        assert all(t == person.nick or t.startswith("#") for _, t, _ in person.seen)
    # Dice in a channel only in reveals (the round is over then, every hand public).
    said = " · ".join(x for _, t, x in ana.seen if t == "#dudo")
    for reveal in shown:
        said = said.replace(reveal, "")
    assert not re.search(r"\[\d\]", said), said
    # The bot played (the bot service, through its own outbox).
    begun = next(x for _, t, x in ana.seen if "The game begins: " in x)
    bot = begun.split("The game begins: ")[1].split(" · ")[0].split(", ")[2]
    pieces = [p for _, t, x in ana.seen if t == "#dudo" for p in x.split(" · ")]
    assert any(p.startswith((f"{bot} bids", f"{bot} calls")) for p in pieces), (bot, pieces)
    # Under its own Redis user, nothing it did was refused; nothing was dead-lettered.
    assert denied(real_redis, admin.user_of("irc-1")) == []
    assert [real_redis.xlen(keys.dead_letters(p)) for p in range(8)] == [0] * 8
    log = (workers.folder / "irc-1.log").read_text()
    assert "irc_disconnected" not in log and "dispatch_failed" not in log  # never flooded off


def test_killed_mid_game_the_chat_gateway_comes_back_and_the_game_goes_on(
    deployment: tuple[Workers, str], irc_server: IrcServer
) -> None:
    workers, url = deployment
    workers.irc("irc-1", irc_server.address, "--channel", "#dudo", url=url)
    ana = IrcPerson(irc_server.port, "ana", "#dudo")
    table = open_and_play(ana, moves=2)
    next_turn(ana)  # her turn again: the table waits for her (a 60 s clock)
    time.sleep(1.0)  # her dice for this round came with it (they follow the call)
    current = max(dice_told(ana))

    workers.kill("irc-1")  # kill -9, mid-game
    workers.irc("irc-1", irc_server.address, "--channel", "#dudo", url=url)
    ana.wait_for(rf"Back: table {table} goes on")
    # Issue 32, item 2: what it stored never says her dice were told (a line still
    # queued dies with the process), so the new life tells her this round's dice again.
    ana.wait_for(lambda s, t, x: t == "ana" and f"round {current} · your dice" in x, 15)
    winner = play_until_over({"ana": ana}, "#dudo")
    assert winner is not None
    # The same table all along; Ana played after the restart too (her turns were called).
    said = [x for _, t, x in ana.seen if t == "#dudo"]
    after = said[next(i for i, x in enumerate(said) if "Back: table" in x) :]
    assert any("ana: your turn" in x for x in after)
    assert sum("opens table" in x for x in said) == 1
    assert dice_told(ana)  # and her dice kept coming, privately


def test_a_silent_player_is_reminded_then_the_house_plays_and_health_says_ready(
    deployment: tuple[Workers, str], irc_server: IrcServer
) -> None:
    workers, url = deployment
    port = free_port()
    workers.irc(
        "irc-1", irc_server.address, "--channel", "#dudo", "--turn-seconds", "6",
        "--health-port", str(port), url=url,
    )  # fmt: skip
    ready = wait_for(lambda: _probe(port, "/readyz"), 15, "the chat gateway ready")
    assert ready["irc"] is True and ready["workers"] >= 1
    assert _probe(port, "/healthz")["alive"] is True
    ana = IrcPerson(irc_server.port, "ana", "#dudo")
    ana.say("#dudo", "!new classic bots 1 dice 1")
    ana.wait_for("ana opens table")
    ana.say("#dudo", "!start")
    ana.wait_for(r"ana: your turn")  # and she says nothing
    ana.wait_for(r"ana: \d s left, then the house plays for you", timeout=10)
    ana.wait_for(r"\(the clock ran out: the house plays for ana\)", timeout=15)


def _probe(port: int, path: str) -> dict[str, Any] | None:
    """The health endpoint's answer if it says yes (200), else None."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=2) as answer:
            return dict(json.load(answer))
    except OSError:
        return None


def test_over_tls_with_the_servers_certificate_checked(
    deployment: tuple[Workers, str], tmp_path: Path
) -> None:
    workers, url = deployment
    server = IrcServer(tmp_path / "ngircd-tls", tls=True)
    try:
        tls = f"127.0.0.1:{server.tls_port}"
        # A certificate nobody vouches for: refused, and said so (it retries with backoff).
        partitions = str(workers.partitions)
        workers.spawn("untrusting", "irc", "--server", tls, "--tls", "--redis", url, "--id",
                      "irc-1", "--nick", "doubter", "--partitions", partitions)  # fmt: skip
        log = workers.folder / "untrusting.log"
        wait_for(lambda: "CERTIFICATE_VERIFY_FAILED" in log.read_text(), 20, "a refusal")
        workers.kill("untrusting")
        # Trusted (as a network's CA would be): it plays over TLS.
        workers.irc("irc-1", tls, "--tls", "--channel", "#dudo", url=url,
                    env={"SSL_CERT_FILE": str(server.cert)})  # fmt: skip
        ana = IrcPerson(server.port, "ana", "#dudo")
        ana.say("#dudo", "!new classic bots 1 dice 1")
        ana.wait_for("ana opens table")
    finally:
        server.stop()


def test_the_irc_server_restarts_mid_game_and_the_gateway_comes_back_to_the_channel(
    deployment: tuple[Workers, str], irc_server: IrcServer
) -> None:
    workers, url = deployment
    workers.irc("irc-1", irc_server.address, "--channel", "#dudo", "--turn-seconds", "90",
                url=url)  # fmt: skip
    ana = IrcPerson(irc_server.port, "ana", "#dudo")
    table = open_and_play(ana, moves=2)
    next_turn(ana)  # and she has not moved yet when the server goes

    irc_server.restart(down_for=1.0)  # everyone is cut off, the gateway too
    ana = IrcPerson(irc_server.port, "ana", "#dudo")
    # Issue 32, item 4: back, the gateway says so and calls her turn again (before, it
    # rejoined silently and the house played her turn when the clock ran out), whether
    # it came back before her (she joins: it calls her) or after (it calls on its return).
    called = ana.wait_for(r"(^|· )ana: your turn \(", timeout=25)  # her clock: 90 s
    ana.say("#dudo", "!table")  # and the table in a line has the bid to beat
    ana.wait_for(rf"{table} · Round \d+ · .* · (to beat: .* by \S+|no bid yet)", timeout=10)
    ana.read_upto = ana.seen.index(called)  # she answers that call, and plays on
    assert play_until_over({"ana": ana}, "#dudo") is not None
    log = (workers.folder / "irc-1.log").read_text()
    assert log.count("irc_registered") >= 2  # it connected again by itself


def test_redis_restarts_mid_game_and_the_channel_plays_on(
    irc_server: IrcServer, tmp_path: Path
) -> None:
    own = RedisServer(tmp_path / "redis", "--appendonly", "yes", "--appendfsync", "always")
    group = Workers(own.url, tmp_path)
    try:
        group.start("w1")
        group.bots("b1")
        group.irc("irc-1", irc_server.address, "--channel", "#dudo", "--turn-seconds", "10")
        ana = IrcPerson(irc_server.port, "ana", "#dudo")
        open_and_play(ana, moves=2)
        own.restart(down_for=2.0)
        assert play_until_over({"ana": ana}, "#dudo") is not None
        log = (group.folder / "irc-1.log").read_text()
        assert "outbox_read_failed" in log and "outbox_read_recovered" in log
        assert group.procs["irc-1"].poll() is None  # it never gave up
    finally:
        group.stop_all()
        own.stop()


def test_whoever_takes_a_nick_after_its_player_quit_is_someone_else(
    deployment: tuple[Workers, str], irc_server: IrcServer
) -> None:
    """Issue 29, item 9: on a network without accounts a nick is not an identity. Ana
    holds a seat and quits; Eve takes the nick "ana": her moves are not Ana's, she is
    told so, and no die of Ana's seat ever reaches her. A nick change keeps the seat."""
    workers, url = deployment
    workers.irc("irc-1", irc_server.address, "--channel", "#dudo", "--turn-seconds", "0",
                url=url)  # fmt: skip
    ana = IrcPerson(irc_server.port, "ana", "#dudo")
    ben = IrcPerson(irc_server.port, "ben", "#dudo")
    ana.say("#dudo", "!new classic bots 1 dice 2")
    ana.wait_for(r"ana opens table")
    ben.say("#dudo", "!join")
    ana.wait_for(r"ben joins")
    ana.say("#dudo", "!start")
    ana.wait_for(r"The game begins: ana, ben, ")
    ben._send("NICK benji")  # the seat follows a nick change
    ana.close()
    ben.wait_for(r"ana left: the house plays their seat")
    eve = IrcPerson(irc_server.port, "ana", "#dudo")
    eve.say("#dudo", "!dudo")
    eve.wait_for(r"ana: you have no seat at this table")
    eve.say("#dudo", "!odds")
    eve.wait_for(r"ana: you have no seat at this table")
    time.sleep(1.0)
    assert not any(t == "ana" for _, t, _ in eve.seen)  # nothing private, ever
    ben.nick = "benji"
    ben.say("#dudo", "!odds")  # and Ben, as benji, still holds his seat: answered privately
    ben.wait_for(lambda sender, target, text: target == "benji")
    ben.say("#dudo", "!table")  # and the table calls him by his new name (issue 32, item 6)
    ben.wait_for(r" · Round \d+ · \d+ dice: .*\bbenji \d")
    eve.close()
    ben.close()
