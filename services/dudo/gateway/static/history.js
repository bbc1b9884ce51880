// A game's history: every round (its bids, the call, the dice) in a panel at the table,
// and a finished game's replay at a link that can be shared (#/replay/T), stepped bid by
// bid (every hand shown: the game is over, each round's dice were revealed at its end)
// and round by round. Once the game is over the table gives the whole log (`game.log`); while it
// runs the page writes the rounds down from what it sees (the views' `bid` and `reveal`
// events), kept on the device per table so a reload keeps them. Nothing in it was secret
// when it was shown: a round's dice only after its reveal.

import { verify } from "./dudo-client.js";
import { t } from "./i18n.js";
import { api, app, openSocket, state } from "./session.js";
import { handRow, resultOf, revealBody } from "./reveal.js";
import { die, h, link, load, newestOf, shareLink, toast } from "./ui.js";

const KEY = "dudo.history";
const TABLES_KEPT = 10;

/** Write down the rounds a view shows ending (call on every view of a table). */
export function noteView(view) {
  const game = view?.game;
  if (!game) return;
  const all = load(KEY, {});
  const mine = all[view.table] ?? { v: -1, bids: [], rounds: [] };
  if (view.version <= mine.v) return; // the same view again, or an older one
  let bids = mine.bids; // the round's bids as the previous view showed them
  const names = view.players.map((p) => p?.name ?? null);
  const keep = (ended, seen) => {
    if (mine.rounds.some((r) => r.round === ended.round)) return;
    mine.rounds.push({ ...ended, bids: seen.length ? seen : [ended.bid], names });
    mine.rounds.sort((a, b) => a.round - b.round);
  };
  for (const event of view.events || []) {
    if (event.type === "bid") bids = [...bids, [event.seat, event.quantity, event.face]];
    else if (event.type === "reveal") {
      const { type, ...ended } = event;
      keep(ended, bids);
      bids = [];
    }
  }
  // A view may stand for several steps (a slow connection gets the latest only): the
  // round that just ended is in every view all the same (`last_round`).
  if (game.last_round) keep(game.last_round, bids);
  const updated = { v: view.version, bids: game.bids.map((b) => [...b]), rounds: mine.rounds, at: Date.now() };
  try {
    localStorage.setItem(KEY, JSON.stringify(newestOf({ ...all, [view.table]: updated }, TABLES_KEPT)));
  } catch {
    // a full storage: the panel shows what this page saw
  }
}

/** The rounds of the game: the table's log once it is over, else those written down. */
export function roundsOf(view) {
  return view.game.log ?? load(KEY, {})[view.table]?.rounds ?? [];
}

/** The dice each seat had after each round (who went out, in a round's outcome). */
function countsAfter(round) {
  return round.dice.map((hand, seat) => hand.length - (round.loser === seat ? 1 : 0) + (round.gainer === seat ? 1 : 0));
}

/** A round as the reveal's body reads it: its own names and what the dice became. */
function asView(view, round) {
  return { players: round.names.map((name) => (name === null ? null : { name })),
    game: { rules: view.game.rules, dice_counts: countsAfter(round) } };
}

function nameIn(round, seat) {
  return round.names[seat] ?? `#${seat + 1}`;
}

/** The round's bids in order: who bid what (the first ``shown`` of them, the last of
 *  those marked as the newest: the replay's step). */
function bidList(round, shown = round.bids.length) {
  return h("ol", { class: "round-bids", test: "round-bids" }, round.bids.slice(0, shown).map(([seat, q, f], i) =>
    h("li", { class: shown < round.bids.length && i === shown - 1 ? "newest" : null },
      h("span", { class: "who" }, nameIn(round, seat)), " ", h("strong", {}, q), " × ", die(f, { small: true }))));
}

/** Every hand of the round, as the bids were made (the replay's steps before the call). */
function handsOf(round) {
  return [h("h2", {}, t("handsOfRound")), round.dice.map((hand, seat) => hand.length
    ? handRow(nameIn(round, seat), hand.map((d) => die(d, { small: true })), null, "replay-hand")
    : null)];
}

/** The history panel of the table screen: every round so far, the newest first. */
export function historyCard(view) {
  const rounds = roundsOf(view);
  if (!rounds.length) return null;
  return h("details", { class: "card history", test: "history" },
    h("summary", {}, h("strong", {}, t("gameHistory")), " · ", t("roundsN", { n: rounds.length })),
    // Each round says its own number ("Round 9"): a numbered list said a second,
    // different one ("18. ▸ Round 9"; issue 53, item 13).
    h("ul", { class: "rounds" }, [...rounds].reverse().map((round) =>
      h("li", { test: "history-round" },
        h("details", {},
          h("summary", {}, t("round", { n: round.round }), " · ", resultOf(asView(view, round), round)),
          bidList(round),
          revealBody(asView(view, round), round))))));
}

// ------------------------------------------------------------------- the replay page

/** Open a finished game's replay: watch its table, whose view carries the whole log. */
export async function goReplay(table) {
  state.ui.step = 0;
  renderReplay();
  try {
    openSocket((await api("POST", `/api/tables/${table}/watch`)).token);
  } catch {
    toast(t("replayGone"));
    app.replaceChildren(h("div", { class: "card", test: "replay-gone" },
      h("p", {}, t("replayGone")), link("#/", `← ${t("back")}`)));
  }
}

/** The replay's steps: each round's bids one by one, then its call and reveal. A step is
 *  ``{round, shown}``: ``shown`` bids of round ``round`` (index in the log), the call
 *  when ``shown`` is past the last bid. */
function stepsOf(rounds) {
  return rounds.flatMap((round, r) => Array.from({ length: round.bids.length + 1 }, (_, i) => ({ round: r, shown: i + 1 })));
}

/** Step through the game: ``by`` steps (← → on a keyboard), or ``rounds`` rounds to the
 *  first bid of that round (Shift+← →, and buttons on screen). */
export function stepReplay(by, { rounds: jump = 0 } = {}) {
  const rounds = state.view?.game?.log;
  if (!rounds?.length) return;
  const steps = stepsOf(rounds);
  let at = Math.min(steps.length - 1, Math.max(0, state.ui.step ?? 0));
  if (jump) {
    const target = Math.min(rounds.length - 1, Math.max(0, steps[at].round + jump));
    at = steps.findIndex((s) => s.round === target);
  } else at = Math.min(steps.length - 1, Math.max(0, at + by));
  state.ui.step = at;
  renderReplay();
}

export function renderReplay() {
  const view = state.view;
  const back = link("#/", `← ${t("back")}`, { test: "back" });
  if (!view?.game) {
    app.replaceChildren(h("div", { class: "card" }, back, h("p", { class: "muted" }, "…")));
    return;
  }
  if (view.game.phase !== "over") {
    app.replaceChildren(h("div", { class: "card", test: "replay-playing" }, h("div", { class: "row" }, back),
      h("p", {}, t("stillPlaying")), link(`#/w/${view.table}`, t("watch"), { test: "watch" })));
    return;
  }
  const rounds = view.game.log ?? [];
  const steps = stepsOf(rounds);
  const at = Math.min(state.ui.step ?? 0, Math.max(0, steps.length - 1));
  const step = steps[at];
  const round = step && rounds[step.round];
  const called = step && step.shown > round.bids.length;
  const winner = view.game.winner !== null ? view.players[view.game.winner]?.name : null;
  const names = (rounds[0]?.names ?? view.players.map((p) => p?.name ?? null)).filter(Boolean);
  const where = step && [t("roundOf", { n: step.round + 1, of: rounds.length }), " · ", called
    ? t("callBy", { call: round.call === "dudo" ? t("dudo") : t("calzaBtn"), name: nameIn(round, round.caller) })
    : t("bidStep", { n: step.shown, of: round.bids.length })];
  app.replaceChildren(h("div", { class: "card replay", test: "replay" },
    // Who played, not who won: the end is the last step's.
    h("div", { class: "row" }, back, h("h1", { class: "replay-title" }, t("replayOf", { names: names.join(", ") }))),
    round ? [
      h("div", { class: "row steps" },
        h("button", { test: "replay-prev", disabled: at === 0, onclick: () => stepReplay(-1) }, `← ${t("previous")}`),
        h("strong", { test: "replay-step", "aria-live": "polite" }, where),
        h("button", { test: "replay-next", disabled: at === steps.length - 1, onclick: () => stepReplay(1) }, `${t("next")} →`)),
      h("div", { class: "row steps rounds" },
        h("button", { test: "replay-prev-round", disabled: step.round === 0, onclick: () => stepReplay(0, { rounds: -1 }) }, `« ${t("prevRoundBtn")}`),
        h("span", {}),
        h("button", { test: "replay-next-round", disabled: step.round === rounds.length - 1, onclick: () => stepReplay(0, { rounds: 1 }) }, `${t("nextRoundBtn")} »`)),
      h("h2", {}, t("bidsOfRound")),
      bidList(round, Math.min(step.shown, round.bids.length)),
      called ? revealBody(asView(view, round), round) : handsOf(round),
      at === steps.length - 1 && winner ? h("p", { class: "outcome", test: "replay-winner" }, `${t("over")} — ${t("winner", { name: winner })}`) : null,
    ] : h("p", { class: "muted" }, t("noRounds")),
    verifyBox(view),
    h("p", { class: "muted" }, `${t("replayLink")}: `, shareLink(`${location.origin}/#/replay/${view.table}`, "replay-share"))));
}

/** "Verify these dice": the whole game checked here, with Web Crypto (the client
 *  library's `verify`), from the view alone: nothing is asked of the server. */
function verifyBox(view) {
  const done = state.ui.verified?.table === view.table ? state.ui.verified : null;
  const button = h("button", { test: "verify-dice", disabled: done?.busy, onclick: async () => {
    state.ui.verified = { table: view.table, busy: true };
    renderReplay();
    const problems = await verify(view).catch((err) => [String(err?.message ?? err)]);
    state.ui.verified = { table: view.table, problems };
    renderReplay();
  } }, done?.busy ? t("verifying") : t("verifyDice"));
  if (!done || done.busy) return h("div", { class: "verify" }, button);
  const seeds = view.seeds;
  const rounds = view.game.log?.length ?? 0;
  const result = done.problems.length
    ? [h("strong", {}, t("notVerified")), h("ul", {}, done.problems.map((p) => h("li", {}, p)))]
    : [h("p", {}, seeds?.server_seed ? t("verifiedSeeded", { n: rounds }) : t("verifiedUnsealed")),
      ...(seeds?.commitments ?? []).flatMap((c, seat) => (c && !seeds.revealed[seat]
        ? [h("p", { class: "muted" }, t("seedPublic", { name: view.players[seat]?.name ?? `#${seat + 1}` }))] : []))];
  const tone = done.problems.length ? "verify bad" : "verify good";
  return h("div", { class: tone, test: "verify-result", role: "status" }, button, ...result);
}
