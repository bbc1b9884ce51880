"""A finished game's dice checked by the client itself, from its log alone (docs/rules.md,
"Fair dice" and "Seeds from everyone"): the server's word is not needed.

The same checks, in the same words, as the server's ``dudo verify``: each round's seed
against its commitment and each seat's dice against the seed; with the seeds (a game
dealt from everyone's seeds), the server seed and each client seed against their
commitments and each round's seed against the game secret they make.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping, Sequence
from typing import Any

from ._seeds import committed

_FACE_OF_BYTE = bytes(byte % 6 + 1 if byte < 252 else 0 for byte in range(256))
_REJECTED = bytes(range(252, 256))


def _round_seed(secret: bytes, round_no: int) -> bytes:
    return hmac.new(secret, b"dudo-round/1:" + str(round_no).encode(), hashlib.sha256).digest()


def _commitment(seed: bytes) -> str:
    return hashlib.sha256(b"dudo-commit/1:" + seed).hexdigest()


def _roll(seed: bytes, counts: Sequence[int]) -> list[list[int]]:
    base = hashlib.sha256(b"dudo-dice/1:" + seed)
    hands = []
    for seat, count in enumerate(counts):
        faces, block = b"", 0
        while len(faces) < count:
            stream = base.copy()
            stream.update(f":{seat}:{block}".encode())
            faces += stream.digest().translate(_FACE_OF_BYTE, _REJECTED)
            block += 1
        hands.append(sorted(faces[:count]))
    return hands


def _game_secret(server_seed: bytes, client_seeds: Sequence[str]) -> bytes:
    reveals = b"".join(
        hashlib.sha256(b"dudo-reveal/2:" + seed.encode()).digest() for seed in client_seeds
    )
    return hmac.new(server_seed, b"dudo-game/2:" + reveals, hashlib.sha256).digest()


def verify(log: Mapping[str, Any]) -> list[str]:
    """What does not hold in a finished game's log, each with its round; an empty list
    when every check holds. ``log``: the game's last view (a seat's or a spectator's),
    or ``rounds`` (a finished game's ``game["log"]``) and, when the game was dealt from
    everyone's seeds, ``table``, ``server_seed``, ``server_commitment``, ``client_seeds``
    and ``client_commitments`` (by seat; null for a seat dealt its public seed,
    ``public:<table>:<seat>``), and at a tournament's table ``reseeds`` (each
    ``{round, client_seeds, client_commitments}``: the seeds given after seats changed,
    dealing from that round on). Without seeds, each round is checked against its own seed
    only, which does not prove who chose it. A seat that committed to a seed and was
    dealt its public one (it did not reveal in time) is fair dealing, not listed here:
    ``seeds["revealed"]`` of the view says so.
    """
    if isinstance(log.get("game"), Mapping):  # a finished game's view
        log = log_of_view(log)
    problems: list[str] = []
    secrets = _seeded_secrets(log, problems)
    for at, entry in enumerate(log.get("rounds") or []):
        round_no = _round_of(entry, at)
        where = f"round {round_no}"
        try:
            seed = bytes.fromhex(str(entry.get("seed") or ""))
        except ValueError:
            seed = b""
        if len(seed) != 32:
            problems.append(f"{where}: no seed revealed")
            continue
        secret = next((s for first, s in reversed(secrets) if first <= round_no), None)
        if secret is not None and seed != _round_seed(secret, round_no):
            problems.append(f"{where}: the seed is not the one the seeds make")
        if entry.get("commitment") != _commitment(seed):
            problems.append(f"{where}: the seed does not match the commitment shown")
        hands = [list(hand) for hand in entry.get("dice") or []]
        dealt = _roll(seed, [len(hand) for hand in hands])
        for seat, (hand, fair) in enumerate(zip(hands, dealt, strict=True)):
            if sorted(hand) != fair:
                problems.append(f"{where}: seat {seat}'s dice are not the seed's")
    return problems


def _seeded_secrets(log: Mapping[str, Any], problems: list[str]) -> list[tuple[int, bytes]]:
    """Each game secret with the round it deals from: the first from round 1, then one
    per ``reseeds`` entry (a tournament's table, after seats changed); none without
    seeds, or when any does not check."""
    if "server_seed" not in log:
        return []
    try:
        server_seed = bytes.fromhex(str(log["server_seed"]))
    except ValueError:
        server_seed = b""
    if len(server_seed) != 32 or hashlib.sha256(
        b"dudo-server/2:" + server_seed
    ).hexdigest() != log.get("server_commitment"):
        problems.append("the server seed does not match its commitment")
        return []
    stretches: list[tuple[int, str, Mapping[str, Any]]] = [(1, "", log)]
    for n, again in enumerate(log.get("reseeds") or []):
        first = again.get("round") if isinstance(again, Mapping) else None
        if not isinstance(first, int) or isinstance(first, bool) or first < 1:
            problems.append(f"reseed {n} names no round")
            return []
        stretches.append((first, f"from round {first}: ", again))
    secrets = []
    for first, where, given in stretches:
        seeds = _checked_seeds(given, log.get("table"), where, problems)
        if seeds is not None:
            secrets.append((first, _game_secret(server_seed, seeds)))
    return [] if problems else secrets


def _checked_seeds(
    given: Mapping[str, Any], table: Any, where: str, problems: list[str]
) -> list[str] | None:
    seeds = [str(seed) for seed in given.get("client_seeds") or []]
    shown = list(given.get("client_commitments") or [])
    if len(shown) != len(seeds):
        problems.append(f"{where}a client seed without its commitment")
        return None
    for seat, (seed, said) in enumerate(zip(seeds, shown, strict=True)):
        public = f"public:{table}:{seat}" if isinstance(table, str) else None
        if said is None and seed != public:
            problems.append(f"{where}seat {seat} brought no seed and was not dealt its public one")
        elif said is not None and seed != public and committed(seed) != said:
            problems.append(f"{where}seat {seat}'s seed does not match its commitment")
    return seeds


def log_of_view(view: Mapping[str, Any]) -> dict[str, Any]:
    """A finished game's log as :func:`verify` reads it, from the game's last view (any
    seat's or a spectator's): its rounds (``game["log"]``) and its ``seeds``."""
    game = view.get("game")
    rounds = game.get("log") if isinstance(game, Mapping) else None
    if not isinstance(rounds, list):
        raise ValueError("not a finished game's view (no game.log)")
    log: dict[str, Any] = {"table": view.get("table"), "rounds": rounds}
    seeds = view.get("seeds")
    if isinstance(seeds, Mapping) and "server_seed" in seeds:
        log.update(
            server_seed=seeds["server_seed"],
            server_commitment=seeds.get("server"),
            client_seeds=seeds.get("client_seeds"),
            client_commitments=seeds.get("commitments"),
        )
        if seeds.get("reseeds"):
            log["reseeds"] = seeds["reseeds"]
    return log


def _round_of(entry: Mapping[str, Any], at: int) -> int:
    """A logged round's number (its place in the log when it has none)."""
    number = entry.get("round")
    return number if isinstance(number, int) and not isinstance(number, bool) else at + 1
