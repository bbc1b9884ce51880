"""The JavaScript example client of docs/protocol.md plays a whole game through the gateway."""

from __future__ import annotations

import subprocess
from pathlib import Path

from ..servers import require_binary
from .test_js_library import node_flags

CLIENT = Path(__file__).resolve().parents[2] / "docs" / "examples" / "dudo-client.mjs"


def test_the_javascript_example_client_plays_to_the_end(served: str) -> None:
    node = require_binary("node")
    assert len(CLIENT.read_text(encoding="utf-8").splitlines()) < 100
    done = subprocess.run(
        [node, *node_flags(node), str(CLIENT), served], capture_output=True, text=True, timeout=90
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "table " in out and "I play" in out
    assert "game over: winner is seat" in out
    assert "refused" not in out
