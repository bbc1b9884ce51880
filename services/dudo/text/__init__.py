"""A table as text and typed commands as actions, for the terminal and chat players."""

from .lines import (
    bid_text,
    dice_text,
    event_line,
    odds_text,
    parse,
    player_label,
    render,
    result_lines,
    reveal_text,
    say,
    summary_line,
    turn_text,
)
from .words import LANGS, LEVEL, WORDS

__all__ = [
    "LANGS",
    "LEVEL",
    "WORDS",
    "bid_text",
    "dice_text",
    "event_line",
    "odds_text",
    "parse",
    "player_label",
    "render",
    "result_lines",
    "reveal_text",
    "say",
    "summary_line",
    "turn_text",
]
