"""The gateway's tournament routes: create, list, standings, register, begin.

A mixin of :class:`~dudo.gateway.app.Gateway`. Requests become messages on the
tournament's director inbox (``link.send`` routes them there); the answer comes
back through this gateway's outbox: ``registered`` or an ``error`` by message id,
and, for a create, the first ``tournament`` message (the creating gateway is
subscribed to its standings). Registering returns an *entrant* token: the
player's identity for the whole tournament, whichever table they sit at.
"""

from __future__ import annotations

import asyncio
import secrets
from typing import TYPE_CHECKING, Any

from aiohttp import web

from .. import keys, wire
from ..engine import Rules, RulesConfigError
from .http import _clean_name, _http_error, _json_body, _request_key
from .tokens import TokenError

if TYPE_CHECKING:
    from ..link import AsyncGatewayLink
    from .settings import GatewaySettings
    from .tokens import Tokens

CREATE_FIELDS = {
    "name": str,
    "seats": int,
    "format": str,
    "advance": (int, type(None)),
    "start_players": (int, type(None)),
    "start_at": (int, type(None)),
    "max_players": int,
    "buy_in": int,
    "bots": (str, type(None)),
}


class TournamentApi:
    """``/api/tournaments`` (:meth:`Gateway.app` lists the routes)."""

    settings: GatewaySettings
    redis: Any
    link: AsyncGatewayLink | None
    tokens: Tokens
    waiting: dict[str, asyncio.Future[dict[str, Any]]]
    created: dict[str, asyncio.Future[dict[str, Any]]]

    if TYPE_CHECKING:

        def _expect(self, message_id: str) -> asyncio.Future[dict[str, Any]]: ...
        def _forget(self, ids: list[str], table: str | None = None) -> None: ...
        def _derived(self, kind: str, *parts: str | None) -> str: ...

    async def leaderboard(self, request: web.Request) -> web.Response:
        """``?limit=N`` (1..500, default 50): the best rated players."""
        from ..director.ratings import Ratings

        try:
            limit = int(request.query.get("limit", "50"))
        except ValueError:
            limit = 0
        if not 1 <= limit <= 500:
            return _http_error(400, wire.BAD_MESSAGE, "limit must be 1..500")
        blob = await self.redis.hget(keys.RATINGS.record(0, keys.RATINGS_ID), "s")
        board = Ratings.from_bytes(blob).leaderboard(limit) if blob else []
        return web.json_response({"leaderboard": board})

    async def list_tournaments(self, _request: web.Request) -> web.Response:
        assert self.link is not None
        listing = await self.link.tournaments()
        found = [{"tournament": t, **entry} for t, entry in sorted(listing.items())]
        return web.json_response({"tournaments": found})

    async def tournament_standings(self, request: web.Request) -> web.Response:
        """The whole standings (every place; a streamed message carries the best 100)."""
        from ..director.tournament import Tournament

        tid = request.match_info["tournament"]
        blob = None
        if keys.ID_PATTERN.fullmatch(tid):
            blob = await self.redis.hget(
                keys.tournament_of(tid, self.settings.director_partitions), "s"
            )
        if blob is None:
            return _http_error(404, wire.UNKNOWN_TOURNAMENT, "no such tournament")
        state = Tournament.from_bytes(blob)
        return web.json_response(
            {"tournament": tid, "version": state.version, "standings": state.standings()}
        )

    async def create_tournament(self, request: web.Request) -> web.Response:
        """Body: the ``tournament_create`` fields (rules, seats, format, ...), and an
        optional ``host`` name: the creator then registers and may ``begin`` it early."""
        body = await _json_body(request)
        fields: dict[str, Any] = {
            "advance": None, "start_players": None, "start_at": None, "buy_in": 0,
            "payouts": [100], "bots": None, "format": "elimination", "seats": 6,
            "max_players": 1000,
        }  # fmt: skip
        for key, kind in CREATE_FIELDS.items():
            if key in body:
                value = body[key]
                if not isinstance(value, kind) or isinstance(value, bool):
                    return _http_error(400, wire.BAD_MESSAGE, f"{key} has the wrong type")
                fields[key] = value
        fields["payouts"] = body.get("payouts", fields["payouts"])
        rules = body.get("rules", {})
        try:
            Rules.from_dict({**(rules if isinstance(rules, dict) else {}), "max_players": 6})
        except RulesConfigError as exc:
            return _http_error(400, wire.BAD_RULES, str(exc))
        host_name = body.get("host")
        if host_name is not None:
            host_name, refused = _clean_name(host_name)
            if refused is not None:
                return refused
        key, refused = _request_key(request, body)
        if refused is not None:
            return refused
        tid = self._derived("tournament", key)[:11] if key else secrets.token_urlsafe(8)
        tid = tid.replace("-", "x").replace("_", "y")  # its tables are "<id>-<n>"
        player = self._derived("entrant", tid, key)[:12] if host_name else None
        assert self.link is not None
        create = self.link.message(
            "tournament_create", id=f"tc-{tid}", tournament=tid, rules=rules,
            host=player, **fields,
        )  # fmt: skip
        try:
            wire.validate(create)
        except wire.WireError as exc:
            return _http_error(400, exc.code, exc.message)
        refused_at = self._expect(create["id"])
        first = self.created[f"t:{tid}"] = asyncio.get_running_loop().create_future()
        try:
            await self.link.send(create)
            done, _ = await asyncio.wait(
                [refused_at, first],
                timeout=self.settings.reply_timeout,
                return_when=asyncio.FIRST_COMPLETED,
            )
        finally:
            self._forget([create["id"]], f"t:{tid}")
        if refused_at in done:
            answer = refused_at.result()
            if answer["code"] not in (wire.DUPLICATE, wire.TABLE_EXISTS) or key is None:
                return _http_error(400, answer["code"], answer["message"])
        elif first not in done:
            return _http_error(504, wire.TIMEOUT, "no director answered in time")
        result: dict[str, Any] = {"tournament": tid}
        if host_name and player:
            registered = await self._register(tid, player, host_name)
            if isinstance(registered, web.Response):
                return registered
            result.update(registered)
        return web.json_response(result, status=201)

    async def register_tournament(self, request: web.Request) -> web.Response:
        """Body: ``{name, request?}``: an entrant token for the whole tournament."""
        tid = request.match_info["tournament"]
        if not keys.ID_PATTERN.fullmatch(tid):
            return _http_error(404, wire.UNKNOWN_TOURNAMENT, "no such tournament")
        body = await _json_body(request)
        name, refused = _clean_name(body.get("name"))
        if refused is not None:
            return refused
        key, refused = _request_key(request, body)
        if refused is not None:
            return refused
        player = self._derived("entrant", tid, key)[:12] if key else secrets.token_urlsafe(9)
        assert name is not None
        registered = await self._register(tid, player, name)
        if isinstance(registered, web.Response):
            return registered
        return web.json_response({"tournament": tid, **registered})

    async def _register(self, tid: str, player: str, name: str) -> dict[str, Any] | web.Response:
        assert self.link is not None
        register = self.link.message(
            "register", id=f"r-{player}", tournament=tid, player=player, name=name, bot=None
        )
        answer_at = self._expect(register["id"])
        try:
            await self.link.send(register)
            answer = await asyncio.wait_for(answer_at, self.settings.reply_timeout)
        except TimeoutError:
            return _http_error(504, wire.TIMEOUT, "no director answered in time")
        finally:
            self._forget([register["id"]])
        if answer["type"] == "error" and answer["code"] != wire.DUPLICATE:
            status = 404 if answer["code"] == wire.UNKNOWN_TOURNAMENT else 409
            return _http_error(status, answer["code"], answer["message"])
        return {
            "player": wire.public_id(player),
            "token": self.tokens.issue(tid, player, name, "entrant"),
        }

    async def begin_tournament(self, request: web.Request) -> web.Response:
        """Body: ``{token}`` (the host's entrant token): start now."""
        tid = request.match_info["tournament"]
        body = await _json_body(request)
        try:
            grant = self.tokens.check(str(body.get("token", "")))
        except TokenError as exc:
            return _http_error(401, wire.UNAUTHORIZED, str(exc))
        if grant.kind != "entrant" or grant.table != tid or grant.player is None:
            return _http_error(401, wire.UNAUTHORIZED, "not an entrant token of this tournament")
        assert self.link is not None
        begin = self.link.message(
            "begin", id=f"b-{secrets.token_hex(4)}", tournament=tid, player=grant.player
        )
        refused_at = self._expect(begin["id"])
        begun = self.created[f"t:{tid}"] = asyncio.get_running_loop().create_future()
        try:
            await self.link.send(begin)
            done, _ = await asyncio.wait(
                [refused_at, begun],
                timeout=self.settings.reply_timeout,
                return_when=asyncio.FIRST_COMPLETED,
            )
        finally:
            self._forget([begin["id"]], f"t:{tid}")
        if refused_at in done:
            answer = refused_at.result()
            return _http_error(409, answer["code"], answer["message"])
        if begun not in done:
            return _http_error(504, wire.TIMEOUT, "no director answered in time")
        return web.json_response({"tournament": tid, "standings": begun.result()["standings"]})
