"""Key names and partitioning: stable, shared by every party, Cluster-safe."""

from __future__ import annotations

import re
import zlib

from dudo.wire import keys


def test_partition_is_crc32_mod_p_and_stable() -> None:
    assert keys.partition_of("k2n8q4", 16) == zlib.crc32(b"k2n8q4") % 16
    # Pinned known answers for other implementations: CRC-32("a") = 0xE8B7BE43,
    # CRC-32("123456789") = 0xCBF43926 (the standard check value).
    assert keys.partition_of("a", 16) == 0xE8B7BE43 % 16 == 3
    assert keys.partition_of("123456789", 1000) == 0xCBF43926 % 1000 == 262


def test_partition_keys_share_one_hash_tag() -> None:
    names = [*keys.partition_keys(3), keys.table(3, "abc")]
    tags = {re.search(r"\{(.*?)\}", name).group(1) for name in names}
    assert tags == {"p3"}
    assert keys.inbox(3) == "dudo:{p3}:in"
    assert keys.table(3, "abc") == "dudo:{p3}:t:abc"
    assert keys.outbox("web-1") == "dudo:{g:web-1}:out"


def test_table_key_follows_its_partition() -> None:
    assert keys.table_of("k2n8q4", 16) == keys.table(keys.partition_of("k2n8q4", 16), "k2n8q4")


def test_ids_that_could_break_key_names_are_rejected() -> None:
    for bad in ("", "a:b", "a{b}", "x" * 65, "sp ace"):
        assert not keys.ID_PATTERN.match(bad)
    assert keys.ID_PATTERN.match("web-1_A")


def test_only_keys_module_formats_dudo_keys() -> None:
    """No other module spells a key: one place owns the names."""
    from pathlib import Path

    services = Path(__file__).resolve().parents[2] / "services" / "dudo"
    offenders = [
        str(path.relative_to(services))
        for path in services.rglob("*.py")
        if path.name != "keys.py" and re.search(r"[\"']dudo:", path.read_text(encoding="utf-8"))
    ]
    assert offenders == []


def test_tournament_space_mirrors_the_table_space_under_its_own_tag() -> None:
    space = keys.TOURNAMENTS
    names = [*space.partition_keys(12), space.record(12, "cup")]
    assert {re.search(r"\{(.*?)\}", name).group(1) for name in names} == {"d12"}
    assert space.inbox(12) == "dudo:{d12}:in" and space.partition_of_inbox("dudo:{d12}:in") == 12
    assert keys.TABLES.partition_of_inbox(keys.inbox(7)) == 7
    assert space.group != keys.TABLES.group and space.registry != keys.TABLES.registry
    assert keys.tournament_of("cup", 4) == space.record(keys.partition_of("cup", 4), "cup")
