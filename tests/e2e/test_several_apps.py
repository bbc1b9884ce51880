"""One table, several apps (issue 15, item 3; issue 32: Matrix too): a player in an IRC
channel, one in a Matrix room, one in a browser and one in a terminal sit at the same
table with a bot, through four gateways that each connect to Redis as a user of their
own (the IRC and the Matrix gateways, and two web gateways), and play to a winner. Each
is shown only their own dice: every hand a client was shown before a reveal is that
player's own, as the reveal proves afterwards."""

from __future__ import annotations

import json
import random
import re
import sys
import time
from pathlib import Path
from typing import Any

import pexpect
import redis

from dudo.ops import admin
from dudo.wire import keys

from ..integration.procs import Workers, wait_for
from ..integration.test_gateway_acl import denied
from ..integration.test_irc import dice_told, move, reveals
from ..integration.test_matrix import DICE, body
from ..integration.test_matrix import reveals as matrix_reveals
from ..irc import IrcPerson, IrcServer
from ..matrix import MatrixPerson, SynapseServer
from ..servers import RedisServer
from .test_browser import ARGS, DESKTOP, chromium, new_page, play_turn

CHANNEL = "#dudo"
TURN = re.compile(r"^(\S+): your turn \((.*)\)$")


def test_irc_matrix_browser_terminal_and_bot_at_one_table_through_four_gateway_users(
    redis_server: RedisServer, real_redis: redis.Redis, tmp_path: Path, output_dir: Path
) -> None:
    from playwright import sync_api as playwright

    group = Workers(redis_server.url, tmp_path)
    irc = IrcServer(tmp_path / "ngircd")
    synapse = SynapseServer(tmp_path / "synapse")
    terminal: Any = None
    try:
        group.start("w1")
        group.bots("b1")
        wait_for(lambda: real_redis.zcard(keys.GATEWAYS) >= 1, 15, "the bot service")
        users = {name: admin.add_gateway(real_redis, name) for name in ("web", "term", "irc", "mx")}
        url = {name: admin.url_for(redis_server.url, name, pw) for name, pw in users.items()}
        web = group.gateway("web", "--redis", url["web"])
        term = group.gateway("term", "--redis", url["term"])
        group.irc("irc", irc.address, "--channel", CHANNEL, url=url["irc"])
        bot = synapse.register("dudo")
        max_ = MatrixPerson(synapse, "max")
        room = max_.create_room("dudo")
        group.matrix("mx", synapse.url, bot, "--room", "#dudo:localhost", url=url["mx"])

        # Ana opens the table in the channel; Bea joins it from a browser, Tom from a terminal.
        ana = IrcPerson(irc.port, "ana", CHANNEL)
        ana.say(CHANNEL, "!new classic bots 1 dice 2")
        table = ana.wait_for(r"ana opens table (\S+) ")[2].split()[3]
        with playwright.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium(), args=ARGS)
            errors: list[str] = []
            bea = new_page(browser, DESKTOP, errors)
            frames: list[dict[str, Any]] = []
            bea.on(
                "websocket",
                lambda ws: ws.on("framereceived", lambda data: frames.append(_json(data))),
            )
            bea.goto(web)
            bea.fill("[data-test=name]", "Bea")
            bea.wait_for_selector(f"[data-test=table-{table}] [data-test=join]")
            bea.click(f"[data-test=table-{table}] [data-test=join]")
            ana.wait_for("Bea joins")
            terminal = pexpect.spawn(
                sys.executable, ["-m", "dudo", "play", term, "--join", table, "--name", "Tom"],
                encoding="utf-8", timeout=20,
            )  # fmt: skip
            transcript = output_dir / "several-apps-terminal.txt"
            terminal.logfile_read = transcript.open("w", encoding="utf-8")
            terminal.expect("Connected to table")
            ana.wait_for("Tom joins")
            # Max, in a Matrix room, takes the table up by its id and sits.
            max_.say(room, f"!join {table}")
            ana.wait_for("max joins")
            ana.say(CHANNEL, "!start")
            ana.wait_for("The game begins: ana, ")

            rng = random.Random(3)
            winner: dict[str, str | None] = {}
            moves = {"irc": 0, "web": 0, "term": 0, "matrix": 0}
            max_read = 0
            deadline = time.monotonic() + 300
            while len(winner) < 4:
                assert time.monotonic() < deadline, f"no winner everywhere: {winner}"
                # Ana, in the channel: every turn the channel calls for her.
                while ana.read_upto < len(ana.seen) and "irc" not in winner:
                    _, target, text = ana.seen[ana.read_upto]
                    ana.read_upto += 1
                    for piece in text.split(" · ") if target == CHANNEL else ():
                        called = TURN.match(piece)
                        if called and called.group(1) == "ana":
                            move({"ana": ana}, CHANNEL, "ana", called.group(2))
                            moves["irc"] += 1
                        elif piece.startswith("Winner: "):
                            winner["irc"] = piece.removeprefix("Winner: ")
                # Max, in the Matrix room: every turn called for him (a mention).
                events = max_.events(room)
                while max_read < len(events) and "matrix" not in winner:
                    event, max_read = events[max_read], max_read + 1
                    if event["sender"] != bot or "m.relates_to" in event["content"]:
                        continue
                    for line in body(event).splitlines():
                        called = TURN.match(line)
                        if called and called.group(1) == "max":
                            assert event["content"]["m.mentions"]["user_ids"] == [max_.user_id]
                            standing = called.group(2)
                            max_.say(room, "1 2" if "open the round" in standing else "!dudo")
                            moves["matrix"] += 1
                        elif line.startswith("Winner: "):
                            winner["matrix"] = line.removeprefix("Winner: ").split(" · ")[0]
                # Bea, in the browser: through the page's buttons.
                if "web" not in winner:
                    over = bea.query_selector("[data-test=game-over]")
                    if bea.query_selector("[data-test=reveal]"):
                        bea.click("[data-test=reveal-ok]")
                    elif over:
                        winner["web"] = over.get_attribute("data-winner")
                    elif bea.query_selector("[data-test=your-turn]"):
                        play_turn(bea, rng)
                        moves["web"] += 1
                # Tom, in the terminal: dudo when he can, else the suggestion.
                if "term" not in winner:
                    got = terminal.expect(
                        [r"Your turn\. ([^\n]*)\n> ", r"Winner: ([^\n]+)", pexpect.TIMEOUT],
                        timeout=0.05,
                    )
                    if got == 0:
                        legal = terminal.match.group(1)
                        hint = re.search(r"Suggestion: (\d+ \d)\.", legal)
                        terminal.sendline("dudo" if "dudo" in legal or not hint else hint[1])
                        moves["term"] += 1
                    elif got == 1:
                        winner["term"] = terminal.match.group(1).strip()
                time.sleep(0.02)
            bea.screenshot(path=str(output_dir / "several-apps-browser.png"), full_page=True)
            browser.close()
            assert errors == []

        assert all(moves.values()), moves  # each played
        # The same winner everywhere (the page names a seat, the texts a name).
        assert winner["irc"] == winner["term"].removesuffix(" (you)") == winner["matrix"], winner
        views = [f for f in frames if f.get("type") == "view" and f.get("game")]
        players = [p["name"] if p else None for p in views[-1]["players"]]
        # (a bot's name in the texts carries its mark, "Tomás (bot)"; issue 54, item 9)
        named = winner["irc"].removesuffix(" (bot)")
        assert players[int(winner["web"])] == named, (players, winner)

        # Each was shown only their own dice: what they saw during a round is their own
        # hand in that round's reveal, and no other hand reached them before it.
        shown = reveals(ana, CHANNEL)
        for round_no, dice in dice_told(ana).items():
            assert re.search(rf"ana {re.escape(' '.join(dice))}", shown[round_no - 1])
        shown = matrix_reveals([e for e in max_.events(room) if e["sender"] == bot])
        told = {int(m.group(2)): m.group(3) for e in max_.events()
                if e["sender"] == bot and (m := DICE.search(body(e)))}  # fmt: skip
        assert told
        for round_no, dice in told.items():
            assert re.search(rf"max {re.escape(dice)}", shown[round_no - 1]), (dice, shown)
        public = [e for e in max_.events(room) if DICE.search(body(e))]
        assert public == []  # his dice in his direct room alone
        _only_own_dice_in_the_browser(views)
        _only_own_dice_in_the_terminal(transcript.read_text(encoding="utf-8"))

        # Three gateways, three Redis users: none was refused anything it needed, and
        # no entry was dead-lettered.
        for name in users:
            assert denied(real_redis, admin.user_of(name)) == [], name
        assert [real_redis.xlen(keys.dead_letters(p)) for p in range(8)] == [0] * 8
    finally:
        if terminal is not None:
            terminal.close(force=True)
        group.stop_all()
        irc.stop()
        synapse.stop()
        for name in admin.gateways(real_redis):
            admin.revoke_gateway(real_redis, name)


def _json(data: Any) -> dict[str, Any]:
    try:
        parsed = json.loads(data)
    except (TypeError, ValueError):
        return {}
    return parsed if isinstance(parsed, dict) else {}


def _only_own_dice_in_the_browser(views: list[dict[str, Any]]) -> None:
    """Every view the page got holds hands in two places only: its own seat's
    (``game.dice``) and the last round's reveal (``game.last_round.dice``), and a third
    once the game is over (``game.log``, the reveals of every round). The hand of round r
    is the seat's hand in the reveal of round r."""
    hands: dict[int, list[int]] = {}
    for view in views:
        game = view["game"]
        assert game.get("seat") == view["seat"]
        # (and, once the game is over, its log: every round's reveal, as each was shown)
        shown = {("dice",), ("last_round", "dice")}
        if game["phase"] == "over":
            shown.add(("log", "dice"))
        assert set(_paths_named(game, "dice")) <= shown, game
        if game.get("dice"):
            hands.setdefault(game["round"], game["dice"])
    revealed = {
        v["game"]["last_round"]["round"]: v["game"]["last_round"]["dice"][v["seat"]]
        for v in views
        if v["game"].get("last_round")
    }
    checked = [r for r in hands if r in revealed]
    assert checked, (hands, revealed)
    assert all(sorted(hands[r]) == sorted(revealed[r]) for r in checked)
    # The log at the end holds only what the reveals showed, round by round.
    reveals = {v["game"]["last_round"]["round"]: v["game"]["last_round"]["dice"]
               for v in views if v["game"].get("last_round")}  # fmt: skip
    for view in views:
        for logged in view["game"].get("log", []):
            assert logged["round"] not in reveals or logged["dice"] == reveals[logged["round"]]


def _paths_named(value: Any, name: str, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = []
    if isinstance(value, dict):
        for key, inner in value.items():
            if key == name:
                found.append((*path, key))
            found += _paths_named(inner, name, (*path, key))
    elif isinstance(value, list):
        for inner in value:
            found += _paths_named(inner, name, path)
    return found


def _only_own_dice_in_the_terminal(text: str) -> None:
    """Each reveal the terminal printed shows, for Tom, the hand it last told him."""
    mine: str | None = None
    reveal = False
    checked = 0
    for line in text.splitlines():
        told = re.search(r"Your dice: ((?:\[\d\] ?)+)", line)
        if told:
            mine = told.group(1).strip()
        elif re.search(r"— (DUDO|CALZA) by", line):
            reveal = True
        elif reveal and "counted" in line:
            reveal = False
        elif reveal:
            hand = re.match(r"\s+Tom(?: \(you\))?\s+((?:\[\d\] ?)+)", line)
            if hand:
                assert hand.group(1).strip() == mine, (hand.group(1), mine)
                checked += 1
    assert checked, "Tom saw a reveal of his own hand"
