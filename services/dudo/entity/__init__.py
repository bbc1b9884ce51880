"""What the partition loop hosts (the :class:`Entity` contract: tables, tournaments,
ratings), and what hosted entities send each other (:mod:`.reports`, :mod:`.results`)."""

from .contract import SEEN_IDS, Entity, Flush, Flushing, RecentIds, timer_change

__all__ = ["SEEN_IDS", "Entity", "Flush", "Flushing", "RecentIds", "timer_change"]
