"""Every JavaScript file of ours passes ESLint's recommended rules (tests/data/
eslint.config.mjs): the page's modules, the npm client with its example and test, the
documentation's examples and the benchmark's load generator. `node --check` reads a file
as a script: a name declared twice in a module (once a duplicate function in table.js)
passed it, and only a browser test found it."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from .servers import require_binary

ROOT = Path(__file__).resolve().parents[1]
PREFIX = ROOT / ".pytest_cache" / "eslint"  # ESLint from the npm registry, installed once
PACKAGES = ("eslint@9", "@eslint/js@9", "globals@15")
LINTED = (
    "services/dudo/gateway/static", "protocol/js/dudo-client.js", "protocol/js/examples",
    "protocol/js/test", "docs/examples", "services/dudo/bench/load.mjs", "tests/data",
)  # fmt: skip


def eslint(*paths: str) -> subprocess.CompletedProcess[str]:
    """ESLint over ``paths`` (from the repository's root) with our configuration."""
    node = require_binary("node")
    npm = require_binary("npm")
    binary = PREFIX / "node_modules" / "eslint" / "bin" / "eslint.js"
    if not binary.exists():
        PREFIX.mkdir(parents=True, exist_ok=True)
        installed = subprocess.run(
            [npm, "install", "--no-save", "--no-audit", "--no-fund", "--prefix", str(PREFIX),
             *PACKAGES],
            capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert installed.returncode == 0, installed.stderr[-2000:]
    # Beside its packages, so that the configuration's imports find them.
    config = PREFIX / "eslint.config.mjs"
    shutil.copyfile(ROOT / "tests" / "data" / "eslint.config.mjs", config)
    return subprocess.run(
        [node, str(binary), "--config", str(config), "--max-warnings", "0", *paths],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
    )


def test_our_javascript_passes_eslints_recommended_rules() -> None:
    done = eslint(*LINTED)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]


def test_eslint_finds_what_node_check_lets_through() -> None:
    """The duplicate declaration node --check passed, and a name never defined."""
    probe = PREFIX / "probe"  # under the repository: ESLint lints no file outside
    probe.mkdir(parents=True, exist_ok=True)
    twice, unknown = probe / "twice.js", probe / "unknown.js"
    twice.write_text("export function held() {}\nexport function held() {}\n", encoding="utf-8")
    unknown.write_text("export const n = undefinedName();\n", encoding="utf-8")
    node = require_binary("node")
    for path in (twice, unknown):
        assert subprocess.run([node, "--check", str(path)], capture_output=True).returncode == 0
    done = eslint(str(twice), str(unknown))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "'held' has already been declared" in done.stdout, done.stdout
    assert "'undefinedName' is not defined" in done.stdout, done.stdout
