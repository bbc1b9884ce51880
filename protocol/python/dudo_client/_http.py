"""The HTTP half of the client: lobby calls, seats, tournaments, the leaderboard."""

from __future__ import annotations

import asyncio
import secrets
from typing import Any, Literal, TypedDict, Unpack, cast
from urllib.parse import quote, urlencode

import aiohttp

from ._seeds import make_seed, remember, seed_commitment, seed_for
from .messages import (
    BotsResponse,
    CreateRequest,
    CreateResponse,
    ErrorMessageFacts,
    JoinRequest,
    JoinResponse,
    LeaderboardResponse,
    OrganizeResponse,
    PlayerResponse,
    Preset,
    QuickplayRequest,
    QuickplayResponse,
    RegisterRequest,
    RegisterResponse,
    ResultsResponse,
    StandingsResponse,
    TablesResponse,
    TournamentCreateRequest,
    TournamentCreateResponse,
    TournamentsResponse,
    UnregisterResponse,
    WatchResponse,
)


class QuickplayOptions(TypedDict, total=False):
    """``QuickplayRequest`` but its ``name`` (:meth:`DudoApi.join_or_create` takes it
    first): Python cannot derive one TypedDict from another, so a test holds the two
    alike."""

    preset: Preset
    seats: int
    bots: list[Literal["easy", "normal", "hard"]]
    request: str
    identity: str
    seed_commitment: str


RETRIES = 3  # a create or join is sent again at most this often (with the same request key)


class DudoError(Exception):
    """A refusal: ``code`` is one of docs/protocol.md's error codes (``status``: HTTP's;
    ``facts``: what a table's refusal refers to, whose turn or the bid to beat, for
    wording it in your player's language)."""

    def __init__(
        self,
        code: str,
        message: str,
        status: int | None = None,
        facts: ErrorMessageFacts | None = None,
    ) -> None:
        super().__init__(f"{code}: {message}")
        self.code, self.message, self.status = code, message, status
        self.facts = facts


def request_key() -> str:
    """A request key (docs/protocol.md, "Send a request key"): 24 hex digits."""
    return secrets.token_hex(12)


class DudoApi:
    """``async with DudoApi(base) as api:`` (or pass your own aiohttp session)."""

    def __init__(self, base: str, session: aiohttp.ClientSession | None = None) -> None:
        self.base = base.rstrip("/")
        self._session = session
        self._own = session is None

    async def __aenter__(self) -> DudoApi:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        if self._own and self._session is not None:
            await self._session.close()
            self._session = None

    @property
    def session(self) -> aiohttp.ClientSession:
        if self._session is None:
            self._session = aiohttp.ClientSession()
        return self._session

    async def call(
        self,
        method: str,
        path: str,
        body: dict[str, Any] | None = None,
        *,
        idempotent: bool = False,
    ) -> dict[str, Any]:
        """One call; with ``idempotent`` the body gets a request key and the call is sent
        again after a cut connection, a 503 or a 504: the same request, never a second."""
        if idempotent and body is not None:
            body = {"request": request_key(), **body}
        for attempt in range(RETRIES + 1):
            retry = idempotent and attempt < RETRIES
            try:
                async with self.session.request(method, self.base + path, json=body) as response:
                    try:
                        data = await response.json(content_type=None)
                    except ValueError:
                        data = None
                    if not isinstance(data, dict):  # every answer is an object
                        data = {}
                    status = response.status
            except (TimeoutError, aiohttp.ClientError) as exc:
                if not retry:
                    # The gateway unreachable is a DudoError too (code `unavailable`,
                    # no HTTP status): callers catch one type for every failure.
                    raise DudoError("unavailable", f"{method} {path}: {exc}") from exc
                await asyncio.sleep(0.5 * 2**attempt)
                continue
            if retry and status in (503, 504):
                await asyncio.sleep(0.5 * 2**attempt)
                continue
            if status >= 400:
                raise DudoError(data.get("code", f"http_{status}"), data.get("message", ""), status)
            return data
        raise AssertionError("unreachable")

    async def tables(self) -> TablesResponse:
        return cast(TablesResponse, await self.call("GET", "/api/tables"))

    async def create_table(
        self, *, seed: str | None = None, **body: Unpack[CreateRequest]
    ) -> CreateResponse:
        """``rules``, ``seats``, ``bots``, ``name``, ``identity`` (``CreateRequest``: a
        type checker refuses an unknown key, ``seats="two"`` or an unknown preset): the
        seat's token back. With a ``name`` your seat brings a seed of its own for the dice
        (``seed``, else one made here; see :meth:`seated`)."""
        sent, seed = _seeded(dict(body), seed, seated="name" in body)
        answer = await self.call("POST", "/api/tables", sent, idempotent=True)
        return cast(CreateResponse, _kept(answer, seed))

    async def join_table(
        self, table: str, *, seed: str | None = None, **body: Unpack[JoinRequest]
    ) -> JoinResponse:
        """``name``, ``seat``, ``identity`` (``JoinRequest``); your seat brings a seed of
        its own for the dice (``seed``, else one made here; see :meth:`seated`)."""
        path = f"/api/tables/{quote(table)}/join"
        sent, seed = _seeded(dict(body), seed)
        return cast(JoinResponse, _kept(await self.call("POST", path, sent, idempotent=True), seed))

    async def join_or_create(
        self, name: str, *, seed: str | None = None, **body: Unpack[QuickplayOptions]
    ) -> QuickplayResponse:
        """Quick play: a seat at an open table of ``preset`` (its rules exactly, default
        classic) and ``seats`` (default 4) with one free, else a new one (``bots``: its
        bot seats); the seat's token back, with ``created``. Not sent again by itself (a
        repeat could seat you at another table): after ``timeout``/``unavailable``, hello
        with the claim token. Your seat brings a seed of its own (see :meth:`seated`)."""
        request: QuickplayRequest = {"name": name, **body}
        sent, seed = _seeded(dict(request), seed)
        answer = await self.call("POST", "/api/quickplay", sent)
        return cast(QuickplayResponse, _kept(answer, seed))

    @staticmethod
    def seated(token: str) -> str | None:
        """The seed this process made (or was given) for the seat ``token`` holds: its
        commitment went with the create, join or quick play; a :class:`DudoConnection`
        opened with the token reveals it when the table asks (``seeds.until``), and the
        finished game's ``seeds.client_seeds`` shows it was dealt with. Keep it with the
        token if your program may restart before the deal (pass it back as the
        connection's ``seed``). A seat taken with ``seed=""`` brings none (for a token
        you hand to another program: without the seed it could not reveal, and the
        table would wait for it until ``--seed-wait`` runs out)."""
        return seed_for(token)

    async def watch_table(self, table: str) -> WatchResponse:
        """A spectator's token for ``table`` (open it with :class:`DudoConnection`)."""
        path = f"/api/tables/{quote(table)}/watch"
        return cast(WatchResponse, await self.call("POST", path, {}))

    async def tournaments(self) -> TournamentsResponse:
        """Those open to register first, then those being played, then those ended."""
        return cast(TournamentsResponse, await self.call("GET", "/api/tournaments"))

    async def create_tournament(
        self, **body: Unpack[TournamentCreateRequest]
    ) -> TournamentCreateResponse:
        """``name`` and the format (``TournamentCreateRequest``); with ``host`` (your
        name) you are registered as its host: your entrant ``token`` back, and, as with
        :meth:`register`, your client brings seeds to your tables (``seeds=False``: not)."""
        sent: dict[str, Any] = {"seeds": True, **body} if "host" in body else dict(body)
        answer = await self.call("POST", "/api/tournaments", sent, idempotent=True)
        return cast(TournamentCreateResponse, answer)

    async def register(
        self, tournament: str, **body: Unpack[RegisterRequest]
    ) -> RegisterResponse:
        """``name`` (and a private tournament's ``invite``): your entrant token. Your
        client brings a seed of its own to each table you are seated at (a
        :class:`DudoConnection` opened with the token commits and reveals when the table
        asks); ``seeds=False`` for a token handed to a program that does not."""
        path = f"/api/tournaments/{quote(tournament)}/register"
        sent = {"seeds": True, **body}
        return cast(RegisterResponse, await self.call("POST", path, sent, idempotent=True))

    async def unregister(self, tournament: str, token: str) -> UnregisterResponse:
        """Leave ``tournament`` before its start, with your own entrant ``token``."""
        path = f"/api/tournaments/{quote(tournament)}/unregister"
        return cast(UnregisterResponse, await self.call("POST", path, {"token": token}))

    async def begin(self, tournament: str, token: str) -> OrganizeResponse:
        """The host starts it now, with whoever registered."""
        path = f"/api/tournaments/{quote(tournament)}/begin"
        return cast(OrganizeResponse, await self.call("POST", path, {"token": token}))

    async def organize(
        self,
        tournament: str,
        token: str,
        action: Literal["pause", "resume", "cancel", "kick", "announce"],
        *,
        target: str | None = None,
        text: str | None = None,
    ) -> OrganizeResponse:
        """The host runs ``tournament`` with their entrant ``token``: ``action`` is
        ``pause``, ``resume``, ``cancel``, ``kick`` (``target``: the entrant's handle) or
        ``announce`` (``text``). The standings after it."""
        path = f"/api/tournaments/{quote(tournament)}/{quote(action)}"
        body: dict[str, Any] = {"token": token}
        body.update({k: v for k, v in (("target", target), ("text", text)) if v is not None})
        return cast(OrganizeResponse, await self.call("POST", path, body))

    async def pause(self, tournament: str, token: str) -> OrganizeResponse:
        """Every table finishes its round, then stops (no clock) until :meth:`resume`."""
        return await self.organize(tournament, token, "pause")

    async def resume(self, tournament: str, token: str) -> OrganizeResponse:
        return await self.organize(tournament, token, "resume")

    async def cancel(self, tournament: str, token: str) -> OrganizeResponse:
        """Before or during play: the tables close, every buy-in goes back."""
        return await self.organize(tournament, token, "cancel")

    async def kick(self, tournament: str, token: str, target: str) -> OrganizeResponse:
        """The entrant whose handle is ``target`` is out (unregistered before the start)."""
        return await self.organize(tournament, token, "kick", target=target)

    async def announce(self, tournament: str, token: str, text: str) -> OrganizeResponse:
        """A line every entrant sees with the standings ("" takes it down)."""
        return await self.organize(tournament, token, "announce", text=text)

    async def results(
        self, tournament: str, *, token: str | None = None, invite: str | None = None
    ) -> ResultsResponse:
        """Every place given so far with the chips won, every closed table's history, and
        what the tournament was. A private tournament's need an entrant ``token`` of it
        or its ``invite``."""
        path = f"/api/tournaments/{quote(tournament)}/results{_access(token, invite)}"
        return cast(ResultsResponse, await self.call("GET", path))

    async def standings(
        self, tournament: str, *, token: str | None = None, invite: str | None = None
    ) -> StandingsResponse:
        """Every place and table now (a private tournament's: as :meth:`results`)."""
        path = f"/api/tournaments/{quote(tournament)}{_access(token, invite)}"
        return cast(StandingsResponse, await self.call("GET", path))

    async def leaderboard(self, limit: int = 50) -> LeaderboardResponse:
        """The best rated players (``limit``: 1..500)."""
        answer = await self.call("GET", f"/api/leaderboard?limit={limit}")
        return cast(LeaderboardResponse, answer)

    async def player(self, handle: str) -> PlayerResponse:
        """An identity user's statistics, rating and chips, by handle (``welcome``'s
        ``player``): ``PlayerResponse``. Raises with ``unknown_player`` for a handle
        without any (an anonymous player's: they count on their device)."""
        return cast(PlayerResponse, await self.call("GET", f"/api/players/{quote(handle)}"))

    async def bot_solves(self) -> BotsResponse:
        """The bot services' solves of the presets' heads-up endgames still under way
        (``endgame_solves``: ``{done, of}``, or None): a hard bot plays its heuristic in
        such a round until its solve is done."""
        return cast(BotsResponse, await self.call("GET", "/api/bots"))


def _seeded(
    body: dict[str, Any], seed: str | None, *, seated: bool = True
) -> tuple[dict[str, Any], str | None]:
    """The request with the commitment to the seat's seed (given, or made here); none
    when the caller gave a commitment of their own, takes no seat, or gave the empty
    seed (the seat brings none: for a token another program plays, which would not
    know the seed to reveal)."""
    if not seated or "seed_commitment" in body or seed == "":
        return body, None
    seed = seed if seed is not None else make_seed()
    return {**body, "seed_commitment": seed_commitment(seed)}, seed


def _kept(answer: dict[str, Any], seed: str | None) -> dict[str, Any]:
    """The answer, its token's seed remembered for the connection that plays it."""
    token = answer.get("token")
    if seed is not None and isinstance(token, str):
        remember(token, seed)
    return answer


def _access(token: str | None, invite: str | None) -> str:
    """The query that opens a private tournament's standings: its entrant token or invite."""
    given = {k: v for k, v in (("token", token), ("invite", invite)) if v}
    return f"?{urlencode(given)}" if given else ""
