"""The asyncio gateway link: appends of one event-loop turn share a round trip, and every
sender hears how it went."""

from __future__ import annotations

import asyncio
from typing import Any

import fakeredis
import pytest
import redis

from dudo import wire
from dudo.link import AsyncGatewayLink
from dudo.wire import keys

P = 4


class _Counting:
    """A client that counts what reaches Redis: single commands and pipelines."""

    def __init__(self, inner: Any, fail: bool = False) -> None:
        self.inner, self.fail, self.calls = inner, fail, []

    async def execute_command(self, *args: Any, **options: Any) -> Any:
        self.calls.append(("command", args[0]))
        if self.fail:
            raise redis.ConnectionError("Redis went away")
        return await self.inner.execute_command(*args, **options)

    def pipeline(self, transaction: bool = True) -> Any:
        self.calls.append(("pipeline", None))
        if self.fail:
            raise redis.ConnectionError("Redis went away")
        return self.inner.pipeline(transaction=transaction)


def _act(link: AsyncGatewayLink, n: int) -> dict[str, Any]:
    return link.message(
        "act", id=f"a{n}", table=f"t{n}", player="p", seat=0, action={"type": "dudo"}
    )


def test_sends_of_one_loop_turn_share_a_round_trip() -> None:
    async def scenario() -> tuple[_Counting, Any]:
        fake = fakeredis.FakeAsyncRedis()
        client = _Counting(fake)
        link = AsyncGatewayLink(client, "gw-1", P)
        await asyncio.gather(*(link.send(_act(link, n)) for n in range(10)))
        await link.send(_act(link, 10))  # alone: one plain command
        return client, fake

    client, fake = asyncio.run(scenario())
    assert client.calls == [("pipeline", None), ("command", "XADD")]

    async def count() -> int:
        total = 0
        for n in range(P):
            total += await fake.xlen(keys.inbox(n))
        return total

    assert asyncio.run(count()) == 11
    # what arrived is each message, whole
    entries = asyncio.run(fake.xrange(keys.inbox(keys.partition_of("t3", P))))
    assert any(wire.decode(f[wire.ENTRY_FIELD])["id"] == "a3" for _, f in entries)


def test_every_sender_of_a_failed_round_trip_gets_the_error() -> None:
    async def scenario() -> list[Any]:
        link = AsyncGatewayLink(_Counting(fakeredis.FakeAsyncRedis(), fail=True), "gw-1", P)
        return await asyncio.gather(
            *(link.send(_act(link, n)) for n in range(3)), return_exceptions=True
        )

    results = asyncio.run(scenario())
    assert len(results) == 3 and all(isinstance(r, redis.ConnectionError) for r in results)


def test_a_cancelled_sender_does_not_cancel_the_others() -> None:
    async def scenario() -> int:
        fake = fakeredis.FakeAsyncRedis()
        link = AsyncGatewayLink(fake, "gw-1", P)
        first = asyncio.create_task(link.send(_act(link, 1)))
        second = asyncio.create_task(link.send(_act(link, 2)))
        await asyncio.sleep(0)  # both queued in the same turn
        first.cancel()
        await second
        with pytest.raises(asyncio.CancelledError):
            await first
        await asyncio.sleep(0.01)
        return sum([await fake.xlen(keys.inbox(n)) for n in range(P)])

    assert asyncio.run(scenario()) == 2  # the cancelled sender's message went all the same
