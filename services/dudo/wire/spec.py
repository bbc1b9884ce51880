"""The stream protocol's messages, declared once: every field, its type and limits.

:mod:`dudo.wire` validates what arrives against these declarations and writes the
JSON Schemas in ``protocol/schemas/`` from them. Directions: ``in`` (gateway →
worker, a table partition's inbox), ``out`` (worker → gateway, an outbox),
``director`` (gateways and tables → director, a tournament partition's inbox),
``ratings`` (tables and tournaments → the ratings keeper's inbox).
"""

from __future__ import annotations

from .fields import Message
from .inbox import INBOX
from .outbox import OUTBOX
from .tournaments import DIRECTOR, RATINGS

PROTOCOL_VERSION = 1
MAX_INBOUND_BYTES = 16 * 1024
MAX_RESULT_BYTES = 8 * 1024 * 1024
ENTRY_FIELD = b"m"  # the field of a stream entry that holds the message

MESSAGES: dict[str, Message] = {m.type: m for m in [*INBOX, *OUTBOX, *DIRECTOR, *RATINGS]}

INBOX_TYPES = frozenset(t for t, m in MESSAGES.items() if m.direction == "in")
OUTBOX_TYPES = frozenset(t for t, m in MESSAGES.items() if m.direction == "out")
DIRECTOR_TYPES = frozenset(t for t, m in MESSAGES.items() if m.direction == "director")
RATINGS_TYPES = frozenset(t for t, m in MESSAGES.items() if m.direction == "ratings")
