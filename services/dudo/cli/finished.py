"""A finished game's last view, asked of a gateway as any spectator asks it: for
``dudo verify`` given a table id (``--gateway``) or a replay link
(``https://host/#/replay/<table>``) instead of a file.

The view is the one every spectator gets (the public part: every round's dice, the
seeds once the game is over); nothing here is trusted by the check that follows, which
recomputes every die from the seeds.
"""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any
from urllib.parse import urlsplit

import aiohttp

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
    """The table's spectator view from the gateway at ``base`` (ValueError: it has no
    such table, or cannot be reached, or the game is not over)."""
    try:
        return asyncio.run(asyncio.wait_for(_watch(base, table), timeout))
    except (aiohttp.ClientError, OSError, TimeoutError) as exc:
        raise ValueError(f"{base}: {exc or type(exc).__name__}") from exc


async def _watch(base: str, table: str) -> dict[str, Any]:
    async with aiohttp.ClientSession() as session:
        async with session.post(f"{base}/api/tables/{table}/watch", json={}) as response:
            body = await response.json(content_type=None)
            if response.status != 200:
                raise ValueError(f"{table}: {body.get('code')}: {body.get('message')}")
        url = base.replace("http", "ws", 1) + "/ws"
        async with session.ws_connect(url, max_msg_size=8 << 20) as ws:
            await ws.send_str(json.dumps({"v": 1, "type": "hello", "token": body["token"]}))
            async for frame in ws:
                message = json.loads(frame.data)
                if message.get("type") == "error":
                    raise ValueError(f"{table}: {message['code']}: {message['message']}")
                if message.get("type") == "view":
                    if (message.get("game") or {}).get("phase") != "over":
                        raise ValueError(f"{table}: the game is not over: nothing to verify yet")
                    return dict(message)
        raise ValueError(f"{table}: the gateway closed the connection before a view")
