"""``dudo bench engine`` prints the published JSON figures (no timing is asserted here)."""

from __future__ import annotations

import json
import subprocess
import sys


def test_bench_engine_json_has_the_published_fields() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "dudo", "bench", "engine", "--json", "--seconds", "0.5"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    result = json.loads(out)
    assert result["bench"] == "engine"
    assert isinstance(result["actions_per_s"], int) and result["actions_per_s"] > 0
    assert result["actions"] > 0 and len(result["actions_per_s_samples"]) == 5
