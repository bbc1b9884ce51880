"""Display names: what a name players see may hold, checked the same way on every path."""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from .errors import BAD_MESSAGE, WireError

# -- display names -----------------------------------------------------------

NAME_MAX = 32
# Characters no display name may hold: controls, format characters (bidi overrides,
# zero-width joiners and spaces), private use, surrogates, unassigned, line and
# paragraph separators. They hide, reorder or break the text others see.
_HIDDEN = frozenset({"Cc", "Cf", "Co", "Cs", "Cn", "Zl", "Zp"})


def clean_name(value: Any) -> str:
    """A display name as everyone will see it: NFC, trimmed, inner whitespace runs made
    one space, 1..32 characters, nothing hidden. Raises :class:`WireError` otherwise.

    Gateways clean a name before sending it; workers accept only clean names (the
    gateway once accepted a padded name the worker then refused, after the table
    had been created)."""
    if not isinstance(value, str):
        raise WireError(BAD_MESSAGE, "a name must be a string")
    name = clean_line(value, "a name")
    if not 1 <= len(name) <= NAME_MAX:
        raise WireError(BAD_MESSAGE, f"a name must be 1..{NAME_MAX} characters")
    return name


def clean_line(value: str, what: str = "a line") -> str:
    """A line of text people will read (a name, an organizer's announcement): NFC,
    trimmed, inner whitespace runs made one space; :class:`WireError` if it holds a
    character that hides, reorders or breaks the text around it."""
    line = " ".join(unicodedata.normalize("NFC", value).split())
    if any(unicodedata.category(c) in _HIDDEN for c in line):
        raise WireError(BAD_MESSAGE, f"{what} may not hold control or invisible characters")
    return line


# A display name clean_name leaves as it is, in plain ASCII: printable words, one space
# between them (its length is checked beside it). is_clean_name asks it, and the fast
# decoder types such names with it.
CLEAN_ASCII = r"\A[!-~]+(?: [!-~]+)*\Z"
_CLEAN_ASCII_MATCH = re.compile(CLEAN_ASCII).match


def is_clean_name(value: str) -> bool:
    """Would :func:`clean_name` leave ``value`` as it is? Checked for every display name
    in every entry (a tournament director: a name for every player moved). Plain
    ASCII is answered without the Unicode tables (NFC leaves it as it is): by the
    pattern the fast decoder types such names with (:data:`CLEAN_ASCII`)."""
    if value.isascii():
        return len(value) <= NAME_MAX and _CLEAN_ASCII_MATCH(value) is not None
    try:
        return clean_name(value) == value
    except WireError:
        return False


def name_key(name: str) -> str:
    """What two display names that people would take for the same one share: the same
    letters in any case or width (NFKC, then casefolded), spaces collapsed. Scripts that
    merely look alike (a Cyrillic "а" for a Latin "a") are not folded together."""
    return " ".join(unicodedata.normalize("NFKC", name).casefold().split())
