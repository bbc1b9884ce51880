"""Issue 52, item 1: a game lost to a restart of `dudo serve` ends both client libraries.

`dudo serve`'s embedded Redis starts empty: a restart loses every table. Before, the
JavaScript library got `error unknown_table` to its hello and stayed open for ever, and
the Python one said nothing and waited: both processes sat on open sockets. Here a real
`dudo serve` is killed under two connected clients (one per library) and started again on
the same port: both reconnect, are refused `unknown_table`, and end with it, at once.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dudo.ops.fleet import wait_ready
from dudo_client import DudoApi, DudoConnection, DudoError

from ..servers import free_port, require_binary
from .conftest import SECRET
from .test_js_library import LIBRARY, node_flags

NODE_CLIENT = """
import { DudoConnection } from %s;
const conn = new DudoConnection(process.env.DUDO_URL, process.env.DUDO_TOKEN);
await conn.open();
console.log("open");
const why = await conn.finished;
console.log(JSON.stringify({ code: why.code, closed: conn.closed }));
process.exit(0);
"""


class Serve:
    """`dudo serve` on one port, started again on the same one."""

    def __init__(self, folder: Path) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log = (folder / "serve.log").open("ab")
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "dudo", "serve", "--port", str(self.port),
             "--no-endgame-solves"],
            stdout=self.log, stderr=self.log, env={**os.environ, "DUDO_GATEWAY_SECRET": SECRET},
        )  # fmt: skip
        wait_ready(self.base, self.proc)

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.kill()  # its embedded Redis goes with it (tests/e2e/test_serve.py)
        self.proc.wait(10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)
        self.log.close()


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Serve]:
    server = Serve(tmp_path)
    server.start()
    yield server
    server.stop()


def test_a_restart_of_dudo_serve_ends_both_libraries_with_unknown_table(serve: Serve) -> None:
    node = require_binary("node")

    async def scenario() -> None:
        async with DudoApi(serve.base) as api:
            python_seat = await api.create_table(rules={"preset": "classic"}, seats=2, name="Ana")
            node_seat = await api.create_table(rules={"preset": "classic"}, seats=2, name="Ben")
        script = NODE_CLIENT % json.dumps(str(LIBRARY / "dudo-client.js"))
        js = await asyncio.create_subprocess_exec(
            node, *node_flags(node), "--input-type=module", "-e", script,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
            env={**os.environ, "DUDO_URL": serve.base, "DUDO_TOKEN": node_seat["token"]},
        )  # fmt: skip
        assert js.stdout is not None
        assert (await asyncio.wait_for(js.stdout.readline(), 30)).strip() == b"open"
        conn = DudoConnection(serve.base, python_seat["token"])
        await conn.open()
        reader = asyncio.ensure_future(conn.next("view", lambda view: False))  # waits on
        pending = asyncio.ensure_future(conn.wait_closed())

        serve.kill()
        await asyncio.sleep(0.5)
        await asyncio.to_thread(serve.start)  # the same port, an empty Redis
        restarted = time.monotonic()

        with pytest.raises(DudoError) as ended:
            await asyncio.wait_for(reader, 30)
        assert ended.value.code == "unknown_table"
        assert (await asyncio.wait_for(pending, 1)).code == "unknown_table"
        with pytest.raises(DudoError) as later:
            await asyncio.wait_for(conn.act({"type": "dudo"}), 1)
        assert later.value.code == "unknown_table"
        line = await asyncio.wait_for(js.stdout.readline(), 30)
        assert json.loads(line) == {"code": "unknown_table", "closed": True}, line
        assert await asyncio.wait_for(js.wait(), 10) == 0  # the process ends: nothing holds it
        assert time.monotonic() - restarted < 30
        await conn.close()

    asyncio.run(scenario())


def ends_when_its_gateway_goes(
    command: list[str], folder: Path, restarted: bool, **popen: Any
) -> tuple[str, dict[str, Any]]:
    """A client program under a `dudo serve` of its own that is killed (and, if
    ``restarted``, started again on its port, an empty Redis): the program prints "open"
    once connected, and one JSON line when its connection ends. That line (checked: it
    came within 20 s of the kill, and the program then exited 0), with the code expected
    (`unknown_table` after a restart, else `gave_up`). The program reads the base URL and
    how many retries it may make as its last two arguments: enough to outlast a restart
    on a loaded machine (about 40 s), 3 (about 4 s) when the gateway is gone for good."""
    serve = Serve(folder)
    serve.start()
    retries = "12" if restarted else "3"
    bot = subprocess.Popen(
        [*command, serve.base, "wait", retries],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **popen,
    )  # fmt: skip
    try:
        assert bot.stdout is not None and bot.stdout.readline().strip() == "open"
        serve.kill()
        if restarted:
            serve.start()
        gone = time.monotonic()
        line = bot.stdout.readline()
        waited = time.monotonic() - gone
        assert bot.wait(10) == 0 and waited < 20, (waited, line)
        return ("unknown_table" if restarted else "gave_up"), json.loads(line)
    finally:
        bot.kill()
        serve.stop()
