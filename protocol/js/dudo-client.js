// dudo-client: the official JavaScript client of the Dudo protocol (protocol/asyncapi.yaml).
// One ES module, no build step: browsers and Node >= 20. The WebSocket is the one given in
// the options, else the platform's (browsers, Node 22+), else the `ws` package's (Node 20,
// which has none without --experimental-websocket). Types: dudo-client.d.ts.
//
//   import { DudoApi, DudoConnection } from "dudo-client";
//   const api = new DudoApi("http://127.0.0.1:8000");
//   const seat = await api.createTable({ rules: { preset: "classic" }, seats: 2, bots: ["normal"], name: "Ana" });
//   const conn = new DudoConnection("http://127.0.0.1:8000", seat.token);
//   conn.addEventListener("view", (e) => console.log(e.detail.game));
//   await conn.open();
//   const view = await conn.act({ type: "dudo" });   // resolves on the view showing it
//
// Every request carries an id; its answer quotes it (docs/protocol.md, "Act"). The
// connection says hello again after every reconnect (with backoff), applies only views
// newer than the last one, waits `retry_ms` and sends again when rate limited, and sends
// unanswered acts again with their ids after a reconnect (a repeat that was applied is
// answered `duplicate`, which resolves it with the latest view).

/** @typedef {import("./messages.js").Action} Action */
/** @typedef {import("./messages.js").ViewMessage} View */

export const PROTOCOL_VERSION = 1;
/** The faces in order (`legal.bid[i]` is the lowest legal quantity of `FACES[i]`). */
export const FACES = Object.freeze([1, 2, 3, 4, 5, 6]);
const IDEMPOTENT = { idempotent: true };
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
/** `?token=...` or `?invite=...`: what opens a private tournament's standings. */
const accessQuery = ({ token, invite } = {}) => {
  const params = new URLSearchParams({ ...(token ? { token } : {}), ...(invite ? { invite } : {}) });
  return params.toString() ? `?${params}` : "";
};

/** The WebSocket class to use: `given`, else the platform's, else the `ws` package's. */
async function webSocketClass(given) {
  if (given) return given;
  if (globalThis.WebSocket) return globalThis.WebSocket;
  try {
    return (await import("ws")).WebSocket; // Node 20 (a dependency of the npm package)
  } catch {
    throw new DudoError("unavailable", "no WebSocket here: use Node 22+, install `ws`, or pass {WebSocket}");
  }
}

/** A request key (docs/protocol.md, "Send a request key"): 24 hex digits. */
export function requestKey() {
  return hex(crypto.getRandomValues(new Uint8Array(12))); // randomUUID needs https
}

// Bytes and hashes (Web Crypto), for the seeds and the checks below.
const enc = new TextEncoder();
const hex = (bytes) => Array.from(new Uint8Array(bytes), (b) => b.toString(16).padStart(2, "0")).join("");
const unhex = (text) => {
  if (typeof text !== "string" || !/^([0-9a-f]{2})*$/i.test(text)) return new Uint8Array(0);
  return Uint8Array.from(text.match(/../g) ?? [], (b) => parseInt(b, 16));
};
const join = (...parts) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) { out.set(p, at); at += p.length; }
  return out;
};
const sha256 = async (...parts) => new Uint8Array(await crypto.subtle.digest("SHA-256", join(...parts)));
const hmac = async (key, ...parts) => {
  const k = await crypto.subtle.importKey("raw", key, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return new Uint8Array(await crypto.subtle.sign("HMAC", k, join(...parts)));
};

// ------------------------------------------------ seeds of your own for the dice

// docs/rules.md, "Seeds from everyone": DudoApi makes a seed for every seat it takes
// (unless given one, or a `seed_commitment` of the caller's), sends its commitment, and
// keeps the seed under the seat's token in this page or process; a DudoConnection opened
// with that token reveals it when its table's view shows `seeds.until`.
const SEEDS_KEPT = 1024;
const madeSeeds = new Map(); // token -> seed (the oldest forgotten first)
const SEEDS_KEPT_PER_CONNECTION = 16; // seeds made for tournament tables (the oldest forgotten)

/** A fresh seed: 128 random bits, as 32 hex digits. */
export function makeSeed() { return hex(crypto.getRandomValues(new Uint8Array(16))); }

/** The commitment to a seed: lowercase hex of SHA-256("dudo-client/2:" + seed). */
export async function seedCommitment(seed) {
  const raw = enc.encode(seed);
  if (raw.length < 1 || raw.length > 64) throw new DudoError("bad_seed", "a seed is 1 to 64 bytes of UTF-8");
  return committed(raw);
}

/** SHA-256("dudo-client/2:" + seed) in hex, the seed's length unchecked (a public seed may be longer). */
const committed = async (raw) => hex(await sha256(enc.encode("dudo-client/2:"), raw));

/** The seed this page or process made (or was given) for the seat `token` holds. */
export function seatedSeed(token) { return madeSeeds.get(token) ?? null; }

/** The body with the commitment to the seat's seed (`body.seed`, else a new one), and the seed. */
async function seeded(body, seated = true) {
  const { seed: given, ...rest } = body ?? {};
  // `seed: ""`: the seat brings none (a token handed to another program, which could not reveal it).
  if (!seated || rest.seed_commitment || given === "") return [rest, null];
  const seed = given ?? makeSeed();
  return [{ ...rest, seed_commitment: await seedCommitment(seed) }, seed];
}

function kept(answer, seed) {
  if (seed !== null && typeof answer?.token === "string") {
    madeSeeds.delete(answer.token);
    madeSeeds.set(answer.token, seed);
    while (madeSeeds.size > SEEDS_KEPT) madeSeeds.delete(madeSeeds.keys().next().value);
  }
  return answer;
}

// ------------------------------------------------------------ a game's dice verified

/** Each seat's dice for a round from its seed (docs/rules.md, "Fair dice"), sorted. */
async function roll(seed, counts) {
  const base = join(enc.encode("dudo-dice/1:"), seed);
  const hands = [];
  for (let seat = 0; seat < counts.length; seat++) {
    const faces = [];
    for (let block = 0; faces.length < counts[seat]; block++) {
      for (const b of await sha256(base, enc.encode(`:${seat}:${block}`))) {
        if (b < 252 && faces.length < counts[seat]) faces.push((b % 6) + 1);
      }
    }
    hands.push(faces.sort((a, b) => a - b));
  }
  return hands;
}

/** Each game secret with the round it deals from: the first from round 1, then one per
 *  `reseeds` entry (a tournament's table, after seats changed); none without seeds, or
 *  when any does not check. */
async function seededSecrets(log, problems) {
  if (!("server_seed" in log)) return [];
  const server = unhex(log.server_seed);
  if (server.length !== 32 || hex(await sha256(enc.encode("dudo-server/2:"), server)) !== log.server_commitment) {
    problems.push("the server seed does not match its commitment");
    return [];
  }
  const stretches = [[1, "", log]];
  for (const [n, again] of (log.reseeds ?? []).entries()) {
    const first = again?.round;
    if (!Number.isInteger(first) || first < 1) {
      problems.push(`reseed ${n} names no round`);
      return [];
    }
    stretches.push([first, `from round ${first}: `, again]);
  }
  const table = typeof log.table === "string" ? log.table : null;
  const secrets = [];
  for (const [first, where, given] of stretches) {
    const seeds = await checkedSeeds(given, table, where, problems);
    if (!seeds) continue;
    const reveals = [];
    for (const seed of seeds) reveals.push(await sha256(enc.encode("dudo-reveal/2:"), enc.encode(seed)));
    secrets.push([first, await hmac(server, enc.encode("dudo-game/2:"), ...reveals)]);
  }
  return problems.length ? [] : secrets;
}

async function checkedSeeds(given, table, where, problems) {
  const seeds = (given.client_seeds ?? []).map(String);
  const shown = given.client_commitments ?? [];
  if (shown.length !== seeds.length) {
    problems.push(`${where}a client seed without its commitment`);
    return null;
  }
  for (const [seat, seed] of seeds.entries()) {
    const pub = table === null ? null : `public:${table}:${seat}`;
    if (shown[seat] == null) {
      if (seed !== pub) problems.push(`${where}seat ${seat} brought no seed and was not dealt its public one`);
    } else if (seed !== pub && await committed(enc.encode(seed)) !== shown[seat]) {
      problems.push(`${where}seat ${seat}'s seed does not match its commitment`);
    }
  }
  return seeds;
}

/**
 * A finished game's log as `verify` reads it, from the game's last view (a seat's or a
 * spectator's): its rounds (`game.log`) and its `seeds`.
 */
export function logOfView(view) {
  const rounds = view?.game?.log;
  if (!Array.isArray(rounds)) throw new Error("not a finished game's view (no game.log)");
  const log = { table: view.table, rounds };
  const seeds = view.seeds;
  if (seeds && "server_seed" in seeds) {
    Object.assign(log, {
      server_seed: seeds.server_seed, server_commitment: seeds.server,
      client_seeds: seeds.client_seeds, client_commitments: seeds.commitments,
    });
    if (seeds.reseeds?.length) log.reseeds = seeds.reseeds;
  }
  return log;
}

/**
 * What does not hold in a finished game's log, each with its round (an empty array:
 * every check holds), computed here (Web Crypto), not asked of the server: each round's
 * seed against its commitment, each seat's dice against the seed, and, when the game
 * was dealt from everyone's seeds (`server_seed`, `server_commitment`, `client_seeds`,
 * `client_commitments`, and at a tournament's table `reseeds`: each `{round,
 * client_seeds, client_commitments}`, the seeds given after seats changed, dealing from
 * that round on), those against their commitments and each round's seed against the
 * secret they make. `log` is the game's last view, or a log: `rounds` (a finished
 * game's `game.log`) with `table` and the seeds (`logOfView`). A seat that committed to
 * a seed and was dealt its public one (no reveal in time) is fair dealing, not listed:
 * the view's `seeds.revealed` says so. The same checks, in the same words, as the
 * server's `dudo verify` and the Python package's `verify`.
 */
export async function verify(log) {
  if (log && typeof log.game === "object" && log.game !== null) log = logOfView(log);
  const problems = [];
  const secrets = await seededSecrets(log, problems);
  for (const [at, entry] of (log.rounds ?? []).entries()) {
    const round = Number(entry.round ?? at + 1);
    const where = `round ${round}`;
    const seed = unhex(entry.seed ?? "");
    if (seed.length !== 32) {
      problems.push(`${where}: no seed revealed`);
      continue;
    }
    const secret = secrets.findLast(([first]) => first <= round)?.[1];
    if (secret && hex(await hmac(secret, enc.encode(`dudo-round/1:${round}`))) !== hex(seed)) {
      problems.push(`${where}: the seed is not the one the seeds make`);
    }
    if (entry.commitment !== hex(await sha256(enc.encode("dudo-commit/1:"), seed))) {
      problems.push(`${where}: the seed does not match the commitment shown`);
    }
    const hands = (entry.dice ?? []).map((h) => [...h]);
    const fair = await roll(seed, hands.map((h) => h.length));
    for (const [seat, hand] of hands.entries()) {
      if (hand.sort((a, b) => a - b).join() !== fair[seat].join()) {
        problems.push(`${where}: seat ${seat}'s dice are not the seed's`);
      }
    }
  }
  return problems;
}

/** A refusal: `code` is one of docs/protocol.md's error codes. */
export class DudoError extends Error {
  /** @param {string} code @param {string} message @param {number} [status] @param {object} [facts] */
  constructor(code, message, status, facts) {
    super(message);
    this.name = "DudoError";
    this.code = code;
    this.status = status;
    /** What a table's refusal refers to (whose turn, the bid to beat...): word it yourself. */
    this.facts = facts ?? null;
  }
}

/** The HTTP API: tables, seats, tournaments, the leaderboard. Answers are plain objects. */
export class DudoApi {
  /** @param {string} base e.g. "http://127.0.0.1:8000" @param {{fetch?: typeof fetch}} [options] */
  constructor(base, options = {}) {
    this.base = base.replace(/\/$/, "");
    this.fetch = options.fetch ?? globalThis.fetch.bind(globalThis);
  }

  /**
   * One call. With `idempotent`, the body gets a request key (unless it has one) and the
   * call is sent again, up to 3 times with backoff, after a cut connection, a 503 or a
   * 504: with the same key it is the same request (one table, one seat), never a second.
   * @param {string} method @param {string} path @param {object} [body] @param {{idempotent?: boolean}} [options]
   */
  async call(method, path, body, options = {}) {
    if (options.idempotent && body) body = { request: requestKey(), ...body };
    for (let attempt = 0; ; attempt++) {
      const retry = options.idempotent && attempt < 3;
      let response;
      try {
        response = await this.fetch(this.base + path, {
          method,
          headers: body === undefined ? {} : { "Content-Type": "application/json" },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
      } catch (err) {
        // The gateway unreachable is a DudoError too (code `unavailable`, no status).
        if (!retry) throw new DudoError("unavailable", `${method} ${path}: ${err?.message ?? err}`);
        await sleep(500 * 2 ** attempt);
        continue;
      }
      const data = await response.json().catch(() => ({}));
      if (retry && (response.status === 503 || response.status === 504)) {
        await sleep(500 * 2 ** attempt);
        continue;
      }
      if (!response.ok) throw new DudoError(data.code ?? "http_" + response.status, data.message ?? response.statusText, response.status);
      return data;
    }
  }

  tables() { return this.call("GET", "/api/tables"); }
  /**
   * With a `name` your seat brings a seed of its own for the dice (`seed`, else one made
   * here; `seatedSeed(token)` returns it), revealed by the connection opened with the token.
   * @param {{rules?: object, seats?: number, bots?: string[], name?: string, identity?: string, request?: string, seed?: string}} body
   */
  async createTable(body) {
    const [sent, seed] = await seeded(body, body?.name !== undefined);
    return kept(await this.call("POST", "/api/tables", sent, IDEMPOTENT), seed);
  }
  /** @param {string} table @param {{name: string, seat?: number, identity?: string, request?: string, seed?: string}} body */
  async joinTable(table, body) {
    const [sent, seed] = await seeded(body);
    return kept(await this.call("POST", `/api/tables/${encodeURIComponent(table)}/join`, sent, IDEMPOTENT), seed);
  }
  /**
   * Quick play: a seat at an open table of `preset` (its rules exactly) and `seats` with one
   * free, else a new one (`bots`: its bot seats); resolves with the seat's token and `created`.
   * Not sent again by itself (a repeat could seat you at another table).
   * @param {{name: string, preset?: string, seats?: number, bots?: Array<"easy"|"normal"|"hard">, identity?: string, seed?: string}} body
   */
  async joinOrCreate(body) {
    const [sent, seed] = await seeded({ preset: "classic", seats: 4, ...body });
    return kept(await this.call("POST", "/api/quickplay", sent), seed);
  }
  /** @param {string} table */
  watchTable(table) { return this.call("POST", `/api/tables/${encodeURIComponent(table)}/watch`, {}); }
  tournaments() { return this.call("GET", "/api/tournaments"); }
  /** @param {object} body the `tournament_create` fields, and `host` (a name) to register and host it (bringing seeds, as `register`) */
  createTournament(body) { return this.call("POST", "/api/tournaments", body?.host !== undefined ? { seeds: true, ...body } : body, IDEMPOTENT); }
  /**
   * Your entrant token. Your client brings a seed of its own to each table you are seated
   * at (a DudoConnection opened with the token commits and reveals when the table asks);
   * `seeds: false` for a token handed to a program that does not.
   * @param {string} tournament @param {{name: string, identity?: string, request?: string, invite?: string, seeds?: boolean}} body
   */
  register(tournament, body) { return this.call("POST", `/api/tournaments/${encodeURIComponent(tournament)}/register`, { seeds: true, ...body }, IDEMPOTENT); }
  /** @param {string} tournament @param {string} token your own entrant token: leave before the start */
  unregister(tournament, token) { return this.call("POST", `/api/tournaments/${encodeURIComponent(tournament)}/unregister`, { token }); }
  /** @param {string} tournament @param {string} token the host's entrant token */
  begin(tournament, token) { return this.call("POST", `/api/tournaments/${encodeURIComponent(tournament)}/begin`, { token }); }
  /**
   * The host runs a tournament with their entrant token: `pause` (each table finishes its
   * round, then stops), `resume`, `cancel` (tables close, buy-ins back), `kick`
   * (`{target: handle}`) or `announce` (`{text}`). Resolves to `{tournament, standings}`.
   * @param {string} tournament @param {string} token @param {"pause"|"resume"|"cancel"|"kick"|"announce"} action
   * @param {{target?: string, text?: string}} [fields]
   */
  organize(tournament, token, action, fields = {}) {
    return this.call("POST", `/api/tournaments/${encodeURIComponent(tournament)}/${encodeURIComponent(action)}`, { token, ...fields });
  }
  /** @param {string} tournament every place given so far with the chips won (JSON)
   *  @param {{token?: string, invite?: string}} [access] a private tournament's: an
   *  entrant token of it, or its invite code (else refused `unauthorized`) */
  results(tournament, access = {}) { return this.call("GET", `/api/tournaments/${encodeURIComponent(tournament)}/results${accessQuery(access)}`); }
  /** @param {string} tournament @param {{token?: string, invite?: string}} [access] as `results` */
  standings(tournament, access = {}) { return this.call("GET", `/api/tournaments/${encodeURIComponent(tournament)}${accessQuery(access)}`); }
  leaderboard(limit = 50) { return this.call("GET", `/api/leaderboard?limit=${limit}`); }
  /** @param {string} handle an identity user's statistics, rating and chips (`PlayerResponse`);
   *  refused `unknown_player` for a handle without any (an anonymous player's) */
  player(handle) { return this.call("GET", `/api/players/${encodeURIComponent(handle)}`); }
  /** The bot services' solves of the presets' heads-up endgames still under way
   *  (`BotsResponse`: `endgame_solves` `{done, of}`, or null): a hard bot plays its
   *  heuristic in such a round until its solve is done */
  botSolves() { return this.call("GET", "/api/bots"); }
}

/**
 * One WebSocket, kept open: events `message` (every message as it arrives), `welcome`,
 * `view` (newer versions only; the requests it answers are settled before it fires), `left`,
 * `moved`, `tournament`, `lobby`, `error` (refusals nobody waits for), `state`
 * ("connecting" | "open" | "reconnecting": lost, trying again | "closed": ended for good),
 * `dropped`, `reconnected` (welcomed again after a drop), `gave_up` (its `retries` ran
 * out), `ended` (the connection cannot go on: the DudoError saying why) and `token` (the
 * gateway renewed the token at a hello: the new one, living 7 days from now, is
 * `conn.token` from then on; store it where you kept the first). Each event's `detail` is
 * the message.
 *
 * Nothing waits for ever: once it ends, `open()`, every pending and every later request
 * reject with a DudoError whose code says why: `closed` (`close()`), `gave_up` (`retries`
 * failed in a row), `unavailable` (no welcome within `openTimeoutMs`) or the hello's
 * refusal (`unauthorized`; `unknown_table`: a restarted `dudo serve` keeps no table).
 * `conn.finished` resolves with that error, and `conn.reason` holds it.
 */
export class DudoConnection extends EventTarget {
  /**
   * @param {string} base the gateway's http(s) URL
   * @param {string | null} token a seat, spectator or entrant token; null to watch the lobby only
   * @param {{WebSocket?: typeof WebSocket, lobby?: boolean, maxBackoffMs?: number, retries?: number, openTimeoutMs?: number}} [options]
   *   `retries`: connection attempts in a row that may fail before it gives up (default: never);
   *   `openTimeoutMs`: how long `open()` waits for the welcome (then it ends `unavailable`);
   *   `seed`: the seed the seat committed to (default: the one DudoApi made for this token),
   *   revealed when the table asks for it (`seeds.until`); at a tournament's table a seed
   *   is made for the table when it asks our seat (`seeds.asked`), committed, then revealed
   *   the same way; `seed: ""`: none, anywhere.
   */
  constructor(base, token, options = {}) {
    super();
    const seed = options.seed ?? seatedSeed(token);
    this.brings = seed !== "";
    this.seed = seed || null;
    this.seedCommitment = this.seed === null ? null : seedCommitment(this.seed);
    this.tableSeeds = new Map(); // "table:round" -> {seed, commitment}: a tournament table's ask
    this.revealed = null; // "what:table:until" a commitment or reveal was sent (or told) for
    this.url = base.replace(/^http/, "ws").replace(/\/$/, "") + "/ws";
    this.token = token;
    this.WebSocket = options.WebSocket ?? null; // chosen when it opens (webSocketClass)
    this.lobby = options.lobby ?? token === null;
    this.maxBackoffMs = options.maxBackoffMs ?? 5000;
    this.maxRetries = options.retries ?? Infinity;
    this.openTimeoutMs = options.openTimeoutMs ?? null;
    this.dropped = false; // lost since the last welcome: the next one is a reconnect
    /** The gateway's clock minus this device's, in ms (from the last welcome's `now`). */
    this.clockOffsetMs = 0;
    /** @type {View | null} */ this.view = null;
    /** @type {any} */ this.welcome = null;
    this.closed = false;
    /** @type {DudoError | null} why it ended, once it did */
    this.reason = null;
    this.#newFinish();
    this.retries = 0;
    this.counter = 0;
    /** @type {Map<string, {message: object, resolve: Function, reject: Function, until?: number, kind: string}>} */
    this.pending = new Map();
    this.socket = null;
  }

  /** Connect (and reconnect whenever the connection drops); resolves on `welcome` (or the lobby list). */
  open() {
    if (this.reason) { this.reason = null; this.#newFinish(); }
    this.closed = false;
    const kind = this.token ? "welcome" : "lobby";
    const ready = new Promise((resolve, reject) => {
      let timer = null;
      const stop = () => {
        clearTimeout(timer);
        this.removeEventListener(kind, done);
        this.removeEventListener("ended", ended);
      };
      const done = (e) => { stop(); resolve(e.detail); };
      const ended = (e) => { stop(); reject(again(e.detail)); };
      if (this.openTimeoutMs !== null) {
        timer = setTimeout(() => {
          this.#end(new DudoError("unavailable", `no welcome in ${this.openTimeoutMs} ms from ${this.url}`));
        }, this.openTimeoutMs);
      }
      this.addEventListener(kind, done);
      this.addEventListener("ended", ended);
    });
    webSocketClass(this.WebSocket).then(
      (WebSocket) => { this.WebSocket = WebSocket; if (!this.closed) this.#connect(); },
      (err) => this.#giveUp(err.message),
    );
    return ready;
  }

  /** The gateway's time now (ms since the epoch): count `deadline` and `reveal_until`
   * against it; a device's clock may be off by seconds. */
  serverNow() { return Date.now() + this.clockOffsetMs; }

  /** Close for good (no reconnect); pending and later requests reject `closed`. */
  close() { this.#end(new DudoError("closed", "the connection was closed")); }

  /** The connection cannot go on: every pending and later request rejects with `error`,
   * `finished` resolves with it (the first reason it ended stays its reason). */
  #end(error) {
    this.closed = true;
    if (this.reason) return;
    this.reason = error;
    this.socket?.close();
    this.#rejectPending(error);
    this.#emit("state", "closed");
    this.#emit("ended", error);
    this.#finish(error);
  }

  #newFinish() {
    /** @type {Promise<DudoError>} resolves when the connection has ended, with why */
    this.finished = new Promise((resolve) => { this.#finish = resolve; });
  }

  #finish = () => {}; // the `finished` promise's resolve, from the constructor on

  /** Act for the seat; resolves with the view that shows the action, rejects with a DudoError. @param {Action} action @returns {Promise<View>} */
  act(action) { return this.#request({ type: "act", action }, "act"); }
  /** Give the seat up; resolves with the `left` message. */
  leave() { return this.#request({ type: "leave" }, "left"); }
  /** Host only: start with the players seated so far; resolves with the first view of the game. */
  start() { return this.#request({ type: "start" }, "started"); }
  /** After the game's end: propose a rematch at `table`, a table you just made; resolves
   * with the view that shows the table's rematch (`view.rematch`: yours, or the one
   * proposed first, with `table_exists`). @param {string} table */
  rematch(table) { return this.#request({ type: "rematch", table }, "rematch"); }
  /** A quick reaction at your table (nice, haha, wow, grr, hmm, clap); resolves with the
   * next view (its `events` carry it). @param {string} emote */
  react(emote) { return this.#request({ type: "react", emote }, "view"); }
  /** The latest view now. */
  resync() { return this.#request({ type: "resync" }, "view"); }
  /** Resolves with the `pong`. */
  ping() { return this.#request({ type: "ping" }, "pong"); }

  /**
   * Play the seat to the end of its game: whenever a view says it is this seat's turn
   * (and the table is not paused), `policy(game, view)` chooses the action (or a promise
   * of it) and it is sent. Resolves with the game's last view; rejects when the
   * connection ends. A refused action goes to `onRefused(err)` and the policy is asked
   * again, up to 3 times for one view, then the next view is waited for; a refusal that
   * says the table moved on (`not_your_turn`, `game_over`, `paused`) waits for it at once.
   * @param {(game: any, view: View) => Action | Promise<Action>} policy
   * @param {{onRefused?: (err: DudoError) => void}} [options]
   * @returns {Promise<View>}
   */
  play(policy, options = {}) {
    return new Promise((resolve, reject) => {
      let busy = false;
      const tried = new Map(); // view version -> refused attempts on it
      const stop = () => {
        this.removeEventListener("view", step);
        this.removeEventListener("ended", ended);
      };
      const ended = (e) => { stop(); reject(again(e.detail)); };
      const turn = async (view) => {
        busy = true;
        try {
          await this.act(await policy(view.game, view));
        } catch (err) {
          if (this.reason || !(err instanceof DudoError)) { busy = false; stop(); reject(err); return; }
          options.onRefused?.(err);
          tried.set(view.version, RACES.includes(err.code) ? TRIES_PER_VIEW : (tried.get(view.version) ?? 0) + 1);
        }
        busy = false;
        step(); // the view that came meanwhile may be our turn again
      };
      const step = () => {
        const view = this.view;
        if (busy || !view) return;
        const game = view.game;
        if (view.status === "over" || (game && game.winner !== null)) { stop(); resolve(view); return; }
        if (view.paused || !game?.legal || game.turn !== view.seat) return;
        if ((tried.get(view.version) ?? 0) >= TRIES_PER_VIEW) return;
        void turn(view);
      };
      if (this.reason) { reject(again(this.reason)); return; }
      this.addEventListener("view", step);
      this.addEventListener("ended", ended);
      step();
    });
  }

  #connect() {
    this.#emit("state", "connecting");
    const socket = new this.WebSocket(this.url);
    this.socket = socket;
    // A connection attempt that neither opens nor fails in 5 s is given up. The timer also
    // keeps Node's event loop alive: its WebSocket does not while it connects, nor does it
    // always report a refused connection with `close` (seen on Node 20).
    const watchdog = setTimeout(() => {
      if (socket.readyState !== 1) lost();
    }, 5000);
    let gone = false;
    let opened = false;
    const lost = () => {
      clearTimeout(watchdog);
      if (gone || this.socket !== socket) return;
      gone = true;
      try { socket.close(); } catch { /* already closed */ }
      this.welcome = null;
      if (this.closed) return;
      this.#emit("state", "reconnecting");
      if (opened) {
        this.dropped = true;
        this.#emit("dropped", "the connection was lost");
      } else if (++this.retries > this.maxRetries) {
        this.#giveUp(`${this.retries} connection attempts failed in a row`);
        return;
      }
      const delay = Math.min(this.maxBackoffMs, 250 * 2 ** this.retries) * (0.5 + Math.random() / 2);
      setTimeout(() => !this.closed && this.#connect(), delay);
    };
    socket.onopen = () => {
      clearTimeout(watchdog);
      opened = true;
      this.retries = 0;
      this.#emit("state", "open");
      if (this.token) this.#send({ type: "hello", token: this.token, id: this.#id("h") });
      if (this.lobby) this.#send({ type: "watch_lobby", id: this.#id("w") });
    };
    socket.onmessage = (event) => this.#receive(JSON.parse(typeof event.data === "string" ? event.data : new TextDecoder().decode(event.data)));
    socket.onclose = lost;
    socket.onerror = lost;
  }

  /** No more reconnecting: the connection ends `gave_up`. */
  #giveUp(why) {
    this.#emit("gave_up", why);
    this.#end(new DudoError("gave_up", why));
  }

  /** Every pending request rejects with `error`. */
  #rejectPending(error) {
    for (const [, p] of this.pending) p.reject(again(error));
    this.pending.clear();
  }

  /** A tournament's table asks our seat for a commitment: make a seed for it and send
   *  the commitment, once per wait. The table waits for seeds and ours is not taken yet:
   *  send it, once per wait. A finished game that dealt our seat another seed (its public
   *  one): `seed_not_taken`. */
  #revealIfAsked(view) {
    const seeds = view.seeds, seat = view.seat;
    if (!seeds || typeof seat !== "number") return;
    // A tournament's table asks again for the round it holds after an arrival: a new
    // seed for each ask (`seeds.round`), never one the server has seen.
    const round = seeds.round ?? 1;
    if (this.brings && seeds.commit_until !== undefined && (seeds.asked ?? []).includes(seat)) {
      const asked = `commit:${view.table}:${seeds.commit_until}`;
      if (this.revealed === asked) return;
      this.revealed = asked;
      this.#tableSeed(view.table, round).commitment.then((commitment) => {
        this.#send({ type: "commit_seed", commitment, id: this.#id("c") });
      });
      return;
    }
    if (seeds.client_seeds) {
      this.#toldIfNotTaken(view);
      return;
    }
    const held = this.#seedFor(view.table, round);
    if (held === null || seeds.until === undefined) return;
    const { seed, commitment } = held;
    const asked = `seed:${view.table}:${seeds.until}`;
    if (seeds.revealed[seat] || this.revealed === asked) return;
    commitment.then((mine) => {
      if (seeds.commitments[seat] !== mine || this.revealed === asked) return;
      this.revealed = asked;
      this.#send({ type: "seed", seed, id: this.#id("s") });
    });
  }

  /** A finished game's view says our seat committed to the seed we hold for one of its
   *  deals (the first, or a tournament table's after an arrival) and was dealt another
   *  (its public one: our reveal was late or lost): `seed_not_taken`, once a table. */
  #toldIfNotTaken(view) {
    const seeds = view.seeds, seat = view.seat, told = `told:${view.table}`;
    if (this.revealed === told) return;
    const deals = [[1, seeds.client_seeds, seeds.commitments],
      ...(seeds.reseeds ?? []).map((r) => [r.round, r.client_seeds, r.client_commitments])];
    for (const [first, dealt, given] of deals) {
      const held = this.#seedFor(view.table, first);
      if (held === null || dealt[seat] === held.seed) continue;
      held.commitment.then((mine) => {
        if (given[seat] !== mine || this.revealed === told) return;
        this.revealed = told;
        this.#emit("seed_not_taken", view.table);
      });
    }
  }

  /** The seed we hold for `table`'s deal from round `first` ({seed, commitment}, or
   *  null): the one made for that ask (a tournament table's), else for a game's first
   *  deal the seat's own. */
  #seedFor(table, first) {
    const made = this.tableSeeds.get(`${table}:${first}`);
    if (made) return made;
    return first === 1 && this.seed !== null ? { seed: this.seed, commitment: this.seedCommitment } : null;
  }

  /** The seed made for a tournament table's ask (the same one again after a reconnect). */
  #tableSeed(table, round) {
    let made = this.tableSeeds.get(`${table}:${round}`);
    if (!made) {
      const seed = makeSeed();
      made = { seed, commitment: seedCommitment(seed) };
      this.tableSeeds.set(`${table}:${round}`, made);
      while (this.tableSeeds.size > SEEDS_KEPT_PER_CONNECTION) this.tableSeeds.delete(this.tableSeeds.keys().next().value);
    }
    return made;
  }

  #id(prefix) { return `${prefix}${Date.now().toString(36)}${(this.counter++).toString(36)}`; }

  #send(message) {
    if (this.socket?.readyState === 1) this.socket.send(JSON.stringify({ v: PROTOCOL_VERSION, ...message }));
  }

  #emit(type, detail) { this.dispatchEvent(new CustomEvent(type, { detail })); }

  #request(message, kind) {
    if (this.reason) return Promise.reject(again(this.reason)); // ended: nothing would answer
    const id = this.#id(message.type[0]);
    const full = { ...message, id };
    return new Promise((resolve, reject) => {
      this.pending.set(id, { message: full, resolve, reject, kind });
      this.#send(full);
    });
  }

  #settle(id, value, error) {
    const p = this.pending.get(id);
    if (!p) return false;
    this.pending.delete(id);
    if (error) p.reject(error); else p.resolve(value);
    return true;
  }

  #receive(msg) {
    this.#emit("message", msg); // every message, first (acks and answered errors too)
    switch (msg.type) {
      case "welcome":
        this.welcome = msg;
        // The gateway's clock: deadlines are counted against it, not the device's.
        if (typeof msg.now === "number") this.clockOffsetMs = msg.now - Date.now();
        if (msg.token) { // renewed: 7 days from now; reconnects say hello with it
          this.token = msg.token;
          this.#emit("token", msg.token);
        }
        if (this.dropped) { // (a welcome after a renumbering is not a reconnect)
          this.dropped = false;
          this.#emit("reconnected", msg);
        }
        this.revealed = null; // a reveal lost with the connection is sent again
        this.#emit("welcome", msg);
        // Requests the last connection left unanswered go again, with their ids.
        for (const [, p] of this.pending) this.#send(p.message);
        break;
      case "view": {
        if (this.view && this.view.table === msg.table && msg.version < this.view.version) return;
        this.view = msg;
        this.#revealIfAsked(msg);
        // The requests this view answers are settled first, then the view event fires: a
        // handler that closes the connection on it (game over) no longer rejects the act
        // whose view it is as `closed`.
        for (const [id, p] of this.pending) {
          const acked = p.kind === "act" && p.until !== undefined && msg.version >= p.until;
          const started = p.kind === "started" && msg.status !== "open";
          const rematch = p.kind === "rematch" && msg.rematch?.table === p.message.table;
          if (acked || started || rematch || p.kind === "view") this.#settle(id, msg);
        }
        this.#emit("view", msg);
        break;
      }
      case "ack": {
        const p = this.pending.get(msg.id);
        if (p) p.until = msg.version;
        if (p && this.view && this.view.table === msg.table && this.view.version >= msg.version) this.#settle(msg.id, this.view);
        break;
      }
      case "error": {
        const p = msg.id ? this.pending.get(msg.id) : undefined;
        if (p && msg.code === "rate_limited") {
          setTimeout(() => this.pending.has(msg.id) && this.#send(p.message), msg.retry_ms ?? 1000);
        } else if (p && msg.code === "duplicate") {
          this.#settle(msg.id, this.view); // applied before the connection dropped
        } else if (!p || !this.#settle(msg.id, null, new DudoError(msg.code, msg.message, undefined, msg.facts))) {
          this.#emit("error", msg);
        }
        if (this.token && !this.welcome && !(p && msg.code === "rate_limited")) {
          const wait = helloAgainMs(msg);
          if (wait !== null) { // the service could not take our hello now: say it again
            const socket = this.socket;
            setTimeout(() => {
              if (this.socket === socket && !this.welcome) this.#send({ type: "hello", token: this.token, id: this.#id("h") });
            }, wait);
          } else if (!p) { // the token, or its table, is no good (a restarted `dudo serve`
            // has none of its tables): it will not work later either, so it ends
            this.#end(new DudoError(msg.code, msg.message, undefined, msg.facts));
          }
        }
        break;
      }
      case "left":
      case "pong":
        if (msg.id) this.#settle(msg.id, msg);
        this.#emit(msg.type, msg);
        break;
      case "moved":
        this.view = null; // the next view is the new table's
        this.#emit("moved", msg);
        break;
      default: // lobby, tournament
        this.#emit(msg.type, msg);
    }
  }
}

/** After a refusal of our hello, how long to wait before saying it again; null: never
 * (without it the connection would stay open without a seat). @param {any} msg */
function helloAgainMs(msg) {
  if (msg.code === "unavailable") return 1000; // Redis away
  if (msg.code === "timeout") return 4000; // no worker answered in time
  if (msg.code === "rate_limited") return msg.retry_ms ?? 1000;
  return null;
}

/** Refusals of an act that only say the table moved on since the view it was chosen from. */
const RACES = ["not_your_turn", "game_over", "paused"];
const TRIES_PER_VIEW = 3; // play(): a policy's refused actions on one view before it waits for the next

/** A fresh copy of a DudoError for each rejection. @param {DudoError} error */
function again(error) {
  return new DudoError(error.code, error.message, error.status, error.facts);
}
