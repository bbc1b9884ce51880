"""Hostile chat users on a real IRC server (ngIRCd) against the chat gateway (``dudo
irc``, a real process under its own Redis user), issue 50 items 1 and 13:

- ngIRCd announces ``CASEMAPPING=ascii``: "Ana[" and "Ana{" are two people there. The
  gateway folded nicks the RFC 1459 way, so "Ana{" joining the channel was told
  Ana['s dice and its bids were played as Ana['s.
- Four nicks asking for help in private held the channel's answers 15 s back: the
  lines waited in one queue, in the order they came."""

from __future__ import annotations

import re
import threading
import time

import redis

from ..integration.procs import Workers
from ..integration.test_irc import TURN, channel_pieces
from ..irc import IrcPerson, IrcServer


def test_a_nick_the_server_keeps_apart_is_someone_else(
    deployment: tuple[Workers, str], irc_server: IrcServer, real_redis: redis.Redis
) -> None:
    workers, url = deployment
    workers.irc("irc-1", irc_server.address, "--channel", "#dudo", url=url)
    ana = IrcPerson(irc_server.port, "Ana[", "#dudo")
    ana.say("#dudo", "!new classic bots 1 dice 2")
    ana.wait_for(r"Ana\[ opens table")
    ana.say("#dudo", "!start")
    ana.wait_for("The game begins")
    twin = IrcPerson(irc_server.port, "Ana{", "#dudo")  # another person, on this server

    # Her turn: the twin bids first, then she does.
    for piece in channel_pieces(ana, "#dudo", 60, "Ana['s turn"):
        called = TURN.match(piece)
        if called and called.group(1) == "Ana[":
            break
    standing = called.group(2)
    move = "!bid 1 2" if "open the round" in standing else "!dudo"
    twin.say("#dudo", move)
    twin.wait_for(lambda s, t, x: "Ana{" in x, timeout=10)  # the gateway answered the twin
    time.sleep(0.5)
    said = [x for _, t, x in ana.seen if t == "#dudo"]
    assert not any(re.search(r"Ana\[ (bids|calls)", x) for x in said), said
    # Her own move is hers.
    ana.say("#dudo", move)
    ana.wait_for(r"Ana\[ (bids|calls)")
    # The twin was never told a die: nothing private reached it.
    assert [x for s, t, x in twin.seen if t == "Ana{"] == [], twin.seen


def test_people_flooding_in_private_do_not_hold_the_channel_back(
    deployment: tuple[Workers, str], irc_server: IrcServer
) -> None:
    workers, url = deployment
    workers.irc("irc-1", irc_server.address, "--channel", "#dudo", url=url)
    ana = IrcPerson(irc_server.port, "ana", "#dudo")
    ana.say("#dudo", "!new classic bots 1 dice 2")
    ana.wait_for(r"ana opens table")
    flooders = [IrcPerson(irc_server.port, f"flood{i}") for i in range(4)]
    stop = threading.Event()

    def flood(person: IrcPerson) -> None:
        while not stop.is_set():
            person.say("dudo", "help")
            time.sleep(0.05)

    threads = [threading.Thread(target=flood, args=(p,), daemon=True) for p in flooders]
    for thread in threads:
        thread.start()
    try:
        # Until private answers wait in the gateway's queue (each flooder is answered
        # about once a second, at most two lines a second go out).
        flooders[0].wait_for(lambda s, t, x: t == "flood0", timeout=10)
        time.sleep(4.0)
        while not ana.messages.empty():  # what the channel said before the question
            ana.messages.get_nowait()
        asked = time.monotonic()
        ana.say("#dudo", "!table")
        ana.wait_for("waiting for players", timeout=20)
        waited = time.monotonic() - asked
    finally:
        stop.set()
        for thread in threads:
            thread.join()
    answered = sum(1 for p in flooders for _, t, _ in p.seen if t == p.nick)
    assert answered >= 4  # the flood was real and answered...
    assert waited < 3.0, waited  # ...and the channel's answer did not wait behind it
