"""The short chaos run of CI: `dudo chaos` as an operator runs it, audited at the end.

Fifteen seconds of games through two gateways and two workers while, every second or
two, a worker is killed or frozen, a gateway killed, Redis restarted or
client connections cut, twice: without and with a hostile gateway. `dudo chaos`
replays every table from its secret and the players' decisions and exits non-zero on
any loss, doubling or leak, on anything of the hostile gateway's applied, leaked or let
through by Redis, or when the honest players' median move latency with it grows past a
bound (RATIO_MAX here) over what it was without. The ten-minute run and its figures are
in docs/operations.md.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from ..servers import require_binary

# The honest players' median move latency with the hostile gateway over without. Alone,
# 60 s: 0.97x (docs/operations.md). Here two 15 s runs, one after the other, beside three
# other test processes on two cores: the suite's load changes between them (CI measured
# 2.12x once, 20.8 ms against 9.8). A hostile gateway that held the workers up would
# cost every honest move; a bound of three leaves room for that noise, not for it.
RATIO_MAX = 3.0


def test_a_short_chaos_run_loses_doubles_and_leaks_nothing(tmp_path: Path) -> None:
    require_binary()
    done = subprocess.run(
        [
            sys.executable, "-m", "dudo", "chaos", "--seconds", "15", "--tables", "12",
            "--fault-every", "1,2.5", "--latency-ratio-max", str(RATIO_MAX),
            "--seed", "7", "--json", "--keep", str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )  # fmt: skip
    assert done.stdout, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert (result["lost"], result["doubled"], result["leaked"]) == (0, 0, 0), result["problems"]
    assert result["games_finished"] == result["tables"] >= 12, result["problems"]
    assert result["actions_applied"] == result["actions_decided"] > 300
    # Every kind of fault struck, and everything recovered from it.
    assert set(result["faults"]) == {
        "kill_worker", "pause_worker", "kill_gateway", "restart_redis", "drop_clients"
    }  # fmt: skip
    assert all(r["max"] < 30 for r in result["recovery_s"].values()), result["recovery_s"]
    # A hostile gateway (another app, its Redis password in hand) wrote all along:
    # nothing of it was applied for a seat it did not hold, nothing private reached it.
    hostile = result["hostile_gateway"]
    assert hostile["sent"] > 200 and hostile["refused_answered"] > 0, hostile
    assert (hostile["applied"], hostile["leaked"]) == (0, 0), hostile["problems"]
    # Issue 50: it also tried the shared streams (refused by Redis), squatted tables and
    # seat tokens, and flooded its own inbox; Redis let nothing of it through, and the
    # honest players' moves were as quick as in the same run without it.
    assert set(hostile["tried"]) >= {"max_id", "maxlen_0", "select", "huge_presence",
                                     "unsigned_flood", "table_squat", "forged_hellos"}, hostile
    assert hostile["breaches"] == 0, hostile["problems"]
    assert result["without_hostile"]["ok"] is True, result["without_hostile"]
    ratio = result["honest_p50_ratio"]
    assert ratio is not None and ratio <= RATIO_MAX, (result["honest_p50_ms"],
                                                result["honest_p50_ms_without_hostile"])
    assert result["ok"] is True and done.returncode == 0
