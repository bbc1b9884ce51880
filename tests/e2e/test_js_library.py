"""The official JavaScript client library (protocol/js) runs its own tests in Node against
a live gateway: a whole game, a reconnect mid-game, ids, rate limits, the lobby."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from ..servers import require_binary

LIBRARY = Path(__file__).resolve().parents[2] / "protocol" / "js"


def node_flags(node: str) -> list[str]:
    version = subprocess.run([node, "--version"], capture_output=True, text=True).stdout
    return ["--experimental-websocket"] if int(version.lstrip("v").split(".")[0]) < 22 else []


def test_the_javascript_library_passes_its_tests_against_a_live_gateway(served: str) -> None:
    node = require_binary("node")
    done = subprocess.run(
        [node, *node_flags(node), "--test", str(LIBRARY / "test")],
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, "DUDO_URL": served},
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "# fail 0" in done.stdout and "# pass 15" in done.stdout, done.stdout[-2000:]


def test_the_example_bot_of_the_readme_plays_a_game_to_the_end(served: str) -> None:
    node = require_binary("node")
    bot = LIBRARY / "examples" / "bot.mjs"
    assert len(bot.read_text(encoding="utf-8").splitlines()) <= 60
    done = subprocess.run(
        [node, *node_flags(node), str(bot), served], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "played " in done.stdout and ("I won" in done.stdout or " won" in done.stdout)
