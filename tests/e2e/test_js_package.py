"""The npm package `dudo-client` as a client developer gets it: `npm pack` of protocol/js,
installed into a clean project with TypeScript and Node's types from the registry; the
TypeScript example checked by `tsc --noEmit --strict` (with Node's types alone, and with
the DOM's), compiled and played to the end of a game; the JavaScript example played to
the end and through `dudo conformance client` on Node's own WebSocket-less runtime, so
through the `ws` package the library falls back to."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tarfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from dudo.conformance.client import run as conformance

from ..servers import require_binary

LIBRARY = Path(__file__).resolve().parents[2] / "protocol" / "js"
CHECKS = 6  # the conformance kit's


def _run(*args: str | Path, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [str(a) for a in args], capture_output=True, text=True, timeout=timeout, cwd=cwd
    )
    assert done.returncode == 0, f"{args}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


def without_websocket(node: str) -> list[str]:
    """Node's flags for a runtime with no global WebSocket (Node 20 has none by default;
    22 and later have one unless told not to): the library must take `ws`'s."""
    version = subprocess.run([node, "--version"], capture_output=True, text=True).stdout
    return [] if int(version.lstrip("v").split(".")[0]) < 22 else ["--no-experimental-websocket"]


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    """(the tarball, a clean npm project with it, typescript and @types/node installed)."""
    node = require_binary("node")
    npm = shutil.which("npm", path=str(Path(node).parent) + os.pathsep + os.environ["PATH"])
    assert npm, "npm comes with Node.js"
    root = tmp_path_factory.mktemp("jspkg")
    packed = _run(npm, "pack", LIBRARY, "--pack-destination", root, "--json", cwd=root)
    tarball = root / json.loads(packed.stdout)[0]["filename"]
    work = root / "app"
    work.mkdir()
    (work / "package.json").write_text('{"name": "app", "private": true, "type": "module"}')
    _run(npm, "install", "--no-audit", "--no-fund", "--prefer-offline", tarball,
         "typescript@5", "@types/node@20", cwd=work, timeout=600)  # fmt: skip
    yield tarball, work


def test_the_tarball_holds_the_library_its_types_and_examples(
    project: tuple[Path, Path],
) -> None:
    tarball, work = project
    with tarfile.open(tarball) as tf:
        names = sorted(n.removeprefix("package/") for n in tf.getnames())
    assert names == sorted([
        "CHANGELOG.md", "LICENSE", "README.md", "dudo-client.d.ts", "dudo-client.js",
        "examples/bot.mjs",
        "examples/bot.ts", "messages.d.ts", "package.json",
    ])  # fmt: skip
    manifest = json.loads((work / "node_modules" / "dudo-client" / "package.json").read_text())
    assert manifest["exports"]["."]["types"] == "./dudo-client.d.ts"
    assert list(manifest["dependencies"]) == ["ws"]  # Node 20's WebSocket; browsers: none
    assert manifest["browser"] == {"ws": False}
    assert manifest["version"].split(".")[0] == "1"  # MAJOR: the protocol version it speaks
    # What the release workflow runs before it publishes (RELEASING.md): npm's own checks
    # of the tarball, nothing sent.
    node = require_binary("node")
    npm = shutil.which("npm", path=str(Path(node).parent) + os.pathsep + os.environ["PATH"])
    assert npm, "npm comes with Node.js"
    dry = _run(npm, "publish", "--dry-run", tarball, cwd=work)
    assert f"dudo-client@{manifest['version']}" in dry.stdout + dry.stderr


def _tsc(
    work: Path, lib: list[str], source: str, emit: bool = False
) -> subprocess.CompletedProcess[str]:
    config = {
        "compilerOptions": {
            "strict": True, "module": "nodenext", "moduleResolution": "nodenext",
            "target": "es2022", "lib": lib, "types": ["node"], "skipLibCheck": False,
            **({"outDir": "out"} if emit else {"noEmit": True}),
        },
        "files": [source],
    }  # fmt: skip
    (work / "tsconfig.json").write_text(json.dumps(config))
    tsc = work / "node_modules" / ".bin" / "tsc"
    return subprocess.run([str(tsc), "-p", "."], capture_output=True, text=True, cwd=work,
                          timeout=120)  # fmt: skip


def test_the_typescript_example_passes_tsc_strict_and_a_wrong_action_does_not(
    project: tuple[Path, Path],
) -> None:
    _, work = project
    example = (work / "node_modules" / "dudo-client" / "examples" / "bot.ts").read_text()
    (work / "bot.ts").write_text(example)
    for lib in (["es2022"], ["es2022", "dom"]):  # Node's types alone; a browser project's
        done = _tsc(work, lib, "bot.ts")
        assert done.returncode == 0, (lib, done.stdout[-3000:])
    (work / "wrong.ts").write_text(example.replace('{ type: "dudo" }', '{ type: "doubt" }', 1))
    wrong = _tsc(work, ["es2022"], "wrong.ts")
    assert wrong.returncode != 0 and '"doubt"' in wrong.stdout, wrong.stdout[-2000:]


def test_the_typescript_example_compiled_plays_a_game_to_the_end(
    project: tuple[Path, Path], served: str
) -> None:
    node = require_binary("node")
    _, work = project
    shutil.copy(work / "node_modules" / "dudo-client" / "examples" / "bot.ts", work / "ts_bot.ts")
    compiled = _tsc(work, ["es2022"], "ts_bot.ts", emit=True)
    assert compiled.returncode == 0, compiled.stdout[-3000:]
    done = _run(node, *without_websocket(node), work / "out" / "ts_bot.js", served, cwd=work,
                timeout=180)  # fmt: skip
    assert "played " in done.stdout and " won" in done.stdout, done.stdout[-2000:]


def test_the_javascript_example_plays_to_the_end_on_the_ws_package(
    project: tuple[Path, Path], served: str
) -> None:
    node = require_binary("node")
    _, work = project
    shutil.copy(work / "node_modules" / "dudo-client" / "examples" / "bot.mjs", work / "bot.mjs")
    flags = without_websocket(node)
    probe = _run(node, *flags, "-e", "console.log(typeof WebSocket)", cwd=work)
    assert probe.stdout.strip() == "undefined"  # so the library had to take `ws`'s
    done = _run(node, *flags, work / "bot.mjs", served, cwd=work, timeout=180)
    assert "played " in done.stdout and " won" in done.stdout, done.stdout[-2000:]


def test_the_installed_javascript_example_passes_the_conformance_kit(
    project: tuple[Path, Path],
) -> None:
    node = require_binary("node")
    _, work = project
    shutil.copy(work / "node_modules" / "dudo-client" / "examples" / "bot.mjs", work / "kit.mjs")
    verdict = conformance([node, *without_websocket(node), str(work / "kit.mjs"), "{url}",
                           "{token}"])  # fmt: skip
    assert verdict.ok, verdict.text()
    assert len(verdict.checks) == CHECKS
