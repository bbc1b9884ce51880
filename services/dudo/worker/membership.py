"""Membership: registration, leases, rebalancing, and the Redis server's clock.

A mixin of :class:`~dudo.worker.loop.Worker`. Every ``heartbeat`` seconds the
worker registers, samples Redis's ``TIME``, renews its leases (a refusal means
another worker took the partition: it is dropped at once), unregisters
gateways silent for long, and rebalances: it releases what the assignment
(:mod:`~dudo.worker.assign`) no longer gives it and takes what it does.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from redis.exceptions import ResponseError

from ..infra import Batch, hash_reply
from ..wire import Verifier, keys
from .assign import owned_by
from .common import Partition, now_ms
from .metrics import LAG_EVERY_S
from .state import WorkerState

if TYPE_CHECKING:
    pass


class Membership(WorkerState):
    def heartbeat(self) -> None:
        """One round trip: register, sample Redis's clock, read who else is there
        (workers, gateways, their keys), renew the leases and sample the inboxes' lag;
        then rebalance. Each part adds its commands to the batch and returns how it
        reads their replies."""
        now = self.now()
        batch = Batch(self.redis)
        clock = batch.add(self.space.registry, "TIME")
        read_workers = self._ask_workers(batch, now)
        read_gateways = self._ask_gateways(batch, now)
        read_leases = self._ask_leases(batch)
        read_lag = self._ask_lag(batch)
        sent = now_ms()
        results = self._execute(batch)
        if not isinstance(results[clock], Exception):
            seconds, micros = int(results[clock][0]), int(results[clock][1])
            self.clock_offset = seconds * 1000 + micros // 1000 - (sent + now_ms()) // 2
        live, drained = read_workers(results)
        read_gateways(results)
        read_lag(results)
        read_leases(results)
        if not self.stopping:
            self._rebalance(live, drained)

    def _ask_workers(
        self, batch: Batch, now: int
    ) -> Callable[[list[Any]], tuple[list[str], set[str]]]:
        """This worker registered; the live workers and the drained ones asked for."""
        s = self.settings
        registry, draining = self.space.registry, self.space.draining
        batch.add(registry, "ZADD", registry, now, self.id)
        workers = batch.add(registry, "ZRANGEBYSCORE", registry, now - s.dead_after_ms, "+inf")
        batch.add(registry, "ZREMRANGEBYSCORE", registry, "-inf", now - 20 * s.dead_after_ms)
        drained_at = batch.add(draining, "SMEMBERS", draining)

        def read(results: list[Any]) -> tuple[list[str], set[str]]:
            live = [keys.as_text(w) for w in results[workers]]
            drained = (
                set() if isinstance(results[drained_at], Exception)
                else {keys.as_text(w) for w in results[drained_at]}
            )  # fmt: skip
            return live, drained

        return read

    def _ask_gateways(self, batch: Batch, now: int) -> Callable[[list[Any]], None]:
        """The gateways: registered, silent for long (forgotten), how each takes its
        views, who may write entries and with which keys (dudo.auth.authority's)."""
        s = self.settings
        gc = now - s.gateway_gc_ms
        registered_at = batch.add(
            keys.GATEWAYS, "ZRANGEBYSCORE", keys.GATEWAYS, now - s.gateway_dead_after_ms, "+inf"
        )
        silent_at = batch.add(
            keys.GATEWAYS, "ZRANGEBYSCORE", keys.GATEWAYS, "-inf", gc, "LIMIT", 0, 100
        )
        frames_at = batch.add(keys.GATEWAY_VIEWS, "HGETALL", keys.GATEWAY_VIEWS)
        writers_at = batch.add(keys.GATEWAY_KEYS, "HGETALL", keys.GATEWAY_KEYS)
        authority_at = [batch.add(key, "HGETALL", key) for key in
                        (keys.SECRETS, keys.APPS, keys.GATEWAY_APPS)]  # fmt: skip
        # Admitted gateways register by their own presence key (none may write a
        # registry): live while it is there, its value how it takes its views.
        admitted = sorted(self.verifier.gateways)
        # Its first bytes only: a gateway may write any value there (once 128 MB, read
        # by every worker and director at every heartbeat).
        presence_at = [
            batch.add(at, "GETRANGE", at, 0, 15) for at in map(keys.presence, admitted)
        ]

        def read(results: list[Any]) -> None:
            views = {g: keys.as_text(results[i]) for g, i in zip(admitted, presence_at, strict=True)
                     if results[i] and not isinstance(results[i], Exception)}  # fmt: skip
            registered = [keys.as_text(g) for g in results[registered_at]]
            self.live_gateways = registered + [g for g in views if g not in registered]
            if results[silent_at]:
                self._forget_gateways([keys.as_text(g) for g in results[silent_at]], gc)
            if not isinstance(results[frames_at], Exception):
                framed = hash_reply(results[frames_at])
                self.frame_gateways = (
                    frozenset(keys.as_text(g) for g, how in framed.items() if how == b"frames")
                    | frozenset(g for g, how in views.items() if how == "frames")
                ) & frozenset(self.live_gateways)
            if not isinstance(results[writers_at], Exception):
                # Who may have written an entry, and the key this process signs its own with.
                self.verifier = Verifier.from_hash(hash_reply(results[writers_at]))
                self.gateway_writers = sorted(self.verifier.gateways)
            secrets, apps, gateway_apps = (results[i] for i in authority_at)
            if not any(isinstance(r, Exception) for r in (secrets, apps, gateway_apps)):
                self.authority.load(
                    hash_reply(secrets), hash_reply(apps), hash_reply(gateway_apps),
                    admitted=set(self.verifier.gateways),
                )  # fmt: skip

        return read

    def _ask_leases(self, batch: Batch) -> Callable[[list[Any]], None]:
        """Every held lease renewed; a refusal means another worker took the partition:
        it is dropped at once."""
        owned = list(self.partitions.values())
        renewals_at = []
        for part in owned:
            lease = self.space.lease(part.number)
            renewals_at.append(
                batch.add(lease, *self._call("renew", [lease], [self.id, part.generation,
                                                                self.settings.lease_ms]))
            )  # fmt: skip

        def read(results: list[Any]) -> None:
            for part, at in zip(owned, renewals_at, strict=True):
                if isinstance(results[at], Exception):
                    continue  # not an answer about the lease: keep it, retry next heartbeat
                if results[at] != 1:
                    self._lost(part.number, "lease renewal refused")

        return read

    def _ask_lag(self, batch: Batch) -> Callable[[list[Any]], None]:
        """Every few seconds: how far behind the held inboxes are (metrics)."""
        sample = list(self.partitions.values()) if time.monotonic() >= self._next_lag else []
        groups_at: list[list[int]] = []
        if sample:
            self._next_lag = time.monotonic() + LAG_EVERY_S
            for part in sample:
                streams = [self.space.inbox(part.number)] + [
                    self.space.inbox(part.number, gateway) for gateway in self._gateway_writers()
                ]
                groups_at.append([batch.add(at, "XINFO", "GROUPS", at) for at in streams])

        def read(results: list[Any]) -> None:
            for part, at in zip(sample, groups_at, strict=True):
                self._sample_inbox(part.number, [results[i] for i in at])

        return read

    def _rebalance(self, live: list[str], drained: set[str]) -> None:
        """Release what the assignment no longer gives this worker, take what it does.
        Drained processes (dudo admin drain) hold nothing: the others share it out."""
        live = [w for w in live if w not in drained]
        if self.id not in live and self.id not in drained:
            live.append(self.id)
        partitions = self.settings.partitions
        target = owned_by(partitions, live, self.id) if self.id not in drained else set()
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
        from their XINFO GROUPS replies (each group's facts as a flat array)."""
        lag: int | None = 0
        pending = 0
        for groups in replies:
            if isinstance(groups, Exception):
                continue  # a gateway's inbox it never wrote: nothing waits there
            for group in groups:
                info = {keys.as_text(k): v for k, v in hash_reply(group).items()}
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
        batch.add(keys.GATEWAYS, "ZREMRANGEBYSCORE", keys.GATEWAYS, "-inf", before)
        for outbox in map(keys.outbox, gateways):
            batch.add(outbox, "DEL", outbox)
        batch.add(keys.GATEWAY_VIEWS, "HDEL", keys.GATEWAY_VIEWS, *gateways)
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
