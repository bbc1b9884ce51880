// Tournaments: the listing in the lobby, a quick one against bots, registering, the
// standings around the table the tournament seats you at, and the leaderboard.

import { errorText, presetName, t } from "./i18n.js";
import { api, app, askName, openSocket, serverNow, state } from "./session.js";
import { entrantTokens, hostPanel, kickButton, lateOpen, myPlace, organizerNews, registerAt, registerLine, registeredList, saveEntrant, saveInvite, standingsQuery } from "./organize.js";
import { h, link, shareLink, toast } from "./ui.js";

export function tableNumber(table) {
  return table.slice(table.lastIndexOf("-") + 1);
}

export async function loadCups() {
  try {
    state.cups = (await api("GET", "/api/tournaments")).tournaments;
  } catch {
    return;
  }
  renderCupList();
}

export function renderCupList() {
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
        (c.status === "registering" || (c.status === "running" && c.late_until > serverNow())) && !entrantTokens()[c.tournament]
          ? h("button", { onclick: () => registerCup(c.tournament), test: "register" }, t(c.status === "running" ? "registerLate" : "register")) : null,
        h("button", { onclick: () => (location.hash = `#/c/${c.tournament}`), test: "standings" }, t("standingsBtn")))))));
}

/** You and five bots, three to a table, begun at once. */
export async function quickCup() {
  const name = askName();
  if (!name) return;
  const rules = { preset: document.getElementById("preset")?.value || "classic" };
  const startDice = document.getElementById("start_dice")?.value;
  if (startDice) rules.start_dice = JSON.parse(startDice);
  try {
    const made = await api("POST", "/api/tournaments", {
      name: t("quickCupName", { name }), host: name, rules, seats: 3, start_players: 6, max_players: 6,
      bots: document.getElementById("level")?.value || "normal", payouts: [100],
      seeds: true, // this page's connection commits to a seed of its own at each table
    });
    saveEntrant(made.tournament, made.token);
    await api("POST", `/api/tournaments/${made.tournament}/begin`, { token: made.token });
    location.hash = `#/c/${made.tournament}`;
  } catch (err) {
    toast(errorText(err.code, err.message));
  }
}

async function registerCup(cup) {
  const name = askName();
  if (name && await registerAt(cup, name)) location.hash = `#/c/${cup}`;
}

/** Open a tournament's page: follow your seat through it, or watch its standings. */
export async function goCup(cup) {
  if (state.route.invite) saveInvite(cup, state.route.invite); // a plain link works later
  try {
    const got = await api("GET", `/api/tournaments/${cup}${standingsQuery(cup)}`);
    state.cup = { id: cup, version: got.version, standings: got.standings };
  } catch (err) {
    if (err.code === "unauthorized") { // private, and no invite: say what opens it
      app.replaceChildren(h("div", { class: "card", test: "cup-private" },
        link("#/", `← ${t("back")}`), h("p", {}, t("privateCupNeedsInvite"))));
      return;
    }
    toast(errorText(err.code, err.message));
    location.hash = "#/";
    return;
  }
  state.redraw();
  const token = entrantTokens()[cup];
  if (token) openSocket(token);
  else {
    state.timers.push(setInterval(async () => {
      const got = await api("GET", `/api/tournaments/${cup}${standingsQuery(cup)}`).catch(() => null);
      if (got && (!state.cup || got.version > state.cup.version)) {
        state.cup = { id: cup, version: got.version, standings: got.standings };
        state.redraw();
      }
    }, 2000));
  }
}

export async function renderLeaderboard() {
  let board = [];
  try {
    board = (await api("GET", "/api/leaderboard?limit=100")).leaderboard;
  } catch (err) {
    toast(errorText(err.code, err.message));
  }
  app.replaceChildren(h("div", { class: "card", test: "leaderboard" },
    h("div", { class: "row" }, link("#/", `← ${t("back")}`), h("h2", {}, t("leaderboard"))),
    board.length
      ? h("table", { class: "board" },
          h("tr", {}, h("th", {}, "#"), h("th", {}, t("yourName")), h("th", {}, t("rating")), h("th", {}, t("games"))),
          board.map((r) => h("tr", { test: "leader" }, h("td", {}, r.rank), h("td", {}, r.name),
            h("td", {}, r.ordinal.toFixed(1)), h("td", {}, r.games))))
      : h("p", { class: "muted" }, t("noRatings"))));
}

/** Whether the page still shows the entrant's table: not once they are placed (out, or
 *  the tournament over). Their table goes on without them and stops sending them views,
 *  so the last one would stay on screen: "You are out", a turn clock, "Next round in 4 s"
 *  under "Tournament over" (issue 34, items 2 and 9). */
export function cupShowsTable() {
  const s = state.cup?.standings;
  return !s || (s.status !== "over" && s.status !== "cancelled" && !myPlace(s));
}

/** Players still in but at no listed table: between two tables, or a table's winner
 *  waiting for the others to finish ("4 left" beside three names; issue 34, item 9). */
function waitingCount(s) {
  if (s.tables_playing > s.tables.length) return 0; // not every table listed: not known
  return Math.max(0, s.left - s.tables.reduce((n, tb) => n + tb.players.length, 0));
}

export function cupHeader() {
  const s = state.cup?.standings;
  if (!s) return h("p", { class: "muted" }, "…");
  const mine = myPlace(s);
  const table = state.welcome?.table;
  const waiting = s.status === "running" ? waitingCount(s) : 0;
  return h("div", { class: "card", test: "cup" },
    h("div", { class: "row" },
      // The tournament's one way back: the table under it shows none of its own.
      link("#/", `← ${t("back")}`, { test: "back" }),
      h("h2", { class: "cup-name" }, s.name), h("span", { class: "badge" }, t(s.status === "over" ? "finished" : s.status)),
      s.private ? h("span", { class: "badge" }, t("privateBadge")) : null,
      s.status === "running" ? h("span", { class: "muted", test: "cup-left" }, t("playersLeft", { n: s.left }),
        waiting ? ` · ${t("waitingTable", { n: waiting })}` : "") : null,
      s.heat ? h("span", { class: "muted" }, t("heat", { n: s.heat })) : null),
    s.status === "over" ? h("p", { class: "cup-over", test: "cup-over" }, t("cupOver")) : null,
    // Cancelled: said once, plainly; nothing of a running tournament stays (its tables,
    // its pause, the invite: issue 53, item 2).
    s.status === "cancelled" ? h("p", { class: "banner", test: "cup-cancelled", role: "status" }, t("cupCancelled")) : null,
    mine ? h("p", { class: "my-place", test: "my-place" }, mine.place === 1 ? t("cupWon")
      : mine.kicked ? t("kickedPlace", { n: mine.place, of: s.entrants })
        : t("yourPlace", { n: mine.place, of: s.entrants })) : null,
    table && s.status === "running" && !mine ? h("p", { test: "my-table" }, t("yourTable", { table: tableNumber(table) })) : null,
    !table && s.status === "running" && state.welcome && !mine ? h("p", { class: "muted" }, t("waitingSeat")) : null,
    s.status === "registering" && state.welcome ? h("p", { test: "cup-registered-line" }, t("registered"), " · ", t("entrants", { n: s.entrants }),
      !s.start_players && !s.start_at && hostName(s) ? ` · ${t("waitingHost", { name: hostName(s) })}` : "") : null,
    s.status === "registering" || lateOpen(s) ? cupInfo(s) : null,
    organizerNews(s),
    registerLine(s),
    hostAtTable() ? null : hostPanel(s));
}

/** The host's display name (they registered first), if the standings list them. */
function hostName(s) {
  return (s.registered ?? []).find((e) => e.handle === s.host)?.name
    ?? [...(s.tables ?? []).flatMap((tb) => tb.players), ...s.places].find((p) => p.handle === s.host)?.name ?? null;
}

function clockTime(ms) {
  return new Date(ms).toLocaleString(document.documentElement.lang || undefined, { weekday: "short", hour: "2-digit", minute: "2-digit" });
}

/** What a newcomer reads before registering (issue 53, item 6): who hosts it, its rules,
 *  dice and clock, its format, when it starts, what it costs. */
function cupInfo(s) {
  const host = hostName(s);
  const rules = s.rules;
  const start = s.start_at ? t("startsAt", { time: clockTime(s.start_at) })
    : s.start_players ? t("startsWhenFull", { n: s.start_players })
      : host ? t("startsByHost", { name: host }) : null;
  const facts = [
    rules ? `${t("preset")}: ${presetName(rules.preset)}` : null,
    rules ? `${t("opt_start_dice")}: ${rules.start_dice}` : null,
    rules?.turn_seconds ? `${t("clock")}: ${t("seconds", { s: rules.turn_seconds })}` : null,
    `${t("cupFormat")}: ${t(`format_${s.format}`)}`,
    `${t("seatsPerTable")}: ${s.seats}`,
    s.buy_in ? `${t("buyIn")}: ${s.buy_in}` : null,
    lateOpen(s) ? t("lateUntil", { time: clockTime(s.late_until) }) : null,
  ].filter(Boolean);
  return h("div", { class: "cup-info", test: "cup-info" },
    host ? h("p", { test: "cup-host" }, h("strong", {}, t("hostedBy", { name: host }))) : null,
    start ? h("p", { test: "cup-start" }, start) : null,
    h("ul", { class: "facts" }, facts.map((f) => h("li", {}, f))));
}

/** The host is playing at a table on this page: their controls go under it, folded. */
function hostAtTable() {
  return cupShowsTable() && Boolean(state.view?.game) && state.view.seat !== null;
}

// Once the finished tournament is rated (a second or so after its end): how far it moved
// the player's rating, as the leaderboard counts it.
function ratingChange(p) {
  if (p.rating_change == null) return null;
  const sign = p.rating_change >= 0 ? "+" : "−";
  return h("span", { class: "muted", test: "cup-rating" },
    ` · ${t("rating")} ${sign}${Math.abs(p.rating_change).toFixed(1)}`);
}

/** Who plays at which table, with their dice, then the places given. */
function liveTables(s) {
  if (!s.tables.length) return null;
  const me = state.welcome?.player;
  return [h("h4", {}, t("atTables")),
    h("ul", { class: "cup-tables" }, s.tables.map((tb) => h("li", { test: "cup-table" },
      h("div", { class: "row" }, h("strong", {}, t("tableN", { n: tableNumber(tb.table) })), " ",
        h("a", { href: `#/w/${tb.table}`, test: "watch-table" }, t("watch"))),
      h("ul", { class: "seated" }, tb.players.map((p) => h("li", { test: "cup-player" },
        h("span", { class: "who" }, p.name), " ", p.handle === me ? [h("span", { class: "badge you" }, t("you")), " "] : null,
        h("span", { class: "muted" }, `${p.dice} ${t(p.dice === 1 ? "die" : "dice")}`), " ", kickButton(s, p))))))),
    s.tables_playing > s.tables.length ? h("p", { class: "muted" }, t("moreTables", { n: s.tables_playing - s.tables.length })) : null];
}

export function cupStandings() {
  const s = state.cup?.standings;
  if (!s) return null;
  return [hostAtTable() ? hostPanel(s, { folded: true }) : null, h("div", { class: "card", test: "cup-standings" },
    h("h3", {}, t("standingsBtn")),
    registeredList(s),
    s.status === "running" ? liveTables(s) : null,
    s.places.length ? [h("h4", {}, t("placesHead")), h("ol", { test: "cup-places" }, s.places.map((p) => h("li", { value: p.place, class: p.place === 1 ? "winner" : null },
      p.place === 1 ? [h("span", { class: "badge win", test: "place-winner" }, `🏆 ${t("winnerMark")}`), " "] : null,
      p.name, p.chips ? ` (+${p.chips} ${t("chips")})` : "",
      p.bot ? [" ", h("span", { class: "badge", test: "place-bot" }, t("bot"))] : null,
      p.late ? [" ", h("span", { class: "badge", test: "place-late" }, t("lateMark"))] : null,
      p.kicked ? [" ", h("span", { class: "badge", test: "place-kicked" }, t("kickedMark"))] : null,
      ratingChange(p))))] : null,
    s.buy_in ? h("p", { test: "cup-prizes" }, t("prizePool", {
      pool: s.pool || s.buy_in * s.entrants, payouts: s.payouts.map((p) => `${p}%`).join(" / ") })) : null,
    state.cup.id && !s.private && s.status !== "cancelled" ? h("p", { class: "muted" }, `${t("share")}: `,
      shareLink(`${location.origin}/#/c/${state.cup.id}`, "cup-share")) : null,
    s.places.length && state.cup.id ? h("a", {
      href: `/api/tournaments/${encodeURIComponent(state.cup.id)}/results${standingsQuery(state.cup.id, { format: "csv" })}`,
      download: `${state.cup.id}.csv`, test: "cup-csv" }, t("resultsCsv")) : null,
    s.places.length && state.cup.id ? [" · ", h("a", {
      href: `/api/tournaments/${encodeURIComponent(state.cup.id)}/results${standingsQuery(state.cup.id)}`,
      download: `${state.cup.id}.json`, test: "cup-json" }, t("resultsJson"))] : null)];
}
