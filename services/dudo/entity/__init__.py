"""What the partition loop hosts (the :class:`Entity` contract: tables, tournaments,
ratings), and what hosted entities send each other (:mod:`.reports`, :mod:`.results`)."""

from .contract import SEEN_IDS, Entity, Flush, Flushing, RecentIds, timer_change
from .reports import Report, report_sends
from .results import HOUSE, account_of, ledger_send, message_id, pool_of, result_send

__all__ = [
    "HOUSE", "SEEN_IDS", "Entity", "Flush", "Flushing", "RecentIds", "Report", "account_of",
    "ledger_send", "message_id", "pool_of", "report_sends", "result_send", "timer_change",
]
