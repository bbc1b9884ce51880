"""The terminal client, driven through a pseudo-terminal for a whole game against two bots."""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path

import pexpect

from dudo.play import parse, render


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
        ],
        encoding="utf-8",
        timeout=20,
    )
    transcript = output_dir / "terminal-game.txt"
    child.logfile_read = transcript.open("w", encoding="utf-8")
    child.expect("created; you are seat 0")
    child.expect("Connected to table")
    deadline = time.monotonic() + 120
    moves = 0
    while True:
        assert time.monotonic() < deadline, "the game did not finish"
        index = child.expect(
            [r"Your turn\. Legal: ([^\n]*)\n", r"Winner: ([^\n]+)", pexpect.TIMEOUT]
        )
        if index == 1:
            winner = child.match.group(1).strip()
            break
        if index == 2:
            continue
        legal = child.match.group(1)
        suggestion = re.search(r"Suggestion: (\d+ \d)", legal)
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


def test_parse_and_render() -> None:
    assert parse("3 5") == {"type": "bid", "quantity": 3, "face": 5}
    assert parse("  DUDO ") == {"type": "dudo"}
    assert parse("left") == {"type": "direction", "value": -1}
    assert parse("three fives") == "help"
    view = {
        "table": "t1",
        "seat": 0,
        "version": 3,
        "status": "playing",
        "players": [
            {"name": "Tess", "bot": None, "away": False},
            {"name": "Hugo", "bot": "normal", "away": False},
        ],
        "game": {
            "round": 1,
            "palifico": False,
            "phase": "bidding",
            "dice_counts": [2, 2],
            "turn": 0,
            "dice": [3, 5],
            "bids": [[1, 1, 5]],
            "winner": None,
            "legal": {
                "bid": [1, 2, 2, 2, 1, 1],
                "max_quantity": 4,
                "dudo": True,
                "calza": True,
                "direction": False,
            },
        },
    }
    text = render(view)
    assert "Your dice: [3] [5]" in text and "Hugo 1×5" in text
    assert "Legal: bid 1..4×1, 2..4×2" in text and "dudo | calza" in text
    assert "Suggestion: 1 5" in text
