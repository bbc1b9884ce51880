"""What waits to be said, and in which order: fair between the people a gateway answers.

A chat connection may say only a few lines a second (the server's pace), so lines wait.
One queue in arrival order let four nicks asking for help in private hold a channel's
answer 15 s back (719 lines in 10 s ahead of it). So lines wait per target, and the
next line is chosen in turns: channels and people alternate whenever both have lines
waiting, and within each, targets take turns (round robin). A channel's line then waits
for at most one private line, and a person's for one line of each other person waiting.
What waits is bounded: ``most`` lines in all, at most ``per_person`` for any one person,
and people's lines together at most half of ``most``, so a channel always has room. A
line past a bound is dropped and counted.
"""

from __future__ import annotations

from collections import OrderedDict, deque
from collections.abc import Callable, Iterator

CHANNEL_PREFIXES = "#&!+"  # IRC's channel types (a Matrix room's configured name: "#...")


def is_channel(target: str) -> bool:
    return target[:1] in CHANNEL_PREFIXES


class SayQueue:
    """Lines per target; :meth:`peek` and :meth:`pop` give the next in fair turns."""

    def __init__(
        self,
        *,
        most: int,
        per_person: int = 10,
        join: Callable[[str, str], str | None] = lambda waiting, line: None,
    ) -> None:
        """``join(waiting, line)``: the two as one line, or None where they do not fit
        (the last line waiting for a target takes the next one for it, while it fits)."""
        self.most, self.per_person, self.join = most, per_person, join
        self.dropped = 0
        self._channels: OrderedDict[str, deque[str]] = OrderedDict()
        self._people: OrderedDict[str, deque[str]] = OrderedDict()
        self._channel_next = True  # whose turn it is when both have lines waiting
        self._count = 0
        self._people_count = 0

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[tuple[str, str]]:
        """Every line waiting, target by target (not the order they will go in)."""
        for queues in (self._channels, self._people):
            for target, lines in queues.items():
                for line in lines:
                    yield target, line

    def add(self, target: str, line: str) -> bool:
        """Queue ``line`` for ``target``; False if a bound dropped it."""
        channel = is_channel(target)
        queues = self._channels if channel else self._people
        lines = queues.get(target)
        if lines:
            joined = self.join(lines[-1], line)
            if joined is not None:
                lines[-1] = joined
                return True
        if self._count >= self.most or (
            not channel
            and (
                (lines is not None and len(lines) >= self.per_person)
                or self._people_count >= self.most // 2
            )
        ):
            self.dropped += 1
            return False
        if lines is None:
            lines = queues[target] = deque()
        lines.append(line)
        self._count += 1
        if not channel:
            self._people_count += 1
        return True

    def _next_queues(self) -> OrderedDict[str, deque[str]] | None:
        if self._channels and (self._channel_next or not self._people):
            return self._channels
        if self._people:
            return self._people
        return None

    def peek(self) -> tuple[str, str] | None:
        """The line that goes next, or None when nothing waits."""
        queues = self._next_queues()
        if queues is None:
            return None
        target, lines = next(iter(queues.items()))
        return target, lines[0]

    def pop(self) -> None:
        """The line :meth:`peek` gave went out: the next target takes its turn."""
        queues = self._next_queues()
        if queues is None:
            return
        target, lines = next(iter(queues.items()))
        lines.popleft()
        self._count -= 1
        channel = queues is self._channels
        if not channel:
            self._people_count -= 1
        del queues[target]
        if lines:
            queues[target] = lines  # to the back: the others go first
        self._channel_next = not channel
