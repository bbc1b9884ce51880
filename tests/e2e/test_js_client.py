"""The JavaScript example client of docs/protocol.md plays a whole game through the gateway."""

from __future__ import annotations

import subprocess
from pathlib import Path

from ..servers import require_binary

CLIENT = Path(__file__).resolve().parents[2] / "docs" / "examples" / "dudo-client.mjs"


def test_the_javascript_example_client_plays_to_the_end(served: str) -> None:
    node = require_binary("node")
    assert len(CLIENT.read_text(encoding="utf-8").splitlines()) < 100
    version = subprocess.run([node, "--version"], capture_output=True, text=True).stdout
    flags = ["--experimental-websocket"] if int(version.lstrip("v").split(".")[0]) < 22 else []
    done = subprocess.run(
        [node, *flags, str(CLIENT), served], capture_output=True, text=True, timeout=90
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "table " in out and "I play" in out
    assert "game over: winner is seat" in out
    assert "refused" not in out
