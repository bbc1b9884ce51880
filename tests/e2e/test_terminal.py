"""The terminal client, driven through a pseudo-terminal for a whole game against two bots
(its text, play_text.py, is checked piece by piece in tests/text/test_lines.py)."""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path

import pexpect


def test_a_whole_game_in_the_terminal(served: str, output_dir: Path) -> None:
    child = pexpect.spawn(
        sys.executable,
        [
            "-m",
            "dudo",
            "play",
            served,
            "--name",
            "Tess",
            "--create",
            "--bots",
            "2",
            "--seats",
            "3",
            "--start-dice",
            "2",
            "--level",
            "hard",
            "--odds",
        ],
        encoding="utf-8",
        timeout=20,
    )
    transcript = output_dir / "terminal-game.txt"
    child.logfile_read = transcript.open("w", encoding="utf-8")
    child.expect("created; you are seat 1 of 3")
    child.expect("Connected to table")
    deadline = time.monotonic() + 120
    moves = 0
    while True:
        assert time.monotonic() < deadline, "the game did not finish"
        index = child.expect([r"Your turn\. ([^\n]*)\n> ", r"Winner: ([^\n]+)", pexpect.TIMEOUT])
        if index == 1:
            winner = child.match.group(1).strip()
            break
        if index == 2:
            continue
        legal = child.match.group(1)
        suggestion = re.search(r"Suggestion: (\d+ \d)\.", legal)
        if "dudo" in legal and (moves % 2 == 1 or suggestion is None):
            child.sendline("dudo")
        elif suggestion:
            child.sendline(suggestion.group(1))
        else:
            child.sendline("calza")
        moves += 1
    child.expect(pexpect.EOF, timeout=10)
    text = transcript.read_text(encoding="utf-8")
    assert moves >= 1
    assert "DUDO by" in text or "CALZA by" in text, "a reveal was shown"
    assert winner
    assert re.search(r"Your dice: \[\d\]", text)
    assert "[bot hard]" in text  # the level asked for
    # Moves as lines (yours and others'), not a table redrawn after each.
    # A bot's moves say it is one (issue 54, item 9): "Hugo (bot) bids 3 × fives".
    assert re.search(r"\w+ \(bot\) bids \d+ × \w+", text) and re.search(r"You bid \d+ × \w+", text)
    # The table is drawn once per round (each round ends in a reveal), not per move.
    rounds = text.count("— DUDO by") + text.count("— CALZA by")
    assert text.count("Table ") <= rounds + 3, (text.count("Table "), rounds)
