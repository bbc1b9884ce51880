// The client library against a live gateway: DUDO_URL (tests/e2e/test_js_library.py runs
// this with `node --test` against its own `dudo serve`).
import { test } from "node:test";
import assert from "node:assert/strict";
import { DudoApi, DudoConnection, DudoError, logOfView, seatedSeed, seedCommitment, verify } from "../dudo-client.js";

const BASE = process.env.DUDO_URL;
if (!BASE) throw new Error("set DUDO_URL to a running gateway (dudo serve)");
const api = new DudoApi(BASE);

/** Bid the lowest legal raise on the face we hold most of; call Dudo past a third of the dice. */
function policy(game) {
  const legal = game.legal;
  if (legal.direction) return { type: "direction", value: 1 };
  const standing = game.bids.at(-1);
  if (standing && legal.dudo && standing[1] > game.dice_in_play / 3 + 1) return { type: "dudo" };
  const faces = legal.bid.map((q, i) => [q, i + 1]).filter(([q]) => q !== null);
  if (!faces.length) return { type: "dudo" };
  const held = (f) => game.dice.filter((d) => d === f).length;
  const [quantity, face] = faces.sort((a, b) => held(b[1]) - held(a[1]) || a[0] - b[0])[0];
  return { type: "bid", quantity, face };
}

async function playUntilOver(conn, { dropAfter = -1 } = {}) {
  let moves = 0;
  for (;;) {
    const view = conn.view;
    if (view?.status === "over" || view?.game?.phase === "over") return moves;
    if (view?.game?.legal && view.game.turn === view.seat) {
      const before = view.version;
      const shown = await conn.act(policy(view.game));
      assert.ok(shown.version > before, "the act resolves with the view that shows it");
      if (++moves === dropAfter) conn.socket.close(); // the library reconnects and says hello
    } else {
      await new Promise((resolve) => conn.addEventListener("view", resolve, { once: true }));
    }
  }
}

test("plays a whole game: every act resolves on its view, a refusal rejects with its code", async () => {
  const seat = await api.createTable({ rules: { preset: "classic", start_dice: 2 }, seats: 2, bots: ["easy"], name: "JS" });
  const conn = new DudoConnection(BASE, seat.token);
  const welcome = await conn.open();
  assert.equal(welcome.table, seat.table);
  await new Promise((resolve) => conn.view?.status === "playing" ? resolve() : conn.addEventListener("view", function wait(e) { if (e.detail.status === "playing") { conn.removeEventListener("view", wait); resolve(); } }));
  while (conn.view.game.turn !== conn.view.seat) await new Promise((r) => conn.addEventListener("view", r, { once: true }));
  await assert.rejects(conn.act({ type: "bid", quantity: 99, face: 3 }), (err) => err instanceof DudoError && err.code === "bid_out_of_range");
  const moves = await playUntilOver(conn, { dropAfter: 2 });
  assert.ok(moves >= 1);
  assert.ok(conn.view.game.winner !== null);
  conn.close();
});

test("play(policy): the policy is asked on each turn, and it resolves with the game's last view", async () => {
  const seat = await api.createTable({ rules: { preset: "classic", start_dice: 2 }, seats: 2, bots: ["easy"], name: "JS play" });
  const conn = new DudoConnection(BASE, seat.token);
  await conn.open();
  let asked = 0;
  const last = await conn.play(async (game, view) => {
    assert.equal(game.turn, view.seat); // asked on its own turns only
    asked++;
    return policy(game);
  });
  assert.ok(asked >= 1);
  assert.ok(last.game.winner !== null || last.status === "over");
  assert.equal(last, conn.view);
  conn.close();
  await assert.rejects(conn.play(policy), (err) => err.code === "closed"); // ended: at once
});

test("a seed of our own: made and committed when we sit, revealed when asked, and the game verifies", async () => {
  const seat = await api.createTable({ rules: { preset: "classic", start_dice: 2 }, seats: 2, bots: ["easy"], name: "JS seeds" });
  const seed = seatedSeed(seat.token);
  assert.match(seed, /^[0-9a-f]{32}$/);
  const conn = new DudoConnection(BASE, seat.token);
  await conn.open();
  const last = await conn.play(policy);
  conn.close();
  assert.deepEqual(last.seeds.revealed, [true, false]); // ours taken; the bot's is public
  assert.deepEqual(last.seeds.client_seeds, [seed, `public:${seat.table}:1`]);
  assert.equal(last.seeds.commitments[0], await seedCommitment(seed));
  assert.deepEqual(await verify(last), []);
  const log = logOfView(last);
  log.client_seeds = [...log.client_seeds];
  log.client_seeds[1] = "picked by the operator";
  assert.deepEqual(await verify(log), ["seat 1 brought no seed and was not dealt its public one"]);
});

test("a seat that missed the wait for seeds is dealt its public seed, and the connection says so", async () => {
  const seat = await api.createTable({ rules: { preset: "classic", start_dice: 1 }, seats: 2, bots: ["easy"], name: "JS late" });
  const open = async () => (await api.tables()).tables.some((e) => e.table === seat.table && e.status === "open");
  while (await open()) await new Promise((r) => setTimeout(r, 200)); // the bot sits; the wait runs out
  const conn = new DudoConnection(BASE, seat.token);
  const told = new Promise((resolve) => conn.addEventListener("seed_not_taken", (e) => resolve(e.detail)));
  await conn.open();
  const last = await conn.play(policy);
  assert.equal(await told, seat.table);
  conn.close();
  assert.deepEqual(last.seeds.revealed, [false, false]);
  assert.deepEqual(await verify(last), []); // fair dealing all the same
});

test("answers quote their ids: ping, resync, leave; rate limits are waited out", async () => {
  const seat = await api.createTable({ rules: { preset: "classic" }, seats: 3, name: "Ana" });
  const conn = new DudoConnection(BASE, seat.token);
  await conn.open();
  const pongs = await Promise.all(Array.from({ length: 50 }, () => conn.ping())); // past the burst of 40
  assert.equal(pongs.length, 50);
  assert.ok(pongs.every((p) => p.type === "pong" && p.id));
  const view = await conn.resync();
  assert.equal(view.table, seat.table);
  await assert.rejects(new DudoConnection(BASE, "forged.token").open(), (err) => err.code === "unauthorized");
  const left = await conn.leave();
  assert.equal(left.table, seat.table);
  conn.close();
});

test("the lobby: the full list, then changes", async () => {
  const lobby = new DudoConnection(BASE, null);
  const first = await lobby.open();
  assert.ok(Array.isArray(first.tables));
  const change = new Promise((resolve) => lobby.addEventListener("lobby", (e) => e.detail.table && resolve(e.detail)));
  const made = await api.createTable({ rules: { preset: "lizumo" }, seats: 3, name: "Eve" });
  const news = await change;
  assert.equal(news.table, made.table);
  assert.equal(news.entry.preset, "lizumo");
  lobby.close();
  await assert.rejects(api.joinTable("nosuchtable", { name: "Z" }), (err) => err.code === "unknown_table" && err.status === 404);
});

test("at a tournament's table the connection commits to a seed made for it, then reveals it, and the deal takes it", async () => {
  const made = await api.createTournament({ name: "JS Seeds", host: "Ana", max_players: 3, start_players: 3, seats: 3, bots: "easy", buy_in: 0, rules: { preset: "classic", start_dice: 2 } });
  const conn = new DudoConnection(BASE, made.token);
  await conn.open();
  const views = [];
  conn.addEventListener("view", (e) => views.push(e.detail));
  const dealt = new Promise((resolve) => conn.addEventListener("view", (e) => {
    const { seeds, seat, status } = e.detail;
    if (status === "playing" && seeds && seeds.revealed[seat]) resolve(e.detail);
  }));
  await api.begin(made.tournament, made.token);
  const view = await dealt;
  const asked = views.find((v) => v.seeds?.asked);
  assert.deepEqual(asked.seeds.asked, [view.seat]); // only the person's seat: the bots bring none
  assert.match(view.seeds.commitments[view.seat], /^[0-9a-f]{64}$/);
  const ours = conn.tableSeeds.get(`${view.table}:1`); // (its first deal: round 1)
  assert.equal(await ours.commitment, view.seeds.commitments[view.seat]);
  conn.close();
});

test("an organizer's controls: pause, announce, kick, resume, cancel; a refusal is typed", async () => {
  const made = await api.createTournament({ name: "JS Club", host: "Org", max_players: 8, buy_in: 5, rules: { preset: "lizumo" } });
  const bea = await api.register(made.tournament, { name: "Bea" });
  const cid = await api.register(made.tournament, { name: "Cid" });
  // Only the host runs it: Bea's own entrant token is refused, typed.
  await assert.rejects(api.organize(made.tournament, bea.token, "pause"),
    (err) => err instanceof DudoError && err.code === "not_host" && err.status === 403);
  let done = await api.organize(made.tournament, made.token, "kick", { target: cid.player });
  assert.deepEqual(done.standings.registered.map((e) => e.name), ["Org", "Bea"]);
  await api.begin(made.tournament, made.token);
  done = await api.organize(made.tournament, made.token, "pause");
  assert.equal(done.standings.paused, true);
  done = await api.organize(made.tournament, made.token, "announce", { text: "Back in five" });
  assert.equal(done.standings.announcement.text, "Back in five");
  done = await api.organize(made.tournament, made.token, "resume");
  assert.equal(done.standings.paused, false);
  done = await api.organize(made.tournament, made.token, "cancel");
  assert.equal(done.standings.status, "cancelled");
  await assert.rejects(api.organize(made.tournament, made.token, "pause"),
    (err) => err instanceof DudoError && err.code === "tournament_over");
});

test("an act is settled before the view that shows it fires: closing on game over rejects nothing", async () => {
  const seat = await api.createTable({ rules: { preset: "classic", start_dice: 1 }, seats: 2, bots: ["easy"], name: "Solo" });
  const conn = new DudoConnection(BASE, seat.token);
  await conn.open();
  const settled = [];
  let closedOnView = false;
  // The README's pattern: close inside the view handler once the game is over.
  conn.addEventListener("view", (e) => {
    if (e.detail.status === "over") { closedOnView = true; conn.close(); }
  });
  while (conn.view?.status !== "over") {
    const view = conn.view;
    if (view?.game?.legal && view.game.turn === view.seat && view.status === "playing") {
      settled.push(await conn.act(view.game.bids.length ? { type: "dudo" } : { type: "bid", quantity: 1, face: 2 }));
    } else {
      await new Promise((resolve) => conn.addEventListener("view", resolve, { once: true }));
    }
  }
  assert.ok(closedOnView, "the game ended while we watched");
  assert.ok(settled.length >= 1 && settled.every((v) => v.type === "view"));
});

test("reconnecting gives up after its retries; open() waits no longer than openTimeoutMs", async () => {
  const net = await import("node:net");
  const closed = net.createServer();
  await new Promise((r) => closed.listen(0, "127.0.0.1", r));
  const port = closed.address().port;
  await new Promise((r) => closed.close(r)); // nothing listens there now
  // A call to a gateway that is down: a DudoError like any other failure.
  await assert.rejects(new DudoApi(`http://127.0.0.1:${port}`).tables(), (err) => err instanceof DudoError && err.code === "unavailable" && err.status === undefined);
  const heard = [];
  const down = new DudoConnection(`http://127.0.0.1:${port}`, "a-token", { retries: 2, maxBackoffMs: 200 });
  down.addEventListener("gave_up", (e) => heard.push(e.detail));
  await assert.rejects(down.open(), (err) => err instanceof DudoError && err.code === "gave_up");
  assert.equal(heard.length, 1);
  assert.match(heard[0], /3 connection attempts failed/);

  const accepted = [];
  const silent = net.createServer((socket) => accepted.push(socket)); // never answers the upgrade
  await new Promise((r) => silent.listen(0, "127.0.0.1", r));
  const started = Date.now();
  const slow = new DudoConnection(`http://127.0.0.1:${silent.address().port}`, "a-token", { openTimeoutMs: 1000 });
  await assert.rejects(slow.open(), (err) => err instanceof DudoError && err.code === "unavailable");
  assert.ok(Date.now() - started < 4000);
  for (const socket of accepted) socket.destroy();
  silent.close();
});

test("quick play: a seat at a fitting table or a new one, and a token that says hello", async () => {
  const seat = await api.joinOrCreate({ name: "Quick", preset: "cacho", seats: 6 });
  assert.equal(typeof seat.created, "boolean");
  const conn = new DudoConnection(BASE, seat.token, { openTimeoutMs: 10000 });
  const welcome = await conn.open();
  assert.equal(welcome.table, seat.table);
  assert.equal(welcome.seat, seat.seat);
  conn.close();
  await assert.rejects(api.joinOrCreate({ name: "Quick", seats: 9 }), (err) => err instanceof DudoError && err.code === "bad_message" && err.status === 400);
});

test("each hello renews the token: the welcome's replaces it, and the token event says so", async () => {
  const seat = await api.createTable({ rules: { preset: "classic" }, seats: 2, name: "Tia" });
  await new Promise((resolve) => setTimeout(resolve, 1100)); // the new one is made a second later
  const conn = new DudoConnection(BASE, seat.token);
  const heard = [];
  conn.addEventListener("token", ({ detail }) => heard.push(detail));
  const welcome = await conn.open();
  assert.ok(welcome.token && welcome.token !== seat.token);
  assert.deepEqual(heard, [welcome.token]);
  assert.equal(conn.token, welcome.token); // what a reconnect says hello with
  assert.equal(typeof welcome.now, "number"); // the gateway's clock, for the deadlines
  assert.ok(Math.abs(conn.serverNow() - Date.now()) < 5000);
  const expiry = (token) => JSON.parse(Buffer.from(token.split(".")[0], "base64url")).e;
  assert.ok(expiry(welcome.token) > expiry(seat.token));
  conn.close();
  const again = new DudoConnection(BASE, welcome.token);
  assert.equal((await again.open()).seat, seat.seat);
  again.close();
});

/** A gateway in this process (the library takes a WebSocket class): it welcomes a hello, or
 * refuses it with `refuse`, never answers an act; `gateway.alive = false` takes it down
 * for good (open sockets close, new ones fail). */
function fakeGateway({ refuse = null } = {}) {
  const gateway = { alive: true, hellos: 0, sockets: [] };
  gateway.WebSocket = class {
    constructor() {
      this.readyState = 0;
      gateway.sockets.push(this);
      setTimeout(() => {
        if (!gateway.alive) { this.readyState = 3; this.onclose?.({}); return; }
        this.readyState = 1;
        this.onopen?.();
      }, 5);
    }
    send(data) {
      const msg = JSON.parse(data);
      if (msg.type !== "hello") return;
      gateway.hellos++;
      const answer = refuse
        ? { v: 1, type: "error", id: msg.id, code: refuse, message: "no such table" }
        : { v: 1, type: "welcome", id: msg.id, table: "t1", seat: 0, player: "p1" };
      setTimeout(() => this.onmessage?.({ data: JSON.stringify(answer) }), 1);
    }
    close() {
      if (this.readyState === 3) return;
      this.readyState = 3;
      setTimeout(() => this.onclose?.({}), 1);
    }
  };
  gateway.die = () => {
    gateway.alive = false;
    for (const socket of gateway.sockets) socket.close();
  };
  return gateway;
}

test("a gateway gone for good: the pending act and every later call reject gave_up, finished says so", async () => {
  const gateway = fakeGateway();
  const conn = new DudoConnection("http://gateway.invalid", "a-token", { WebSocket: gateway.WebSocket, retries: 2, maxBackoffMs: 50 });
  const states = [];
  conn.addEventListener("state", (e) => states.push(e.detail));
  await conn.open();
  const pending = conn.act({ type: "dudo" });
  gateway.die();
  await assert.rejects(pending, (err) => err instanceof DudoError && err.code === "gave_up");
  const why = await conn.finished;
  assert.equal(why.code, "gave_up");
  assert.equal(conn.reason.code, "gave_up");
  await assert.rejects(conn.act({ type: "dudo" }), (err) => err.code === "gave_up"); // at once
  await assert.rejects(conn.ping(), (err) => err.code === "gave_up");
  // "closed" once, at the end; between the attempts it said "reconnecting".
  assert.equal(states.filter((s) => s === "closed").length, 1);
  assert.equal(states.at(-1), "closed");
  assert.ok(states.includes("reconnecting"), states.join());
  conn.close();
  assert.equal(conn.reason.code, "gave_up"); // the first reason stays
});

test("after close() a pending and a later call reject closed, and finished resolves", async () => {
  const gateway = fakeGateway();
  const conn = new DudoConnection("http://gateway.invalid", "a-token", { WebSocket: gateway.WebSocket });
  await conn.open();
  const pending = conn.act({ type: "dudo" });
  conn.close();
  await assert.rejects(pending, (err) => err instanceof DudoError && err.code === "closed");
  await assert.rejects(conn.act({ type: "dudo" }), (err) => err.code === "closed");
  assert.equal((await conn.finished).code, "closed");
});

test("a hello refused for a table that is gone ends the connection: unknown_table, no retry", async () => {
  const gateway = fakeGateway({ refuse: "unknown_table" });
  const conn = new DudoConnection("http://gateway.invalid", "a-token", { WebSocket: gateway.WebSocket });
  await assert.rejects(conn.open(), (err) => err instanceof DudoError && err.code === "unknown_table");
  assert.equal((await conn.finished).code, "unknown_table");
  await new Promise((r) => setTimeout(r, 500));
  assert.equal(gateway.hellos, 1);
  assert.ok(conn.closed);
});
