// The Dudo browser client: lobby, table, reveal. Plain ES modules, no build step.
// It speaks the gateway's client protocol (docs/protocol.md): HTTP for the lobby,
// one WebSocket per table, JSON text frames; every view is a full snapshot. The
// protocol itself is the official client library's (dudo-client.js, protocol/js).

import { DudoApi, DudoConnection } from "./dudo-client.js";
import { LANGS, detectLang, errorText, faceName, lang, setLang, t } from "./i18n.js";

const app = document.getElementById("app");
const statusLine = document.getElementById("status");
const PRESETS = ["classic", "lizumo", "cacho", "liars-dice"];

const state = {
  route: null,       // {page: "lobby"} | {page: "table", table, watch}
  conn: null,        // the live DudoConnection (protocol/js)
  view: null,        // the last view applied
  welcome: null,     // {table, seat, player}
  lobby: [],
  selectionKey: null, // the bid situation the selection below was made for
  selectedFace: null,
  quantity: null,
  revealedRound: null, // last round whose reveal was shown
  clockTimer: null,
  cups: [],          // the tournament listing (GET /api/tournaments)
  cup: null,         // {version, standings} of the tournament shown
  cupTimer: null,    // polls the listing on the lobby, the standings without a socket
};

// ---------------------------------------------------------------- helpers

function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === false || value === null || value === undefined) continue;
    if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else if (key === "class") el.className = value;
    else if (key === "test") el.dataset.test = value;
    else el.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

const PIPS = { 1: [4], 2: [0, 8], 3: [0, 4, 8], 4: [0, 2, 6, 8], 5: [0, 2, 4, 6, 8], 6: [0, 2, 3, 5, 6, 8] };

function die(face, { small = false, hit = false, wild = false } = {}) {
  const cells = [...Array(9)].map((_, i) => h("span", { class: PIPS[face].includes(i) ? "pip on" : "pip" }));
  const cls = ["die", `f${face}`, face === 1 ? "one" : "", small ? "small" : "", hit ? "hit" : "", wild ? "wild" : ""];
  return h("span", { class: cls.join(" "), role: "img", "aria-label": faceName(face, 1) }, cells);
}

function toast(text) {
  const el = document.getElementById("toast");
  el.textContent = text;
  el.hidden = false;
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => (el.hidden = true), 3500);
}

function pct(p) {
  return p === null || p === undefined ? "–" : `${Math.round(p * 100)}%`;
}

function bidText(q, face) {
  return `${q} × ${faceName(face, q)}`;
}

function tokens() {
  return JSON.parse(localStorage.getItem("dudo.tokens") || "{}");
}

function saveToken(table, token) {
  const all = tokens();
  all[table] = token;
  localStorage.setItem("dudo.tokens", JSON.stringify(all));
}

// The official client library (protocol/js): HTTP with request keys and retries, and
// a WebSocket that reconnects, says hello again and settles each request by its id.
const http = new DudoApi(location.origin);

function api(method, path, body) {
  // A create or join carries a request key: sent again after a timeout, a 503 or a
  // cut connection, it is the same request (one table, one seat), never a second.
  return http.call(method, path, body, { idempotent: Boolean(body) });
}

// ---------------------------------------------------------------- routing

function parseRoute() {
  if (location.hash === "#/r") return { page: "leaderboard" };
  const cup = location.hash.match(/^#\/c\/([A-Za-z0-9_-]{1,64})/);
  if (cup) return { page: "cup", cup: cup[1] };
  const m = location.hash.match(/^#\/(t|w)\/([A-Za-z0-9_-]{1,64})/);
  if (m) return { page: "table", table: m[2], watch: m[1] === "w" };
  return { page: "lobby" };
}

async function go() {
  state.route = parseRoute();
  closeSocket();
  clearInterval(state.cupTimer);
  state.view = null;
  state.welcome = null;
  state.revealedRound = null;
  state.cup = null;
  if (state.route.page === "lobby") {
    renderLobby();
    openSocket(null);
    loadCups();
    state.cupTimer = setInterval(loadCups, 3000);
    return;
  }
  if (state.route.page === "cup") {
    await goCup(state.route.cup);
    return;
  }
  if (state.route.page === "leaderboard") {
    await renderLeaderboard();
    return;
  }
  const { table, watch } = state.route;
  let token = watch ? null : tokens()[table];
  if (!token) {
    if (watch) {
      try {
        token = (await api("POST", `/api/tables/${table}/watch`)).token;
      } catch (err) {
        toast(errorText(err.code, err.message));
        location.hash = "#/";
        return;
      }
    } else {
      renderJoin(table);
      return;
    }
  }
  renderTable();
  openSocket(token);
}

// ---------------------------------------------------------------- the WebSocket

function openSocket(token) {
  closeSocket();
  const conn = new DudoConnection(location.origin, token, { lobby: !token });
  state.conn = conn;
  conn.addEventListener("state", ({ detail }) => {
    if (state.conn === conn) statusLine.textContent = detail === "closed" ? t("reconnecting") : "";
  });
  for (const kind of ["welcome", "view", "moved", "tournament", "lobby", "error"]) {
    conn.addEventListener(kind, ({ detail }) => state.conn === conn && receive(detail));
  }
  conn.open().catch(() => {}); // a refused token shows as an error message
}

function closeSocket() {
  const conn = state.conn;
  state.conn = null;
  if (conn) conn.close();
}

/** A request of the seat (leave, start, act): its refusal shows as a toast. */
function request(promise) {
  promise.catch((err) => err.code !== "closed" && toast(errorText(err.code, err.message)));
}

function act(action) {
  if (state.conn) request(state.conn.act(action));
}

function receive(msg) {
  switch (msg.type) {
    case "welcome":
      state.welcome = msg;
      if (state.route.page === "cup") renderTable();
      break;
    case "view": // the library passes on only views newer than the last
      state.view = msg;
      if (state.route.page !== "lobby") renderTable();
      break;
    case "moved":
      // The tournament seated us elsewhere: the next view is that table's.
      state.view = null;
      state.revealedRound = null;
      if (msg.from !== null) toast(t("movedTo", { table: tableNumber(msg.table) }));
      if (state.welcome) state.welcome = { ...state.welcome, table: msg.table, seat: msg.seat };
      renderTable();
      break;
    case "tournament":
      if (state.cup && msg.version <= state.cup.version) return;
      state.cup = { version: msg.version, standings: msg.standings };
      if (state.route.page === "cup") renderTable();
      break;
    case "error":
      toast(errorText(msg.code, msg.message));
      if (msg.code === "unauthorized" || msg.code === "unknown_table") {
        const all = tokens();
        delete all[state.route.table];
        localStorage.setItem("dudo.tokens", JSON.stringify(all));
      }
      break;
    case "lobby":
      if (msg.tables) state.lobby = msg.tables;
      else {
        state.lobby = state.lobby.filter((e) => e.table !== msg.table);
        if (msg.entry) state.lobby.push({ table: msg.table, ...msg.entry });
      }
      if (state.route.page === "lobby") renderTableList();
      break;
  }
}

// ---------------------------------------------------------------- lobby

function renderLobby() {
  const name = localStorage.getItem("dudo.name") || "";
  const field = (key, input) => h("label", {}, t(key), input);
  const select = (id, options, value) =>
    h("select", { id, test: id }, options.map(([v, text]) => h("option", { value: v, selected: v === value }, text)));
  const form = h(
    "form",
    { class: "card", onsubmit: createTable, test: "create-form" },
    h("h2", {}, t("create")),
    h("div", { class: "grid" },
      field("yourName", h("input", { id: "name", value: name, maxlength: 32, required: true, test: "name" })),
      field("preset", select("preset", PRESETS.map((p) => [p, p]), "classic")),
      field("seats", select("seats", [2, 3, 4, 5, 6].map((n) => [String(n), String(n)]), "4")),
      field("bots", select("bots", [0, 1, 2, 3, 4, 5].map((n) => [String(n), String(n)]), "2")),
      field("botLevel", select("level", ["easy", "normal", "hard"].map((l) => [l, t(l)]), "normal")),
      h("label", { class: "check" }, h("input", { type: "checkbox", id: "assisted", test: "assisted" }), t("assisted")),
    ),
    h("details", {},
      h("summary", {}, t("more")),
      h("div", { class: "grid" },
        field("clock", h("input", { id: "clock", type: "number", min: 0, max: 3600, value: 0 })),
        field("startDice", select("start_dice", [["", "–"], ...[1, 2, 3, 4, 5].map((n) => [String(n), String(n)])], "")),
        field("calza", select("calza", [["", "–"], ["off", t("calzaOff")], ["turn", t("calzaTurn")], ["anyone", t("calzaAnyone")]], "")),
        field("openingOnes", select("opening_ones", [["", "–"], ["never", t("never")], ["single_die", t("singleDie")], ["always", t("always")]], "")),
        field("wildOnes", select("wild_ones", [["", "–"], ["true", "✓"], ["false", "✗"]], "")),
        field("palifico", select("palifico", [["", "–"], ["true", "✓"], ["false", "✗"]], "")),
        h("label", { class: "check" }, h("input", { type: "checkbox", id: "direction" }), t("direction")),
      ),
    ),
    h("div", { class: "actions" }, h("button", { class: "primary big", type: "submit", test: "create" }, t("createBtn"))),
  );
  app.replaceChildren(
    form,
    h("section", { class: "card" }, h("h2", {}, t("openTables")), h("div", { id: "table-list" })),
    h("section", { class: "card" }, h("h2", {}, t("tournaments")),
      h("div", { class: "actions" },
        h("button", { onclick: quickCup, test: "quick-cup" }, t("quickCup")),
        h("a", { href: "#/r" }, h("button", { type: "button", test: "leaderboard-link" }, t("leaderboard")))),
      h("div", { id: "cup-list" })),
  );
  renderTableList();
  renderCupList();
}

function renderTableList() {
  const list = document.getElementById("table-list");
  if (!list) return;
  if (!state.lobby.length) {
    list.replaceChildren(h("p", { class: "muted" }, t("noTables")));
    return;
  }
  const rows = [...state.lobby]
    .sort((a, b) => a.table.localeCompare(b.table))
    .map((e) =>
      h("li", { test: `table-${e.table}` },
        h("span", {}, h("strong", {}, e.preset), " · ", e.names.filter(Boolean).join(", ") || "–",
          h("span", { class: "muted" }, ` (${e.taken}/${e.seats} ${t("taken")})`)),
        h("span", { class: "row" },
          h("button", { onclick: () => joinTable(e.table), disabled: e.taken >= e.seats - (e.wants_bots || []).length, test: "join" }, t("join")),
          h("button", { onclick: () => (location.hash = `#/w/${e.table}`) }, t("watch"))),
      ),
    );
  list.replaceChildren(h("ul", { class: "tables" }, rows));
}

function readRules() {
  const rules = { preset: document.getElementById("preset").value };
  if (document.getElementById("assisted").checked) rules.assisted = true;
  if (document.getElementById("direction").checked) rules.loser_chooses_direction = true;
  const clock = Number(document.getElementById("clock").value || 0);
  if (clock > 0) rules.turn_seconds = clock;
  for (const id of ["start_dice", "calza", "opening_ones", "wild_ones", "palifico"]) {
    const value = document.getElementById(id).value;
    if (value === "") continue;
    rules[id] = id === "start_dice" ? Number(value) : value === "true" ? true : value === "false" ? false : value;
  }
  return rules;
}

async function createTable(event) {
  event.preventDefault();
  const name = document.getElementById("name").value.trim();
  localStorage.setItem("dudo.name", name);
  const seats = Number(document.getElementById("seats").value);
  const bots = Math.min(Number(document.getElementById("bots").value), seats - 1);
  const level = document.getElementById("level").value;
  try {
    const made = await api("POST", "/api/tables", { rules: readRules(), seats, bots: Array(bots).fill(level), name });
    saveToken(made.table, made.token);
    location.hash = `#/t/${made.table}`;
  } catch (err) {
    toast(errorText(err.code, err.message));
  }
}

async function joinTable(table) {
  const name = (localStorage.getItem("dudo.name") || document.getElementById("name")?.value || "").trim();
  if (!name) {
    location.hash = `#/t/${table}`; // asks for a name
    return;
  }
  try {
    const seat = await api("POST", `/api/tables/${table}/join`, { name });
    saveToken(table, seat.token);
    location.hash = `#/t/${table}`;
  } catch (err) {
    toast(errorText(err.code, err.message));
  }
}

function renderJoin(table) {
  const input = h("input", { id: "name", value: localStorage.getItem("dudo.name") || "", maxlength: 32, required: true, test: "name" });
  app.replaceChildren(
    h("form", {
      class: "card",
      onsubmit: async (e) => {
        e.preventDefault();
        localStorage.setItem("dudo.name", input.value.trim());
        await joinTable(table);
        if (tokens()[table]) go();
      },
    },
    h("h2", {}, `${t("join")}: ${table}`),
    h("label", {}, t("yourName"), input),
    h("div", { class: "actions" },
      h("button", { class: "primary big", type: "submit", test: "join-submit" }, t("join")),
      h("a", { href: `#/w/${table}` }, h("button", { type: "button" }, t("watch"))))),
  );
}

// ---------------------------------------------------------------- table

function me() {
  return state.view ? state.view.seat : null;
}

function nameOf(seat) {
  const p = state.view?.players?.[seat];
  if (!p) return `#${seat + 1}`;
  return seat === me() ? `${p.name} (${t("youAre")})` : p.name;
}

function renderTable() {
  const view = state.view;
  const cup = state.route.page === "cup" ? renderCupHeader() : null;
  if (!view) {
    app.replaceChildren(...(cup ? [cup, renderCupStandings()] : [h("p", { class: "muted" }, "…")]));
    return;
  }
  const game = view.game;
  const parts = cup ? [cup] : [];
  parts.push(h("div", { class: "row" },
    h("a", { href: "#/" }, h("button", { test: "back" }, `← ${t("back")}`)),
    h("span", { class: "muted" }, game ? t("round", { n: game.round }) : t("waiting")),
    view.seat === null ? h("span", { class: "badge" }, t("spectator")) : null,
    view.seat !== null && view.status !== "over" ? h("button", { onclick: () => state.conn && request(state.conn.leave()) }, t("leave")) : null));
  if (view.status === "open") parts.push(renderWaiting(view));
  if (game) {
    if (game.palifico && game.phase !== "over") {
      parts.push(h("div", { class: "banner palifico", test: "palifico" }, game.rules.palifico_wild_ones ? t("palificoWild") : t("palificoBanner")));
    }
    if (game.phase !== "over" && game.turn === me()) parts.push(h("div", { class: "banner turn", test: "your-turn" }, t("yourTurn")));
    parts.push(renderPlayers(view));
    if (game.phase === "over" && cup) {
      // A tournament's table: its director moves the players on (or the tournament is over).
    } else if (game.phase === "over") parts.push(renderOver(view));
    else {
      if (game.dice && game.dice.length) parts.push(h("div", { class: "card" }, h("div", { class: "dice", test: "my-dice" }, game.dice.map((d) => die(d)))));
      parts.push(renderBids(view));
      if (view.seat !== null && game.legal) parts.push(renderControls(view));
    }
  }
  if (cup) parts.push(renderCupStandings());
  app.replaceChildren(...parts);
  maybeReveal(view);
  startClock();
}

// ---------------------------------------------------------------- tournaments

function entrantTokens() {
  return JSON.parse(localStorage.getItem("dudo.entrants") || "{}");
}

function saveEntrant(cup, token) {
  const all = entrantTokens();
  all[cup] = token;
  localStorage.setItem("dudo.entrants", JSON.stringify(all));
}

function tableNumber(table) {
  return table.slice(table.lastIndexOf("-") + 1);
}

async function loadCups() {
  try {
    state.cups = (await api("GET", "/api/tournaments")).tournaments;
  } catch {
    return;
  }
  renderCupList();
}

function renderCupList() {
  const list = document.getElementById("cup-list");
  if (!list) return;
  if (!state.cups.length) {
    list.replaceChildren(h("p", { class: "muted" }, t("noTournaments")));
    return;
  }
  list.replaceChildren(h("ul", { class: "tables" }, state.cups.map((c) =>
    h("li", { test: `cup-${c.tournament}` },
      h("span", {}, h("strong", {}, c.name), " · ", t(c.status === "over" ? "finished" : c.status),
        h("span", { class: "muted" }, ` (${t("entrants", { n: c.entrants })}, ${c.seats} ${t("seats").toLowerCase()})`)),
      h("span", { class: "row" },
        c.status === "registering" && !entrantTokens()[c.tournament]
          ? h("button", { onclick: () => registerCup(c.tournament), test: "register" }, t("register")) : null,
        h("button", { onclick: () => (location.hash = `#/c/${c.tournament}`), test: "standings" }, t("standingsBtn")))))));
}

async function quickCup() {
  const name = document.getElementById("name").value.trim();
  if (!name) return toast(t("yourName"));
  localStorage.setItem("dudo.name", name);
  const level = document.getElementById("level").value;
  try {
    const made = await api("POST", "/api/tournaments", {
      name: `${name} Cup`, host: name, rules: readRules(), seats: 3, start_players: 6,
      max_players: 6, bots: level, payouts: [100],
    });
    saveEntrant(made.tournament, made.token);
    await api("POST", `/api/tournaments/${made.tournament}/begin`, { token: made.token });
    location.hash = `#/c/${made.tournament}`;
  } catch (err) {
    toast(errorText(err.code, err.message));
  }
}

async function registerCup(cup) {
  const name = (localStorage.getItem("dudo.name") || document.getElementById("name")?.value || "").trim();
  if (!name) return toast(t("yourName"));
  try {
    const entrant = await api("POST", `/api/tournaments/${cup}/register`, { name });
    saveEntrant(cup, entrant.token);
    location.hash = `#/c/${cup}`;
  } catch (err) {
    toast(errorText(err.code, err.message));
  }
}

async function goCup(cup) {
  try {
    const got = await api("GET", `/api/tournaments/${cup}`);
    state.cup = { version: got.version, standings: got.standings };
  } catch (err) {
    toast(errorText(err.code, err.message));
    location.hash = "#/";
    return;
  }
  renderTable();
  const token = entrantTokens()[cup];
  if (token) openSocket(token);
  else {
    state.cupTimer = setInterval(async () => {
      const got = await api("GET", `/api/tournaments/${cup}`).catch(() => null);
      if (got && (!state.cup || got.version > state.cup.version)) {
        state.cup = { version: got.version, standings: got.standings };
        renderTable();
      }
    }, 2000);
  }
}

async function renderLeaderboard() {
  let board = [];
  try {
    board = (await api("GET", "/api/leaderboard?limit=100")).leaderboard;
  } catch (err) {
    toast(errorText(err.code, err.message));
  }
  app.replaceChildren(h("div", { class: "card", test: "leaderboard" },
    h("div", { class: "row" }, h("a", { href: "#/" }, h("button", {}, `← ${t("back")}`)), h("h2", {}, t("leaderboard"))),
    board.length
      ? h("table", { class: "board" },
          h("tr", {}, h("th", {}, "#"), h("th", {}, t("yourName")), h("th", {}, t("rating")), h("th", {}, t("games"))),
          board.map((r) => h("tr", { test: "leader" }, h("td", {}, r.rank), h("td", {}, r.name),
            h("td", {}, r.ordinal.toFixed(1)), h("td", {}, r.games))))
      : h("p", { class: "muted" }, t("noRatings"))));
}

function renderCupHeader() {
  const s = state.cup?.standings;
  if (!s) return h("p", { class: "muted" }, "…");
  const mine = state.welcome?.player ? s.places.find((p) => p.handle === state.welcome.player) : null;
  const table = state.welcome?.table;
  return h("div", { class: "card", test: "cup" },
    h("div", { class: "row" },
      h("a", { href: "#/" }, h("button", {}, `← ${t("back")}`)),
      h("strong", {}, s.name), h("span", { class: "badge" }, t(s.status === "over" ? "finished" : s.status)),
      h("span", { class: "muted" }, t("playersLeft", { n: s.left })),
      s.heat ? h("span", { class: "muted" }, t("heat", { n: s.heat })) : null),
    s.status === "over" ? h("h2", { test: "cup-over" }, t("cupOver")) : null,
    mine ? h("p", { test: "my-place" }, t("place", { n: mine.place })) : null,
    table && s.status === "running" && !mine ? h("p", { test: "my-table" }, t("movedTo", { table: tableNumber(table) })) : null,
    !table && s.status === "running" && state.welcome && !mine ? h("p", { class: "muted" }, t("waitingSeat")) : null,
    s.status === "registering" && state.welcome ? h("p", {}, t("registered"), " · ", t("entrants", { n: s.entrants })) : null);
}

function renderCupStandings() {
  const s = state.cup?.standings;
  if (!s) return null;
  return h("div", { class: "card", test: "cup-standings" },
    h("h3", {}, t("standingsBtn")),
    s.tables.length ? h("ul", {}, s.tables.map((tb) => h("li", {}, `#${tableNumber(tb.table)}: `,
      tb.players.map((p) => `${p.name} (${p.dice})`).join(", ")))) : null,
    s.tables_playing > s.tables.length ? h("p", { class: "muted" }, t("moreTables", { n: s.tables_playing - s.tables.length })) : null,
    s.places.length ? h("ol", { test: "cup-places" }, s.places.map((p) => h("li", { value: p.place },
      p.name, p.chips ? ` (+${p.chips} ${t("chips")})` : ""))) : null);
}

function renderWaiting(view) {
  const taken = view.players.filter(Boolean).length;
  const link = `${location.origin}/#/t/${view.table}`;
  const isHost = state.welcome && state.welcome.player === view.host;
  return h("div", { class: "card", test: "waiting" },
    h("h2", {}, t("waiting")),
    h("ol", {}, view.players.map((p, i) => h("li", {}, p ? p.name : "…", p?.bot ? h("span", { class: "badge" }, t("bot")) : null, i === me() ? h("span", { class: "badge you" }, t("youAre")) : null))),
    h("p", {}, `${t("share")}: `, h("span", { class: "share" }, link)),
    // Whether the table may start (enough players, or bots to fill it) is the table's call.
    isHost ? h("button", { class: "primary", onclick: () => state.conn && request(state.conn.start()), test: "start" }, t("start")) : null);
}

function renderPlayers(view) {
  const game = view.game;
  return h("div", { class: "players card", test: "players" },
    view.players.map((p, seat) => {
      if (!p) return null;
      const dice = game.dice_counts[seat];
      const cls = ["player", game.turn === seat && game.phase !== "over" ? "turn" : "", dice === 0 ? "out" : ""];
      return h("div", { class: cls.join(" "), test: `player-${seat}` },
        h("div", { class: "name" }, p.name,
          seat === me() ? h("span", { class: "badge you" }, t("youAre")) : null,
          p.bot ? h("span", { class: "badge" }, `${t("bot")} · ${t(p.bot)}`) : null,
          p.away ? h("span", { class: "badge" }, t("away")) : null),
        h("div", { class: "cups", test: `count-${seat}` }, dice ? [h("span", { class: "cup-dots", "aria-hidden": "true" }, "■".repeat(Math.min(dice, 10))), ` ${dice} ${t(dice === 1 ? "die" : "dice")}`] : t("out")),
        game.turn === seat && view.deadline ? h("div", { class: "clock", "data-deadline": view.deadline }) : null);
    }));
}

function renderBids(view) {
  const game = view.game;
  const bids = game.bids;
  const rows = bids.map(([seat, q, f]) => h("li", {}, h("span", {}, `${nameOf(seat)}:`), h("strong", {}, q), "×", die(f, { small: true })));
  return h("div", { class: "card" },
    h("h2", {}, t("history")),
    bids.length ? h("ol", { class: "bids", test: "bids" }, rows) : h("p", { class: "muted" }, t("noBid")),
    game.odds && game.odds.bid_true !== null ? h("p", { class: "odds", test: "odds" }, `${t("odds")}: ${t("oddsBid", { p: pct(game.odds.bid_true) })}, ${t("oddsCalza", { p: pct(game.odds.calza_exact) })}`) : null);
}

function renderControls(view) {
  const game = view.game;
  const legal = game.legal;
  if (legal.direction) {
    return h("div", { class: "card", test: "direction" },
      h("h2", {}, t("chooseDirection")),
      h("div", { class: "actions" },
        h("button", { class: "big", onclick: () => act({ type: "direction", value: -1 }), test: "direction-left" }, t("left")),
        h("button", { class: "big", onclick: () => act({ type: "direction", value: 1 }), test: "direction-right" }, t("right"))));
  }
  const faces = legal.bid.map((floor, i) => ({ face: i + 1, floor })).filter((f) => f.floor !== null);
  const key = `${game.round}:${game.bids.length}`;
  if (state.selectionKey !== key) [state.selectionKey, state.selectedFace, state.quantity] = [key, null, null];
  if (state.selectedFace && !faces.find((f) => f.face === state.selectedFace)) state.selectedFace = null;
  if (!state.selectedFace && faces.length) state.selectedFace = suggestedFace(game, faces);
  const chosen = faces.find((f) => f.face === state.selectedFace);
  if (chosen) {
    if (state.quantity === null || state.quantity < chosen.floor || state.quantity > legal.max_quantity) state.quantity = chosen.floor;
  }
  const raiseOdds = chosen && game.odds ? game.odds.raises[chosen.face - 1]?.[state.quantity - chosen.floor] : null;
  const canBid = faces.length > 0;
  return h("div", { class: "card", test: "controls" },
    canBid ? h("div", {},
      h("h2", {}, t("raise")),
      h("div", { class: "faces", test: "faces" }, faces.map(({ face }) =>
        h("button", { class: face === state.selectedFace ? "selected" : "", onclick: () => { state.selectedFace = face; state.quantity = null; renderTable(); }, test: `face-${face}`, "aria-label": faceName(face) }, die(face, { small: true })))),
      chosen ? h("div", { class: "row", style: "margin-top:.6rem" },
        h("div", { class: "qty" },
          h("button", { onclick: () => { state.quantity = Math.max(chosen.floor, state.quantity - 1); renderTable(); }, disabled: state.quantity <= chosen.floor, test: "qty-down", "aria-label": "−" }, "−"),
          h("output", { test: "qty" }, state.quantity),
          h("button", { onclick: () => { state.quantity = Math.min(legal.max_quantity, state.quantity + 1); renderTable(); }, disabled: state.quantity >= legal.max_quantity, test: "qty-up", "aria-label": "+" }, "+")),
        h("button", { class: "primary big", test: "bid", onclick: () => { act({ type: "bid", quantity: state.quantity, face: chosen.face }); state.quantity = null; } }, `${t("bidBtn")} ${bidText(state.quantity, chosen.face)}`),
        raiseOdds !== null && raiseOdds !== undefined ? h("span", { class: "odds" }, t("oddsRaise", { p: pct(raiseOdds) })) : null) : null) : null,
    h("div", { class: "actions" },
      h("button", { class: "big", disabled: !legal.dudo, onclick: () => act({ type: "dudo" }), test: "dudo" }, t("dudo")),
      game.rules.calza !== "off" ? h("button", { class: "big", disabled: !legal.calza, onclick: () => act({ type: "calza" }), test: "calza" }, t("calzaBtn")) : null));
}

/** Preselect the standing bid's face, else the face this seat holds most of. */
function suggestedFace(game, faces) {
  const legal = new Set(faces.map((f) => f.face));
  const standing = game.bids.length ? game.bids[game.bids.length - 1][2] : null;
  if (standing && legal.has(standing)) return standing;
  const wild = game.rules.wild_ones && !game.palifico;
  let best = faces[0].face;
  let bestCount = -1;
  for (const { face } of faces) {
    const count = game.dice.filter((d) => d === face || (wild && face !== 1 && d === 1)).length;
    if (count > bestCount) [best, bestCount] = [face, count];
  }
  return best;
}

function renderOver(view) {
  const game = view.game;
  return h("div", { class: "card", test: "game-over", "data-winner": game.winner },
    h("h2", {}, t("over"), " — ", t("winner", { name: nameOf(game.winner) })),
    h("h3", {}, t("standings")),
    h("ol", {}, game.standings.map((seat) => h("li", {}, nameOf(seat), game.chips ? ` (${game.chips[seat] > 0 ? "+" : ""}${game.chips[seat]} ${t("chips")})` : ""))),
    h("a", { href: "#/" }, h("button", { class: "primary" }, t("newGame"))));
}

// ---------------------------------------------------------------- the reveal

function maybeReveal(view) {
  const last = view.game?.last_round;
  if (!last) return;
  if (state.revealedRound === null) {
    // On (re)joining a table, show the previous reveal only if it just happened.
    state.revealedRound = view.events?.some((e) => e.type === "reveal") ? last.round - 1 : last.round;
  }
  if (last.round <= state.revealedRound) return;
  state.revealedRound = last.round;
  showReveal(view, last);
}

async function showReveal(view, last) {
  const [bidder, q, face] = last.bid;
  const rules = view.game.rules;
  const wild = rules.wild_ones && (!last.palifico || rules.palifico_wild_ones) && face !== 1;
  const rows = last.dice.map((hand, seat) => hand.length ? h("div", { class: "reveal-row" },
    h("span", { class: "who" }, nameOf(seat)),
    h("span", { class: "dice" }, hand.map((d) => die(d, { small: true, hit: d === face, wild: wild && d === 1 })))) : null);
  const outcome = [];
  if (last.loser !== null) outcome.push(t("lost", { name: nameOf(last.loser) }));
  if (last.gainer !== null) outcome.push(t("gained", { name: nameOf(last.gainer) }));
  if (last.loser === null && last.gainer === null) outcome.push(t("noChange"));
  if (last.loser !== null && view.game.dice_counts[last.loser] === 0) outcome.push(t("eliminated", { name: nameOf(last.loser) }));
  const verify = h("p", { class: "verify", test: "verify" }, "…");
  const close = h("button", { class: "primary", test: "reveal-ok", onclick: () => overlay.remove() }, t("ok"));
  const overlay = h("div", { class: "overlay", test: "reveal" },
    h("div", { class: "card" },
      h("h2", {}, `${t("reveal")}: ${last.call === "dudo" ? t("dudo") : t("calzaBtn")} (${nameOf(last.caller)})`),
      h("p", {}, t("bidOf", { name: nameOf(bidder), q, face: faceName(face, q) })),
      rows,
      h("p", { class: "outcome", test: "outcome" }, t("count", { count: last.count, q, face: faceName(face, q) }), " — ", outcome.join(" · ")),
      verify,
      h("div", { class: "actions" }, close)));
  document.querySelectorAll(".overlay").forEach((el) => el.remove());
  document.body.append(overlay);
  close.focus();
  setTimeout(() => overlay.remove(), 10000);
  verify.textContent = await verifySeed(last);
  verify.classList.add(verify.textContent === t("verified") ? "good" : verify.textContent === t("dealt") ? "muted" : "bad");
}

/** Check the revealed seed against the commitment shown during the round (docs/rules.md). */
async function verifySeed(last) {
  if (!last.seed || !last.commitment || !crypto.subtle) return t("dealt");
  const seed = Uint8Array.from(last.seed.match(/../g).map((b) => parseInt(b, 16)));
  const tag = new TextEncoder().encode("dudo-commit/1:");
  const data = new Uint8Array(tag.length + seed.length);
  data.set(tag);
  data.set(seed, tag.length);
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", data));
  const hex = [...digest].map((b) => b.toString(16).padStart(2, "0")).join("");
  return hex === last.commitment ? t("verified") : t("notVerified");
}

// ---------------------------------------------------------------- the clock

function startClock() {
  clearInterval(state.clockTimer);
  const tick = () => {
    for (const el of document.querySelectorAll(".clock[data-deadline]")) {
      const left = Math.max(0, Math.ceil((Number(el.dataset.deadline) - Date.now()) / 1000));
      el.textContent = `⏱ ${t("seconds", { s: left })}`;
    }
  };
  tick();
  state.clockTimer = setInterval(tick, 500);
}

// ---------------------------------------------------------------- start

function setupLanguage() {
  const select = document.getElementById("lang");
  for (const [code, name] of Object.entries(LANGS)) select.append(h("option", { value: code }, name));
  setLang(detectLang());
  select.value = lang();
  select.addEventListener("change", () => {
    setLang(select.value);
    if (state.route.page === "lobby") renderLobby();
    else if (state.route.page === "leaderboard") renderLeaderboard();
    else renderTable();
  });
}

setupLanguage();
window.addEventListener("hashchange", go);
go();
