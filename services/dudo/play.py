"""``dudo play [URL]``: play from a terminal, through a gateway's HTTP API and WebSocket.

Type ``3 5`` to bid three fives, ``dudo``, ``calza``, ``left`` / ``right`` when asked
for the direction, ``start`` (host), ``help``, ``quit``. Each view is drawn as text;
each finished round is shown with every die and who lost or won one back.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import threading
from collections.abc import Awaitable
from typing import Any

import aiohttp

from .client import DudoApi, DudoConnection, DudoError

FACES = {1: "ones", 2: "twos", 3: "threes", 4: "fours", 5: "fives", 6: "sixes"}
PIP = {1: "⚀", 2: "⚁", 3: "⚂", 4: "⚃", 5: "⚄", 6: "⚅"}
HELP = "commands: <quantity> <face> (a bid, e.g. 3 5) · dudo · calza · left · right · start · quit"


def dice_text(dice: list[int]) -> str:
    return " ".join(f"[{d}]" for d in dice)


def render(view: dict[str, Any]) -> str:
    """A view as a few lines of text (pure, for the terminal and its tests)."""
    lines = []
    game = view["game"]
    players = view["players"]

    def name(seat: int) -> str:
        p = players[seat]
        label = p["name"] if p else f"#{seat + 1}"
        return f"{label} (you)" if seat == view["seat"] else label

    if game is None:
        taken = sum(1 for p in players if p)
        lines.append(f"Table {view['table']}: waiting for players ({taken}/{len(players)})")
        return "\n".join(lines)
    flag = "  PALIFICO: the face is locked" if game["palifico"] and game["phase"] != "over" else ""
    lines.append(f"Table {view['table']} · round {game['round']}{flag}")
    for seat, p in enumerate(players):
        if p is None:
            continue
        count = game["dice_counts"][seat]
        mark = "  ← turn" if game["turn"] == seat and game["phase"] != "over" else ""
        bot = " [bot]" if p["bot"] else ""
        lines.append(f"  {name(seat):<18}{bot:<6} {'■' * count:<6} {count}{mark}")
    if game["phase"] == "over":
        lines.append(f"Winner: {name(game['winner'])}")
        lines.append("Standings: " + ", ".join(name(s) for s in game["standings"]))
        return "\n".join(lines)
    if game.get("dice"):
        lines.append(f"Your dice: {dice_text(game['dice'])}")
    if game["bids"]:
        bids = ", ".join(f"{name(s)} {q}×{f}" for s, q, f in game["bids"])
        lines.append(f"Bids: {bids}")
    else:
        lines.append("No bid yet.")
    legal = game.get("legal")
    if legal and game["turn"] == view["seat"]:
        lines.append("Your turn. " + legal_text(legal, game))
    return "\n".join(lines)


def legal_text(legal: dict[str, Any], game: dict[str, Any]) -> str:
    if legal["direction"]:
        return "Choose the direction: left or right."
    parts = []
    top = legal["max_quantity"]
    for face, floor in enumerate(legal["bid"], 1):
        if floor is not None:
            parts.append(f"{floor}..{top}×{face}")
    options = ["bid " + ", ".join(parts)] if parts else []
    if legal["dudo"]:
        options.append("dudo")
    if legal["calza"]:
        options.append("calza")
    suggestion = suggest(legal, game)
    hint = f" Suggestion: {suggestion}" if suggestion else ""
    return "Legal: " + " | ".join(options) + "." + hint


def suggest(legal: dict[str, Any], game: dict[str, Any]) -> str | None:
    """The smallest raise on the standing face (or any face), as you would type it."""
    standing = game["bids"][-1][2] if game["bids"] else None
    floors = legal["bid"]
    if standing and floors[standing - 1] is not None:
        return f"{floors[standing - 1]} {standing}"
    for face in (2, 3, 4, 5, 6, 1):
        if floors[face - 1] is not None:
            return f"{floors[face - 1]} {face}"
    return None


def reveal_text(last: dict[str, Any], players: list[dict[str, Any] | None]) -> str:
    bidder, q, face = last["bid"]

    def name(seat: int | None) -> str:
        p = players[seat] if seat is not None else None
        return p["name"] if p else "?"

    lines = [f"— {last['call'].upper()} by {name(last['caller'])} on {name(bidder)}'s {q}×{face}"]
    for seat, hand in enumerate(last["dice"]):
        if hand:
            lines.append(f"    {name(seat):<18} {dice_text(hand)}")
    outcome = f"    {last['count']} counted"
    if last["loser"] is not None:
        outcome += f"; {name(last['loser'])} loses a die"
    if last["gainer"] is not None:
        outcome += f"; {name(last['gainer'])} wins a die back"
    lines.append(outcome)
    return "\n".join(lines)


def parse(line: str) -> dict[str, Any] | str | None:
    """A typed command as a client message, or a word the client handles itself."""
    words = line.strip().lower().split()
    if not words:
        return None
    if words[0] in ("quit", "exit", "help", "start"):
        return words[0]
    if words[0] in ("dudo", "calza"):
        return {"type": words[0]}
    if words[0] in ("left", "right"):
        return {"type": "direction", "value": -1 if words[0] == "left" else 1}
    if len(words) == 2 and all(w.isdigit() for w in words):
        return {"type": "bid", "quantity": int(words[0]), "face": int(words[1])}
    return "help"


class Terminal:
    def __init__(self, base: str, out: Any = sys.stdout) -> None:
        self.base = base.rstrip("/")
        self.out = out
        self.view: dict[str, Any] | None = None
        self.revealed: int | None = None
        self.done = asyncio.Event()
        self.lines: asyncio.Queue[str | None] = asyncio.Queue()

    def start_reading(self) -> None:
        """Read stdin in a daemon thread (it never keeps the program alive)."""
        loop = asyncio.get_running_loop()

        def pump() -> None:
            for line in sys.stdin:
                loop.call_soon_threadsafe(self.lines.put_nowait, line)
            loop.call_soon_threadsafe(self.lines.put_nowait, None)

        threading.Thread(target=pump, name="stdin", daemon=True).start()

    def say(self, text: str) -> None:
        print(text, file=self.out, flush=True)

    async def ask(self, prompt: str) -> str:
        self.say(prompt)
        line = await self.lines.get()
        if line is None:
            raise EOFError
        return line.strip()

    async def seat(self, api: DudoApi, options: dict[str, Any]) -> str:
        """Create a table or join one; returns the seat token."""
        name = options.get("name") or await self.ask("Your name?")
        try:
            if options.get("create"):
                rules = {
                    "preset": options.get("preset") or "classic",
                    **({"start_dice": options["start_dice"]} if options.get("start_dice") else {}),
                }
                made = await api.create_table(
                    rules=rules,
                    seats=options.get("seats") or 3,
                    bots=["normal"] * (options.get("bots") or 0),
                    name=name,
                )
                self.say(f"Table {made['table']} created; you are seat {made['seat']}.")
                return str(made["token"])
            table = options.get("join")
            if not table:
                tables = (await api.tables())["tables"]
                for i, e in enumerate(tables, 1):
                    self.say(f"  {i}. {e['table']} {e['preset']} {e['taken']}/{e['seats']}")
                choice = await self.ask("Number to join, or 'new' for a table against two bots:")
                if choice == "new" or not tables:
                    return await self.seat(api, {"name": name, "create": True, "bots": 2})
                table = tables[int(choice) - 1]["table"]
            return str((await api.join_table(table, name=name))["token"])
        except DudoError as exc:
            raise SystemExit(f"could not take a seat: {exc.message} ({exc.code})") from exc

    async def run(self, options: dict[str, Any]) -> None:
        self.start_reading()
        async with DudoApi(self.base) as api:
            token = await self.seat(api, options)
        # The official client (dudo.client): reconnects, says hello again, answers by id.
        async with DudoConnection(self.base, token) as conn:
            reader = asyncio.create_task(self.receive(conn))
            try:
                await self.commands(conn)
            finally:
                reader.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await reader

    def show(self, msg: dict[str, Any]) -> None:
        if msg["type"] == "view":
            self.view = msg
            last = (msg["game"] or {}).get("last_round")
            if last and last["round"] != self.revealed:
                if self.revealed is not None or any(e["type"] == "reveal" for e in msg["events"]):
                    self.say(reveal_text(last, msg["players"]))
                self.revealed = last["round"]
            self.say(render(msg))
            if msg["status"] == "over":
                self.done.set()
        elif msg["type"] == "error":
            self.say(f"! {msg['message']} ({msg['code']})")
        elif msg["type"] == "welcome":
            self.say(f"Connected to table {msg['table']} as seat {msg['seat']}. {HELP}")

    async def receive(self, conn: DudoConnection) -> None:
        if conn.welcome is not None:
            self.show(conn.welcome)
        async for msg in conn.messages():
            self.show(msg)
            if self.done.is_set():
                return

    async def request(self, pending: Awaitable[Any]) -> None:
        """A start or an action: its refusal is printed (success shows in the views)."""
        try:
            await pending
        except DudoError as exc:
            if exc.code != "closed":
                self.say(f"! {exc.message} ({exc.code})")

    async def commands(self, conn: DudoConnection) -> None:
        tasks: set[asyncio.Task[None]] = set()
        while not self.done.is_set():
            reading = asyncio.ensure_future(self.lines.get())
            finished = asyncio.ensure_future(self.done.wait())
            done, _ = await asyncio.wait([reading, finished], return_when=asyncio.FIRST_COMPLETED)
            if reading not in done:
                reading.cancel()
                return
            finished.cancel()
            line = reading.result()
            if line is None:
                return
            command = parse(line)
            if command is None:
                continue
            if command == "quit":
                return
            if command == "help":
                self.say(HELP)
                continue
            pending = conn.start() if command == "start" else conn.act(command)
            task = asyncio.create_task(self.request(pending))
            tasks.add(task)
            task.add_done_callback(tasks.discard)


def main(base: str, options: dict[str, Any]) -> int:
    try:
        asyncio.run(Terminal(base).run(options))
    except (EOFError, KeyboardInterrupt):
        pass
    except aiohttp.ClientError as exc:
        print(f"dudo play: cannot reach {base}: {exc}", file=sys.stderr)
        return 1
    return 0
