"""What the partition loop needs of the entities it hosts: tables, and tournaments.

A worker hosts tables; a director runs the same loop (leases, fencing, the commit
script, timers, dead letters) over tournaments. The loop only ever calls what
:class:`Entity` lists, and commits what :class:`Flush` says.
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

if TYPE_CHECKING:
    from .reports import Report

SEEN_IDS = 64  # how many recent message ids an entity remembers, to take each once


class RecentIds:
    """The last ``SEEN_IDS`` message ids an entity applied, oldest first.

    Kept in order (the record stores them so), with a set beside the deque:
    every inbox entry is checked against them, and a scan of 64 strings per
    entry was a visible share of the worker's time."""

    __slots__ = ("_order", "_set")

    def __init__(self, ids: Iterable[str] = ()) -> None:
        self._order: deque[str] = deque(maxlen=SEEN_IDS)
        self._set: set[str] = set()
        for msg_id in ids:
            self.add(msg_id)

    def __contains__(self, msg_id: object) -> bool:
        return msg_id in self._set

    def __iter__(self) -> Iterator[str]:
        return iter(self._order)

    def __len__(self) -> int:
        return len(self._order)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RecentIds) and self._order == other._order

    def __repr__(self) -> str:
        return f"RecentIds({list(self._order)!r})"

    def add(self, msg_id: str) -> None:
        if msg_id in self._set:
            return
        if len(self._order) == SEEN_IDS:
            self._set.discard(self._order[0])  # the deque drops it on append
        self._order.append(msg_id)
        self._set.add(msg_id)


@dataclass
class Flush:
    """What one batch did to an entity: bytes to store and messages to deliver."""

    record: bytes | None  # new record to store, or None if nothing to persist
    version: int
    outputs: list[tuple[str, bytes]]  # (gateway, encoded message)
    lobby: dict[str, Any] | bool | None  # entry, None (remove), or False (unchanged)
    timer_remove: str | None
    timer_add: tuple[str, int] | None  # (member, wake-up time ms)
    finished: bool
    # (inbox stream key, encoded message) for another partition: appended untrimmed
    # with the commit (a table's report to its tournament, a tournament's orders).
    sends: list[tuple[str, bytes]] = field(default_factory=list)
    # Fields of the record's hash beside the record itself, stored with it (value b"":
    # deleted): parts of a big entity that change one at a time (a tournament's
    # entrants and tables), so a batch writes what changed, not the whole.
    rows: list[tuple[str, bytes]] = field(default_factory=list)
    # A tournament table's reports to its director (dudo.entity.reports.Report): the partition
    # loop writes those of a whole commit as one `reports` entry per tournament.
    reports: list[Report] = field(default_factory=list)
    # Further fields of the listing hash its lobby entry is in, written with it (the
    # ratings keeper's public profiles, one per player, beside its board).
    listing: list[tuple[str, dict[str, Any]]] = field(default_factory=list)


def timer_change(
    current: str | None, name: str, wake: int | None
) -> tuple[str | None, tuple[str, int] | None, str | None]:
    """How an entity's timer entry changes: the member to remove, the one to add (with
    its time), and the member now set. ``name`` is ``<entity>|<version>``; the timer
    fires a timeout naming that version, which applies only if nothing changed since."""
    wanted = name if wake is not None else None
    if wanted == current:
        return None, None, current
    return current, (name, wake) if wake is not None else None, wanted


class Flushing:
    """What every entity's ``flush`` shares (a table's, a tournament's): its timer entry
    follows its version and wake-up time, its record is stored if the batch changed it,
    its lobby entry is sent if it changed. Then the batch's marks are cleared."""

    id: str
    version: int
    wake: int | None
    timer_member: str | None
    _dirty: bool
    _persist: bool
    _lobby: bool

    if TYPE_CHECKING:

        def to_bytes(self) -> bytes: ...
        def lobby_entry(self) -> dict[str, Any] | None: ...

    def _timer_name(self) -> str:
        """``<entity>|<version>``: a timer set at one version fires a timeout for it."""
        return f"{self.id}|{self.version}"

    def _flush(
        self,
        outputs: list[tuple[str, bytes]],
        sends: list[tuple[str, bytes]],
        *,
        finished: bool,
        rows: list[tuple[str, bytes]] | None = None,
        reports: list[Report] | None = None,
    ) -> Flush:
        timer_remove, timer_add, self.timer_member = timer_change(
            self.timer_member, self._timer_name(), self.wake
        )
        result = Flush(
            record=self.to_bytes() if self._persist else None,
            version=self.version,
            outputs=outputs,
            lobby=self.lobby_entry() if self._lobby else False,
            timer_remove=timer_remove,
            timer_add=timer_add,
            finished=finished,
            sends=sends,
            rows=rows or [],
            reports=reports or [],
        )
        self._dirty = self._persist = self._lobby = False
        return result


class Entity(Protocol):
    """A table or a tournament, as the partition loop sees it.

    ``KEY`` is the message field that names the entity (``table``, ``tournament``);
    ``DIRECTION`` the inbox its messages come by (``wire.decode`` refuses any other
    message, so every one it lets through names the entity by ``KEY``); ``CREATES``
    the message types that create it.
    """

    KEY: ClassVar[str]
    CREATES: ClassVar[frozenset[str]]
    DIRECTION: ClassVar[str]
    UNKNOWN: ClassVar[str]  # the error code for a message to one that does not exist
    version: int
    limits: Any  # what the loop hands every entity it loads (a table's time limits)

    @classmethod
    def create(
        cls, msg: dict[str, Any], now: int, limits: Any, rng: random.Random | None = None
    ) -> Entity: ...

    @classmethod
    def from_bytes(cls, data: bytes, rows: Mapping[bytes, bytes] | None = None) -> Entity:
        """The entity from its record and its rows (the hash's other fields)."""

    @staticmethod
    def error_for(msg: dict[str, Any], code: str, text: str) -> tuple[str, bytes] | None: ...

    @staticmethod
    def lobby_note(entity: str, entry: dict[str, Any] | None, version: int) -> bytes: ...

    @staticmethod
    def timeout(entity: str, version: int) -> dict[str, Any]: ...

    def handle(self, msg: dict[str, Any], now: int, rng: random.Random) -> None: ...

    def flush(self, frame_gateways: frozenset[str] = frozenset()) -> Flush:
        """What the batch did. ``frame_gateways``: the gateways that take views as
        ``frames`` (client JSON encoded once) rather than ``view`` messages."""
