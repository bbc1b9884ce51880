"""Dice no one can choose, at a table: its server seed, the seats' seeds, the deal.

A mixin of :class:`~dudo.table.Table` (the fields it uses are declared in
:mod:`dudo.table.state`). The derivation is the engine's (:mod:`dudo.engine.fairness`);
this part is its order in time, which is what the guarantee rests on
(docs/security.md, "Dice no one can choose"):

1. the table draws its server seed when it is made, and every view from the first shows
   only its commitment (``seeds.server``);
2. a person who sits may give a commitment to a seed of their own (``join.seed_commitment``);
3. when the game would start and some seat gave one, the table first waits for seeds
   (``seeds.until``, ``Limits.seed_reveal_ms``): every commitment is fixed by then (no
   seat can be taken or given a new one), and each seat with one reveals it (``seed``);
4. the dice are dealt as soon as every such seat revealed, or at ``until`` with the
   public seed for each that did not (the views say which: ``seeds.revealed``);
5. once the game is over, its views show the server seed and every seat's seed, and
   anyone can check every round (``dudo verify``; the client packages' ``verify``).

A table with no commitment deals at once, as before seeds: its seats are dealt public
seeds. A table made before seeds (no server seed in its record) deals as it always did.

At a tournament's table the director seats people, so the seats are asked for
commitments when the table is made (``seeds.asked``), and asked again whenever someone
arrives: the director chose who sits where, and the deployment knows the secret the
game was dealt from so far, so the round after an arrival is held undealt
(:func:`~dudo.engine.hold_deal`) and dealt from seeds given after the change, as every
round after it (``redealt``; the log's ``reseeds``).
"""

from __future__ import annotations

import random
from typing import Any

from .. import wire
from ..engine import (
    OVER,
    SeedError,
    client_commitment,
    deal_round,
    game_secret,
    hold_deal,
    public_client_seed,
    server_commitment,
)
from ..wire import Refusal
from .state import DONE, OPEN, TableState


class TableSeeds(TableState):
    """The seeds a table's dice come from, and the wait for them before the deal."""

    @property
    def seeding(self) -> bool:
        """Every seat is taken and its commitment fixed: the table waits for seeds."""
        return self.seeding_until is not None

    def _deal_or_wait_for_seeds(self, now: int, rng: random.Random) -> None:
        """The game would start: at once when no seat committed to a seed of its own,
        else once the seats revealed theirs (or their time ran out)."""
        if self.server_seed is not None and any(s.commitment for s in self.seats):
            self.seeding_until = now + self.limits.seed_reveal_ms
            self._rearm(now)
            return
        self._deal(now, rng)

    def _ask_for_commitments(self, seats: list[int], now: int, rng: random.Random) -> None:
        """A tournament's table, just made with its first players (the director's
        choice: nobody gave a commitment sitting down): ask ``seats`` (entrants whose
        clients bring seeds) for one before anything is revealed, else deal at once."""
        if self.server_seed is None or not seats:
            self._deal(now, rng)
            return
        self.asked = list(seats)
        self.seeding_until = now + self.limits.seed_reveal_ms
        self._rearm(now)

    def _ask_again(self, now: int) -> None:
        """Someone arrived at this tournament's table and its game plays on: hold the
        next round undealt and ask the seats whose entrants bring seeds (the arrivals
        among them) for new ones, so that no one who knew the secret before the change
        chose where the arrival's dice fall. Nothing when no seat there brings seeds (the
        deployment deals alone then, as at a table of bots)."""
        game = self.game
        assert game is not None
        asked = [s for s, seat in enumerate(self.seats) if seat.brings and game.counts[s] > 0]
        if self.server_seed is None or game.phase == OVER or not asked:
            return
        hold_deal(game)
        # The round starts when it is dealt: its commitment comes then.
        self._events = [e for e in self._events if e["type"] != "round_start"]
        for seat in self.seats:
            seat.commitment = seat.seed = None
        self.asked = asked
        self.seeding_until = now + self.limits.seed_reveal_ms

    def _on_commit_seed(self, msg: dict[str, Any], now: int, rng: random.Random) -> None:
        """An asked seat gives its commitment; once every asked seat did, the table asks
        for the seeds (or deals, when the time for commitments is up first)."""
        seat = self._held(msg)
        if msg["seat"] not in self.asked:
            raise Refusal(wire.BAD_SEED, "no commitment is asked of this seat now "
                          "(only of `seeds.asked`, while `seeds.commit_until`)")  # fmt: skip
        seat.commitment = msg["commitment"]
        self.asked.remove(msg["seat"])
        self._changed(msg)
        self._answered(msg)
        if not self.asked:
            self._ask_for_seeds(now, rng)

    def _ask_for_seeds(self, now: int, rng: random.Random) -> None:
        """Every commitment is in (or its time is up): wait for the seeds of the seats
        that gave one, or deal at once when none did."""
        self.asked = []
        self.seeding_until = None
        self._deal_or_wait_for_seeds(now, rng)

    def _deal_secret(self, rng: random.Random) -> bytes:
        """The game secret for the deal now: from the server seed and every seat's seed
        (its own when revealed, else its public one), recorded for the views (``dealt``,
        or after an arrival ``redealt``); a random one at a table from before seeds."""
        self.seeding_until = None
        if self.server_seed is None:
            return rng.randbytes(32)
        pairs = [[seat.commitment, seat.seed] for seat in self.seats]
        if self.game is None:
            self.dealt = pairs
        else:  # a round held after someone arrived (_ask_again)
            self.redealt.append([self.game.round_no, pairs])
        return game_secret(self.server_seed, self._seeds_of(pairs))

    def _redeal(self, now: int, rng: random.Random) -> None:
        """The held round's deal, from the seeds given after the arrival."""
        assert self.game is not None
        self._events.append(deal_round(self.game, self._deal_secret(rng)))
        self._rearm(now)

    def _seeds_of(self, pairs: list[list[Any]] | None) -> list[str]:
        """Each seat's seed at a deal: its own, or the public one."""
        return [
            seed if seed is not None else public_client_seed(self.id, i)
            for i, (_, seed) in enumerate(pairs or [])
        ]

    def _on_seed(self, msg: dict[str, Any], now: int, rng: random.Random) -> None:
        """A seat reveals the seed it committed to; the last one deals."""
        seat = self._held(msg)
        if not self.seeding or self.asked:
            raise Refusal(wire.BAD_SEED, "no seed is asked for now (only while `seeds.until`)")
        if seat.commitment is None:
            raise Refusal(wire.BAD_SEED, "this seat committed to no seed")
        try:
            matches = client_commitment(msg["seed"]) == seat.commitment
        except SeedError as exc:
            raise Refusal(wire.BAD_SEED, str(exc)) from exc
        if not matches:
            raise Refusal(wire.BAD_SEED, "that seed does not match the seat's commitment")
        if seat.seed is None:
            seat.seed = msg["seed"]
            self._changed(msg)
        else:
            self._changed(msg, visible=False)  # said again: nothing new to show
        self._answered(msg)
        if all(s.seed is not None for s in self.seats if s.commitment is not None):
            self._deal(now, rng)

    def _seeds_timeout(self, now: int, rng: random.Random) -> None:
        """The wait is over: for commitments (the table asks for the seeds of the seats
        that gave one), or for seeds (deal, public seeds for seats that did not reveal)."""
        self._changed()
        if self.asked:
            self._ask_for_seeds(now, rng)
        else:
            self._deal(now, rng)

    def seeds_view(self) -> dict[str, Any] | None:
        """The view's ``seeds``: commitments while the table is open or holds a round for
        seeds (after an arrival) and in the view of the deal, the seeds too once the
        game is over; None in between (the same ~160
        bytes in every view of a game were a tenth of a move's bytes: docs/benchmarks.md,
        "What seeds cost"), and at a table from before seeds."""
        if self.server_seed is None:
            return None
        over = self._no_round_follows()
        redealt = self.redealt[-1] if self.redealt else None
        dealt_now = any(
            event["type"] == "game_start"
            or (redealt and event["type"] == "round_start" and event["round"] == redealt[0])
            for event in self._events
        )
        if self.status != OPEN and not over and not dealt_now and not self.seeding:
            return None
        if self.seeding or self.dealt is None:  # asked now: what the seats gave so far
            pairs = [[seat.commitment, seat.seed] for seat in self.seats]
        else:  # the game's first deal once over (`reseeds` then lists the later ones)
            pairs = redealt[1] if redealt and not over else self.dealt
        shown: dict[str, Any] = {
            "server": server_commitment(self.server_seed),
            "commitments": [commitment for commitment, _ in pairs],
            "revealed": [seed is not None for _, seed in pairs],
        }
        if self.asked:
            shown["asked"] = list(self.asked)
            shown["commit_until"] = self.seeding_until
        elif self.seeding_until is not None:
            shown["until"] = self.seeding_until
        if self.seeding_until is not None:  # the round these seeds will deal
            shown["round"] = self.game.round_no if self.game is not None else 1
        if self.dealt is not None and over:
            shown["server_seed"] = self.server_seed.hex()
            shown["client_seeds"] = self._seeds_of(self.dealt)
            if self.redealt:
                shown["reseeds"] = self._reseeds()
        return shown

    def _reseeds(self) -> list[dict[str, Any]]:
        """The seeds of each round held after an arrival, by the log's names."""
        return [
            {
                "round": first,
                "client_seeds": self._seeds_of(pairs),
                "client_commitments": [commitment for commitment, _ in pairs],
            }
            for first, pairs in self.redealt
        ]

    def logged_seeds(self) -> dict[str, Any] | None:
        """What the game's dice came from, under the names a verifier's log gives them
        (``dudo.engine.fairness.verify``), once no round follows; else None (and at a
        table from before seeds). A closed tournament table sends it to its director
        for the tournament's results."""
        if self.server_seed is None or self.dealt is None or not self._no_round_follows():
            return None
        return {
            "server_seed": self.server_seed.hex(),
            "server_commitment": server_commitment(self.server_seed),
            "client_seeds": self._seeds_of(self.dealt),
            "client_commitments": [commitment for commitment, _ in self.dealt],
            **({"reseeds": self._reseeds()} if self.redealt else {}),
        }

    def _no_round_follows(self) -> bool:
        """The game's secret deals nothing more, so its seeds may be shown: the game is
        over, and at a tournament's table the table is closed too (a won or halted game
        there takes arrivals and plays on from the same secret: its seeds shown then
        would give every later round's dice to anyone who saw them)."""
        if self.tournament is not None:
            return self.status == DONE
        return self.game is not None and self.game.phase == OVER

    def _take_commitment(self, index: int, msg: dict[str, Any]) -> None:
        """A returning player's new commitment, before the seats are fixed (an open
        table); once they are, the one given first stays."""
        commitment = msg.get("seed_commitment")
        if commitment is not None and self.status == OPEN and not self.seeding:
            seat = self.seats[index]
            seat.commitment, seat.seed = commitment, None
