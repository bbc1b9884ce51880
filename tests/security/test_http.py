"""A hostile HTTP client against a real gateway process (issue 29, item 8): half-sent
requests no longer hold connections for the keep-alive time, one address holds a
bounded number of connections, and tournaments and registrations are rate-limited
per address like tables; issue 50: a private tournament's results are its entrants'
(item 14), and begin is limited as the other organizer requests (item 16)."""

from __future__ import annotations

import json
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import redis

from dudo.wire import keys

from ..http_status import status
from ..integration.procs import FAST, Workers, wait_for
from ..servers import RedisServer


def _get(url: str) -> int:
    return status(url, timeout=5)


def _post(url: str, body: dict[str, Any]) -> int:
    return status(urllib.request.Request(
        url, data=json.dumps(body).encode(), method="POST",
        headers={"Content-Type": "application/json"},
    ))  # fmt: skip


def _post_json(url: str, body: dict[str, Any]) -> dict[str, Any]:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), method="POST",
        headers={"Content-Type": "application/json"},
    )  # fmt: skip
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.load(response)


def _closed(sock: socket.socket, within: float) -> bool:
    """Did the server close ``sock`` within ``within`` seconds?"""
    sock.settimeout(within)
    try:
        return sock.recv(1024) == b""
    except TimeoutError:
        return False
    except ConnectionResetError:
        return True


def test_slow_and_many_connections_cost_an_address_only_its_own(
    redis_server: RedisServer, real_redis: redis.Redis, tmp_path: Path
) -> None:
    group = Workers(redis_server.url, tmp_path)
    try:
        group.start("w1")
        group.spawn("d1", "director", "--redis", group.url, "--partitions", "2",
                    "--table-partitions", str(group.partitions), "--id", "d1", *FAST)  # fmt: skip
        base = group.gateway(
            "gw-h", "--http-conns-per-address", "20", "--request-timeout", "1",
            "--creates-per-min", "5", "--director-partitions", "2", "--joins-per-min", "30",
        )  # fmt: skip
        wait_for(lambda: real_redis.zcard(keys.DIRECTORS) == 1, 30, "the director")
        host, port = base.removeprefix("http://").split(":")
        slow = []
        for _ in range(20):  # a slowloris: headers that never end
            sock = socket.create_connection((host, int(port)))
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
            slow.append(sock)
        extra = socket.create_connection((host, int(port)))
        assert _closed(extra, 2.0)  # the 21st of one address: dropped at once
        started = time.monotonic()
        assert all(_closed(sock, 3.0) for sock in slow)  # each closed past its deadline
        assert time.monotonic() - started < 3.0
        assert _get(base + "/healthz") == 200  # and the address may connect again
        # Issue 50, item 14: a private tournament's standings and results (names, handles,
        # ratings) were served to anyone with its id. Now to its entrants and its invite.
        made = _post_json(base + "/api/tournaments", {"name": "Secret", "host": "Hana",
                                                       "private": True, "rules": {}})  # fmt: skip
        tid, token, invite = made["tournament"], made["token"], made["invite"]
        for path in (f"/api/tournaments/{tid}", f"/api/tournaments/{tid}/results?format=json",
                     f"/api/tournaments/{tid}/results?format=csv"):  # fmt: skip
            joint = "&" if "?" in path else "?"
            assert _get(base + path) == 401, path
            assert _get(base + path + f"{joint}invite=not-the-code") == 401, path
            assert _get(base + path + f"{joint}invite={invite}") == 200, path
            assert _get(base + path + f"{joint}token={urllib.parse.quote(token)}") == 200, path
        # Item 16: begin had no limit (160 from one address all reached the director); it
        # is limited per address like the other organizer requests.
        codes = [_post(base + f"/api/tournaments/{tid}/begin", {"token": token})
                 for _ in range(40)]  # fmt: skip
        assert 429 in codes and codes.count(409) <= 30, codes  # one entrant: never begun
        # Tournaments and registrations: per address, like tables.
        body = {"name": "Cup", "rules": {"preset": "classic"}}
        codes = [_post(base + "/api/tournaments", body) for _ in range(8)]
        assert codes.count(201) <= 5 and 429 in codes, codes
        for sock in slow:
            sock.close()
    finally:
        group.stop_all()
