// The lobby: play against bots in one click, your own table with every rule option,
// your games to rejoin, the open tables, and the invite page a shared link opens.

import { ago, errorText, presetName, t } from "./i18n.js";
import { BOT_LEVELS, OPTIONS, PRESETS } from "./presets.js";
import { api, app, askName, state, takeSeat } from "./session.js";
import { statsCard } from "./stats.js";
import { forgetToken, h, link, load, saveToken, savedName, toast, tokens, yourGames } from "./ui.js";

const CLOCKS = [0, 15, 30, 60, 120];

function valueText(name, value) {
  if (typeof value === "boolean") return t(value ? "yes" : "no");
  if (name === "opening_ones" || name === "calza") return t(`${name}_${value}`);
  return String(value);
}

function select(id, options, value, extra = {}) {
  return h("select", { id, test: id, ...extra },
    options.map(([v, text]) => h("option", { value: String(v), selected: String(v) === String(value) }, text)));
}

function field(label, input, help = null) {
  return h("label", {}, label, input, help ? h("small", { class: "help" }, help) : null);
}

/** The last settings used to create a table: "Play now" and "New game" use them again. */
function lastPlay() {
  return { preset: "classic", seats: 4, level: "normal", rules: {}, ...load("dudo.lastPlay", {}) };
}

/** What the lobby offers that other screens carry out (app.js gives them: the lobby
 * imports none of those screens). */
const actions = { quickCup: null };

/** The lobby's actions carried out elsewhere: `quickCup` (cup.js). */
export function lobbyActions(given) {
  Object.assign(actions, given);
}

export function renderLobby() {
  const last = lastPlay();
  const preset = last.preset in PRESETS ? last.preset : "classic";
  const name = h("input", { id: "name", value: savedName(), maxlength: 32, required: true, test: "name", autocomplete: "nickname" });
  const presetSelect = select("preset", Object.keys(PRESETS).map((p) => [p, presetName(p)]), preset, { onchange: () => refreshForm() });
  const seats = h("select", { id: "seats", test: "seats", onchange: () => refreshForm() });
  const bots = h("select", { id: "bots", test: "bots" });
  const level = select("level", BOT_LEVELS.map((l) => [l, t(l)]), last.level);
  const options = OPTIONS.map(({ name: option, choices }) =>
    field(t(`opt_${option}`), h("select", { id: option, test: option, "data-choices": JSON.stringify(choices), onchange: () => refreshForm() }), t(`help_${option}`)));
  // Every change of the form says again what Play now will start (the level and the
  // clock had changed nothing on screen; issue 34, item 10).
  const form = h("form", { class: "card", id: "create-form", onsubmit: (e) => { e.preventDefault(); createTable(); },
    onchange: () => refreshHint(), test: "create-form" },
    h("div", { class: "grid" },
      field(t("yourName"), name),
      field(t("preset"), presetSelect),
      field(t("botLevel"), level)),
    h("div", { class: "actions" },
      h("button", { type: "button", class: "primary big", test: "play-now", onclick: () => playNow(), "aria-describedby": "play-hint" }, t("playNow")),
      h("span", { class: "muted", id: "play-hint", test: "play-hint" })),
    h("h2", { class: "form-section" }, t("create")),
    h("div", { class: "grid" },
      field(t("seats"), seats),
      field(t("bots"), bots),
      field(t("clock"), select("clock", CLOCKS.map((s) => [s, s ? t("seconds", { s }) : t("clockNone")]), 0), t("help_clock")),
      h("label", { class: "check" }, h("input", { type: "checkbox", id: "assisted", test: "assisted" }), t("assisted"))),
    h("details", {}, h("summary", {}, t("more")), h("div", { class: "grid" }, options)),
    h("div", { class: "actions" }, h("button", { class: "big", type: "submit", test: "create" }, t("createBtn"))));
  // What the game is, first, with the way to its rules (the lobby had no heading, and
  // How to play was a plain link at its very bottom).
  const intro = h("section", { class: "card intro", test: "intro" },
    h("h1", {}, t("lobbyTitle")),
    h("p", {}, t("lobbyIntro")),
    link("#/help", t("help"), { test: "help-link" }));
  app.replaceChildren(
    intro,
    form,
    h("section", { class: "card", id: "your-games", test: "your-games" }),
    ...[statsCard()].filter(Boolean), // (replaceChildren would write a null as "null")
    h("section", { class: "card" }, h("h2", {}, t("openTables")), h("div", { id: "table-list" })),
    h("section", { class: "card" }, h("h2", {}, t("tournaments")),
      h("div", { class: "actions" },
        h("button", { type: "button", test: "quick-cup", onclick: () => actions.quickCup?.() }, t("quickCup")),
        link("#/cn", t("newCup"), { test: "new-cup" }),
        link("#/r", t("leaderboard"), { test: "leaderboard-link" })),
      h("div", { id: "cup-list" })),
  );
  refreshForm(last.seats);
  renderYourGames();
  renderTableList();
}

/** Keep the form consistent: seats the preset allows, bots leaving one seat for you,
 * options shown with the preset's value, options that need another one disabled. */
function refreshForm(wantSeats) {
  const base = PRESETS[document.getElementById("preset").value];
  const seats = document.getElementById("seats");
  const keep = Number(wantSeats ?? seats.value) || 4;
  const range = [...Array(base.max_players - base.min_players + 1)].map((_, i) => base.min_players + i);
  const chosen = Math.min(base.max_players, Math.max(base.min_players, keep));
  seats.replaceChildren(...range.map((n) => h("option", { value: String(n), selected: n === chosen }, String(n))));
  const bots = document.getElementById("bots");
  const keepBots = bots.value === "" ? chosen - 1 : Math.min(Number(bots.value), chosen - 1);
  bots.replaceChildren(...[...Array(chosen)].map((_, n) => h("option", { value: String(n), selected: n === keepBots }, String(n))));
  const rules = readRules();
  for (const { name, choices } of OPTIONS) {
    const el = document.getElementById(name);
    const current = el.value;
    el.replaceChildren(h("option", { value: "" }, t("presetValue", { value: valueText(name, base[name]) })),
      ...choices.map((c) => h("option", { value: JSON.stringify(c), selected: current === JSON.stringify(c) }, valueText(name, c))));
  }
  const effective = { ...base, ...rules };
  document.getElementById("calza_needs_lost_die").disabled = effective.calza === "off";
  document.getElementById("palifico_wild_ones").disabled = !effective.palifico || !effective.wild_ones;
  refreshHint();
}

/** What Play now starts, said beside it: every seat of the form but yours a bot of the
 *  chosen level, the preset, and the turn clock and rule changes if any. */
function refreshHint() {
  const hint = document.getElementById("play-hint");
  if (!hint) return;
  const rules = readRules();
  // Each changed rule by name and value ("Dice each: 2"), not "rules changed: 1", which
  // said nothing (issue 53, item 18).
  const changed = Object.keys(rules).filter((k) => k !== "preset" && k !== "turn_seconds" && k !== "assisted");
  const extra = [
    rules.turn_seconds ? t("hintClock", { s: rules.turn_seconds }) : null,
    ...changed.map((k) => `${t(`opt_${k}`)} ${valueText(k, rules[k])}`),
    rules.assisted ? t("assisted") : null,
  ].filter(Boolean);
  const preset = [presetName(rules.preset), ...extra].join(", ");
  const n = Number(document.getElementById("seats").value) - 1;
  hint.textContent = t(n === 1 ? "playNowHint1" : "playNowHint", { n, level: t(document.getElementById("level").value), preset });
}

function readRules() {
  const rules = { preset: document.getElementById("preset").value };
  if (document.getElementById("assisted").checked) rules.assisted = true;
  const clock = Number(document.getElementById("clock").value || 0);
  if (clock > 0) rules.turn_seconds = clock;
  for (const { name } of OPTIONS) {
    const el = document.getElementById(name);
    if (el.value !== "" && !el.disabled) rules[name] = JSON.parse(el.value);
  }
  return rules;
}

async function create(body, remember) {
  try {
    const made = await takeSeat(null, body);
    localStorage.setItem("dudo.lastPlay", JSON.stringify(remember));
    saveToken(made.table, made.token, { preset: body.rules.preset });
    location.hash = `#/t/${made.table}`;
  } catch (err) {
    toast(errorText(err.code, err.message));
  }
}

/** You and bots, at once: from the form in the lobby, else the last settings used. */
export async function playNow() {
  const name = askName();
  if (!name) return;
  const form = document.getElementById("create-form");
  const last = lastPlay();
  const rules = form ? readRules() : { ...last.rules, preset: last.preset };
  const seats = form ? Number(document.getElementById("seats").value) : last.seats;
  const level = form ? document.getElementById("level").value : last.level;
  await create({ rules, seats, bots: Array(seats - 1).fill(level), name }, { preset: rules.preset, seats, level, rules });
}

/** The same people and bots at a new table, in one click: the table is made (its rules,
 *  its bots, the other people's seats open), proposed at the finished one (whose views
 *  then invite the others: `view.rematch`), and taken. Proposed already: joined. */
export async function rematch(view) {
  if (view.rematch) return joinTable(view.rematch.table);
  const name = view.players[view.seat]?.name ?? askName();
  if (!name || !state.conn) return;
  const rules = view.game.rules;
  const bots = view.players.filter((p) => p?.bot).map((p) => p.bot);
  try {
    const made = await takeSeat(null, { rules, seats: view.players.length, bots, name });
    saveToken(made.table, made.token, { preset: rules.preset });
    try {
      await state.conn.rematch(made.table);
    } catch (err) {
      forgetToken(made.table); // someone's came first (table_exists): theirs, not ours
      if (state.view?.rematch) return joinTable(state.view.rematch.table);
      throw err;
    }
    location.hash = `#/t/${made.table}`;
  } catch (err) {
    toast(errorText(err.code, err.message));
  }
}

async function createTable() {
  const name = askName();
  if (!name) return;
  const rules = readRules();
  const seats = Number(document.getElementById("seats").value);
  const bots = Math.min(Number(document.getElementById("bots").value), seats - 1);
  const level = document.getElementById("level").value;
  await create({ rules, seats, bots: Array(bots).fill(level), name }, { preset: rules.preset, seats, level, rules });
}

function renderYourGames() {
  const box = document.getElementById("your-games");
  if (!box) return;
  const games = yourGames();
  box.hidden = !games.length;
  box.replaceChildren(h("h2", {}, t("yourGames")), h("ul", { class: "tables" }, games.map((g) =>
    h("li", { test: `game-${g.table}` },
      h("span", {}, t("playedAt", { preset: g.preset ? presetName(g.preset) : "…", when: ago(g.at) })),
      h("span", { class: "row" },
        link(`#/t/${g.table}`, t("rejoin"), { test: "rejoin" }),
        h("button", { onclick: () => { forgetToken(g.table); renderYourGames(); } }, t("forget")))))));
}

export function renderTableList() {
  const list = document.getElementById("table-list");
  if (!list) return;
  const open = state.lobby.filter((e) => e.status !== "playing");
  const playing = state.lobby.filter((e) => e.status === "playing");
  const title = (e) => {
    const host = e.names.find(Boolean);
    // Where it is played, as its gateway says ("#dudo on irc.libera.chat"): text only.
    const where = e.label ? [" · ", h("span", { class: "muted", test: "label" }, e.label)] : [];
    return [h("strong", {}, host ? t("tableOf", { name: host }) : t("tableAnon")), " · ", presetName(e.preset), ...where];
  };
  const watch = (e) => h("button", { onclick: () => (location.hash = `#/w/${e.table}`), test: "watch" }, t("watch"));
  const rows = [...open].sort((a, b) => a.table.localeCompare(b.table)).map((e) => {
    const free = e.seats - e.taken - (e.wants_bots || []).length;
    return h("li", { test: `table-${e.table}` },
      h("span", {}, title(e), h("span", { class: "muted" }, ` (${e.taken}/${e.seats} ${t("taken")})`)),
      h("span", { class: "row" }, h("button", { onclick: () => joinTable(e.table), disabled: free <= 0, test: "join" }, t("join")), watch(e)));
  });
  const games = playing.map((e) => h("li", { test: `running-${e.table}` },
    h("span", {}, title(e), h("span", { class: "muted" }, ` (${e.names.filter(Boolean).join(", ")})`)),
    h("span", { class: "row" }, watch(e))));
  // (replaceChildren writes a null as the text "null": only what is there)
  list.replaceChildren(...[
    rows.length ? h("ul", { class: "tables" }, rows) : h("p", { class: "muted" }, t("noTables")),
    games.length ? h("h3", {}, t("runningGames")) : null,
    games.length ? h("ul", { class: "tables", test: "running" }, games) : null,
  ].filter(Boolean));
}

export async function joinTable(table) {
  const name = askName();
  if (!name) return;
  try {
    const seat = await takeSeat(table, { name });
    const entry = state.lobby.find((e) => e.table === table);
    saveToken(table, seat.token, { preset: entry?.preset });
    if (location.hash === `#/t/${table}`) state.redraw({ reload: true });
    else location.hash = `#/t/${table}`;
  } catch (err) {
    toast(errorText(err.code, err.message));
  }
}

/** A shared link to a table you have no seat at: whose table it is, and a seat. */
export async function renderJoin(table) {
  const input = h("input", { id: "name", value: savedName(), maxlength: 32, required: true, test: "name" });
  const title = h("h2", {}, t("tableAnon"));
  const about = h("p", { class: "muted" });
  app.replaceChildren(h("form", { class: "card", test: "invite", onsubmit: (e) => { e.preventDefault(); joinTable(table); } },
    title, about,
    h("label", {}, t("yourName"), input),
    h("div", { class: "actions" },
      h("button", { class: "primary big", type: "submit", test: "join-submit" }, t("join")),
      link(`#/w/${table}`, t("watch")))));
  try {
    const entry = (await api("GET", "/api/tables")).tables.find((e) => e.table === table);
    if (entry) {
      const host = entry.names.find(Boolean);
      title.textContent = host ? t("tableOf", { name: host }) : t("tableAnon");
      about.textContent = `${presetName(entry.preset)} · ${entry.taken}/${entry.seats} ${t("taken")}`;
    } else {
      about.textContent = errorText("game_started");
    }
  } catch {
    // the form works without it
  }
  if (tokens()[table]) state.redraw({ reload: true });
}
