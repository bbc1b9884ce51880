"""A request's HTTP status, as the tests ask it: the response's, or the error's."""

from __future__ import annotations

import urllib.error
import urllib.request


def status(request: urllib.request.Request | str, timeout: float = 10) -> int:
    """The status the server answered ``request`` (a URL: a GET) with."""
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return exc.code
