"""`dudo verify FILE` (issue 55, item 3): a finished game's log checked as anyone can,
from the file alone; exit 0 when every check holds, 1 naming each problem and its round,
2 when the file is not a log."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from ..engine.test_fairness import played_log
from ..table.test_seeds import play_out, seated_with_seeds
from ..table.test_table import h


def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "dudo", "verify", *args],
        input=stdin, capture_output=True, text=True, timeout=60,
    )  # fmt: skip


def test_a_log_is_verified_and_a_changed_die_named_with_its_round(tmp_path: Path) -> None:
    log = played_log()
    good = tmp_path / "game.json"
    good.write_text(json.dumps(log))
    done = run(str(good))
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"{len(log['rounds'])} rounds: every die matches" in done.stdout
    assert "every seat's seed match" in done.stdout

    hand = next(h for h in log["rounds"][1]["dice"] if h)
    hand[-1] = hand[-1] % 6 + 1
    done = run("-", stdin=json.dumps(log))
    assert done.returncode == 1
    assert f"NOT FAIR: round {log['rounds'][1]['round']}: seat" in done.stdout


def test_a_view_without_seeds_is_checked_round_by_round_and_says_so(tmp_path: Path) -> None:
    view = {"type": "view", "game": {"log": played_log()["rounds"]}}
    path = tmp_path / "view.json"
    path.write_text(json.dumps(view))
    done = run(str(path))
    assert done.returncode == 0 and "does not prove who chose it" in done.stdout
    for bad in ({"hello": 1}, {"rounds": [{"round": None, "seed": "00" * 32, "dice": [1, 2]}]}):
        path.write_text(json.dumps(bad))
        done = run(str(path))
        assert done.returncode == 2 and "not a game's log" in done.stderr, done.stderr


def test_a_finished_tables_view_is_verified_with_its_seeds_and_an_unrevealed_seat_told(
    tmp_path: Path,
) -> None:
    """A real table's last view: Ana revealed, the second seat brought none, Ben did not
    reveal in time (dealt his public seed: fair, and said)."""
    run_table = seated_with_seeds(["ana", None, "ben"])
    run_table.send("seed", player=h("p0"), seat=0, seed="ana")
    run_table.send("timeout", gateway=None, version=run_table.table.version,
                   at=run_table.table.seeding_until)  # fmt: skip
    view = {k: v for k, v in play_out(run_table).items() if k != "_to"}
    path = tmp_path / "view.json"
    path.write_text(json.dumps(view))
    done = run(str(path))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "every seat's seed match" in done.stdout
    assert "note: seat 2 committed to a seed of its own and was dealt its public one" in done.stdout
    view["seeds"]["client_seeds"][1] = "picked by the operator"
    path.write_text(json.dumps(view))
    done = run(str(path))
    assert done.returncode == 1
    assert "NOT FAIR: seat 1 brought no seed and was not dealt its public one" in done.stdout


def test_a_table_id_a_gateway_makes_never_reads_as_an_option() -> None:
    """`dudo verify ID` once refused a table whose random id began with "-" (one in 64):
    argparse read it as an option. The ids a gateway makes never begin with one."""
    from types import SimpleNamespace

    from dudo.gateway.http import HttpApi

    made = iter(["-Zd8IQd9azlxyz", "Zd8IQd9azlxyz"])
    api = SimpleNamespace(_derived=lambda kind, key: next(made))
    assert HttpApi._new_id(api, "table", "key-1") == "_Zd8IQd9azl"  # type: ignore[arg-type]
    assert HttpApi._new_id(api, "table", "key-2") == "Zd8IQd9azlx"  # type: ignore[arg-type]
    ids = [HttpApi._new_id(api, "table", None) for _ in range(2000)]  # type: ignore[arg-type]
    assert not any(i.startswith("-") for i in ids)
    assert len(set(ids)) == len(ids)
