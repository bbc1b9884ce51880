"""``dudo play [URL]``: play from a terminal, through a gateway's HTTP API and WebSocket.

Type ``3 5`` to bid three fives, ``dudo``, ``calza``, ``left`` / ``right`` when asked
who plays next, ``start`` (host), ``help``, ``quit``. The table is drawn when a round
starts; then each move is one line, each finished round shows every die and who lost
or won one back, and your turn ends with a prompt. The text is dudo.text's.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import threading
from collections.abc import Awaitable
from typing import Any

import aiohttp

from dudo_client import DudoApi, DudoConnection, DudoError

from ..text import event_line, odds_text, parse, render, reveal_text, say, turn_text


class Terminal:
    def __init__(self, base: str, out: Any = sys.stdout, lang: str = "en") -> None:
        self.base = base.rstrip("/")
        self.out = out
        self.lang = lang
        self.view: dict[str, Any] | None = None
        self.round: int | None = None  # the round whose table was drawn last
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
        name = options.get("name") or await self.ask(say("name?", self.lang))
        try:
            if options.get("create"):
                return await self.create(api, name, options)
            table = options.get("join")
            if not table:
                tables = (await api.tables())["tables"]
                if not tables:
                    self.say(say("no_table", self.lang))
                    return await self.create(api, name, {**options, "bots": 2, "seats": 3})
                for i, e in enumerate(tables, 1):
                    host = next((n for n in e["names"] if n), "?")
                    self.say(say("table_line", self.lang, i=i, host=host, preset=e["preset"],
                                 taken=e["taken"], seats=e["seats"]))  # fmt: skip
                choice = await self.ask(say("pick", self.lang))
                if not choice.isdigit() or not 1 <= int(choice) <= len(tables):
                    return await self.create(api, name, {**options, "bots": 2, "seats": 3})
                table = tables[int(choice) - 1]["table"]
            return str((await api.join_table(table, name=name))["token"])
        except DudoError as exc:
            raise SystemExit(f"could not take a seat: {exc.message} ({exc.code})") from exc

    async def create(self, api: DudoApi, name: str, options: dict[str, Any]) -> str:
        rules: dict[str, Any] = {"preset": options.get("preset") or "classic"}
        if options.get("start_dice"):
            rules["start_dice"] = options["start_dice"]
        if options.get("odds"):
            rules["assisted"] = True
        if options.get("clock"):
            rules["turn_seconds"] = options["clock"]
        rules.update(options.get("rules") or {})
        seats = options.get("seats") or 3
        bots = min(options.get("bots", seats - 1), seats - 1)
        made = await api.create_table(
            rules=rules, seats=seats, bots=[options.get("level") or "normal"] * bots, name=name
        )
        self.say(
            say("created", self.lang, table=made["table"], seat=made["seat"] + 1, seats=seats)
        )
        return str(made["token"])

    async def run(self, options: dict[str, Any]) -> None:
        self.start_reading()
        async with DudoApi(self.base) as api:
            token = await self.seat(api, options)
        # The official client (dudo_client): reconnects, says hello again, answers by id.
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
            self.show_view(msg)
        elif msg["type"] == "error":
            self.say(f"! {msg['message']} ({msg['code']})")
        elif msg["type"] == "welcome":
            seat = (
                say("watching", self.lang)
                if msg["seat"] is None
                else say("seat", self.lang, n=msg["seat"] + 1)
            )
            self.say(say("connected", self.lang, table=msg["table"], seat=seat,
                         help=say("help", self.lang)))  # fmt: skip

    def show_view(self, view: dict[str, Any]) -> None:
        """What changed, a line each; the whole table when a round starts; your turn."""
        self.view = view
        game = view["game"]
        for event in view["events"]:
            if event["type"] == "reveal" and game and game.get("last_round"):
                self.say(reveal_text(view, self.lang))
            line = event_line(view, event, self.lang)
            if line:
                self.say(line)
        current = game["round"] if game else None
        if current != self.round or game is None or view["status"] == "over":
            self.round = current
            self.say(render(view, self.lang))
        if view["status"] == "over":
            self.done.set()
        elif game and game.get("legal") and game["turn"] == view["seat"]:
            self.say(turn_text(view, self.lang))
            print("> ", end="", file=self.out, flush=True)

    async def receive(self, conn: DudoConnection) -> None:
        async for msg in conn.messages():  # the welcome first, then the views
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
            if command in ("table", "dice", "odds") and self.view is not None:
                text = odds_text if command == "odds" else render  # the table shows your dice
                self.say(text(self.view, self.lang))
                continue
            if command == "start":
                pending = conn.start()
            elif command == "leave":
                pending = conn.leave()
            elif isinstance(command, dict) and command.get("command") == "react":
                pending = conn.react(command["emote"])
            elif isinstance(command, dict) and "type" in command:
                pending = conn.act(command)
            else:  # help, and what only a chat does (join, new, lang)
                self.say(say("help", self.lang))
                continue
            task = asyncio.create_task(self.request(pending))
            tasks.add(task)
            task.add_done_callback(tasks.discard)


def main(base: str, options: dict[str, Any]) -> int:
    try:
        asyncio.run(Terminal(base, lang=options.get("lang") or "en").run(options))
    except (EOFError, KeyboardInterrupt):
        pass
    except aiohttp.ClientError as exc:
        print(f"dudo play: cannot reach {base}: {exc}", file=sys.stderr)
        return 1
    return 0
