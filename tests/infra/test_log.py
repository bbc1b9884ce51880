"""The services' JSON logs follow ``sys.stderr`` wherever it is swapped."""

from __future__ import annotations

import io
import json
import sys

import pytest
import structlog

from dudo.infra.log import configure


def test_a_log_line_goes_to_the_current_stderr_even_after_the_old_one_closed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    first = io.StringIO()
    monkeypatch.setattr(sys, "stderr", first)
    configure("warning")
    log = structlog.get_logger()
    log.warning("one", table="t1")
    first.close()  # what pytest does to a test's captured stream when the test ends
    second = io.StringIO()
    monkeypatch.setattr(sys, "stderr", second)
    log.warning("two", table="t2")
    log.info("below the level")
    line = json.loads(second.getvalue())
    assert (line["event"], line["table"], line["level"]) == ("two", "t2", "warning")
