"""Issue 32 on a real IRC server (ngIRCd), a real redis-server, a worker and the bot
service: what a chat player met. Dice told again on asking; refusals in the player's
words and language; usage lines; private answers in private; a table's own clock, odds
and direction; the end of a game; a table its people left gives way; and the gateway
kit's six checks, passed by the IRC gateway while people play."""

from __future__ import annotations

import re
import threading
import time
from typing import Any

import redis

from dudo.conformance.gateway import check

from ..irc import IrcPerson, IrcServer
from ..servers import RedisServer
from .procs import Workers
from .test_irc import dice_told, play_until_over

TURN = re.compile(r"(?:^|· )(ana|ben): your turn \(")


def said_to(
    person: IrcPerson, pattern: str, target: str | None = None, timeout: float = 30
) -> re.Match[str]:
    """The next thing said to ``person`` (in ``target``: a channel, else their nick) that
    matches, read on from the last match, within a line too: the gateway joins lines
    queued for one target with " · ", so two things waited for may come in one line
    (``^`` and ``$`` in ``pattern`` mean the ends of one of its pieces)."""
    pattern = pattern.replace("^", r"(?:^|(?<= · ))").replace("$", r"(?=$| · )")
    where = target or person.nick
    # Kept on the person: a dict keyed by id() once handed a new person the cursor of
    # one from an earlier test that had been freed at the same address.
    index, offset = person.said_cursor
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        while index < len(person.seen):
            _, to, text = person.seen[index]
            found = re.search(pattern, text[offset:]) if to == where else None
            if found:
                person.said_cursor = (index, offset + found.end())
                return found
            index, offset = index + 1, 0
        time.sleep(0.02)
    recent = "\n".join(f"{s} -> {t}: {x}" for s, t, x in person.seen[-8:])
    raise AssertionError(f"{person.nick} was not told {pattern!r} in {timeout} s:\n{recent}")




def first_call(person: IrcPerson, timeout: float = 30) -> tuple[str, str, str]:
    """The first line in the channel that calls a person's turn (ana's or ben's)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = [m for m in person.seen if m[1] == "#dudo" and TURN.search(m[2])]
        if found:
            return found[0]
        time.sleep(0.05)
    raise AssertionError(f"no turn was called: {person.seen[-5:]}")


def test_a_chat_player_asks_again_and_is_answered_in_their_words(
    deployment: tuple[Workers, str],
    irc_server: IrcServer,
    redis_server: RedisServer,
) -> None:
    workers, url = deployment
    workers.irc("irc-1", irc_server.address, "--channel", "#dudo", url=url)
    ana = IrcPerson(irc_server.port, "ana", "#dudo")
    ben = IrcPerson(irc_server.port, "ben", "#dudo")
    # Item 8: the table's own clock, odds and the loser choosing the direction.
    ana.say("#dudo", "!new classic bots 1 dice 2 clock 90 odds dir")
    said_to(ana, r"ana opens table \S+ \(classic, 6 seats, 1 bot\)", "#dudo")  # item 7: "1 bot"
    ben.say("#dudo", "!join")
    said_to(ana, "ben joins", "#dudo")
    ana.say("#dudo", "!start")
    said_to(ana, "The game begins: ana, ben, ", "#dudo")
    people = {"ana": ana, "ben": ben}
    called = first_call(ana)
    turn = TURN.search(called[2]).group(1)  # type: ignore[union-attr]
    other = "ben" if turn == "ana" else "ana"
    time.sleep(1.0)  # the dice follow the call
    # Item 1: !dice tells her own dice again, privately, as they were told.
    (current, dice), *_ = sorted(dice_told(ana).items(), reverse=True)
    ana.say("#dudo", "!dice")
    again = said_to(ana, rf"round ({current}) · your dice: ((?:\[\d\] ?)+)")
    assert again.group(2).split() == dice
    # Item 5: out of turn, named by nick, in the channel's language, no English inside.
    people[other].say("#dudo", "!dudo")
    said_to(ana, rf"^{other}: not your turn: it is {turn}'s$", "#dudo")
    ana.say("#dudo", "!idioma es")
    said_to(ana, "Idioma: español", "#dudo")
    people[other].say("#dudo", "!dudo")
    said_to(ana, rf"^{other}: no es tu turno: le toca a {turn}$", "#dudo")
    ana.say("#dudo", "!lang en")
    said_to(ana, "Language: English", "#dudo")
    # Item 7: a usage line, not the whole help; a private question answered privately.
    ben.say("#dudo", "!bid 3")
    line = said_to(ben, r"^ben: usage: !bid Q F(?:(?!·).)*", "#dudo")
    assert len(line.group(0)) < 80, line  # a line, not the 230-character help
    ben.say("dudo", "table")
    # The bid to beat may be a bot's, its name marked: "by Greta (bot)".
    said_to(ben, r" · Round \d+ · .* · (to beat: .* by \S+(?: \(bot\))?|no bid yet)$", "ben")
    ben.say("dudo", "odds")  # assisted: odds are there (item 8: !odds works at a chat table)
    said_to(ben, r"^(Odds: .* is true \d+%|There is no bid to beat yet)$", "ben")
    # And the game plays to its end (from the call above); after it, !start and !leave
    # say what to do.
    ana.read_upto = ana.seen.index(called)
    assert play_until_over(people, "#dudo") is not None
    for typed in ("!start", "!leave"):
        ben.say("#dudo", typed)
        said_to(ben, r"^ben: this game is over: !new opens another table$", "#dudo")

    # Item 8: the gateway kit's six checks ("trims its outbox" among them), on a game
    # played from start to end while it watches (it counts refusals: the ones above were
    # asked for, so it watches this game only).
    verdicts: dict[str, Any] = {}
    kit = threading.Thread(
        target=lambda: verdicts.update(
            irc=check(redis.Redis.from_url(redis_server.url), "irc-1", 15.0, workers.partitions)
        )
    )
    kit.start()
    ana.read_upto = len(ana.seen)
    ana.say("#dudo", "!new classic bots 2 dice 3")
    ana.say("#dudo", "!start")
    assert play_until_over({"ana": ana}, "#dudo") is not None
    kit.join()
    assert verdicts["irc"].ok, verdicts["irc"].text()


def test_a_table_its_people_left_gives_way(
    deployment: tuple[Workers, str], irc_server: IrcServer
) -> None:
    """Items 3 and 6: the host leaves an open table (the host passes on to the next
    person); everyone leaves a game (the house plays it at once, not a clock a turn,
    and the absent player is out after three turns: the bot wins); an open
    table whose people all left gives way to the next person's !new (it answered
    "already being played" and "not_host" until the open table expired, an hour)."""
    workers, url = deployment
    workers.irc("irc-1", irc_server.address, "--channel", "#dudo", url=url)
    ana = IrcPerson(irc_server.port, "ana", "#dudo")
    ben = IrcPerson(irc_server.port, "ben", "#dudo")
    ana.say("#dudo", "!new classic bots 1 dice 5")
    said_to(ben, r"ana opens table (\S+) ", "#dudo")
    ben.say("#dudo", "!join")
    said_to(ben, "ben joins", "#dudo")
    ana.close()
    said_to(ben, "ana leaves", "#dudo")  # her seat is free
    ben.say("#dudo", "!start")  # he is the host now
    said_to(ben, r"The game begins: ben, ", "#dudo")
    cleo = IrcPerson(irc_server.port, "cleo", "#dudo")
    ben.close()  # the house plays his seat at once (not at each turn's clock)...
    said_to(cleo, r"ben left: the house plays", "#dudo")
    # ...and not to a win (item 6): three turns in a row (or more: the count is taken at
    # the round's end), and he is out then.
    turns = said_to(cleo, r"\(ben let the house play (\d+) turns in a row\)", "#dudo")
    assert int(turns.group(1)) >= 3, turns.group(0)
    said_to(cleo, r"^ben is out\.$", "#dudo")
    said_to(cleo, r"Winner: (?!ben)", "#dudo")
    dora = IrcPerson(irc_server.port, "dora", "#dudo")
    dora.say("#dudo", "!new classic bots 1 dice 1")
    table = said_to(cleo, r"dora opens table (\S+) ", "#dudo").group(1)
    dora.close()  # an open table whose only person went
    said_to(cleo, "dora leaves", "#dudo")
    cleo.say("#dudo", "!new classic bots 2 dice 1")
    said_to(cleo, r"cleo opens table (\S+) \(classic, 6 seats, 2 bots\)", "#dudo")
    left = f"Nobody here plays table {table} any more: it is left to the house"
    assert any(left in x for _, t, x in cleo.seen if t == "#dudo"), cleo.seen[-3:]
    cleo.read_upto = len(cleo.seen)
    cleo.say("#dudo", "!start")
    assert play_until_over({"cleo": cleo}, "#dudo") is not None
    cleo.close()
