"""What bots are called at a table: a person's name, the same in every language.

A table's bots and a tournament's bots take their names from one list, so a bot is
"Inés" wherever it plays (a tournament's had been "Bot 2" while the tables' had names;
issue 34, item 9)."""

from __future__ import annotations

NAMES = ("Rocío", "Hugo", "Inés", "Mateo", "Greta", "Tomás", "Lía", "Bruno", "Olga", "Félix")


def bot_name(n: int) -> str:
    """The ``n``-th bot's name: the list's names, then the same names numbered ("Hugo 2"),
    so that a tournament's many bots stay told apart."""
    name = NAMES[n % len(NAMES)]
    return name if n < len(NAMES) else f"{name} {n // len(NAMES) + 1}"
