"""Every published JSON Schema compiles under Ajv's strict mode (draft 2020-12), the
validator most JavaScript client authors use: no keyword without its type, no required
property the schema does not define, nothing Ajv would have to guess."""

from __future__ import annotations

import subprocess
from pathlib import Path

from ..servers import require_binary

ROOT = Path(__file__).resolve().parents[2]
PREFIX = ROOT / ".pytest_cache" / "ajv"  # Ajv from the npm registry, installed once


def test_every_schema_compiles_under_ajv_strict_mode() -> None:
    node = require_binary("node")
    npm = require_binary("npm")
    if not (PREFIX / "node_modules" / "ajv" / "package.json").exists():
        PREFIX.mkdir(parents=True, exist_ok=True)
        installed = subprocess.run(
            [npm, "install", "--no-save", "--no-audit", "--no-fund", "--prefix", str(PREFIX),
             "ajv@8"],
            capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert installed.returncode == 0, installed.stderr[-2000:]
    done = subprocess.run(
        [node, str(ROOT / "tests" / "data" / "ajv_strict.mjs"), str(PREFIX),
         str(ROOT / "protocol" / "schemas")],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert ", 0 refused" in done.stdout
