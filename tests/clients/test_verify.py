"""Issue 55, item 3: both client packages verify a finished game's dice from its log
alone (Python: hashlib; JavaScript: Web Crypto, as a browser has it), with the same
verdicts, in the same words, as the server's `dudo verify`: a fair log passes; one die,
one round seed, one commitment, one client seed or the server seed changed is refused
at the right round."""

from __future__ import annotations

import copy
import hashlib
import json
import subprocess
from pathlib import Path
from typing import Any

from dudo.engine.dice import commitment, roll
from dudo.engine.fairness import verify as server_verify
from dudo_client import log_of_view, verify

from ..engine.test_fairness import played_log, reseeded_log
from ..servers import require_binary
from ..table.test_seeds import play_out, seated_with_seeds
from ..table.test_table import h

JS = Path(__file__).resolve().parents[2] / "protocol" / "js" / "dudo-client.js"


def logs() -> list[dict[str, Any]]:
    """A fair log, the same from before the seeds, and one of each kind of tampering."""
    fair = played_log(seed=11)
    made = [fair, {"rounds": copy.deepcopy(fair["rounds"])}]
    die = copy.deepcopy(fair)
    hand = next(h for h in die["rounds"][1]["dice"] if h)
    hand[0] = hand[0] % 6 + 1
    seed = copy.deepcopy(fair)
    other = hashlib.sha256(b"chosen").digest()
    counts = [len(h) for h in seed["rounds"][2]["dice"]]
    seed["rounds"][2].update(seed=other.hex(), commitment=commitment(other),
                             dice=[list(h) for h in roll(other, counts)])  # fmt: skip
    shown = copy.deepcopy(fair)
    shown["rounds"][0]["commitment"] = "0" * 64
    client = copy.deepcopy(fair)
    client["client_seeds"][1] = "picked later"
    server = copy.deepcopy(fair)
    server["server_seed"] = "11" * 32
    public = copy.deepcopy(fair)  # a seat without a seed dealt one the operator chose
    public["client_seeds"][-1] = "picked by the operator"
    unrevealed = copy.deepcopy(fair)  # committed, dealt its public seed: fair dealing
    unrevealed["client_commitments"][-1] = commitment_of("kept to myself")
    # A tournament's table dealt again after its seats changed: fair, its second seeds
    # changed, and its second seeds left out (the later rounds are then not the first's).
    again = reseeded_log()
    changed = copy.deepcopy(again)
    changed["reseeds"][0]["client_seeds"][0] = "picked later"
    hidden = {k: v for k, v in again.items() if k != "reseeds"}
    return [*made, die, seed, shown, client, server, public, again, changed, hidden,
            unrevealed, finished_view()]  # fmt: skip


def commitment_of(seed: str) -> str:
    return hashlib.sha256(b"dudo-client/2:" + seed.encode()).hexdigest()


def finished_view() -> dict[str, Any]:
    """A real table's last view (a seat's), its seats' seeds revealed or public."""
    run = seated_with_seeds(["ana", None, "ben"])
    for seat, seed in ((0, "ana"), (2, "ben")):
        run.send("seed", player=h(f"p{seat}"), seat=seat, seed=seed)
    view = play_out(run)
    return {k: v for k, v in view.items() if k != "_to"}


def server_says(log: dict[str, Any]) -> list[str]:
    return server_verify(log_of_view(log) if "game" in log else log).problems


def test_the_python_package_agrees_with_the_server_on_every_log() -> None:
    verdicts = [verify(log) for log in logs()]
    assert verdicts == [server_says(log) for log in logs()]
    assert verdicts[:2] == [[], []] and all(verdicts[2:8]) and verdicts[-2:] == [[], []]
    second, third = (logs()[0]["rounds"][i]["round"] for i in (1, 2))
    assert len(verdicts[2]) == 1 and verdicts[2][0].startswith(f"round {second}: seat")
    assert verdicts[3] == [f"round {third}: the seed is not the one the seeds make"]
    assert verdicts[6] == ["the server seed does not match its commitment"]
    assert verdicts[7] == ["seat 2 brought no seed and was not dealt its public one"]
    assert verdicts[8] == [] and verdicts[10]
    assert verdicts[9] == ["from round 3: seat 0's seed does not match its commitment"]


def test_the_javascript_package_agrees_with_the_server_on_every_log(tmp_path: Path) -> None:
    node = require_binary("node")
    path = tmp_path / "logs.json"
    path.write_text(json.dumps(logs()))
    script = (
        f"import {{ verify }} from {json.dumps(JS.as_uri())};\n"
        "import { readFileSync } from 'node:fs';\n"
        "const logs = JSON.parse(readFileSync(process.argv[2], 'utf8'));\n"
        "const out = [];\n"
        "for (const log of logs) out.push(await verify(log));\n"
        "console.log(JSON.stringify(out));\n"
    )
    (tmp_path / "verify.mjs").write_text(script)
    done = subprocess.run([node, str(tmp_path / "verify.mjs"), str(path)],
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [server_says(log) for log in logs()]


# A WebSocket the test drives: the connection's `hello` answered with a welcome, then
# the views given, and everything it sends kept.
FAKE_SOCKET_SCRIPT = """
import { DudoConnection, seedCommitment } from %(js)s;
class Socket {
  static current = null;
  constructor() { this.readyState = 0; this.sent = []; Socket.current = this;
    setTimeout(() => { this.readyState = 1; this.onopen(); }, 0); }
  send(data) { const m = JSON.parse(data); this.sent.push(m);
    if (m.type === "hello") this.give({ type: "welcome", now: Date.now() }); }
  give(m) { this.onmessage({ data: JSON.stringify({ v: 1, ...m }) }); }
  close() {}
}
const tick = () => new Promise((r) => setTimeout(r, 20));
const conn = new DudoConnection("http://gateway.test", "entrant-token",
                                { WebSocket: Socket, seed: null });
await conn.open();
const socket = Socket.current;
const seeds = (extra) => ({ server: "0".repeat(64), commitments: [null, null],
                            revealed: [false, false], ...extra });
const view = (version, extra) => ({ type: "view", table: "cup-1", seat: 0, version,
                                    status: "playing", game: null, seeds: seeds(extra) });
const out = [];
for (const [version, round] of [[1, 1], [3, 4]]) {
  socket.give(view(version, { asked: [0], commit_until: 9e12, round }));
  await tick();
  const commitment = socket.sent.filter((m) => m.type === "commit_seed").at(-1).commitment;
  socket.give(view(version + 1, { commitments: [commitment, null], until: 9e12, round }));
  await tick();
  const seed = socket.sent.filter((m) => m.type === "seed").at(-1).seed;
  out.push({ commitment, seed, matches: (await seedCommitment(seed)) === commitment });
}
conn.close();
console.log(JSON.stringify(out));
"""


def test_the_javascript_connection_makes_a_new_seed_for_each_ask_at_a_table(
    tmp_path: Path,
) -> None:
    """Issue 55, item 5: a tournament's table asks our seat at its start (round 1), and
    again for the round it holds after someone arrived (round 4): the connection commits
    to a seed made for each ask, reveals each one, and never gives the server a seed it
    has seen before (the Python keeper: tests/clients/test_seeds.py)."""
    node = require_binary("node")
    script = tmp_path / "asks.mjs"
    script.write_text(FAKE_SOCKET_SCRIPT % {"js": json.dumps(JS.as_uri())})
    done = subprocess.run([node, str(script)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    first, second = json.loads(done.stdout)
    assert first["matches"] and second["matches"]
    assert first["seed"] != second["seed"] and first["commitment"] != second["commitment"]
