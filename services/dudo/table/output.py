"""What a table sends after a batch: the views (one per gateway), replies, the lobby entry.

A mixin of :class:`~dudo.table.Table` (the fields it uses are declared in
:mod:`dudo.table.state`).
Delivery rule: a seat's view goes only to the gateway that seat is attached to;
spectator views go to gateways that asked to watch. Nothing else leaves.
"""

from __future__ import annotations

from typing import Any

from .. import wire
from ..engine import OVER, private_view, public_view, rules_dict
from ..entity import Flush, Flushing
from ..wire import frames_message, message, public_piece
from .log import unpacked_round
from .state import DONE, OPEN, PAUSED_NOW, PLAYING, TableState


class TableOutput(TableState, Flushing):
    """Views, replies and the lobby entry of one table."""

    def lobby_entry(self) -> dict[str, Any] | None:
        """The table as the lobby lists it: open (people may sit) or playing (people may
        watch); a finished table, or a tournament's, is not listed."""
        if self.status not in (OPEN, PLAYING) or self.tournament is not None:
            return None
        names = [s.name for s in self.seats]
        labelled = {"label": self.label} if self.label else {}
        if self.app is not None:
            labelled["app"] = self.app
        return {
            **labelled,
            "status": self.status,
            "preset": self.rules.preset,
            "seats": len(self.seats),
            "taken": sum(1 for s in self.seats if s.taken),
            "bots": sum(1 for p in self.plan if p["kind"] == "bot"),
            "names": names,
            "rules": rules_dict(self.rules),
            "host": wire.public_id(self.host) if self.host is not None else None,
            "wants_bots": [
                [i, p.get("level", "normal")]
                for i, p in enumerate(self.plan)
                if p["kind"] == "bot" and not self.seats[i].taken and self.status == OPEN
            ],
        }

    def rounds(self) -> list[dict[str, Any]]:
        """The game's log as the views give it (`game.log`): every ended round."""
        return [unpacked_round(packed) for packed in self.log]

    def _view(
        self,
        game: dict[str, Any] | None,
        seats: list[dict[str, Any]],
        holders: list[str | None],
        events: list[dict[str, Any]],
        seeds: dict[str, Any] | None,
    ) -> dict[str, Any]:
        absent = {seat for seat, turns in self.idle if turns >= self.limits.away_after}
        return message(
            "view",
            table=self.id,
            version=self.version,
            status=self.status,
            players=[s.public(i in absent) for i, s in enumerate(self.seats)],
            host=wire.public_id(self.host) if self.host is not None else None,
            deadline=self.deadline,
            **({"reveal_until": self.hold_until} if self.hold_until is not None else {}),
            **({"paused": True} if self.paused == PAUSED_NOW else {}),
            **({"rematch": self.rematch} if self.rematch is not None else {}),
            **({"seeds": seeds} if seeds is not None else {}),
            game=game,
            seats=seats,
            holders=holders,
            events=events,
        )

    def flush(self, frame_gateways: frozenset[str] = frozenset()) -> Flush:
        """Everything this batch produced, in order: direct replies, then one view per gateway.

        A gateway's view carries the private part of exactly the seats attached
        to it, and goes to it if it hosts a seat or watches the table: as a ``view``
        message, or, to a gateway in ``frame_gateways``, as the ``frames`` that say
        the same in client JSON (the public part encoded once for all of them).
        """
        outputs = [(gw, wire.encode(msg)) for gw, msg in self._direct]
        audience: dict[str, set[int]] = {}  # gateway -> seats it gets private parts of
        if self._dirty:
            for i, seat in enumerate(self.seats):
                if seat.gateway is not None and not seat.away:
                    audience.setdefault(seat.gateway, set()).add(i)
            for gateway in self.watchers:
                audience.setdefault(gateway, set())
            # A gateway whose player's action was applied in this batch but holds no seat
            # here any more (the round it ended sent them away in the same step) still
            # gets the step's view, public only: its `applied` is the player's ack, its
            # events the reveal of their own call.
            for gateway in self._applied:
                audience.setdefault(gateway, set())
        for gateway, index in self._requests:
            wanted = audience.setdefault(gateway, set())
            if index is not None:
                wanted.add(index)
        if audience:
            game = self.game
            public = public_view(game) if game is not None else None
            if public is not None and game is not None and game.phase == OVER:
                public["log"] = self.rounds()  # the whole game, once it is over (its replay)
            public_json: bytes | None = None  # encoded once, for every `frames` gateway
            events = self._events if self._dirty else []
            seeds = self.seeds_view()  # the same for every gateway: made once
            for gateway, hosted in audience.items():
                # Only seats someone holds: a private part always names its holder, and
                # gateways route it to that player's connections alone.
                held = [i for i in sorted(hosted) if self.seats[i].player is not None]
                privates = [
                    private_view(game, i) if game is not None else _waiting(i) for i in held
                ]
                holders = [self.seats[i].handle for i in held]
                view = self._view(public, privates, holders, events, seeds)
                if gateway in self._applied:
                    view["applied"] = self._applied[gateway]
                if gateway in frame_gateways:
                    if public_json is None:
                        public_json = public_piece(public)
                    view = frames_message(view, public_json)
                outputs.append((gateway, wire.encode(view)))

        sends = self._house_move() + self._result_sends() + self._history_sends()
        result = self._flush(
            outputs, sends, finished=self.status == DONE, reports=self._reports_out()
        )
        self._events, self._direct, self._requests, self._applied = [], [], [], {}
        return result


def _waiting(seat: int) -> dict[str, Any]:
    """A seat's private part before the game starts: no dice, nothing to do yet."""
    legal = {"bid": [None] * 6, "max_quantity": 0, "dudo": False, "calza": False,
             "direction": False}  # fmt: skip
    return {"seat": seat, "dice": [], "legal": legal}


def error_for(msg: dict[str, Any], code: str, text: str) -> tuple[str, bytes] | None:
    """An error reply for a message that reached no table (unknown table, malformed)."""
    gateway = msg.get("gateway")
    if gateway is None:
        return None
    return gateway, wire.encode(
        message(
            "error",
            table=msg.get("table"),
            seat=msg.get("seat"),
            player=msg.get("player"),
            id=msg.get("id"),
            code=code,
            message=text,
        )
    )
