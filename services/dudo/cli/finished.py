"""A finished game's last view, asked of a gateway as any spectator asks it: for
``dudo verify`` given a table id (``--gateway``) or a replay link
(``https://host/#/replay/<table>``) instead of a file.

The view is the one every spectator gets (the public part: every round's dice, the
seeds once the game is over); nothing here is trusted by the check that follows, which
recomputes every die from the seeds.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any
from urllib.parse import urlsplit

from dudo_client import DudoApi, DudoConnection, DudoError

REPLAY = re.compile(r"#/(?:replay|t|w)/([A-Za-z0-9_-]{1,64})$")
TABLE_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")


def target_of(text: str, gateway: str | None) -> tuple[str, str] | None:
    """(gateway base URL, table id) that ``text`` names: a replay (or table) link, or a
    table id with ``gateway``; None when it names neither (a file, then)."""
    found = REPLAY.search(text)
    if found and text.startswith(("http://", "https://")):
        parts = urlsplit(text)
        return f"{parts.scheme}://{parts.netloc}", found.group(1)
    if gateway is not None and TABLE_ID.fullmatch(text):
        return gateway.rstrip("/"), text
    return None


def finished_view(base: str, table: str, timeout: float = 15.0) -> dict[str, Any]:
    """The table's spectator view from the gateway at ``base``, asked through the client
    package as any spectator asks it (ValueError: no such table, the gateway cannot be
    reached, or the game is not over)."""
    try:
        view = asyncio.run(asyncio.wait_for(_watch(base, table, timeout), timeout))
    except (DudoError, TimeoutError) as exc:
        raise ValueError(f"{base}: {table}: {exc or type(exc).__name__}") from exc
    if (view.get("game") or {}).get("phase") != "over":
        raise ValueError(f"{table}: the game is not over: nothing to verify yet")
    return view


async def _watch(base: str, table: str, timeout: float) -> dict[str, Any]:
    async with DudoApi(base) as api:
        token = (await api.watch_table(table))["token"]
    async with DudoConnection(base, token, retries=0, open_timeout=timeout) as conn:
        return dict(conn.view or await conn.next("view"))
