"""Fair dice: every round's dice come from a seed the server commits to.

The game holds a secret (random bytes chosen by whoever creates the table, the
engine never draws randomness itself). Round ``r``'s seed is
``HMAC-SHA256(secret, "dudo-round/1:<r>")``. Every view shows the round's
commitment, ``SHA-256("dudo-commit/1:" + seed)``, from before the first bid;
the reveal publishes the seed. Anyone can then recompute the commitment and the
dice with :func:`roll` and check that nothing changed mid-round. Revealing a
round seed tells nothing about the secret or about later rounds.

The algorithm is part of the published protocol (docs/rules.md, "Fair dice").
"""

from __future__ import annotations

import hashlib
import hmac

ROUND_TAG = b"dudo-round/1:"
COMMIT_TAG = b"dudo-commit/1:"
DICE_TAG = b"dudo-dice/1:"
SECRET_BYTES = 32


def round_seed(secret: bytes, round_no: int) -> bytes:
    """The seed of round ``round_no`` (1-based) of a game with this secret."""
    return hmac.new(secret, ROUND_TAG + str(round_no).encode(), hashlib.sha256).digest()


def commitment(seed: bytes) -> str:
    """The public commitment to a round seed, as lowercase hex."""
    return hashlib.sha256(COMMIT_TAG + seed).hexdigest()


def roll(seed: bytes, dice_counts: list[int] | tuple[int, ...]) -> list[tuple[int, ...]]:
    """Each seat's dice for a round, sorted ascending, derived from the seed alone.

    Seat ``s`` reads the byte stream ``SHA-256(DICE_TAG + seed + ":<s>:<block>")``
    for block 0, 1, ...; each byte below 252 gives the die ``byte % 6 + 1``
    (rejection sampling keeps the six faces exactly equally likely).
    """
    base = hashlib.sha256(DICE_TAG + seed)
    hands: list[tuple[int, ...]] = []
    for seat, count in enumerate(dice_counts):
        faces = b""
        block = 0
        while len(faces) < count:
            stream = base.copy()
            stream.update(f":{seat}:{block}".encode())
            # Drop bytes >= 252, map the rest to byte % 6 + 1 (both in C).
            faces += stream.digest().translate(_FACE_OF_BYTE, _REJECTED_BYTES)
            block += 1
        hands.append(tuple(sorted(faces[:count])))
    return hands


_FACE_OF_BYTE = bytes(byte % 6 + 1 if byte < 252 else 0 for byte in range(256))
_REJECTED_BYTES = bytes(range(252, 256))
