"""The browser client as an installable app (a Progressive Web App): its manifest, its
icons and the service worker that keeps the page's shell for when the network is gone.

Why each piece: a phone offers "Add to Home screen" / "Install" only for a page with a
manifest (name, start URL, standalone display, icons of 192 and 512 pixels) and a
service worker that answers its navigations; the shell cached by that worker lets
the page open, and say it is reconnecting, with the server out of reach. The icons
are drawn here (a red die showing five) rather than kept as binary files: one source,
any size. The worker's list of files and its version come from the static folder
itself, so a deploy that changes a file changes the worker, and browsers take the
new shell at their next visit.
"""

from __future__ import annotations

import hashlib
import json
import struct
import zlib
from functools import lru_cache
from pathlib import Path

ICON_SIZES = (192, 512)
THEME = "#b33333"  # the die's red; also the page's <meta name="theme-color">
BACKGROUND = "#1b1b1f"
# The static folder's files that are not part of the shell: the worker's own source.
NOT_SHELL = frozenset({"sw.js"})


def manifest() -> dict[str, object]:
    """The web app manifest (https://www.w3.org/TR/appmanifest/)."""
    return {
        "name": "Dudo",
        "short_name": "Dudo",
        "description": "Dudo (Perudo, Liar's Dice, Cacho): the bluffing dice game, online.",
        "start_url": "/",
        "scope": "/",
        "display": "standalone",
        "orientation": "any",
        "background_color": BACKGROUND,
        "theme_color": THEME,
        "icons": [
            {
                "src": f"/icons/{size}.png",
                "sizes": f"{size}x{size}",
                "type": "image/png",
                "purpose": "any maskable",
            }
            for size in ICON_SIZES
        ],
    }


def manifest_bytes() -> bytes:
    return json.dumps(manifest(), indent=2).encode()


@lru_cache(maxsize=len(ICON_SIZES))
def icon_png(size: int) -> bytes:
    """A ``size`` × ``size`` PNG: a die showing five, white pips on red, edge to edge
    (a maskable icon: the pips stay inside the middle 60%, which every mask keeps)."""
    red = bytes.fromhex(THEME[1:]) + b"\xff"
    white = b"\xff\xff\xff\xff"
    radius = size * 0.075
    step = size * 0.19  # from the middle to the corner pips
    middle = size / 2
    pips = [(middle, middle)] + [
        (middle + dx * step, middle + dy * step) for dx in (-1, 1) for dy in (-1, 1)
    ]
    rows = []
    for y in range(size):
        row = bytearray(red * size)
        cy = y + 0.5
        for px, py in pips:
            dy = cy - py
            if abs(dy) >= radius:
                continue
            half = (radius * radius - dy * dy) ** 0.5
            left, right = max(0, round(px - half)), min(size, round(px + half))
            row[left * 4 : right * 4] = white * (right - left)
        rows.append(b"\x00" + bytes(row))  # filter type 0 (none) for every row
    return _png(size, size, b"".join(rows))


def _png(width: int, height: int, raw: bytes) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = zlib.crc32(kind + data) & 0xFFFFFFFF
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)

    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)  # 8-bit RGBA
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw, 9))
        + chunk(b"IEND", b"")
    )


def shell_paths(static: dict[str, Path]) -> list[str]:
    """What the service worker keeps: the page, its files, the manifest and icons."""
    files = [f"/static/{name}" for name in sorted(static) if name not in NOT_SHELL]
    icons = [f"/icons/{size}.png" for size in ICON_SIZES]
    return ["/", *files, "/manifest.webmanifest", *icons]


def service_worker(static: dict[str, Path], template: Path) -> bytes:
    """``static/sw.js`` with its shell list and a version that changes with any file."""
    digest = hashlib.sha256()
    for name in sorted(static):
        digest.update(name.encode() + b"\0" + static[name].read_bytes())
    digest.update(manifest_bytes())
    text = template.read_text()
    text = text.replace("__VERSION__", digest.hexdigest()[:16])
    text = text.replace("__SHELL__", json.dumps(shell_paths(static)))
    return text.encode()
