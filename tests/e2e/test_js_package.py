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


TYPED_CALLS = """\
import { DudoApi, DudoConnection, DudoError, FACES } from "dudo-client";
import type { Action, GameView } from "dudo-client";

const api = new DudoApi("http://127.0.0.1:8000");
const seat = await api.createTable({ rules: { preset: "classic" }, seats: 2, name: "Ana" });
const conn = new DudoConnection(api.base, seat.token); // a string: a name was given
const anonymous = await api.createTable({ rules: {}, seats: 2 });
// @ts-expect-error without a name no seat is taken: no token is certain
new DudoConnection(api.base, anonymous.token);
// @ts-expect-error an unknown preset
await api.createTable({ rules: { preset: "klassic" } });
// @ts-expect-error an unknown preset in quick play
await api.joinOrCreate({ name: "Ana", preset: "klassic" });
await api.joinOrCreate({ name: "Ana", preset: "liars-dice", seats: 3, bots: ["hard"] });
const bid: Action = { type: "bid", quantity: 2, face: FACES[4] };
// @ts-expect-error a die has six faces
const seven: Action = { type: "bid", quantity: 2, face: 7 };
// @ts-expect-error the direction is 1 or -1
const two: Action = { type: "direction", value: 2 };
console.log(bid, seven, two);
await conn.react("clap");
// @ts-expect-error one of the six emotes
await conn.react("lol");
const made = await api.createTournament({ name: "Cup", host: "Olga", seats: 3, bots: "easy" });
const host: string = made.token; // certain: a host was named
// @ts-expect-error an unknown format
await api.createTournament({ name: "Cup", format: "swiss" });
const listed = await api.tournaments();
const open: boolean = listed.tournaments[0].status === "registering";
const standings = await api.standings(made.tournament, { token: host });
const left: number = standings.standings.left + standings.version;
const results = await api.results(made.tournament);
const place: number = results.places[0].place + results.tables[0].rounds[0].out.length;
const board = await api.leaderboard(10);
const ordinal: number = board.leaderboard[0].ordinal;
const solving = await api.botSolves();
// @ts-expect-error none may be under way: null
const solved: number = solving.endgame_solves.done;
console.log(solved, solving.endgame_solves?.of);
// @ts-expect-error an organizer's five actions
await api.organize(made.tournament, host, "dance");
console.log(open, left, place, ordinal);
function rules(game: GameView): boolean {
  return game.rules.wild_ones && game.rules.calza === "turn"; // every option resolved
}
try {
  await conn.act(bid);
} catch (err) {
  if (err instanceof DudoError && err.facts) console.log(err.facts.dice_in_play, rules);
}
"""


def test_the_calls_and_answers_are_typed_to_the_edges(project: tuple[Path, Path]) -> None:
    """Issue 52, item 2: `createTable()` answered `token?: string` even with a name (the
    README's bot did not compile without a check), a face took 7 and a direction 2, the
    quick play preset any string, and every tournament and leaderboard call took and
    returned `Record<string, unknown>`. Each `@ts-expect-error` must be needed: tsc
    fails on an unused one."""
    _, work = project
    (work / "calls.ts").write_text(TYPED_CALLS)
    done = _tsc(work, ["es2022"], "calls.ts")
    assert done.returncode == 0, done.stdout[-3000:]
    # ... and the same program without those marks fails at each of them.
    (work / "calls_bare.ts").write_text(TYPED_CALLS.replace("// @ts-expect-error", "//"))
    bare = _tsc(work, ["es2022"], "calls_bare.ts")
    marked = TYPED_CALLS.count("@ts-expect-error")
    failing = {line.split("(")[1].split(",")[0] for line in bare.stdout.splitlines()
               if line.startswith("calls_bare.ts(")}  # fmt: skip
    assert len(failing) == marked, bare.stdout[-3000:]


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


# Issue 52's proof, with the package as packed and installed: a quick-play bot to the
# end with `play`, and a connection that ends (never hangs) when its gateway is gone for
# good or restarted without its tables.
SCENARIO = """\
import { DudoApi, DudoConnection, FACES } from "dudo-client";

const [base, mode, retries = "3"] = process.argv.slice(2);
const api = new DudoApi(base);
const quick = { name: "Quick", preset: "classic", seats: 2, bots: ["normal"] };
const seat = await api.joinOrCreate(quick);
const conn = new DudoConnection(base, seat.token, { retries: Number(retries) });
await conn.open();
if (mode === "play") {
  const last = await conn.play((game) => {
    const legal = game.legal;
    if (legal.direction) return { type: "direction", value: 1 };
    const standing = game.bids.at(-1);
    if (legal.dudo && standing[1] > Math.floor(game.dice_in_play / 3)) return { type: "dudo" };
    const i = legal.bid.findIndex((q) => q !== null);
    return { type: "bid", quantity: legal.bid[i], face: FACES[i] };
  });
  console.log(JSON.stringify({ over: last.game.phase === "over" }));
  conn.close();
} else {
  console.log("open");
  await new Promise((resolve) => conn.addEventListener("dropped", resolve, { once: true }));
  const pending = [conn.act({ type: "dudo" }), conn.ping()];  // sent while it reconnects
  const codes = await Promise.all(pending.map((p) => p.then(() => "settled", (err) => err.code)));
  const reason = await conn.finished;
  console.log(JSON.stringify({ codes, reason: reason.code }));
}
"""


def test_the_installed_package_quick_plays_a_game_to_the_end_with_play(
    project: tuple[Path, Path], served: str
) -> None:
    node = require_binary("node")
    _, work = project
    (work / "scenario.mjs").write_text(SCENARIO)
    done = _run(node, *without_websocket(node), work / "scenario.mjs", served, "play", cwd=work,
                timeout=180)  # fmt: skip
    assert '"over":true' in done.stdout, done.stdout[-2000:]


@pytest.mark.parametrize("restarted", [False, True], ids=["gone-for-good", "restarted"])
def test_the_installed_package_ends_when_its_gateway_goes(
    project: tuple[Path, Path], tmp_path: Path, restarted: bool
) -> None:
    """Killed for good: what was pending rejects `gave_up` once the 3 retries have
    failed; restarted without its tables: `unknown_table`. The process then exits."""
    from .test_client_ends import ends_when_its_gateway_goes

    node = require_binary("node")
    _, work = project
    (work / "scenario.mjs").write_text(SCENARIO)
    code, said = ends_when_its_gateway_goes(
        [node, *without_websocket(node), str(work / "scenario.mjs")], tmp_path, restarted, cwd=work
    )
    assert said == {"codes": [code, code], "reason": code}, said
