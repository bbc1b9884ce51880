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

    Lines said ``first`` (a player's dice for a new round) go before every other line
    waiting, in turns between the people they are for: a turn call in a channel must not
    reach a player before the dice it asks them to play (under a homeserver's rate limit,
    the channel's turn came first: issue 54). Only the game says them, once a round for
    each player, so they cannot be used to hold a channel back."""

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
        self._first: OrderedDict[str, deque[str]] = OrderedDict()
        self._channels: OrderedDict[str, deque[str]] = OrderedDict()
        self._people: OrderedDict[str, deque[str]] = OrderedDict()
        self._channel_next = True  # whose turn it is when both have lines waiting
        self._count = 0
        self._people_count = 0  # lines for people, first or not

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[tuple[str, str]]:
        """Every line waiting, target by target (not the order they will go in)."""
        for queues in (self._first, self._channels, self._people):
            for target, lines in queues.items():
                for line in lines:
                    yield target, line

    def _queues(self, target: str, first: bool) -> OrderedDict[str, deque[str]]:
        if is_channel(target):
            return self._channels
        return self._first if first else self._people

    def add(self, target: str, line: str, *, first: bool = False) -> bool:
        """Queue ``line`` for ``target``; False if a bound dropped it."""
        channel = is_channel(target)
        queues = self._queues(target, first)
        lines = queues.get(target)
        if lines:
            joined = self.join(lines[-1], line)
            if joined is not None:
                lines[-1] = joined
                return True
        waiting = len(self._first.get(target) or ()) + len(self._people.get(target) or ())
        if self._count >= self.most or (
            not channel
            and (waiting >= self.per_person or self._people_count >= self.most // 2)
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
        if self._first:
            return self._first
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

    def take(self) -> tuple[str, str, bool] | None:
        """The next line (target, text, said first), off the queue while it is sent (a
        line said meanwhile is not joined to it: it would go unsaid); :meth:`put_back`
        if it could not go."""
        first = bool(self._first)
        line = self.peek()
        if line is None:
            return None
        self.pop()
        return (*line, first)

    def put_back(self, target: str, line: str, first: bool = False) -> None:
        """A line :meth:`take` gave that did not go (a 429, a cut connection): first
        again, in its target's turn; never dropped for the bounds (it was counted)."""
        channel = is_channel(target)
        queues = self._queues(target, first)
        lines = queues.pop(target, None) or deque()
        lines.appendleft(line)
        queues[target] = lines
        queues.move_to_end(target, last=False)
        self._count += 1
        if not channel:
            self._people_count += 1
        if not first:
            self._channel_next = channel

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
        if queues is not self._first:
            self._channel_next = not channel
