"""Issue 54, items 1-3: Matrix on a homeserver whose operator does not exempt our bot.

Synapse here keeps its default message limit (0.2 a second after a burst of 10) for the
bot; the people are exempted (their client is not what is tested). A whole game of two
people and a bot, the people taking a moment over each move as people do: every turn
call reaches the room after that player's dice for the round, a board's buttons go on
once each and before any edit of it (so a retry after a 429 loses none), a button
pressed is heard, every round's reveal is said, and the game ends.
The gateway was refused (429) on the way and lost nothing to it. How long the bot's
moves took to show is measured and printed (the figures: docs/benchmarks.md; a timed
assertion would flake on a shared machine).
"""

from __future__ import annotations

import json
import os
import re
import statistics
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from dudo.ops import admin

from ..matrix import MatrixPerson, SynapseServer
from ..servers import RedisServer
from .procs import Workers
from .test_matrix import DICE, ROOM, ROUND, TURN, Table, body, relation, reveals

BOT_SHOWN = re.compile(r"by \S+ \(bot\)\)$|^\S+ \(bot\) calls (Dudo|Calza)!")


@pytest.fixture
def limited(tmp_path: Path) -> Iterator[SynapseServer]:
    server = SynapseServer(tmp_path / "synapse", default_limits=True)
    yield server
    server.stop()


def test_a_whole_game_under_the_homeservers_default_limits(
    redis_server: RedisServer,
    real_redis: redis.Redis,
    workers: Workers,
    limited: SynapseServer,
) -> None:
    workers.start("w1")
    workers.bots("b1")
    url = admin.url_for(redis_server.url, "mx-1", admin.add_gateway(real_redis, "mx-1"))
    bot = limited.register("dudo")  # not exempted: the homeserver's own limit holds
    if os.environ.get("DUDO_TEST_MATRIX_EXEMPT") == "1":  # to compare (docs/benchmarks.md)
        limited.exempt(bot)
    ana, ben = MatrixPerson(limited, "ana"), MatrixPerson(limited, "ben")
    room_id = ana.create_room("dudo")
    ben.join(ROOM)
    workers.matrix("mx-1", limited.url, bot, "--room", ROOM, "--turn-seconds", "0", url=url)
    people = {"ana": ana, "ben": ben}
    # People take a moment over a move (3 s here; the figures: DUDO_TEST_MATRIX_THINK).
    think = float(os.environ.get("DUDO_TEST_MATRIX_THINK", "3"))
    table = Table(people, room_id, bot, think=think, press_once=True)
    ana.say(room_id, "!new classic bots 1 dice 2")
    ana.wait_for(lambda r, e: r == room_id and "opens table" in body(e), 60, "the table")
    ben.say(room_id, "!join")
    ben.wait_for(lambda r, e: r == room_id and "ben joins" in body(e), 60, "ben seated")
    ana.say(room_id, "!start")
    # The board's buttons may come a while after the turn call (lines go first).
    table.board = lambda timeout=60, board=table.board: board(timeout)  # type: ignore[method-assign]
    assert table.play() is not None, "no winner"

    events = ana.events(room_id)
    said = [e for e in events if e["sender"] == bot and e["type"] == "m.room.message"]
    # 1. Every turn call came after that player's dice of its round (in their own room).
    dice = {
        (name, int(m.group(2))): e["origin_server_ts"]
        for name, person in people.items()
        for e in person.events()
        if e["sender"] == bot
        for m in DICE.finditer(body(e))  # a message may hold two rounds' dice
    }
    round_no, calls = 1, 0
    for event in (e for e in said if not relation(e)):
        for line in body(event).splitlines():
            if (began := ROUND.match(line)) is not None:
                round_no = int(began.group(1))
            called = TURN.match(line)
            if called is not None and called.group(1) in ("ana", "ben"):
                calls += 1
                told = dice.get((called.group(1), round_no))
                assert told is not None and told <= event["origin_server_ts"], (
                    called.group(1), round_no, told, event["origin_server_ts"]
                )  # fmt: skip
    assert calls >= 4, calls
    # 2. The buttons: each once, in order; a board lacking some was never edited (a
    # board's buttons go before its edits: a 429 once left them off for the round).
    # While the homeserver limits the bot, the buttons wait for a moment without lines:
    # a round over before then has none left to press (people type !dudo).
    boards = [e for e in said if not relation(e) and re.search(r" · Round (\d+) · ", body(e))]
    room = [e for e in events if e["sender"] == bot]
    edited = {e["content"]["m.relates_to"]["event_id"] for e in said if relation(e)}
    assert boards and table.reacted, "no board, or no button pressed: nothing checked"
    for board in boards:
        keys = [e["content"]["m.relates_to"]["key"] for e in room if e["type"] == "m.reaction"
                and e["content"]["m.relates_to"]["event_id"] == board["event_id"]]  # fmt: skip
        assert keys == ["👎 dudo", "🎯 calza"][: len(keys)], keys  # each once, in order
        assert len(keys) == 2 or board["event_id"] not in edited, (body(board), keys)
    # 3. Every round's reveal said, whole (the last round's before the winner's line).
    assert len(reveals(said)) == round_no, (round_no, reveals(said))
    # 4. The limit was met (else this test measured nothing) and nothing was lost to it.
    log = (workers.folder / "mx-1.log").read_text()
    exempt = os.environ.get("DUDO_TEST_MATRIX_EXEMPT") == "1"
    assert exempt or "MLimitExceeded" in log, "the homeserver never refused the bot"
    assert "matrix_send_failed" not in log
    # The figures: from a person's move to the line that showed the bot's answer.
    moves = [e for e in events if e["sender"] != bot
             and e["type"] in ("m.room.message", "m.reaction")]  # fmt: skip
    shown_after = []
    for event in said:
        if relation(event) or not any(BOT_SHOWN.search(x) for x in body(event).splitlines()):
            continue
        before = [m for m in moves if m["origin_server_ts"] <= event["origin_server_ts"]]
        if before:
            shown_after.append((event["origin_server_ts"] - before[-1]["origin_server_ts"]) / 1000)
    figures = {
        "bot_moves_shown": len(shown_after),
        "median_s": round(statistics.median(shown_after), 2) if shown_after else None,
        "max_s": round(max(shown_after), 2) if shown_after else None,
        "refused_429": log.count("MLimitExceeded"),
        "think_s": think,
        "exempt": exempt,
        "shown_s": [round(x, 2) for x in shown_after],
        "game_s": round((said[-1]["origin_server_ts"] - said[0]["origin_server_ts"]) / 1000),
        "messages": len(room),
    }
    (workers.folder / "matrix-limits.json").write_text(json.dumps(figures, indent=1))
    print("matrix under default limits:", figures)
