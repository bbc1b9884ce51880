"""The gateway's HTTP side: the lobby API, the browser client's files, health, metrics.

A mixin of :class:`~dudo.gateway.app.Gateway`, which holds the state used here
(declared below). A create or join is written to the table's inbox and the
request waits for the worker's answer in the outbox. Its outcome is never left
unknown to the caller: a request key makes a retry the same request, and an
unsettled answer (503, 504) carries the seat token that ``hello`` settles.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from pathlib import Path
from typing import Any

import structlog
from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from redis.exceptions import NoPermissionError

from .. import wire
from ..engine import Rules, RulesConfigError, rules_dict
from ..infra import REDIS_DOWN, PerKey
from ..wire import keys, solves
from .lobby import listing
from .pwa import ICON_SIZES, NOT_SHELL, icon_png, manifest_bytes, service_worker
from .requests import (
    credential_of,
    error_response,
    json_body,
    name_of,
    read_credentials,
    refusal_response,
    seed_of,
)
from .state import GatewayState

log = structlog.get_logger("dudo.gateway")
STATIC = Path(__file__).parent / "static"
STATIC_FILES = {p.name: p for p in STATIC.iterdir() if p.is_file() and p.name not in NOT_SHELL}
# Fresh on every visit, so a deploy's new page is taken at once (the service worker
# still answers offline); the worker's own script must never be kept stale.
NO_CACHE = {"Cache-Control": "no-cache"}
_EXISTS = (wire.DUPLICATE, wire.TABLE_EXISTS)  # a create that was applied before
QUICK_TRIES = 3  # quick play: tables tried (taken meanwhile: 409) before one is made


class HttpApi(GatewayState):
    """The HTTP routes (:meth:`Gateway.app` lists them)."""

    async def index(self, _request: web.Request) -> web.FileResponse:
        return web.FileResponse(STATIC / "index.html")

    async def static_file(self, request: web.Request) -> web.StreamResponse:
        """The browser client's files, and nothing else: the name is looked up among
        them, never joined to a path (a 5,000-character name used to answer 500)."""
        path = STATIC_FILES.get(request.match_info["name"])
        if path is None:
            return error_response(404, "not_found", "no such file")
        return web.FileResponse(path)

    async def web_manifest(self, _request: web.Request) -> web.Response:
        return web.Response(
            body=manifest_bytes(), content_type="application/manifest+json", headers=NO_CACHE
        )

    async def service_worker(self, _request: web.Request) -> web.Response:
        """At the root, so its scope is the whole page (a worker under /static/ could
        answer only for /static/)."""
        body = service_worker(STATIC_FILES, STATIC / "sw.js")
        return web.Response(body=body, content_type="text/javascript", headers=NO_CACHE)

    async def icon(self, request: web.Request) -> web.Response:
        size = request.match_info["size"]
        if not size.isdigit() or int(size) not in ICON_SIZES:
            return error_response(404, "not_found", "no such icon")
        return web.Response(body=icon_png(int(size)), content_type="image/png")

    async def healthz(self, _request: web.Request) -> web.Response:
        return web.json_response({"ok": True})

    async def readyz(self, _request: web.Request) -> web.Response:
        """Ready when this gateway can serve a game: Redis answers, the outbox reader
        reads, and at least one table worker is alive (without one, every game
        stalls: a load balancer should send players elsewhere, and say so)."""
        status = self.streams.status()
        try:
            redis_ok = self.streams.redis is not None and bool(
                await asyncio.wait_for(self.streams.redis.ping(), 1.0)
            )
        except Exception:
            redis_ok = False
        ok = status.pop("ready") and redis_ok
        body = {"ready": ok, "redis": redis_ok, **status}
        return web.json_response(body, status=200 if ok else 503)

    async def metrics_page(self, _request: web.Request) -> web.Response:
        body = generate_latest(self.metrics.registry)
        return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE_LATEST})

    async def bot_solves(self, _request: web.Request) -> web.Response:
        """The bot services' endgame solves still under way, ``{done, of}`` (null: none),
        so a table with a hard bot can say the bot plays its heuristic in such a round
        meanwhile (issue 53, item 21). A gateway user made before the key was public
        may not read it: then null, as if none ran."""
        try:
            values = (await self.streams.redis.hgetall(keys.BOT_SOLVES)).values()
        except NoPermissionError:
            values = []
        now = int(time.time() * 1000)
        return web.json_response({"endgame_solves": solves.summary(values, now)})

    async def list_tables(self, _request: web.Request) -> web.Response:
        assert self.streams.link is not None
        tables = listing(await self.streams.link.open_tables(), self.settings.lobby_max)
        return web.json_response({"tables": tables})

    async def create_table(self, request: web.Request) -> web.Response:
        """Body: ``{rules, seats, bots: [level, ...], name?}``; with a name the creator
        takes a seat and gets a token."""
        refused = self._too_fast(self.creates, request, "tables")
        if refused is not None:
            return refused
        body = await json_body(request)
        rules = body.get("rules", {})
        try:
            Rules.from_dict(rules)
        except RulesConfigError as exc:
            return error_response(400, wire.BAD_RULES, str(exc))
        seats, bots, refused = seating_of(body)
        if refused is not None:
            return refused
        name = body.get("name")
        if name is not None:
            name, refused = name_of(name)
            if refused is not None:
                return refused
        key, refused = read_credentials(request, body)
        if refused is not None:
            return refused
        return await self._create(rules, seats, bots, name, body, key)

    async def _create(
        self,
        rules: dict[str, Any],
        seats: int,
        bots: list[str],
        name: str | None,
        body: dict[str, Any],
        key: str | None,
        extra: dict[str, Any] | None = None,
    ) -> web.Response:
        """Create a table (checked already); with ``name`` its creator sits (201 with the
        seat's token, and ``extra`` in the body)."""
        # With a request key, a retry (through any gateway of this app) names the same
        # table and player: the create is then refused as a duplicate, the join finds
        # its seat. Without one the creator's join still gets a key of our own, so a
        # join whose answer is late can be claimed (_unsettled).
        table = self._new_id("table", key)
        credential = credential_of(body, key)
        plan = [{"kind": "open"}] * (seats - len(bots)) + [
            {"kind": "bot", "level": level} for level in bots
        ]
        assert self.streams.link is not None
        create = self.streams.link.message(
            "create",
            id=f"c-{table}",
            table=table,
            rules=rules,
            seats=plan,
            **(credential if name else {}),  # the host: whom the creator's join names
        )
        refused = self._expect(create["id"])  # only an error answers a create
        try:
            if name:
                join = self.streams.link.message(
                    "join", id=f"j-{secrets.token_hex(6)}", table=table, name=name,
                    **credential, **seed_of(body),
                )  # fmt: skip
                answer_to = self._expect(join["id"])  # joined, or error
                await self.streams.link.send(create, join)
            else:
                answer_to = self._expect_table(table)  # the first view of the new table
                await self.streams.link.send(create)
        except REDIS_DOWN:  # written or not, nobody can tell: the caller gets a claim
            self._forget([create["id"], join["id"] if name else ""], table)
            return self._unsettled(table, credential if name else None, name, wire.UNAVAILABLE)
        try:
            done, _ = await asyncio.wait(
                [refused, answer_to],
                timeout=self.settings.reply_timeout,
                return_when=asyncio.FIRST_COMPLETED,
            )
            # A retry (same request key) of a create that was applied: the table is
            # there; with a name, the join (a fresh message) finds the seat.
            exists = refused in done and key is not None and refused.result()["code"] in _EXISTS
            if refused in done and not exists:  # the create itself was refused
                answer = refused.result()
                return refusal_response(answer, 400)
            if exists and not name:
                return web.json_response({"table": table}, status=201)
            if answer_to not in done:
                done, _ = await asyncio.wait([answer_to], timeout=self.settings.reply_timeout)
        finally:
            self._forget([create["id"], join["id"] if name else ""], table)
        if answer_to not in done:
            return self._unsettled(table, credential if name else None, name, wire.TIMEOUT)
        answer = answer_to.result()
        if answer["type"] == "error":
            return refusal_response(answer, 409)
        result: dict[str, Any] = {"table": table}
        if name:
            result.update(seat=answer["seat"], player=answer["player"], token=answer["token"])
        return web.json_response({**result, **(extra or {})}, status=201)

    async def join_table(self, request: web.Request) -> web.Response:
        """Body: ``{name, seat?}``: take a seat; returns the seat and its token."""
        refused = self._too_fast(self.joins, request, "joins")
        if refused is not None:
            return refused
        table = request.match_info["table"]
        body = await json_body(request)
        name, refused = name_of(body.get("name"))
        if refused is not None:
            return refused
        seat = body.get("seat")
        if seat is not None and (
            not isinstance(seat, int) or isinstance(seat, bool) or not 0 <= seat <= 5
        ):
            return error_response(400, wire.BAD_MESSAGE, "seat must be an integer 0..5")
        if not keys.ID_PATTERN.fullmatch(table):
            return error_response(404, wire.UNKNOWN_TABLE, "no such table")
        key, refused = read_credentials(request, body)
        if refused is not None:
            return refused
        return await self._join(table, name, seat, body, key)

    async def _join(
        self,
        table: str,
        name: str,
        seat: int | None,
        body: dict[str, Any],
        key: str | None,
        extra: dict[str, Any] | None = None,
    ) -> web.Response:
        """Take a seat at ``table`` (checked already): 200 with its token (and ``extra``)."""
        # With a request key (or an identity), a retry names the same player: it finds
        # its seat. Without, a key of our own: a late answer can still be claimed.
        credential = credential_of(body, key)
        assert self.streams.link is not None
        join = self.streams.link.message(
            "join", id=f"j-{secrets.token_hex(6)}", table=table, name=name, seat=seat,
            **credential, **seed_of(body),
        )  # fmt: skip
        reply = self._expect(join["id"])
        try:
            await self.streams.link.send(join)
            answer = await asyncio.wait_for(reply, self.settings.reply_timeout)
        except TimeoutError:
            return self._unsettled(table, credential, name, wire.TIMEOUT)
        except REDIS_DOWN:  # written or not, nobody can tell: the caller gets a claim
            return self._unsettled(table, credential, name, wire.UNAVAILABLE)
        finally:
            self._forget([join["id"]])
        if answer["type"] == "error":
            status = 404 if answer["code"] == wire.UNKNOWN_TABLE else 409
            return refusal_response(answer, status)
        return web.json_response(
            {
                "table": table,
                "seat": answer["seat"],
                "player": answer["player"],
                "token": answer["token"],
                **(extra or {}),
            }
        )

    async def quick_play(self, request: web.Request) -> web.Response:
        """Body: ``{preset, seats, name, bots?}``: a seat at an open table of that preset
        (its rules as the preset has them) and size with a seat free, the fullest first;
        else a new such table with ``bots`` bot seats, the caller seated. The answer is
        a join's or a create's, with ``created``."""
        refused = self._too_fast(self.joins, request, "joins")
        if refused is not None:
            return refused
        body = await json_body(request)
        preset = body.get("preset", "classic")
        try:
            wanted = rules_dict(Rules.from_dict({"preset": preset}))
        except RulesConfigError as exc:
            return error_response(400, wire.BAD_RULES, str(exc))
        seats, bots, refused = seating_of(body)
        if refused is not None:
            return refused
        name, refused = name_of(body.get("name"))
        if refused is not None:
            return refused
        key, refused = read_credentials(request, body)
        if refused is not None:
            return refused
        assert self.streams.link is not None
        tables = await self.streams.link.open_tables()
        fitting = [
            (entry["taken"], table) for table, entry in tables.items()
            if entry.get("status") == "open" and entry.get("rules") == wanted
            and entry.get("seats") == seats
            and entry["seats"] - entry["taken"] - len(entry.get("wants_bots") or ()) > 0
        ]  # fmt: skip
        for _, table in sorted(fitting, key=lambda t: (-t[0], t[1]))[:QUICK_TRIES]:
            answer = await self._join(table, name, None, body, key, {"created": False})
            if answer.status not in (404, 409):  # seated, or a failure others would share
                return answer
        return await self._create(
            {"preset": preset}, seats, bots, name, body, key, {"created": True}
        )

    def _new_id(self, kind: str, key: str | None) -> str:
        """The id of a table or tournament a client creates: derived from its request key
        (a retry names the same one), else random."""
        made = self._derived(kind, key)[:11] if key else secrets.token_urlsafe(8)
        # Never a leading "-": an id is typed on command lines (`dudo verify ID`), where
        # it would read as an option (one in 64 did).
        return "_" + made[1:] if made.startswith("-") else made

    def _derived(self, kind: str, *parts: str | None) -> str:
        """An id derived from a client's request key with this app's gateway secret: the
        same on every gateway of the app, unguessable without the secret."""
        return self.tokens.derive("dudo-request/1", kind, *(p or "" for p in parts))

    def _unsettled(
        self, table: str, credential: dict[str, str] | None, name: str | None, code: str
    ) -> web.Response:
        """A create or join whose outcome is unknown: no answer in time (504
        ``timeout``), or Redis failed while the request was being written (503
        ``unavailable``: it may have been written all the same). Never leave a seat
        nobody can claim: the caller gets a claim token for the join it asked for, and
        ``hello`` with it settles the matter (it sends the join again under the same
        request key: it takes the seat if the first join never happened, and finds it
        if it did). With an identity, the same request again settles it (the identity
        names the same player)."""
        identity = credential is not None and "identity" in credential
        body: dict[str, Any] = {
            "code": code,
            "message": "the request may or may not be applied: "
            + (
                "send it again (the same identity finds its seat)"
                if identity
                else "say hello with this token to get your seat"
            ),
            "table": table,
        }
        if credential is not None and not identity:
            body["token"] = self.tokens.claim(table, credential["request"], name)
        response = web.json_response(body, status=504 if code == wire.TIMEOUT else 503)
        if code == wire.UNAVAILABLE:
            response.headers["Retry-After"] = "1"
        return response

    async def watch_table(self, request: web.Request) -> web.Response:
        refused = self._too_fast(self.joins, request, "watch tokens")
        if refused is not None:
            return refused
        table = request.match_info["table"]
        if not keys.ID_PATTERN.fullmatch(table):
            return error_response(404, wire.UNKNOWN_TABLE, "no such table")
        # Listed in the lobby (open, or a game being played) or, if not, known to its
        # worker (a finished game): a gateway may ask, never read a table's record.
        listed = await self.streams.redis.hexists(
            keys.lobby(keys.partition_of(table, self.settings.partitions)), table
        )
        if not listed:
            assert self.streams.link is not None
            ask = self.streams.link.message("resync", id=f"w-{secrets.token_hex(6)}", table=table,
                                    seat=None)  # fmt: skip
            refused, seen = self._expect(ask["id"]), self._expect_table(table)
            try:
                await self.streams.link.send(ask)
                done, _ = await asyncio.wait(
                    [refused, seen], timeout=self.settings.reply_timeout,
                    return_when=asyncio.FIRST_COMPLETED,
                )  # fmt: skip
            finally:
                self._forget([ask["id"]], table)
            if refused in done or not done:
                code, status = (wire.UNKNOWN_TABLE, 404) if done else (wire.TIMEOUT, 504)
                return error_response(status, code, "no such table" if done else "no answer")
        return web.json_response({"table": table, "token": self.tokens.watch(table)})

    def _too_fast(self, limit: PerKey, request: web.Request, what: str) -> web.Response | None:
        """429 with Retry-After if this address went past ``limit``."""
        bucket = limit.bucket(self._address(request))
        if bucket.allow():
            return None
        self.metrics.errors.labels(wire.RATE_LIMITED).inc()
        response = error_response(429, wire.RATE_LIMITED, f"too many {what} from your address")
        response.headers["Retry-After"] = str(max(1, round(bucket.wait())))
        return response


def seating_of(body: dict[str, Any]) -> tuple[int, list[str], web.Response | None]:
    """A create's (or quick play's) ``seats`` (2..6, default 4) and ``bots`` (levels,
    fewer than the seats), or the refusal."""
    seats, bots = body.get("seats", 4), body.get("bots", [])
    if not isinstance(seats, int) or isinstance(seats, bool) or not 2 <= seats <= 6:
        return 0, [], error_response(400, wire.BAD_MESSAGE, "seats must be 2..6")
    if not isinstance(bots, list) or not all(b in wire.BOT_LEVELS for b in bots):
        refused = error_response(400, wire.BAD_MESSAGE, f"bots must be levels {wire.BOT_LEVELS}")
        return 0, [], refused
    if len(bots) >= seats:
        return 0, [], error_response(400, wire.BAD_MESSAGE, "leave at least one seat for people")
    return seats, bots, None
