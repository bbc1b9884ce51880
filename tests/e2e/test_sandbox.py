"""`dudo sandbox`, as a gateway author uses it: started on ports they chose, it prints the
environment their gateway runs with; the Node example gateway (docs/examples/gateway.mjs)
plays a whole game with exactly that, signed and never refused; a table worker killed
with SIGKILL is started again and the next game plays too; Ctrl-C stops everything."""

from __future__ import annotations

import json
import os
import queue
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import redis

from dudo.ops import admin
from dudo.wire import keys

from ..servers import free_port, require_binary
from .test_node_gateway import install


def _lines(proc: subprocess.Popen[str]) -> queue.Queue[str]:
    out: queue.Queue[str] = queue.Queue()

    def pump() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            out.put(line.rstrip("\n"))

    threading.Thread(target=pump, daemon=True).start()
    return out


def _until(lines: queue.Queue[str], pattern: str, timeout: float, seen: list[str]) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            line = lines.get(timeout=0.5)
        except queue.Empty:
            continue
        seen.append(line)
        if re.search(pattern, line):
            return line
    raise AssertionError(f"no line like {pattern!r} in {timeout} s:\n" + "\n".join(seen))


def _play(node: str, script: Path, env: dict[str, str]) -> dict[str, int]:
    done = subprocess.run([node, str(script)], env={**env, "PATH": "/usr/bin:/bin"},
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_gateway_author_plays_on_the_sandbox_with_what_it_prints(tmp_path: Path) -> None:
    node, script = require_binary("node"), install()
    require_binary("redis-server")
    low = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "dudo", "sandbox", "--ports", f"{low}-{low + 20}",
         "--gateway", "acme", "--app", "club", "--folder", str(tmp_path / "sbx")],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    seen: list[str] = []
    try:
        lines = _lines(proc)
        _until(lines, "Ctrl-C stops everything", 90, seen)
        env = dict(re.findall(r"^export (DUDO_\w+)='?([^']*?)'?$", "\n".join(seen), re.M))
        assert env["DUDO_GATEWAY_ID"] == "acme", seen
        url = env["DUDO_REDIS_URL"]
        assert url.startswith("redis://gateway-acme:"), url
        port = int(url.rsplit(":", 1)[1].split("/")[0])
        web = re.search(r"http://127\.0\.0\.1:(\d+)/", "\n".join(seen))
        assert web and low <= port <= low + 20 and low <= int(web.group(1)) <= low + 20
        admin_client = redis.Redis(port=port)
        assert admin_client.hget(keys.GATEWAY_APPS, "acme") == b"club"

        first = _play(node, script, env)
        assert first["winner"] in (0, 1) and first["refused"] == 0

        # A worker killed: the sandbox starts another, and the next game plays.
        pid = next(
            int(p) for p in os.listdir("/proc") if p.isdigit()
            and b"worker-1" in Path(f"/proc/{p}/cmdline").read_bytes()
            and f"127.0.0.1:{port}".encode() in Path(f"/proc/{p}/cmdline").read_bytes()
        )  # fmt: skip
        os.kill(pid, signal.SIGKILL)
        _until(lines, r"worker-1 stopped .*starting it again", 30, seen)
        second = _play(node, script, env)
        assert second["winner"] in (0, 1) and second["refused"] == 0
        refused = [e for e in admin_client.acl_log(count=100)
                   if e.get("username") == admin.user_of("acme")]  # fmt: skip
        assert refused == []
    finally:
        proc.send_signal(signal.SIGINT)
        code = proc.wait(30)
    assert code == 0, "\n".join(seen)
    with socket.socket() as probe:  # its Redis is gone with it
        assert probe.connect_ex(("127.0.0.1", port)) != 0
