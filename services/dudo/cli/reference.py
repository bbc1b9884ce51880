"""``dudo api-reference OUT``: the client packages' API reference, HTML made from their
code: pdoc for ``dudo_client`` (Python: its docstrings and type hints) into ``OUT/python``,
TypeDoc for ``dudo-client`` (npm: its declaration files) into ``OUT/js``.

Why from the code and by the tools every SDK of the field uses: the reference can then
never say what the code does not, and the release workflow publishes exactly what the
tests made (.github/workflows/release.yml, the ``reference`` job). Any warning fails it:
a broken link or an undocumented export is found here, not by a reader.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

TYPEDOC = ("typescript@5", "typedoc@0.28", "@types/node@20")
# pdoc cannot tell where a key of a TypedDict written in the call form (a key that is a
# Python keyword: `moved`'s `from`) is defined; it documents it all the same.
_CALL_FORM = re.compile(
    r"Warn: Cannot determine where dudo_client\.messages\.\w+\.\w+ is taken from"
)


class ApiReferenceError(RuntimeError):
    """A reference could not be made, or was made with warnings (they are listed)."""


def python_reference(out: Path) -> None:
    """pdoc's HTML of ``dudo_client`` and its message types, into ``out``."""
    done = subprocess.run(
        [sys.executable, "-m", "pdoc", "--docformat", "restructuredtext", "-o", str(out),
         "dudo_client", "dudo_client.messages"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    said = done.stdout + done.stderr
    if "No module named pdoc" in said:
        raise ApiReferenceError("pdoc is not installed: pip install 'pdoc>=14'")
    problems = [line for line in said.splitlines() if line.strip() and not _CALL_FORM.match(line)]
    if done.returncode != 0 or problems:
        raise ApiReferenceError("pdoc: " + "\n".join(problems or [said[-2000:]]))


def js_reference(out: Path, package: Path) -> None:
    """TypeDoc's HTML of the npm package in ``package`` (protocol/js), as a developer
    installs it: packed, installed into an empty project, documented from there."""
    npm = shutil.which("npm")
    if npm is None:
        raise ApiReferenceError("npm is not installed (it comes with Node.js 20 or newer)")
    with tempfile.TemporaryDirectory(prefix="dudo-typedoc-") as tmp:
        work = Path(tmp)
        packed = _run(npm, "pack", str(package.resolve()), "--json", cwd=work)
        tarball = json.loads(packed)[0]["filename"]
        (work / "package.json").write_text('{"name": "reference", "private": true}')
        _run(npm, "install", "--no-audit", "--no-fund", "--prefer-offline", f"./{tarball}",
             *TYPEDOC, cwd=work)  # fmt: skip
        library = "node_modules/dudo-client"
        config = {
            "compilerOptions": {
                "strict": True, "module": "nodenext", "moduleResolution": "nodenext",
                "target": "es2022", "lib": ["es2022"], "types": ["node"], "noEmit": True,
            },
            "files": [f"{library}/dudo-client.d.ts"],
        }  # fmt: skip
        (work / "tsconfig.json").write_text(json.dumps(config))
        _run(str(work / "node_modules" / ".bin" / "typedoc"),
             "--entryPoints", f"{library}/dudo-client.d.ts", "--readme", f"{library}/README.md",
             "--name", "dudo-client", "--treatWarningsAsErrors", "--out", str(out.resolve()),
             cwd=work)  # fmt: skip


def _run(*args: str, cwd: Path) -> str:
    env = {**os.environ, "NO_COLOR": "1"}
    done = subprocess.run(
        args, capture_output=True, text=True, cwd=cwd, timeout=600, env=env, check=False
    )
    if done.returncode != 0:
        raise ApiReferenceError(
            f"{Path(args[0]).name} {args[1]}: {(done.stdout + done.stderr)[-3000:]}"
        )
    return done.stdout


def build(out: Path, protocol: Path) -> None:
    """Both references: ``out/python`` and ``out/js``, and an index linking them."""
    out.mkdir(parents=True, exist_ok=True)
    python_reference(out / "python")
    js_reference(out / "js", protocol / "js")
    (out / "index.html").write_text(
        "<!doctype html><meta charset=utf-8><title>dudo-client: API reference</title>"
        "<h1>dudo-client: API reference</h1><ul>"
        '<li><a href="python/dudo_client.html">Python (PyPI: dudo-client)</a></li>'
        '<li><a href="js/index.html">JavaScript and TypeScript (npm: dudo-client)</a></li>'
        "</ul>\n",
        encoding="utf-8",
    )
