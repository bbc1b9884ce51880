"""The shared service machinery: backoff, health over HTTP, the loop that survives failures."""

from __future__ import annotations

import json
import random
import urllib.error
import urllib.request

import pytest
import redis

from dudo.infra.service import Backoff, Health, run_until_stopped


def test_backoff_grows_with_jitter_up_to_its_cap_and_resets() -> None:
    backoff = Backoff(base=0.1, cap=1.0, rng=random.Random(1))
    waits = [backoff.next() for _ in range(8)]
    for attempt, wait in enumerate(waits):
        ceiling = min(1.0, 0.1 * 2**attempt)
        assert ceiling / 2 <= wait <= ceiling
    assert len(set(waits[-3:])) == 3  # capped, still spread
    backoff.reset()
    assert backoff.next() <= 0.1


def _get(port: int, path: str) -> tuple[int, dict]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as exc:
        return exc.code, json.load(exc)


def test_health_answers_liveness_and_readiness_over_http() -> None:
    health = Health("test", stall_after=60)
    port = health.serve(0, host="127.0.0.1")
    try:
        assert _get(port, "/healthz")[0] == 200
        status, body = _get(port, "/readyz")
        assert status == 503 and body["reason"] == "starting"
        health.set_ready(True)
        assert _get(port, "/readyz")[0] == 200
        health.stall_after = 0  # the loop has stopped turning
        assert _get(port, "/healthz")[0] == 503 and _get(port, "/readyz")[0] == 503
    finally:
        health.close()


def test_a_detail_named_ready_never_stands_for_the_process() -> None:
    """The chat gateways report their outbox reader's state as details, "ready" among
    them: it once overrode the verdict, so a gateway cut off from its chat server said
    ready (found by tests/integration/test_matrix.py, the homeserver stopped)."""
    health = Health("matrix")
    health.set_ready(False, "not connected to the matrix server")
    health.details = {"ready": True, "reader": True, "matrix": False}
    status = health.status()
    assert status["ready"] is False and status["reason"] == "not connected to the matrix server"
    assert status["reader"] is True and status["matrix"] is False


def test_the_loop_survives_every_failure_recovers_and_stops() -> None:
    calls: list[str] = []
    outcomes = iter(
        [redis.ConnectionError("down"), None, RuntimeError("bug"), redis.TimeoutError(), None]
    )
    health = Health("test")

    def step() -> None:
        outcome = next(outcomes)
        calls.append("step")
        if outcome is not None:
            raise outcome

    readiness = []
    run_until_stopped(
        step,
        stopping=lambda: calls.count("step") == 5,
        health=health,
        recover=lambda: (calls.append("recover"), readiness.append(health.ready)),
        sleep=lambda s: calls.append("sleep"),
    )
    assert calls == [
        "step", "recover", "sleep",  # Redis down
        "step",                      # back
        "step", "recover", "sleep",  # our bug: logged, survived
        "step", "recover", "sleep",  # down again
        "step",
    ]  # fmt: skip
    assert readiness == [False, False, False]  # not ready while failing
    assert health.ready  # ready after the last good step


def test_gateway_act_ids_never_collide_and_always_fit() -> None:
    """Issue 10, defect 12: ``<player>.<client id>`` cut to 64 characters made two long
    client ids of one player the same id, and the second act was refused as a
    duplicate."""
    from dudo import wire
    from dudo.gateway.sockets import _act_id

    player = "p" * 12
    ids = [_act_id(player, f"{'a' * 60}{i}") for i in range(100)]
    assert len(set(ids)) == 100
    for message_id in [*ids, _act_id(player, "short")]:
        wire.validate(
            wire.message(
                "act",
                id=message_id,
                table="t",
                gateway="g",
                player=player,
                seat=0,
                action={"type": "dudo"},
            )
        )
    assert _act_id(player, "short") == f"{player}.short"


def test_an_outbox_read_that_never_returns_is_abandoned_and_tried_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A CI run once left a web gateway not ready for good after an 8 s Redis outage: its
    outbox reader logged the failure and never again (no `outbox_read_recovered`), as if
    a read had never returned. A read is now abandoned after READ_DEADLINE_S."""
    import asyncio

    from dudo.link import side
    from dudo.link.side import OutboxHandlers, StreamSide

    monkeypatch.setattr(side, "READ_DEADLINE_S", 0.2)
    reads: list[str] = []

    class Reader:
        async def read(self, block_ms: int, count: int) -> list[dict[str, object]]:
            reads.append("read")
            if len(reads) == 1:
                await asyncio.sleep(3600)  # stuck for good
            return []

    async def dispatch(msg: dict[str, object]) -> None: ...

    async def scenario() -> None:
        said: list[str] = []
        log = type("Log", (), {
            "warning": lambda self, event, **_: said.append(event),
            "info": lambda self, event, **_: said.append(event),
        })()
        gateway = StreamSide(None, log, OutboxHandlers(dispatch))
        gateway.reader = Reader()  # type: ignore[assignment]
        task = asyncio.create_task(gateway._read_outbox())
        await asyncio.sleep(1.0)
        task.cancel()
        assert len(reads) >= 2 and gateway.reader_ok_at > 0  # read again, and it worked
        assert said[:2] == ["outbox_read_failed", "outbox_read_recovered"]

    asyncio.run(scenario())
