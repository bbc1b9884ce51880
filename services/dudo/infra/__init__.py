"""What every process shares: Redis clients and their outages (:mod:`.resp`,
:mod:`.connection`), the service frame with health and shutdown (:mod:`.service`), logs,
the collector's settings (:mod:`.runtime`), the signing keys' reader (:mod:`.keyring`),
token buckets, and a local ``redis-server`` (:mod:`.redis_server`)."""
