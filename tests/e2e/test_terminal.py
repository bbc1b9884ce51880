"""The terminal client, driven through a pseudo-terminal for a whole game against two bots;
its text (play_text.py) checked piece by piece."""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path

import pexpect

from dudo.play_text import event_line, parse, render, turn_text


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
    assert re.search(r"\w+ bids \d+ × \w+", text) and re.search(r"You bid \d+ × \w+", text)
    # The table is drawn once per round (each round ends in a reveal), not per move.
    rounds = text.count("— DUDO by") + text.count("— CALZA by")
    assert text.count("Table ") <= rounds + 3, (text.count("Table "), rounds)


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
            "rules": {"palifico_wild_ones": False},
            "dice_in_play": 4,
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
    assert "1. Tess (you)" in text and "2. Hugo [bot normal]" in text  # seats from 1
    turn = turn_text(view)
    assert turn.startswith("Your turn. To beat: 1 × five (Hugo).")
    assert "Legal: bid 1..4×1, 2..4×2" in turn and "dudo | calza" in turn
    assert "Suggestion: 1 5." in turn
    assert event_line(view, {"type": "bid", "seat": 1, "quantity": 3, "face": 6}) == (
        "Hugo bids 3 × sixes"
    )
    assert event_line(view, {"type": "house_bot", "seat": 0}) == (
        "(the clock ran out: the house plays for you)"
    )
    assert event_line(view, {"type": "dudo", "seat": 0}) == "You call Dudo!"
    view["game"]["palifico"] = True
    assert "PALIFICO: the face is locked, ones are not wild" in render(view)
    view["game"]["rules"]["palifico_wild_ones"] = True
    assert "ones stay wild" in render(view)
