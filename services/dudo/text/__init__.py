"""A table as text and typed commands as actions, for the terminal and chat players."""

from .lines import (
    event_line,
    odds_text,
    parse,
    render,
    result_lines,
    reveal_text,
    say,
    summary_line,
    turn_text,
)
from .words import LANGS, LEVEL, WORDS

__all__ = [
    "LANGS", "LEVEL", "WORDS", "event_line", "odds_text", "parse", "render", "result_lines",
    "reveal_text", "say", "summary_line", "turn_text",
]
