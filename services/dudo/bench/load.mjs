// The load generator of `dudo bench path --load node`: the peers' closed loop, in Node.
//
// node [--experimental-websocket] load.mjs BASES TABLES SEATS SECONDS [seeds]
//   BASES: comma-separated gateway URLs (table i uses gateway i mod count).
//
// Each table's SEATS clients take its seats through the HTTP API (create, join), say
// hello over WebSocket and play the policy of ../shared/peers/*/load.js on our views:
// Dudo if the standing bid exceeds the other players' dice / 3 (ones: / 6) plus the
// seat's own matching dice, else the minimal raise; an opening bid is one die of the
// seat's most common face (2-6). A seat acts the moment a view says it is its turn.
// When a game ends its clients take a new table. Latency: from sending `act` to the
// mover's own view that shows it applied (a later version).
//
// With `seeds` every seat brings a seed of its own (docs/rules.md, "Seeds from
// everyone"): its commitment with the create or join, the seed on the view that asks for
// it (`seeds.until`), as the official libraries do. `starts_ms`: from a table's last join
// answered to the first view showing its game, per game (what seeds add before a deal).
//
// It writes JSON lines on stdout: {"phase": "start"} when every client is connected
// and warmed up (the measured phase begins: the caller samples server CPU then),
// then {"phase": "end", ...figures} when it ends. Written in Node, as the peers'
// load generators are, so the three systems are driven by the same kind of client.

import { createHash, randomBytes } from "node:crypto";
import { performance } from "node:perf_hooks";

const [basesArg, tablesArg, seatsArg, secondsArg, seedsArg] = process.argv.slice(2);
const bases = basesArg.split(",");
const TABLES = Number(tablesArg), SEATS = Number(seatsArg), SECONDS = Number(secondsArg);
const WARMUP_MS = 2000;

let measuring = false, stopping = false, moves = 0, games = 0, connected = 0;
const latencies = [];
const starts = [];
const SEEDS = seedsArg === "seeds";
const commitment = (seed) => createHash("sha256").update("dudo-client/2:" + seed).digest("hex");
const errors = {};
const count = (code) => { errors[code] = (errors[code] || 0) + 1; };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
// Resolves once written: stdout is a pipe, asynchronous in Node, and process.exit() drops
// what is still pending (the end line, with every latency, runs to hundreds of KB).
const say = (obj) => new Promise((r) => process.stdout.write(JSON.stringify(obj) + "\n", r));

function onesWild(game) {
  const r = game.rules;
  return Boolean(r.wild_ones && (!game.palifico || r.palifico_wild_ones));
}

// The peers' policy, on our view (the same as dudo.bench.players.peer_policy).
function decide(game) {
  const legal = game.legal;
  if (legal.direction) return { type: "direction", value: 1 };
  const dice = game.dice, wild = onesWild(game);
  const others = game.dice_in_play - dice.length;
  const mine = (f) => dice.filter((d) => d === f || (wild && f !== 1 && d === 1)).length;
  let want;
  if (game.bids.length) {
    const [, q, f] = game.bids[game.bids.length - 1];
    if (legal.dudo && q > others / (f === 1 ? 6 : 3) + mine(f)) return { type: "dudo" };
    want = f === 1 ? [q + 1, 1] : f < 6 ? [q, f + 1] : [q + 1, 2];
  } else {
    let best = 2;
    for (let g = 3; g <= 6; g++) if (mine(g) > mine(best)) best = g;
    want = [1, best];
  }
  const lowest = legal.bid, [q, f] = want;
  if (lowest[f - 1] !== null && lowest[f - 1] <= q && q <= legal.max_quantity) {
    return { type: "bid", quantity: q, face: f };
  }
  // The peers' rule does not know palifico or these rules' raising: the nearest legal bid.
  let pick = null;
  for (let g = 1; g <= 6; g++) {
    const low = lowest[g - 1];
    if (low === null || low < q || low > legal.max_quantity) continue;
    if (pick === null || low < pick[0] || (low === pick[0] && g < pick[1])) pick = [low, g];
  }
  return pick ? { type: "bid", quantity: pick[0], face: pick[1] } : { type: "dudo" };
}

async function post(url, body) {
  const r = await fetch(url, {
    method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body),
  });
  const made = await r.json();
  if (!made.token) throw new Error(`refused: ${JSON.stringify(made)}`);
  return made;
}

async function newTable(base) {
  const seeds = Array.from({ length: SEATS }, () => (SEEDS ? randomBytes(16).toString("hex") : null));
  const own = (i) => (seeds[i] ? { seed_commitment: commitment(seeds[i]) } : {});
  const made = await post(`${base}/api/tables`, { rules: { preset: "classic" }, seats: SEATS, bots: [], name: "P0", ...own(0) });
  const tokens = [made.token];
  for (let i = 1; i < SEATS; i++) {
    tokens.push((await post(`${base}/api/tables/${made.table}/join`, { name: `P${i}`, ...own(i) })).token);
  }
  return { tokens, seeds, joinedAt: performance.now() };
}

let nextId = 0;

// One seat until its game is over (or the run stops); resolves when its socket closes.
function seat(url, token, table, seed) {
  return new Promise((resolve) => {
    const ws = new WebSocket(url);
    let version = 0, pending = null, done = false, revealed = false;
    const finish = () => { if (!done) { done = true; try { ws.close(); } catch { /* closed already */ } } };
    ws.onopen = () => {
      connected++;
      ws.send(JSON.stringify({ v: 1, type: "hello", token }));
    };
    ws.onmessage = (event) => {
      const msg = JSON.parse(event.data);
      if (msg.type === "error") { count(msg.code); pending = null; return; }
      if (msg.type !== "view" || msg.version < version) return;
      version = msg.version;
      if (pending && msg.version > pending.version) {
        if (measuring) { latencies.push(performance.now() - pending.at); moves++; }
        pending = null;
      }
      if (seed && !revealed && msg.seeds?.until !== undefined) { // the table asks for seeds
        revealed = true;
        ws.send(JSON.stringify({ v: 1, type: "seed", id: `s${nextId++}`, seed }));
      }
      if (msg.status === "playing" && table.startedAt === undefined) {
        table.startedAt = performance.now();
        if (measuring) starts.push(table.startedAt - table.joinedAt);
      }
      if (msg.status === "over") {
        if (measuring) games++;
        table.over = true;
        return finish();
      }
      if (stopping || table.over) return finish();
      const game = msg.game;
      if (game && game.turn === msg.seat && pending === null) {
        const action = decide(game);
        pending = { at: performance.now(), version: msg.version };
        ws.send(JSON.stringify({ v: 1, type: "act", id: `a${nextId++}`, action }));
      }
    };
    ws.onerror = () => count("socket_error");
    ws.onclose = () => { connected--; done = true; table.over = true; resolve(); };
  });
}

async function player(i) {
  const base = bases[i % bases.length];
  const url = base.replace(/^http/, "ws") + "/ws";
  while (!stopping) {
    let made;
    try {
      made = await newTable(base);
    } catch (e) {
      count(e.name || "Error");
      await sleep(200);
      continue;
    }
    const table = { over: false, joinedAt: made.joinedAt };
    await Promise.all(made.tokens.map((t, i) => seat(url, t, table, made.seeds[i])));
  }
}

const rate = [];
const running = Array.from({ length: TABLES }, (_, i) => player(i));
const deadline = performance.now() + 60000;
while (connected < TABLES * SEATS) {
  if (performance.now() > deadline) { await say({ phase: "failed", connected, errors }); process.exit(1); }
  await sleep(100);
}
await sleep(WARMUP_MS);
const cpu0 = process.cpuUsage();
measuring = true;
const t0 = performance.now();
await say({ phase: "start" });
while (performance.now() - t0 < SECONDS * 1000) {
  const before = moves, at = performance.now();
  await sleep(1000);
  rate.push((moves - before) / ((performance.now() - at) / 1000));
}
measuring = false;
const elapsed = (performance.now() - t0) / 1000;
const cpu = process.cpuUsage(cpu0);
const stillConnected = connected;
latencies.sort((a, b) => a - b);
starts.sort((a, b) => a - b);
await say({
  phase: "end",
  elapsed,
  moves,
  games,
  errors,
  rates: rate,
  connected: stillConnected,
  latencies_ms: latencies,
  starts_ms: starts,
  load_cpu_s: (cpu.user + cpu.system) / 1e6,
});
stopping = true;
await Promise.race([Promise.all(running), sleep(5000)]);
process.exit(0);
