"""The endgame solver's process: a solve runs in a child process (so the bot that plays
meanwhile keeps the interpreter to itself), gives the round the in-process solve gives,
survives a kill -9 of that child, and a forked pool (the arena's) is never left waiting
on a solve its parent was running."""

from __future__ import annotations

import multiprocessing
import os
import signal
import time
from typing import Any

import numpy as np

from dudo.bots.endgame import ENDGAMES, Endgames, solve_round
from dudo.engine import preset, rules_dict

RULES = rules_dict(preset("liars-dice", start_dice=1))


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
