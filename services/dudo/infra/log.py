"""Structured JSON logs for every service (structlog), one line per event."""

from __future__ import annotations

import logging
import sys

import structlog


class _CurrentStderr:
    """Whatever ``sys.stderr`` is at the moment of each write.

    structlog's PrintLogger keeps the file object it was given; handing it ``sys.stderr``
    at configure time pins the stream of that moment, and a harness that swaps and closes
    it (pytest's capture, a daemon redirecting its output) leaves every later log line
    raising ``I/O operation on closed file``. Looking it up per write costs nothing."""

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()


def configure(level: str = "info", *, json: bool = True) -> None:
    """Log ``level`` and above to stderr as JSON lines (or readable text for people)."""
    renderer = structlog.processors.JSONRenderer() if json else structlog.dev.ConsoleRenderer()
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(
            logging.getLevelNamesMapping()[level.upper()]
        ),
        logger_factory=structlog.PrintLoggerFactory(file=_CurrentStderr()),
        cache_logger_on_first_use=True,
    )
