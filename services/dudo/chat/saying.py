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

import re
from collections import OrderedDict, deque
from collections.abc import Callable, Iterator

CHANNEL_PREFIXES = "#&!+"  # IRC's channel types (a Matrix room's configured name: "#...")
# Seconds left until a deadline, written into a line as it waits and counted when it goes
# out: a reminder that waited behind a homeserver's rate limit told "20 s left" with 4
# left (issue 54, item 3). A unit separator around the deadline (ms): no one types it.
_COUNTDOWN = re.compile("\x1f(\\d{1,15})\x1f")


def is_channel(target: str) -> bool:
    return target[:1] in CHANNEL_PREFIXES


def countdown(deadline_ms: int) -> str:
    """A place in a line for the seconds left until ``deadline_ms``, filled by
    :func:`counted` as the line goes out."""
    return f"\x1f{int(deadline_ms)}\x1f"


def counted(text: str, now_ms: int) -> str:
    """``text`` with each :func:`countdown` as the seconds left now (1 at the least)."""
    return _COUNTDOWN.sub(lambda m: str(max(1, round((int(m.group(1)) - now_ms) / 1000))), text)


class SayQueue:
    """Lines per target; :meth:`peek` and :meth:`pop` give the next in fair turns.

    A channel's line addressed to someone ("ana: your turn ...") waits for the lines
    waiting for that person: their dice for the round go before the turn call that asks
    them to play (under a homeserver's rate limit the turn call once came first; issue
    54), while other people's dice wait their turn behind it. What a person can delay so
    is a line addressed to them, by their own lines (a few: ``per_person``)."""

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
        # A channel's waiting lines as they were said, before joining: who a line is
        # addressed to is read from its own start (IRC joins with " · ", which a board's
        # line holds too), not from the joined text.
        self._said: dict[str, deque[list[str]]] = {}
        self._taken: tuple[str, str, list[str]] | None = None  # (target, text, said)
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
                if channel:
                    self._said[target][-1].append(line)
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
        if channel:
            self._said.setdefault(target, deque()).append([line])
        self._count += 1
        if not channel:
            self._people_count += 1
        return True

    def _next(self) -> tuple[OrderedDict[str, deque[str]], str] | None:
        """The queues and the target whose line goes next."""
        if self._channels and (self._channel_next or not self._people):
            target = next(iter(self._channels))
            said = ["\n" + line for line in self._said[target][0]]
            for person in self._people:  # addressed: that person's lines first
                if any(f"\n{person}: " in line for line in said):
                    return self._people, person
            return self._channels, target
        if self._people:
            return self._people, next(iter(self._people))
        return None

    def peek(self) -> tuple[str, str] | None:
        """The line that goes next, or None when nothing waits."""
        found = self._next()
        if found is None:
            return None
        queues, target = found
        return target, queues[target][0]

    def take(self) -> tuple[str, str] | None:
        """The next line, off the queue while it is sent (a line said meanwhile is not
        joined to it: it would go unsaid); :meth:`put_back` if it could not go."""
        line = self.peek()
        if line is not None:
            target, text = line
            said = self._said[target][0] if is_channel(target) else []
            self._taken = (target, text, said)
            self.pop()
        return line

    def put_back(self, target: str, line: str) -> None:
        """A line :meth:`take` gave that did not go (a 429, a cut connection): first
        again, in its target's turn; never dropped for the bounds (it was counted)."""
        channel = is_channel(target)
        queues = self._channels if channel else self._people
        lines = queues.pop(target, None) or deque()
        lines.appendleft(line)
        queues[target] = lines
        if channel:
            taken = self._taken
            said = taken[2] if taken is not None and taken[:2] == (target, line) else [line]
            self._said.setdefault(target, deque()).appendleft(said)
        queues.move_to_end(target, last=False)
        self._count += 1
        if not channel:
            self._people_count += 1
        self._channel_next = channel

    def pop(self) -> None:
        """The line :meth:`peek` gave went out: the next target takes its turn."""
        found = self._next()
        if found is None:
            return
        queues, target = found
        lines = queues.pop(target)
        lines.popleft()
        self._count -= 1
        channel = queues is self._channels
        if channel:
            said = self._said[target]
            said.popleft()
            if not said:
                del self._said[target]
        if not channel:
            self._people_count -= 1
        if lines:
            queues[target] = lines  # to the back: the others go first
        self._channel_next = not channel
