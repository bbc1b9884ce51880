"""Display names: what a name players see may hold, checked the same way on every path."""

from __future__ import annotations

import functools
import re
import unicodedata
from typing import Any

from confusable_homoglyphs import utils as confusable_data

from .errors import BAD_MESSAGE, WireError

# -- display names -----------------------------------------------------------

NAME_MAX = 32
# Characters no display name may hold: controls, format characters (bidi overrides,
# zero-width joiners and spaces), private use, surrogates, unassigned, line and
# paragraph separators. They hide, reorder or break the text others see.
_HIDDEN = frozenset({"Cc", "Cf", "Co", "Cs", "Cn", "Zl", "Zp"})


# Characters that show nothing where they stand, though a name may hold them: Unicode's
# Default_Ignorable_Code_Point (combining grapheme joiner, variation selectors, Hangul
# fillers, Khmer inherent vowels...; DerivedCoreProperties.txt), and the blank braille
# pattern. A name keeps them (an emoji's variation selector), but two names that differ
# only by them are one to the look-alike check (seven "Ana" once stood in one standings,
# each with another invisible mark), and a name of nothing else is refused.
_IGNORABLE_RANGES = (
    (0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160),
    (0x17B4, 0x17B5), (0x180B, 0x180F), (0x200B, 0x200F), (0x202A, 0x202E),
    (0x2060, 0x206F), (0x2800, 0x2800), (0x3164, 0x3164), (0xFE00, 0xFE0F),
    (0xFEFF, 0xFEFF), (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A), (0xE0000, 0xE0FFF),
)  # fmt: skip


def _ignorable(ch: str) -> bool:
    code = ord(ch)
    return any(low <= code <= high for low, high in _IGNORABLE_RANGES)


def visible(text: str) -> str:
    """``text`` without the characters that show nothing (:data:`_IGNORABLE_RANGES`)."""
    return "".join(ch for ch in text if not _ignorable(ch))


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
    if not visible(name).strip():
        raise WireError(BAD_MESSAGE, "a name must show something: this one is all invisible")
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


def name_keys(name: str) -> frozenset[str]:
    """What a display name shares with every name people would take for it: two names
    look alike when they have a key in common. The same letters in any case or width
    (NFKC, casefolded), spaces collapsed, characters that show nothing dropped, letters
    of any script that look the same (a Cyrillic "а" for a Latin "a", "0" for "O", "rn"
    for "m": :func:`skeleton`). Two keys,
    because case and confusables do not commute: casefolded first, "IAN" is "ian";
    skeleton first, "Ian" is "lan" (a capital I is a small l in most fonts)."""
    nfkc = unicodedata.normalize("NFKC", visible(name))
    return frozenset(
        " ".join(skeleton(skeleton(text).casefold()).split()) for text in (nfkc.casefold(), nfkc)
    )


def skeleton(text: str) -> str:
    """UTS #39's skeleton: each character replaced by the prototype Unicode's
    confusables.txt gives it (NFD before and after). Two strings with the same skeleton
    look alike. The table is the ``confusable-homoglyphs`` package's data."""
    table = _prototypes()
    mapped = "".join(table.get(c, c) for c in unicodedata.normalize("NFD", text))
    return unicodedata.normalize("NFD", mapped)


@functools.cache
def _prototypes() -> dict[str, str]:
    """Each confusable character's prototype, read once (the data holds ~10,000 of them).

    The package stores confusables.txt both ways: a prototype lists its sources, a
    source (one character, never a prototype itself) lists its one prototype. So a
    one-character key with one entry whose entry lists it back is a source, except in a
    pair of two single characters, where either may be the prototype: both then map to
    the smaller, which keeps them one class."""
    data = confusable_data.load("confusables.json")

    def entries(key: str) -> list[str]:
        return [e["c"].strip(_BIDI_MARKS) for e in data.get(key, ())]

    table: dict[str, str] = {}
    for key in data:
        if len(key) != 1:
            continue
        [*found] = entries(key)
        if len(found) != 1:
            continue  # a prototype of several sources
        other = found[0]
        if len(other) == 1 and len(entries(other)) == 1:
            table[key] = min(key, other)  # a pair: one class, one representative
        else:
            table[key] = other
    return table


# The package wraps right-to-left characters in these marks for display.
_BIDI_MARKS = "\u200e\u200f"
