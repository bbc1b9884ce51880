"""How a chat network compares names: which two nicks (or channel names) are one.

An IRC server says how it folds case in its ISUPPORT line (``CASEMAPPING=``), and
servers differ: under ``ascii`` (ngIRCd, UnrealIRCd, Ergo by default) "Ana[" and
"Ana{" are two people; under ``rfc1459`` (the RFC's default, Solanum, InspIRCd's
default) they are one. A gateway that folds more than its server lets one person act
for another and be told their dice, so it follows the server's word
(:func:`casemapping`) and, until the server has said it, folds only ASCII letters, the
one folding every mapping shares: the least, so it never joins two names any server
keeps apart. A value it does not know is taken the same way, for the same reason.

Matrix compares user and room ids exactly (:func:`exact`).
"""

from __future__ import annotations

import string
import unicodedata
from collections.abc import Callable

Fold = Callable[[str], str]

_ASCII = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)
_RFC1459 = str.maketrans(string.ascii_uppercase + "[]\\~", string.ascii_lowercase + "{}|^")
_STRICT = str.maketrans(string.ascii_uppercase + "[]\\", string.ascii_lowercase + "{}|")


def ascii_fold(name: str) -> str:
    """``CASEMAPPING=ascii``: A-Z are a-z, nothing else changes."""
    return name.translate(_ASCII)


def rfc1459(name: str) -> str:
    """``CASEMAPPING=rfc1459``: ASCII letters, and ``[]\\~`` are ``{}|^``."""
    return name.translate(_RFC1459)


def rfc1459_strict(name: str) -> str:
    """``CASEMAPPING=rfc1459-strict`` (or ``strict-rfc1459``): as rfc1459 without ``~``."""
    return name.translate(_STRICT)


def precis(name: str) -> str:
    """``CASEMAPPING=rfc8265`` (PRECIS UsernameCaseMapped, as Ergo's ``precis`` mapping
    announces it; ``rfc7613`` before): full- and half-width forms mapped to their plain
    ones, Unicode lower case, then NFC."""
    wide = "".join(
        unicodedata.normalize("NFKC", ch)
        if unicodedata.decomposition(ch).startswith(("<wide>", "<narrow>"))
        else ch
        for ch in name
    )
    return unicodedata.normalize("NFC", wide.lower())


def exact(name: str) -> str:
    """No folding (Matrix ids are compared as they are)."""
    return name


MAPPINGS: dict[str, Fold] = {
    "ascii": ascii_fold,
    "rfc1459": rfc1459,
    "rfc1459-strict": rfc1459_strict,
    "strict-rfc1459": rfc1459_strict,
    "rfc8265": precis,
    "rfc7613": precis,
    "precis": precis,
}


def casemapping(announced: str | None, utf8: str | None = None) -> Fold:
    """The folding a server announced (``CASEMAPPING``; ``UTF8MAPPING``, where an IRCv3
    server announces its Unicode mapping apart), or :func:`ascii_fold` for none or one
    not known here (see the module's docstring)."""
    if utf8 and utf8.strip().lower() in MAPPINGS:
        return MAPPINGS[utf8.strip().lower()]
    return MAPPINGS.get((announced or "").strip().lower(), ascii_fold)
