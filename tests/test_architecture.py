"""The layering the design promises: the engine imports no I/O, clock or global RNG."""

from __future__ import annotations

import ast
from pathlib import Path

ENGINE = Path(__file__).resolve().parents[1] / "services" / "dudo" / "engine"
FORBIDDEN = {
    "redis",
    "asyncio",
    "socket",
    "http",
    "urllib",
    "time",
    "datetime",
    "random",
    "os",
    "threading",
    "subprocess",
    "structlog",
    "secrets",
}
ALLOWED_PROJECT = "dudo.engine"


def imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
    return names


def test_engine_imports_no_io_clock_or_rng() -> None:
    files = sorted(ENGINE.glob("*.py"))
    assert files
    for path in files:
        for name in imports(path):
            root = name.split(".")[0]
            assert root not in FORBIDDEN, f"{path.name} imports {name}"
            if root == "dudo":
                assert name.startswith(ALLOWED_PROJECT), f"{path.name} imports {name}"
