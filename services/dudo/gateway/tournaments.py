"""The gateway's tournament routes: create, list, standings, register, begin.

A mixin of :class:`~dudo.gateway.app.Gateway`. Requests become messages on the
tournament's director inbox (``link.send`` routes them there); the answer comes
back through this gateway's outbox: ``registered`` or an ``error`` by message id,
and, for a create, the first ``tournament`` message (the creating gateway is
subscribed to its standings). Registering returns an *entrant* token, which the
director minted: the player's credential for the whole tournament, whichever table
they sit at.
"""

from __future__ import annotations

import asyncio
import csv
import io
import re
import secrets
from typing import Any

from aiohttp import web

from .. import wire
from ..link import TokenError
from ..wire import CREATE_DEFAULTS, keys
from .requests import (
    brings_seeds,
    credential_of,
    error_response,
    json_body,
    name_of,
    read_credentials,
    refusal_response,
)
from .state import GatewayState

# What the host may do to a running (or open) tournament: POST .../{action}
ORGANIZE_ACTIONS = ("pause", "resume", "cancel", "kick", "announce")
# How a director's refusal is told over HTTP (409 for any other)
REFUSAL_STATUS = {wire.UNKNOWN_TOURNAMENT: 404, wire.UNAUTHORIZED: 401, wire.NOT_HOST: 403,
                  wire.BAD_MESSAGE: 400, wire.BAD_RULES: 400, wire.RATE_LIMITED: 429}  # fmt: skip


class TournamentApi(GatewayState):
    """``/api/tournaments`` (:meth:`Gateway.app` lists the routes)."""

    async def leaderboard(self, request: web.Request) -> web.Response:
        """``?limit=N`` (1..500, default 50): the best rated players, from the board the
        ratings keeper publishes by handle (a gateway may not read the ratings record,
        whose players are player ids)."""
        try:
            limit = int(request.query.get("limit", "50"))
        except ValueError:
            limit = 0
        if not 1 <= limit <= 500:
            return error_response(400, wire.BAD_MESSAGE, "limit must be 1..500")
        blob = await self.streams.redis.hget(keys.RATINGS.lobby(0), keys.RATINGS_ID)
        board = wire.unpack(blob)["leaderboard"][:limit] if blob else []
        return web.json_response({"leaderboard": board})

    async def player_profile(self, request: web.Request) -> web.Response:
        """An identity user's public profile by handle: statistics, rating and chips, as
        the ratings keeper publishes it (dudo.director.profiles). 404 ``unknown_player``
        for a handle with none: an anonymous player's, a bot's, or nobody's."""
        handle = request.match_info["handle"]
        if not wire.HANDLE_RE.fullmatch(handle):
            return error_response(400, wire.BAD_MESSAGE, "a handle is 16 of [A-Za-z0-9_-]")
        blob = await self.streams.redis.hget(keys.RATINGS.lobby(0), keys.profile_field(handle))
        if not blob:
            return error_response(
                404, wire.UNKNOWN_PLAYER, "no statistics for that handle: only players "
                "signed in with an app's identity have them",
            )  # fmt: skip
        return web.json_response(wire.unpack(blob))

    async def list_tournaments(self, _request: web.Request) -> web.Response:
        """Those open to register first, then those being played, then those ended (each
        listed a day), at most ``lobby_max``: however many are made, every lobby polls
        this, and its size stays bounded."""
        assert self.streams.link is not None
        listing = await self.streams.link.tournaments()
        found = [{"tournament": t, **entry} for t, entry in listing.items()]
        found.sort(key=lambda e: (LISTING_ORDER.get(e.get("status"), 9), e["tournament"]))
        return web.json_response({"tournaments": found[: self.settings.lobby_max]})

    async def tournament_standings(self, request: web.Request) -> web.Response:
        """The whole standings (every place; a streamed message carries the best 100), as
        the director answers a ``standings`` request: by handle (a gateway may not read a
        tournament's record, whose entrants are player ids)."""
        answer = await self._whole_standings(request)
        if isinstance(answer, web.Response):
            return answer
        return web.json_response(answer)

    async def tournament_results(self, request: web.Request) -> web.Response:
        """``?format=json`` (default) or ``csv``: the places and what each won, for an
        organizer's records (a running tournament's: the places given so far)."""
        wanted = request.query.get("format", "json")
        if wanted not in ("json", "csv"):
            return error_response(400, wire.BAD_MESSAGE, "format is json or csv")
        answer = await self._whole_standings(request, history=wanted == "json")
        if isinstance(answer, web.Response):
            return answer
        results = results_of(answer["tournament"], answer["standings"], answer.get("history"))
        if wanted == "json":
            return web.json_response(results)
        return web.Response(
            text=results_csv(results["places"]),
            content_type="text/csv",
            charset="utf-8",
            headers={
                "Content-Disposition": f'attachment; filename="{answer["tournament"]}.csv"'
            },
        )

    async def _whole_standings(
        self, request: web.Request, *, history: bool = False
    ) -> dict[str, Any] | web.Response:
        """``{tournament, version, standings}`` as the director answers (and ``history``,
        every closed table's, if asked), or the refusal."""
        tid = request.match_info["tournament"]
        if not keys.ID_PATTERN.fullmatch(tid):
            return error_response(404, wire.UNKNOWN_TOURNAMENT, "no such tournament")
        refused = self._too_fast(self.joins, request, "standings")
        if refused is not None:
            return refused
        assert self.streams.link is not None
        link = self.streams.link
        ask = link.message("standings", id=f"st-{secrets.token_hex(6)}", tournament=tid)
        if history:
            ask["history"] = True
        # A private tournament's standings are its entrants' (a token) or its invite's.
        token, invite = request.query.get("token"), request.query.get("invite")
        if token is not None:
            if not 0 < len(token) <= 1024:
                return error_response(400, wire.BAD_MESSAGE, "token: an entrant token")
            ask["token"] = token
        if invite is not None:
            if not INVITE.fullmatch(invite):
                return error_response(400, wire.BAD_MESSAGE, "invite: the code the host handed out")
            ask["invite"] = invite
        answer = await self._answer_of(ask)
        if isinstance(answer, web.Response):
            return answer
        whole = {"tournament": tid, "version": answer["version"], "standings": answer["standings"]}
        if "history" in answer:
            whole["history"] = answer["history"]
        return whole

    async def create_tournament(self, request: web.Request) -> web.Response:
        """Body: the ``tournament_create`` fields (rules, seats, format, ...), and an
        optional ``host`` name: the creator then registers and may ``begin`` it early."""
        refused = self._too_fast(self.creates, request, "tournaments")
        if refused is not None:
            return refused
        body = await json_body(request)
        fields = {key: body.get(key, default) for key, default in CREATE_DEFAULTS.items()}
        if "name" in body:
            fields["name"] = body["name"]
        host_name = body.get("host")
        if host_name is not None:
            host_name, refused = name_of(host_name)
            if refused is not None:
                return refused
        elif fields["private"] is True:
            return error_response(
                400, wire.BAD_MESSAGE, "a private tournament needs a host: its invite is theirs"
            )
        key, refused = read_credentials(request, body)
        if refused is not None:
            return refused
        seeds, refused = brings_seeds(body)
        if refused is not None:
            return refused
        tid = self._new_id("tournament", key)
        tid = tid.replace("-", "x").replace("_", "y")  # its tables are "<id>-<n>"
        # The host: whom the creator's registration names (the same credential).
        credential = credential_of(body, key) if host_name else {}
        assert self.streams.link is not None
        create = self.streams.link.message(
            "tournament_create", id=f"tc-{tid}", tournament=tid, **credential, **fields
        )
        try:
            wire.validate(create)
        except wire.WireError as exc:
            return error_response(400, exc.code, exc.message)
        answer = await self._ask_director(create, tid)
        if answer is None:
            return error_response(504, wire.TIMEOUT, "no director answered in time")
        applied_before = key is not None and answer.get("code") in (
            wire.DUPLICATE,
            wire.TABLE_EXISTS,
        )
        if answer["type"] == "error" and not applied_before:
            return refusal_response(answer, REFUSAL_STATUS.get(answer["code"], 400))
        result: dict[str, Any] = {"tournament": tid}
        if host_name:
            registered = await self._register(tid, credential, host_name, None, seeds)
            if isinstance(registered, web.Response):
                return registered
            result.update(registered)
        return web.json_response(result, status=201)

    async def register_tournament(self, request: web.Request) -> web.Response:
        """Body: ``{name, request?}``: an entrant token for the whole tournament."""
        refused = self._too_fast(self.joins, request, "registrations")
        if refused is not None:
            return refused
        tid = request.match_info["tournament"]
        if not keys.ID_PATTERN.fullmatch(tid):
            return error_response(404, wire.UNKNOWN_TOURNAMENT, "no such tournament")
        body = await json_body(request)
        name, refused = name_of(body.get("name"))
        if refused is not None:
            return refused
        key, refused = read_credentials(request, body)
        if refused is not None:
            return refused
        assert name is not None
        invite = body.get("invite")
        if invite is not None and not (isinstance(invite, str) and INVITE.fullmatch(invite)):
            return error_response(400, wire.BAD_MESSAGE, "invite: the code the host handed out")
        seeds, refused = brings_seeds(body)
        if refused is not None:
            return refused
        registered = await self._register(tid, credential_of(body, key), name, invite, seeds)
        if isinstance(registered, web.Response):
            return registered
        return web.json_response({"tournament": tid, **registered})

    async def _register(
        self, tid: str, credential: dict[str, str], name: str, invite: str | None, seeds: bool
    ) -> dict[str, Any] | web.Response:
        assert self.streams.link is not None
        register = self.streams.link.message(
            "register", id=f"r-{secrets.token_hex(6)}", tournament=tid, name=name, bot=None,
            **credential, **({"invite": invite} if invite is not None else {}),
            **({"seeds": True} if seeds else {}),
        )  # fmt: skip
        answer = await self._answer_of(register)
        if isinstance(answer, web.Response):
            return answer
        got = {"player": answer["player"], "token": answer["token"]}
        if "invite" in answer:  # the host of a private tournament: the code to hand out
            got["invite"] = answer["invite"]
        return got

    async def _answer_of(self, msg: dict[str, Any]) -> dict[str, Any] | web.Response:
        """Send ``msg`` to its tournament's director and wait for the answer quoting its
        id; a refusal or no answer in time as the HTTP response to give."""
        answer = await self._ask(msg)
        if answer is None:
            return error_response(504, wire.TIMEOUT, "no director answered in time")
        if answer["type"] == "error":
            return refusal_response(answer, REFUSAL_STATUS.get(answer["code"], 409))
        return answer

    async def organize_tournament(self, request: web.Request) -> web.Response:
        """``POST .../{pause,resume,cancel,kick,announce}``, body ``{token}`` (the host's
        entrant token), ``target`` (kick: the entrant's handle), ``text`` (announce): the
        standings after it, or the director's refusal (403 ``not_host``, 409 otherwise)."""
        refused = self._too_fast(self.joins, request, "organizer requests")
        if refused is not None:
            return refused
        asked = await self._entrant_request(request)
        if isinstance(asked, web.Response):
            return asked
        tid, body = asked
        action = request.path.rsplit("/", 1)[1]
        extra = {k: body[k] for k in ("target", "text") if body.get(k) is not None}
        assert self.streams.link is not None
        organize = self.streams.link.message(
            "organize", id=f"o-{secrets.token_hex(6)}", tournament=tid, token=body["token"],
            action=action, **extra,
        )  # fmt: skip
        try:
            wire.validate(organize)
        except wire.WireError as exc:
            return error_response(400, exc.code, exc.message)
        answer = await self._answer_of(organize)
        if isinstance(answer, web.Response):
            return answer
        return web.json_response({"tournament": tid, "standings": answer["standings"]})

    async def unregister_tournament(self, request: web.Request) -> web.Response:
        """Body: ``{token}`` (the entrant's own token): leave before the start; the buy-in
        goes back. The director checks the token; ``entrants``: how many are left."""
        refused = self._too_fast(self.joins, request, "registrations")
        if refused is not None:
            return refused
        asked = await self._entrant_request(request)
        if isinstance(asked, web.Response):
            return asked
        tid, body = asked
        assert self.streams.link is not None
        unregister = self.streams.link.message(
            "unregister", id=f"u-{secrets.token_hex(6)}", tournament=tid, token=body["token"]
        )
        answer = await self._answer_of(unregister)
        if isinstance(answer, web.Response):
            return answer
        return web.json_response({"tournament": tid, "entrants": answer["entrants"]})

    async def _entrant_request(
        self, request: web.Request
    ) -> tuple[str, dict[str, Any]] | web.Response:
        """The tournament and body of a request an entrant makes with its token (body
        ``token``); a 401 unless it reads as an entrant token of that tournament (whose
        signature the director checks)."""
        tid = request.match_info["tournament"]
        body = await json_body(request)
        try:
            grant = self.tokens.check(str(body.get("token", "")))
        except TokenError as exc:
            return error_response(401, exc.code, exc.message)
        if grant.kind != "entrant" or grant.table != tid:
            return error_response(401, wire.UNAUTHORIZED, "not an entrant token of this tournament")
        return tid, body

    async def begin_tournament(self, request: web.Request) -> web.Response:
        """Body: ``{token}`` (the host's entrant token): start now. Limited per address as
        the other organizer requests are (160 begins from one address once all reached
        the director)."""
        refused = self._too_fast(self.joins, request, "organizer requests")
        if refused is not None:
            return refused
        asked = await self._entrant_request(request)
        if isinstance(asked, web.Response):
            return asked
        tid, body = asked
        assert self.streams.link is not None
        begin = self.streams.link.message(
            "begin", id=f"b-{secrets.token_hex(4)}", tournament=tid, token=body["token"]
        )
        answer = await self._ask_director(begin, tid)
        if answer is None:
            return error_response(504, wire.TIMEOUT, "no director answered in time")
        if answer["type"] == "error":  # not_host: 403, as the organizer's other calls
            return refusal_response(answer, REFUSAL_STATUS.get(answer["code"], 409))
        return web.json_response({"tournament": tid, "standings": answer["standings"]})

    async def _ask_director(self, msg: dict[str, Any], tid: str) -> dict[str, Any] | None:
        """Send ``msg`` and wait for what answers it: an ``error`` naming its id, or the
        tournament's standings (sent to this gateway when it is created or begun);
        None if neither came in time."""
        assert self.streams.link is not None
        refused = self._expect(msg["id"])
        standings = self.created[f"t:{tid}"] = asyncio.get_running_loop().create_future()
        try:
            await self.streams.link.send(msg)
            done, _ = await asyncio.wait(
                [refused, standings],
                timeout=self.settings.reply_timeout,
                return_when=asyncio.FIRST_COMPLETED,
            )
        finally:
            self._forget([msg["id"]], f"t:{tid}")
        for answer in (refused, standings):
            if answer in done:
                return answer.result()
        return None


# A place's rating and its change are null for a bot, and until the ratings keeper has
# rated the finished tournament (normally within a second of its end).
RESULT_FIELDS = ("place", "name", "handle", "chips", "rating", "rating_change")
MARKS = ("bot", "late", "kicked")  # true or false in the results; a column each in the CSV
INVITE = re.compile(r"[A-Za-z0-9_-]{1,64}")
LISTING_ORDER = {"registering": 0, "running": 1, "over": 2, "cancelled": 3}


def results_of(
    tournament: str, standings: dict[str, Any], history: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    """A tournament's results as an organizer keeps them: what it was, every place
    given (best first) with the chips won and the rating change, and every closed
    table's history (``tables``)."""
    return {
        "tournament": tournament,
        "name": standings["name"],
        "status": standings["status"],
        "format": standings["format"],
        "entrants": standings["entrants"],
        "buy_in": standings["buy_in"],
        "payouts": standings["payouts"],
        "places": [
            {**{k: p.get(k) for k in RESULT_FIELDS}, **{k: p.get(k, False) for k in MARKS}}
            for p in standings["places"]
        ],
        "tables": history or [],
    }


def results_csv(places: list[dict[str, Any]]) -> str:
    """The places as CSV (RFC 4180). A name a spreadsheet would take for a formula
    (``=``, ``+``, ``-``, ``@``, tab, CR at its start) is quoted with a leading ``'``: a
    player may name themselves ``=HYPERLINK(...)``, and organizers open these files."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow((*RESULT_FIELDS, *MARKS))
    for place in places:
        name = place["name"]
        if name[:1] in ("=", "+", "-", "@", "\t", "\r"):
            name = "'" + name
        rating, change = place.get("rating"), place.get("rating_change")
        writer.writerow(
            [place["place"], name, place["handle"], place["chips"],
             "" if rating is None else rating, "" if change is None else change,
             *("yes" if place.get(mark) else "" for mark in MARKS)]
        )  # fmt: skip
    return out.getvalue()
