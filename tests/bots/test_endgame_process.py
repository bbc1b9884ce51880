"""The endgame solver's process: a solve runs in a child process (so the bot that plays
meanwhile keeps the interpreter to itself), gives the round the in-process solve gives,
survives a kill -9 of that child, and a forked pool (the arena's) is never left waiting
on a solve its parent was running."""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import time
from typing import Any

import numpy as np

from dudo.bots.endgame import ENDGAMES, Endgames, solve_round
from dudo.engine import preset, rules_dict

RULES = rules_dict(preset("liars-dice", start_dice=1))


def _held(monkeypatch: Any) -> threading.Event:
    """Solves that wait, in place of their child process, until the event returned is
    set (then each gives a solved round)."""
    from dudo.bots import endgame

    release = threading.Event()

    def held(rules: Any, palifico: bool, counts: Any, iterations: Any, solving: Any) -> Any:
        release.wait(30)
        return object(), 0.0

    monkeypatch.setattr(endgame, "_in_a_process", held)
    return release


def _until_idle(solves: Endgames, seconds: float) -> None:
    """Wait until no solve runs or waits (at most ``seconds``)."""
    deadline = time.monotonic() + seconds
    while solves.busy():
        assert time.monotonic() < deadline
        time.sleep(0.01)


def _child_of(solves: Endgames) -> Any:
    """The process solving for ``solves`` (not for another instance: the bots' own
    ENDGAMES may be solving in the background for an earlier test), once it runs."""
    deadline = time.monotonic() + 30
    while not solves.solving:
        assert time.monotonic() < deadline, "no solving process started"
        time.sleep(0.01)
    (child,) = solves.solving
    assert child.name == "dudo-endgame" and child.is_alive() and child.pid != os.getpid()
    return child


def test_a_solve_runs_in_a_child_process_and_gives_the_same_round() -> None:
    solves = Endgames()
    assert solves.get(RULES) is None  # started, in the background
    child = _child_of(solves)
    solved = solves.get(RULES, wait=True)
    here, nash_conv = solve_round(RULES, False)
    assert solved is not None and here is not None and nash_conv < 1e-3
    assert np.array_equal(solved.strategy, here.strategy)  # CFR+ is deterministic
    assert np.array_equal(solved.edge_code, here.edge_code) and solved.roots == here.roots
    assert not solves.solving and not child.is_alive()  # it ended with its answer


def test_a_solver_killed_mid_solve_leaves_the_heuristic_playing_then_is_tried_again() -> None:
    solves = Endgames()
    assert solves.get(RULES) is None
    os.kill(_child_of(solves).pid, signal.SIGKILL)
    # The waiting caller is answered (no hang): no solved round, the heuristic plays,
    # and no new solve is started at every move meanwhile.
    assert solves.get(RULES, wait=True) is None
    assert solves.get(RULES) is None and solves._running == {} and not solves.solving
    assert len(solves._failed) == 1
    solves._failed = {key: 0.0 for key in solves._failed}  # ...until its time comes
    assert solves.get(RULES, wait=True) is not None


def _get_in_the_fork() -> bool:
    return ENDGAMES.get(RULES, wait=True) is not None


def test_a_forked_pool_solves_for_itself_what_its_parent_was_solving() -> None:
    ENDGAMES._solved.clear()
    assert ENDGAMES.get(RULES) is None  # the parent's solve is under way as it forks
    assert ENDGAMES._running
    with multiprocessing.get_context("fork").Pool(1) as pool:
        # Without the fork hook the child would wait forever on the parent's event.
        assert pool.apply_async(_get_in_the_fork).get(timeout=120)
    assert ENDGAMES.get(RULES, wait=True) is not None


def test_a_bot_killed_mid_solve_leaves_no_solving_process_behind(tmp_path: Any) -> None:
    """Issue 35: two dice against one is a minute or two of a core: a bot service killed
    with kill -9 while it solves must not leave its child solving for nobody."""
    import subprocess
    import sys

    script = tmp_path / "solving.py"
    script.write_text(
        "import time\n"
        "from dudo.bots.endgame import Endgames\n"
        "from dudo.engine import preset, rules_dict\n"
        "if __name__ == '__main__':\n"  # the solving child imports this file again
        "    solves = Endgames()\n"
        "    solves.get(rules_dict(preset('lizumo', start_dice=2)), counts=(2, 1))\n"
        "    while not solves.solving: time.sleep(0.01)\n"
        "    (child,) = solves.solving\n"
        "    print(child.pid, flush=True)\n"
        "    time.sleep(600)\n"
    )
    bot = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    try:
        assert bot.stdout is not None
        child = int(bot.stdout.readline())
        os.kill(child, 0)  # solving
        os.kill(bot.pid, signal.SIGKILL)
        bot.wait(10)
        deadline = time.monotonic() + 10
        while _alive(child):
            assert time.monotonic() < deadline, "the solving process outlived its bot"
            time.sleep(0.1)
    finally:
        bot.kill()


def _alive(pid: int) -> bool:
    """Still running (a zombie, dead and waiting for init to reap it, is not)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_solves_wait_in_a_bounded_queue_and_few_large_ones_are_kept(
    monkeypatch: Any,
) -> None:
    """Anyone may make tables with new rules: at most WAITING_MAX solves wait (past it the
    heuristic plays, and the solve is asked for again later), and of two dice against
    one (~110 MB each) only KEEP[(2, 1)] rule sets stay in memory, the least recently
    used going first, without touching the one-die rounds."""
    from dudo.bots import endgame

    release = _held(monkeypatch)
    solves = Endgames()
    many = [rules_dict(preset("liars-dice", start_dice=1, max_dice=m)) for m in range(1, 11)]
    for rules in many:
        solves.get(rules, counts=(2, 1))
    assert len(solves._running) == endgame.WAITING_MAX == 8  # the last two: not queued
    solves.get(RULES)  # nor a one-die round now
    assert len(solves._running) == 8
    release.set()
    _until_idle(solves, 30)
    assert solves.get(RULES, wait=True) is not None  # asked again: solved now
    kept = [key for key in solves._solved if key[-1] == (2, 1)]
    assert len(kept) == endgame.KEEP[(2, 1)] == 4
    assert solves.get(many[7], counts=(2, 1)) is not None  # among the newest four
    assert solves.get(many[0], counts=(2, 1)) is None  # the oldest: let go (asked again)


def test_every_presets_solve_starts_at_launch_whatever_the_bound(monkeypatch: Any) -> None:
    """Issue 53, item 22: the bot service asked for 15 solves at launch (the presets'
    rounds, palifico or not) but the queue took 8: the rest, liars-dice's two against
    one and every two-dice-each round, were never started until a game asked. The
    presets' solves are a known few: all queue, and the bound still holds for the rest."""
    from dudo.bots import endgame
    from dudo.engine import PRESETS

    release = _held(monkeypatch)
    solves = Endgames()
    solves.warm()
    palifico = sum(bool(rules_dict(preset(name))["palifico"]) for name in PRESETS)
    wanted = len(endgame.ROUNDS) * (len(PRESETS) + palifico)
    assert wanted == 15 and len(solves._running) == wanted
    many = [rules_dict(preset("liars-dice", start_dice=1, max_dice=m)) for m in range(1, 11)]
    for rules in many:  # tables with rules of anyone's making: still at most 8 of them
        solves.get(rules, counts=(2, 1))
    assert len(solves._running) == wanted + endgame.WAITING_MAX
    release.set()
    _until_idle(solves, 60)
    assert solves._presets == set()


def test_the_launch_says_what_it_solves_its_progress_and_its_end(monkeypatch: Any) -> None:
    """Issue 53, item 21: `dudo serve` said nothing of the solves it started (minutes of a
    core, ~1 GB): the log now says what starts, each one done, and the end."""
    from dudo.bots import endgame

    logs: list[dict[str, Any]] = []

    class Recorder:  # the module's logger, as written to (whatever structlog's setup)
        def info(self, event: str, **fields: Any) -> None:
            logs.append({"event": event, **fields})

    monkeypatch.setattr(endgame, "log", Recorder())
    monkeypatch.setattr(endgame, "_in_a_process", lambda *args: (object(), 0.0))
    solves = Endgames()
    asked = solves.warm()
    _until_idle(solves, 60)
    logs = [e for e in logs if e["event"].startswith("endgame_solves")]
    events = [e["event"] for e in logs]
    assert asked == 15 and events[0] == "endgame_solves_started"
    progress = [e for e in logs if e["event"] == "endgame_solves_progress"]
    assert [(e["done"], e["of"]) for e in progress] == [(n, 15) for n in range(1, 16)]
    assert events[-1] == "endgame_solves_done" and logs[-1]["solves"] == 15
