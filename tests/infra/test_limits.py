"""The token bucket (gateways' limits, workers' quotas): what `retry_ms` promises, it keeps."""

from __future__ import annotations

from dudo.infra import buckets
from dudo.infra.buckets import Bucket


def test_waiting_what_the_bucket_says_is_always_enough(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A client that waits exactly the advertised time is let through, even when the
    refill lands a rounding error short of a whole token (clock arithmetic: 0.04 of a
    token, then the 0.048 s advertised, sum to 0.99999999999994)."""
    clock = [100.0]
    monkeypatch.setattr(buckets.time, "monotonic", lambda: clock[0])
    bucket = Bucket(rate=20.0, burst=1)
    assert bucket.allow()
    clock[0] += 0.002  # 0.04 of a token back
    assert not bucket.allow()
    wait = bucket.wait()
    assert abs(wait - 0.048) < 1e-9
    clock[0] += wait
    assert bucket.allow()
    assert not bucket.allow()  # and no more than that
