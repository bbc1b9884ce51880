"""Who sits where at a table: joining, leaving, attaching to a gateway, the start.

A mixin of :class:`~dudo.table.Table` (the fields it uses are declared in
:mod:`dudo.table.state`).
"""

from __future__ import annotations

import random
from typing import Any

from .. import wire
from ..engine import new_game
from ..wire import Refusal, message
from .seeds import TableSeeds
from .state import OPEN, PLAYING, Seat


class TableSeating(TableSeeds):
    """Seats, their holders and gateways, and the start of the game."""

    def _seat_of(self, player: str) -> int | None:
        for i, seat in enumerate(self.seats):
            if seat.player == player:
                return i
        return None

    def _held(self, msg: dict[str, Any], *, attached: bool = True) -> Seat:
        """The seat the message names, if the player it names (by handle) holds it, and
        it came through the gateway the seat is attached to: the one that presented
        the player's credential last (a gateway acts only for players handed to it)."""
        index = msg["seat"]
        if index >= len(self.seats) or self.seats[index].handle != msg["player"]:
            raise Refusal(wire.NOT_SEATED, f"{msg['player']} does not hold seat {index}")
        seat = self.seats[index]
        if attached and seat.gateway != msg["gateway"]:
            raise Refusal(wire.NOT_ATTACHED, f"seat {index} is attached to another gateway")
        return seat

    def _seat_of_token(self, token: str) -> int:
        """The seat a seat token of this table (or an entrant token of its tournament)
        names, by its holder's handle; :class:`Refusal` if forged, foreign or
        expired (``unauthorized``) or if that player sits here no more."""
        grant = self.limits.authority.check(token, {"seat": self.id, "entrant": self.tournament})
        for i, seat in enumerate(self.seats):
            if seat.player is not None and seat.handle == grant.player:
                return i
        raise Refusal(wire.NOT_SEATED, "the token's player holds no seat here")

    def _joined(self, gateway: str, index: int, msg_id: str) -> None:
        """Tell the gateway that joined: the seat, the holder's handle, the seat token."""
        seat = self.seats[index]
        assert seat.player is not None
        token = self.limits.authority.token("seat", self.id, seat.player, seat.name)
        self._direct.append(
            (gateway, message("joined", table=self.id, seat=index, player=seat.handle,
                              id=msg_id, token=token))
        )  # fmt: skip

    def _on_join(self, msg: dict[str, Any], now: int, rng: random.Random) -> None:
        gateway = msg["gateway"]
        token = msg.get("token")
        if token is not None:
            index: int | None = self._seat_of_token(token)
            player = None
        else:
            player = self.limits.authority.player_for(msg, self.id)
            index = self._seat_of(player)
            # The same request is the same name too: a key alone (guessed, or reused by
            # another client) does not take someone's seat.
            if (
                index is not None
                and "request" in msg
                and "identity" not in msg
                and self.seats[index].name != msg.get("name")
            ):
                raise Refusal(wire.UNAUTHORIZED, "that request key was used under another name")
        if index is not None:  # coming back: same seat, now through this gateway
            seat = self.seats[index]
            was_away = seat.away
            self._reattach(index, gateway)
            self._take_commitment(index, msg)
            seat.away = False
            self._not_idle(index)
            self._changed(msg, visible=was_away)
            self._joined(gateway, index, msg["id"])
            self._requests.append((gateway, index))
            return
        assert player is not None
        if self.status != OPEN or self.seeding:
            raise Refusal(wire.GAME_STARTED, "the game has started; seats are closed")
        if msg.get("name") is None:
            raise Refusal(wire.BAD_MESSAGE, "join.name: a new seat needs a name")
        index = self._free_seat(msg.get("seat"), msg.get("bot"))
        self.seats[index] = Seat(
            player, msg["name"], gateway, msg.get("bot"), False, msg.get("seed_commitment")
        )
        if self.host is None and msg.get("bot") is None:  # the first person to sit
            self.host = player
        self._changed(msg)
        self._lobby = True
        self._joined(gateway, index, msg["id"])
        if all(seat.taken for seat in self.seats):
            self._start(now, rng)

    def _reattach(self, index: int, gateway: str) -> None:
        """Deliver seat ``index``'s views to ``gateway`` from now on; the gateway that had
        it is told, so that its connections of that player stop getting this table."""
        seat = self.seats[index]
        if seat.gateway != gateway:
            self._detach(index)
        seat.gateway = gateway

    def _detach(self, index: int) -> None:
        """Tell the gateway of seat ``index``'s holder (if any) that the seat is no longer
        its own: its connections of that player stop getting this table."""
        seat = self.seats[index]
        if seat.gateway is not None:
            self._direct.append(
                (seat.gateway, message("detached", table=self.id, seat=index, player=seat.handle))
            )

    def _free_seat(self, wanted: int | None, bot: str | None) -> int:
        def allowed(i: int) -> bool:
            return bot is not None or self.plan[i]["kind"] == "open"

        if wanted is not None:
            if wanted >= len(self.seats):
                raise Refusal(wire.SEAT_TAKEN, f"there is no seat {wanted}")
            if self.seats[wanted].taken or not allowed(wanted):
                raise Refusal(wire.SEAT_TAKEN, f"seat {wanted} is not free for you")
            return wanted
        order = range(len(self.seats))
        if bot is not None:  # bots take the seats set aside for bots first
            order = sorted(order, key=lambda i: self.plan[i]["kind"] != "bot")
        for i in order:
            if not self.seats[i].taken and allowed(i):
                return i
        raise Refusal(wire.TABLE_FULL, "no free seat")

    def _on_leave(self, msg: dict[str, Any], now: int, rng: random.Random) -> None:
        seat = self._held(msg)
        index = msg["seat"]
        if self.status == OPEN and not self.seeding:
            self.seats[index] = Seat()
            if self.host == seat.player:
                self.host = next((s.player for s in self.seats if s.taken), None)
            self._lobby = True
        elif self.status == PLAYING or self.seeding:  # the seats are fixed: it is played
            seat.away = True
            self._rearm(now, reset=False)
        self._changed(msg)
        self._direct.append(
            (
                msg["gateway"],
                message("left", table=self.id, seat=index, player=msg["player"], id=msg["id"]),
            )
        )

    def _on_rename(self, msg: dict[str, Any], now: int, rng: random.Random) -> None:
        """The seat's player goes by another name from now on (views, the lobby)."""
        seat = self._held(msg)
        if self.tournament is not None:
            raise Refusal(wire.BAD_MESSAGE, "a tournament's names are its entrants': no rename")
        renamed = seat.name != msg["name"]
        seat.name = msg["name"]
        self._changed(msg, visible=renamed)  # the same name: taken, nothing to show
        if renamed and self.status == OPEN:
            self._lobby = True

    def _on_attach(self, msg: dict[str, Any], now: int, rng: random.Random) -> None:
        # The deployment's own (dudo.wire.signing refuses a gateway's): it names the player id.
        index = msg["seat"]
        if index >= len(self.seats) or self.seats[index].player != msg["player"]:
            raise Refusal(wire.NOT_SEATED, f"that player does not hold seat {index}")
        self._reattach(index, msg["gateway"])
        self._changed(msg, visible=False)
        self._requests.append((msg["gateway"], msg["seat"]))

    def _host_of_open_table(self, msg: dict[str, Any], what: str) -> int:
        """The host's seat, if ``msg`` comes from the host (through the gateway the host's
        seat is attached to: the handle is public) and the table is still open."""
        if self.host is None or msg["player"] != wire.public_id(self.host):
            raise Refusal(wire.NOT_HOST, f"only the host may {what} the table")
        index = self._seat_of(self.host)
        if index is None or self.seats[index].gateway != msg["gateway"]:
            raise Refusal(wire.NOT_HOST, f"only the host's own connection may {what} the table")
        if self.status != OPEN or self.seeding:
            raise Refusal(wire.GAME_STARTED, "the game has already started")
        return index

    def _on_handover(self, msg: dict[str, Any], now: int, rng: random.Random) -> None:
        """The host makes another person at the open table its host."""
        index = self._host_of_open_table(msg, "hand over")
        to = msg["to"]
        if to >= len(self.seats) or not self.seats[to].taken or self.seats[to].bot is not None:
            raise Refusal(wire.NOT_SEATED, f"no person holds seat {to}")
        if to != index:
            self.host = self.seats[to].player
            self._changed(msg)
            self._lobby = True
        else:
            self._changed(msg, visible=False)

    def _on_close(self, msg: dict[str, Any], now: int, rng: random.Random) -> None:
        """The host closes the open table: it leaves the lobby, its record expires."""
        self._host_of_open_table(msg, "close")
        self.seen.add(msg["id"])
        self._close(now, "closed")

    def _on_start(self, msg: dict[str, Any], now: int, rng: random.Random) -> None:
        self._host_of_open_table(msg, "start")
        taken = [i for i, s in enumerate(self.seats) if s.taken]
        if self.rules.bots_fill and len(taken) < len(self.seats):
            # Bots fill the empty seats (seed 003, Cacho): they become bot seats, the
            # bot service takes them, and the game starts when the table is full.
            # At the level of the table's other bots: the one its creator picked.
            level = next((p["level"] for p in self.plan if p["kind"] == "bot"), "normal")
            for i, seat in enumerate(self.seats):
                if not seat.taken:
                    self.plan[i] = {"kind": "bot", "level": level}
            self._changed(msg)
            self._answered(msg)
            self._lobby = True
            return
        if len(taken) < self.rules.min_players:
            raise Refusal(
                wire.TOO_FEW_PLAYERS, f"{len(taken)} seated, {self.rules.min_players} needed"
            )
        # Open seats are dropped; players keep their order and learn their new seat.
        self.seats = [self.seats[i] for i in taken]
        self.plan = [self.plan[i] for i in taken]
        for new, old in enumerate(taken):
            seat = self.seats[new]
            if new != old and seat.gateway is not None:
                self._direct.append(
                    (
                        seat.gateway,
                        message(
                            "joined", table=self.id, seat=new, player=seat.handle, id=msg["id"]
                        ),
                    )
                )
        self._changed(msg)
        self._answered(msg)
        self._start(now, rng)

    def _start(self, now: int, rng: random.Random) -> None:
        """Every seat is taken (or the host started): deal, or first wait for the
        seats' own seeds (dudo.table.seeds)."""
        self._deal_or_wait_for_seeds(now, rng)

    def _deal(self, now: int, rng: random.Random) -> None:
        """The game starts: its dice from the seeds (dudo.table.seeds)."""
        if self.tournament is not None:
            self._deal_tournament(now, rng)  # with the dice its first players brought
            return
        n = len(self.seats)
        self.game = new_game(self.rules, n, self._deal_secret(rng), opener=rng.randrange(n))
        self.status = PLAYING
        self._lobby = True
        self._events.append(
            {"type": "game_start", "opener": self.game.opener, "commitment": self.game.commitment}
        )
        self._rearm(now)
