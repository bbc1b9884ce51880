"""What a finished game or tournament sends for the ratings (``result`` messages).

Tables and tournaments append a result to the ratings inbox with the commit that
ends them (a ``Flush`` send); :mod:`dudo.director.ratings` applies it. Only people
are rated: bots' seats are left out, and a game with fewer than two people sends
nothing.
"""

from __future__ import annotations

import base64
import hashlib

from . import keys, wire


def result_send(kind: str, entity: str, ranking: list[list[str]]) -> list[tuple[str, bytes]]:
    """The ``result`` entry for the ratings inbox, as Flush sends (none for fewer than two
    people). ``ranking``: [player, name] from first to last place. The id is the
    entity's (a table or a tournament ends once), hashed if it would be too long."""
    if len(ranking) < 2:
        return []
    result_id = f"{kind[0]}:{entity}"
    if len(result_id) > 64:
        digest = hashlib.sha256(result_id.encode()).digest()
        result_id = f"{kind[0]}." + base64.urlsafe_b64encode(digest).decode().rstrip("=")
    body = wire.message(
        "result", id=result_id, ratings=keys.RATINGS_ID, source=kind, ranking=ranking
    )
    return [(keys.RATINGS.inbox(0), wire.encode(body))]
