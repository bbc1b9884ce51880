"""Dice no one can choose: a game's secret from the server's seed and every seat's own.

Today's dice (:mod:`.dice`) come from a secret the server alone draws: each round's
commitment proves the dice were not changed mid-round, not that the server did not
choose them. Here a game's secret mixes the server's seed with a seed each seat brings,
so that neither the operator alone, nor the operator with one player who knows the
server's seed, can choose a hand (docs/security.md, "Dice no one can choose"):

- the **server seed** (32 bytes) is drawn when the table is made and only its
  commitment, ``SHA-256("dudo-server/2:" + server_seed)``, is shown, before anyone can
  bring a seed; it is revealed in the finished game's log;
- each **client seed** (1-64 bytes of UTF-8, the seat's own) is committed first,
  ``SHA-256("dudo-client/2:" + client_seed)``, and revealed only once every seat's
  commitment is fixed; a bot or a seat without one gets the public
  :func:`public_client_seed`;
- the **game secret** is ``HMAC-SHA256(server_seed, "dudo-game/2:" + D_0 + D_1 + ...)``
  where ``D_s = SHA-256("dudo-reveal/2:" + client_seed_s)``: every hand depends on every
  seed, and from the secret on the dice are dealt as :mod:`.dice` says (the round seeds,
  their commitments, the hands).

:func:`verify` checks a finished game's log against all of that and says, round by
round, where it does not hold. Pure: no randomness, no clock, no I/O.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .dice import commitment, roll, round_seed

SERVER_TAG = b"dudo-server/2:"
CLIENT_TAG = b"dudo-client/2:"
REVEAL_TAG = b"dudo-reveal/2:"
GAME_TAG = b"dudo-game/2:"
SERVER_SEED_BYTES = 32
CLIENT_SEED_MAX_BYTES = 64


class SeedError(ValueError):
    """A seed that is not one: a client seed empty or over 64 bytes, a server seed not
    32 bytes."""


def client_seed_bytes(client_seed: str) -> bytes:
    """A client seed as the derivation reads it (UTF-8); refused when it is empty or
    longer than CLIENT_SEED_MAX_BYTES."""
    if not isinstance(client_seed, str):
        raise SeedError("a client seed is a string")
    raw = client_seed.encode("utf-8")
    if not 1 <= len(raw) <= CLIENT_SEED_MAX_BYTES:
        raise SeedError(f"a client seed is 1 to {CLIENT_SEED_MAX_BYTES} bytes of UTF-8")
    return raw


def server_commitment(server_seed: bytes) -> str:
    """The commitment to a server seed shown from the table's making, as lowercase hex."""
    if len(server_seed) != SERVER_SEED_BYTES:
        raise SeedError(f"a server seed is {SERVER_SEED_BYTES} bytes")
    return hashlib.sha256(SERVER_TAG + server_seed).hexdigest()


def client_commitment(client_seed: str) -> str:
    """The commitment a seat gives before any seed is revealed, as lowercase hex."""
    return hashlib.sha256(CLIENT_TAG + client_seed_bytes(client_seed)).hexdigest()


def public_client_seed(table: str, seat: int) -> str:
    """The seed of a bot or of a seat that brought none: public, fixed by the table and
    the seat, so nobody chooses it."""
    return f"public:{table}:{seat}"


def game_secret(server_seed: bytes, client_seeds: list[str]) -> bytes:
    """The game's secret (the engine's ``secret``): every seat's seed mixed with the
    server's, in seat order. A seed a seat brought is at most CLIENT_SEED_MAX_BYTES
    (checked at its commitment and reveal); a public one may be longer (a table id
    is up to 64 characters), so here a seed need only be a string that is not empty."""
    server_commitment(server_seed)  # its length checked
    if not all(isinstance(seed, str) and seed for seed in client_seeds):
        raise SeedError("a client seed is a string that is not empty")
    reveals = b"".join(
        hashlib.sha256(REVEAL_TAG + seed.encode("utf-8")).digest() for seed in client_seeds
    )
    return hmac.new(server_seed, GAME_TAG + reveals, hashlib.sha256).digest()


@dataclass
class Verdict:
    """What :func:`verify` found: ``problems`` says each thing that does not hold and
    where (an empty list: every check held); ``rounds`` how many rounds were checked;
    ``seeded``: whether the log carried the seeds (else each round was checked against
    its own seed only, which proves nothing of who chose it)."""

    rounds: int = 0
    seeded: bool = False
    problems: list[str] = field(default_factory=list)
    # What holds but a player may want to know: a seat that committed to a seed of its
    # own and was dealt its public one (it did not reveal in time, or its reveal was
    # lost: only that seat's player can tell which).
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def verify(log: dict[str, Any]) -> Verdict:
    """Check a finished game's log: ``rounds`` (each with ``round``, ``seed``,
    ``commitment``, ``dice``), and, when the game was seeded, ``server_seed``,
    ``server_commitment``, ``client_seeds`` and ``client_commitments`` (seat order; a
    null commitment: the seat brought no seed, and ``table`` names the table whose
    public seed it was dealt), and at a tournament's table ``reseeds``: the seeds the
    seats gave after seats changed, each ``{round, client_seeds, client_commitments}``
    dealing from its ``round`` on (with the same server seed).

    Each seed is checked against its commitment, each seat's dice against the seed and
    the count dealt; with the seeds, each commitment against what was shown before the
    game, and each round's seed against the game secret they make."""
    verdict = Verdict()
    secrets = _seeded_secrets(log, verdict)
    for at, entry in enumerate(log.get("rounds") or []):
        round_no = _round_of(entry, at)
        where = f"round {round_no}"
        verdict.rounds += 1
        try:
            seed = bytes.fromhex(str(entry.get("seed") or ""))
        except ValueError:
            seed = b""
        if len(seed) != 32:
            verdict.problems.append(f"{where}: no seed revealed")
            continue
        secret = secret_of_round(secrets, round_no)
        if secret is not None and seed != round_seed(secret, round_no):
            verdict.problems.append(f"{where}: the seed is not the one the seeds make")
        if entry.get("commitment") != commitment(seed):
            verdict.problems.append(f"{where}: the seed does not match the commitment shown")
        hands = [tuple(hand) for hand in entry.get("dice") or []]
        dealt = roll(seed, [len(hand) for hand in hands])
        for seat, (hand, fair) in enumerate(zip(hands, dealt, strict=True)):
            if tuple(sorted(hand)) != fair:
                verdict.problems.append(f"{where}: seat {seat}'s dice are not the seed's")
    return verdict


def secret_of_round(secrets: list[tuple[int, bytes]], round_no: int) -> bytes | None:
    """The game secret that dealt ``round_no``: the last of ``(from_round, secret)``
    (in order) that began at or before it; None without seeds."""
    found = None
    for first, secret in secrets:
        if first <= round_no:
            found = secret
    return found


def _seeded_secrets(log: dict[str, Any], verdict: Verdict) -> list[tuple[int, bytes]]:
    """The game secrets the log's seeds make, each with the round it deals from (the
    first from round 1, then one per ``reseeds`` entry), once they all check; none
    when the log has no seeds (a game from before them) or they do not check (each
    problem noted)."""
    if "server_seed" not in log:
        return []
    verdict.seeded = True
    try:
        server_seed = bytes.fromhex(str(log["server_seed"]))
        if server_commitment(server_seed) != log.get("server_commitment"):
            verdict.problems.append("the server seed does not match its commitment")
            return []
        stretches = [(1, "", log)]
        for n, again in enumerate(log.get("reseeds") or []):
            first = again.get("round") if isinstance(again, Mapping) else None
            if not isinstance(first, int) or isinstance(first, bool) or first < 1:
                verdict.problems.append(f"reseed {n} names no round")
                return []
            stretches.append((first, f"from round {first}: ", again))
        secrets = []
        for first, where, given in stretches:
            seeds = _checked_seeds(given, log.get("table"), where, verdict)
            if seeds is not None:
                secrets.append((first, game_secret(server_seed, seeds)))
        return [] if verdict.problems else secrets
    except (ValueError, SeedError) as exc:
        verdict.problems.append(f"the seeds cannot be read: {exc}")
        return []


def _checked_seeds(
    given: Mapping[str, Any], table: Any, where: str, verdict: Verdict
) -> list[str] | None:
    """One stretch's client seeds, each checked against its commitment (or, where none
    was given, against its seat's public seed); None when they cannot pair up."""
    seeds = [str(s) for s in given.get("client_seeds") or []]
    shown = list(given.get("client_commitments") or [])
    if len(shown) != len(seeds):
        verdict.problems.append(f"{where}a client seed without its commitment")
        return None
    for seat, (seed, said) in enumerate(zip(seeds, shown, strict=True)):
        public = public_client_seed(table, seat) if isinstance(table, str) else None
        if said is None and seed != public:
            verdict.problems.append(f"{where}seat {seat} brought no seed and was not dealt "
                                    "its public one")  # fmt: skip
        elif said is not None and client_commitment(seed) != said:
            if seed != public:
                verdict.problems.append(f"{where}seat {seat}'s seed does not match its "
                                        "commitment")  # fmt: skip
            else:
                verdict.notes.append(f"{where}seat {seat} committed to a seed of its own and "
                                     "was dealt its public one (no reveal in time)")  # fmt: skip
    return seeds


def _round_of(entry: Mapping[str, Any], at: int) -> int:
    """A logged round's number (its place in the log when it has none)."""
    number = entry.get("round")
    return number if isinstance(number, int) and not isinstance(number, bool) else at + 1
