// A player's own statistics, on the device (anonymous players included): games played
// and won, the best run of wins, and how often their Dudo and Calza calls were right.
// Counted from the views the page gets at its seats: each game once (at its end), each
// call once (at its reveal), whatever the page redraws.

import { t } from "./i18n.js";
import { h, load, newestOf } from "./ui.js";

const KEY = "dudo.stats";
const TABLES_KEPT = 30; // tables whose counted rounds are remembered (against counting twice)

function empty() {
  return { games: 0, wins: 0, streak: 0, best: 0, dudo: 0, dudoRight: 0, calza: 0, calzaRight: 0, seen: {} };
}

export function stats() {
  return { ...empty(), ...load(KEY, {}) };
}

/** Count what this view shows of the player's own game: their calls at its reveals, and
 *  the game once it is over. A spectator's views count nothing. */
export function noteStats(view) {
  const game = view?.game;
  if (!game || view.seat === null || view.seat === undefined) return;
  const s = stats();
  const seen = s.seen[view.table] ?? { rounds: [], over: false };
  let changed = false;
  const rounds = [...(view.events || []).filter((e) => e.type === "reveal"), game.last_round].filter(Boolean);
  for (const round of rounds) {
    if (seen.rounds.includes(round.round) || round.caller !== view.seat) continue;
    seen.rounds.push(round.round);
    // Dudo is right when the bidder loses; Calza when the count was exact (no one loses).
    const right = round.call === "dudo" ? round.loser !== view.seat : round.loser === null;
    if (round.call === "dudo") {
      s.dudo += 1;
      s.dudoRight += right ? 1 : 0;
    } else {
      s.calza += 1;
      s.calzaRight += right ? 1 : 0;
    }
    changed = true;
  }
  if (game.phase === "over" && !seen.over) {
    seen.over = true;
    s.games += 1;
    const won = game.winner === view.seat;
    s.wins += won ? 1 : 0;
    s.streak = won ? s.streak + 1 : 0;
    s.best = Math.max(s.best, s.streak);
    changed = true;
  }
  if (!changed) return;
  seen.at = Date.now();
  try {
    localStorage.setItem(KEY, JSON.stringify({ ...s, seen: newestOf({ ...s.seen, [view.table]: seen }, TABLES_KEPT) }));
  } catch {
    // a full storage: these numbers stop growing, the game does not
  }
}

function share(right, of) {
  return of ? `${right} / ${of} (${Math.round((100 * right) / of)}%)` : "–";
}

/** The lobby's card of the player's statistics (nothing before a first game or call). */
export function statsCard() {
  const s = stats();
  if (!s.games && !s.dudo && !s.calza) return null;
  const row = (label, value, test) => h("tr", {}, h("th", { scope: "row" }, label), h("td", { test }, value));
  return h("section", { class: "card", test: "stats" },
    h("h2", {}, t("statsTitle")),
    h("table", { class: "board stats" },
      row(t("statsGames"), String(s.games), "stats-games"),
      row(t("statsWins"), share(s.wins, s.games), "stats-wins"),
      row(t("statsBest"), String(s.best), "stats-best"),
      row(t("statsDudo"), share(s.dudoRight, s.dudo), "stats-dudo"),
      row(t("statsCalza"), share(s.calzaRight, s.calza), "stats-calza")),
    h("p", { class: "muted" }, t("statsDevice")));
}
