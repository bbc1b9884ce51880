"""Membership: registration, leases, rebalancing, and the Redis server's clock.

A mixin of :class:`~dudo.worker.loop.Worker`. Every ``heartbeat`` seconds the
worker registers, samples Redis's ``TIME``, renews its leases (a refusal means
another worker took the partition: it is dropped at once), unregisters
gateways silent for long, and rebalances: it releases what the assignment
(:mod:`~dudo.worker.assign`) no longer gives it and takes what it does.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from redis.exceptions import ResponseError

from ..infra.connection import Batch
from ..wire import keys
from ..wire.signing import Verifier
from .assign import owned_by
from .common import Partition, now_ms
from .metrics import LAG_EVERY_S
from .state import WorkerState

if TYPE_CHECKING:
    pass


class Membership(WorkerState):
    def heartbeat(self) -> None:
        now = self.now()
        s = self.settings
        batch = Batch(self.redis)
        registry, alive, gc = self.space.registry, now - s.dead_after_ms, now - s.gateway_gc_ms
        # Each command also as plain arguments: the lean client then carries the whole
        # heartbeat (redis-py's pipeline was a tenth of an idle director's CPU). Its
        # replies come as Redis sends them; _pairs and int() read both shapes.
        for queue, raw in (
            (lambda p: p.time(), ("TIME",)),
            (lambda p: p.zadd(registry, {self.id: now}), ("ZADD", registry, now, self.id)),
            (
                lambda p: p.zrangebyscore(registry, alive, "+inf"),
                ("ZRANGEBYSCORE", registry, alive, "+inf"),
            ),
            (
                lambda p: p.zremrangebyscore(registry, "-inf", now - 20 * s.dead_after_ms),
                ("ZREMRANGEBYSCORE", registry, "-inf", now - 20 * s.dead_after_ms),
            ),
        ):
            batch.add(registry, queue, raw)
        gateways_alive = now - s.gateway_dead_after_ms
        batch.add(
            keys.GATEWAYS,
            lambda p: p.zrangebyscore(keys.GATEWAYS, gateways_alive, "+inf"),
            ("ZRANGEBYSCORE", keys.GATEWAYS, gateways_alive, "+inf"),
        )
        batch.add(
            keys.GATEWAYS,
            lambda p: p.zrangebyscore(keys.GATEWAYS, "-inf", gc, 0, 100),
            ("ZRANGEBYSCORE", keys.GATEWAYS, "-inf", gc, "LIMIT", 0, 100),
        )
        batch.add(
            keys.GATEWAY_VIEWS,
            lambda p: p.hgetall(keys.GATEWAY_VIEWS),
            ("HGETALL", keys.GATEWAY_VIEWS),
        )
        batch.add(
            keys.GATEWAY_KEYS,
            lambda p: p.hgetall(keys.GATEWAY_KEYS),
            ("HGETALL", keys.GATEWAY_KEYS),
        )
        draining = self.space.draining
        batch.add(draining, lambda p: p.smembers(draining), ("SMEMBERS", draining))
        for key in (keys.SECRETS, keys.APPS, keys.GATEWAY_APPS):  # dudo.auth.authority's
            batch.add(key, lambda p, key=key: p.hgetall(key), ("HGETALL", key))
        # Admitted gateways register by their own presence key (none may write a
        # registry): live while it is there, its value how it takes its views.
        admitted = sorted(self.verifier.gateways)
        # Its first bytes only: a gateway may write any value there (once 128 MB, read
        # by every worker and director at every heartbeat).
        for gateway in admitted:
            at = keys.presence(gateway)
            batch.add(at, lambda p, at=at: p.getrange(at, 0, 15), ("GETRANGE", at, 0, 15))
        owned = list(self.partitions.values())
        for part in owned:
            lease = self.space.lease(part.number)
            batch.add(
                lease,
                *self._call("renew", [lease], [self.id, part.generation, s.lease_ms]),
            )
        sample = owned if time.monotonic() >= self._next_lag else []
        if sample:  # every few seconds: how far behind the held inboxes are (metrics)
            self._next_lag = time.monotonic() + LAG_EVERY_S
            for part in sample:
                inbox = self.space.inbox(part.number)
                batch.add(
                    inbox,
                    lambda p, inbox=inbox: p.xinfo_groups(inbox),
                    ("XINFO", "GROUPS", inbox),
                )
                for gateway in self._gateway_writers():
                    own = self.space.inbox(part.number, gateway)
                    batch.add(own, lambda p, own=own: p.xinfo_groups(own),
                              ("XINFO", "GROUPS", own))  # fmt: skip
        sent = now_ms()
        clock, *results = self._execute(batch)
        if not isinstance(clock, Exception):
            seconds, micros = int(clock[0]), int(clock[1])
            self.clock_offset = seconds * 1000 + micros // 1000 - (sent + now_ms()) // 2
        live = [w.decode() if isinstance(w, bytes) else w for w in results[1]]
        present = results[11 : 11 + len(admitted)]
        views = {g: keys.as_text(v) for g, v in zip(admitted, present, strict=True)
                 if v and not isinstance(v, Exception)}  # fmt: skip
        registered = [g.decode() if isinstance(g, bytes) else g for g in results[3]]
        self.live_gateways = registered + [g for g in views if g not in registered]
        if results[4]:
            self._forget_gateways([keys.as_text(g) for g in results[4]], now - s.gateway_gc_ms)
        if not isinstance(results[5], Exception):
            self.frame_gateways = (
                frozenset(keys.as_text(g) for g, how in _pairs(results[5]) if how == b"frames")
                | frozenset(g for g, how in views.items() if how == "frames")
            ) & frozenset(self.live_gateways)
        if not isinstance(results[6], Exception):
            # Who may have written an entry, and the key this process signs its own with.
            self.verifier = Verifier.from_hash(dict(_pairs(results[6])))
            self.gateway_writers = sorted(self.verifier.gateways)
        drained = (
            set() if isinstance(results[7], Exception) else {keys.as_text(w) for w in results[7]}
        )
        secrets, apps, gateway_apps = results[8:11]
        if not any(isinstance(r, Exception) for r in (secrets, apps, gateway_apps)):
            self.authority.load(
                dict(_pairs(secrets)), dict(_pairs(apps)), dict(_pairs(gateway_apps)),
                admitted=set(self.verifier.gateways),
            )  # fmt: skip
        rest = results[11 + len(admitted) :]
        renewals, groups = rest[: len(owned)], rest[len(owned) :]
        per_part = len(groups) // len(sample) if sample else 0
        for i, part in enumerate(sample):
            self._sample_inbox(part.number, groups[i * per_part : (i + 1) * per_part])
        for part, renewed in zip(owned, renewals, strict=True):
            if isinstance(renewed, Exception):
                continue  # not an answer about the lease: keep it, retry next heartbeat
            if renewed != 1:
                self._lost(part.number, "lease renewal refused")
        if self.stopping:
            return
        # Drained processes (dudo admin drain) hold nothing: the others share it out.
        live = [w for w in live if w not in drained]
        if self.id not in live and self.id not in drained:
            live.append(self.id)
        target = owned_by(s.partitions, live, self.id) if self.id not in drained else set()
        self.health.hold("drained (dudo admin drain)" if self.id in drained else None)
        for number in sorted(set(self.partitions) - target):
            self._release(number)
        for number in sorted(target - set(self.partitions)):
            self._acquire(number)
        self.health.details["partitions"] = len(self.partitions)
        self.metrics.held(set(self.partitions))
        self._keep_budgets()

    def _keep_budgets(self) -> None:
        """The warden's round (dudo.worker.warden), by the holder of partition 0 alone."""
        warden = self.warden
        if warden is None:
            return
        if 0 not in self.partitions:
            warden.stand_down()
            return
        if warden.due():
            try:
                warden.patrol(sorted(self.verifier.gateways))
            except Exception as exc:  # measured again at the next round
                self.log.warning("warden_failed", error=str(exc))

    def _sample_inbox(self, number: int, replies: list[Any]) -> None:
        """One held partition's lag and pending entries, summed over its inbox streams,
        from their XINFO GROUPS replies (as redis-py or the lean client gives them)."""
        lag: int | None = 0
        pending = 0
        for groups in replies:
            if isinstance(groups, Exception):
                continue  # a gateway's inbox it never wrote: nothing waits there
            for group in groups:
                info = {keys.as_text(k): v for k, v in _pairs(group)}
                if keys.as_text(info.get("name", b"")) == self.space.group:
                    found = info.get("lag")
                    lag = None if found is None or lag is None else lag + int(found)
                    pending += int(info["pending"])
        self.metrics.inbox(number, lag, pending)

    def _forget_gateways(self, gateways: list[str], before: int) -> None:
        """Unregister gateways silent since ``before`` and delete their outboxes (a dead
        gateway's outbox and registry entry used to stay forever). A gateway that was
        only paused registers again and finds its outbox remade by the next delivery."""
        batch = Batch(self.redis)
        # By score: one that registered again meanwhile stays registered.
        batch.add(keys.GATEWAYS, lambda p: p.zremrangebyscore(keys.GATEWAYS, "-inf", before))
        for gateway in gateways:
            outbox = keys.outbox(gateway)
            batch.add(outbox, lambda p, outbox=outbox: p.delete(outbox))
        batch.add(keys.GATEWAY_VIEWS, lambda p: p.hdel(keys.GATEWAY_VIEWS, *gateways))
        self._execute(batch)
        self.log.info("gateways_forgotten", gateways=gateways)

    def _acquire(self, number: int) -> None:
        generation = int(
            self.scripts.run(
                "acquire", [self.space.lease(number)], [self.id, self.settings.lease_ms]
            )
        )
        if not generation:
            return  # still held by a live worker; it will release, we retry next heartbeat
        # What a previous owner committed but may not have delivered goes out first
        # (read back by the next cycle, which also survives a failure in between).
        part = self.partitions[number] = Partition(number, generation, redeliver=True)
        self.log.info("lease_acquired", partition=number, generation=generation)
        self.metrics.taken.inc()
        # Where each inbox stream ends now: an idle wait blocks for anything later.
        writers: list[str | None] = [None, *self._gateway_writers()]
        pipe = self.redis.pipeline(transaction=False)
        for writer in writers:
            pipe.xinfo_stream(self.space.inbox(number, writer))
        for writer, info in zip(writers, pipe.execute(raise_on_error=False), strict=True):
            if isinstance(info, ResponseError):
                continue  # no such stream (yet): from 0-0 (the first read remakes ours)
            if isinstance(info, Exception):
                raise info
            last = info.get("last-generated-id") or info.get(b"last-generated-id")
            part.newest[writer] = keys.as_text(last)

    def _release(self, number: int) -> None:
        part = self.partitions.pop(number, None)
        if part is None:
            return
        if part.delivered:
            self.redis.xdel(self.space.deliveries(number), *part.delivered)
        self.scripts.run("release", [self.space.lease(number)], [self.id, part.generation])
        self.log.info("lease_released", partition=number, generation=part.generation)
        self.metrics.released.inc()

    def _lost(self, number: int, why: str) -> None:
        part = self.partitions.pop(number, None)
        if part is not None:
            self.log.warning("lease_lost", partition=number, generation=part.generation, why=why)
            self.metrics.lost.inc()


def _pairs(reply: Any) -> Any:
    """A hash's fields and values from HGETALL as redis-py gives it (a dict) or as
    Redis sends it (a flat list: field, value, field, value, ...)."""
    if isinstance(reply, dict):
        return reply.items()
    return zip(reply[::2], reply[1::2], strict=True)
