// The table screen, built around the decision: the dock at the bottom of the screen (on
// every size) holds the strip — the bid to beat, whose turn, the dice in play, your odds —
// and, in your turn, the action bar. Above it: players, your hand, the bids newest first
// and the last round. Keys on a desktop: 1–6 face, ↑ ↓ quantity, Enter bid, D, C, ← →.

import { alertTurn, bidText, die, h, link, onesWild, pct, playerName, shareLink } from "./ui.js";
import { faceName, t } from "./i18n.js";
import { act, api, app, request, serverNow, state } from "./session.js";
import { dropCountdown, lastRoundCard, maybeReveal } from "./reveal.js";
import { historyCard } from "./history.js";
import { bubble, reactionBar } from "./reactions.js";
import { playNow, rematch } from "./lobby.js";

export function me() {
  return state.view ? state.view.seat : null;
}

function nameOf(seat) {
  return playerName(state.view, seat);
}

/** A round held after someone arrived at a tournament's table: no dice, nobody's turn,
 *  until the seats' new seeds are in (docs/rules.md, "Held rounds"). */
function undealt(game) {
  return game.turn === null && game.phase !== "over";
}

function mine(view) {
  const game = view.game;
  // A paused table refuses every act: no "Your turn", no controls (issue 53, item 4).
  return Boolean(game && game.phase !== "over" && !view.paused && view.seat !== null && game.turn === view.seat && game.legal);
}

/** Draw the table (``header``/``footer``: a tournament's parts around it; ``table``
 *  false: those parts alone, the entrant's table being no longer theirs). */
export function renderTable({ header = null, footer = null, table = true } = {}) {
  const view = state.view;
  if (!table) {
    app.replaceChildren(...[header, footer].flat().filter(Boolean));
    dropCountdown();
    // The round that put them out, if not yet shown; not the rounds played after it
    // (their seat still gets the table's views).
    if (view?.game?.last_round && view.game.last_round.loser === view.seat) maybeReveal(view);
    return;
  }
  if (!view) {
    app.replaceChildren(...[header, footer].flat().filter(Boolean), header ? "" : h("p", { class: "muted" }, "…"));
    return;
  }
  const game = view.game;
  const parts = [header, topRow(view, { back: !header })];
  // The end of the game first, right under the top row: on a phone the players' card
  // pushed it below the fold, under the last reveal (issue 34, item 1).
  if (game?.phase === "over" && !header) parts.push(renderOver(view)); // a tournament's director moves players on
  if (view.status === "open") parts.push(renderWaiting(view));
  // A tournament's page says it once, in its header (organizerNews); the dock says it too.
  if (view.paused && !header) parts.push(h("div", { class: "banner", test: "table-paused", role: "status" }, t("pausedBanner")));
  // The house played this seat's last turns (its clock ran out): everyone sees it away;
  // its player is told what a third costs (issue 53, item 8).
  const me = view.seat !== null ? view.players[view.seat] : null;
  if (me?.away && game && game.phase !== "over" && game.dice_counts[view.seat] > 0) {
    parts.push(h("div", { class: "banner", test: "you-away", role: "status" }, t("youAway")));
  }
  if (game) {
    if (game.palifico && game.phase !== "over") {
      parts.push(h("div", { class: "banner palifico", test: "palifico" },
        game.rules.palifico_wild_ones ? t("palificoWild") : t("palificoBanner")));
    }
    parts.push(renderPlayers(view), solvesNote(view));
    if (game.phase !== "over") {
      const out = view.seat !== null && game.dice_counts[view.seat] === 0;
      if (out && !state.ui.watching) parts.push(renderOut());
      if (game.dice?.length) {
        // A new round's hand comes out of a shaken cup (style.css animates it under
        // the page's `motion` class: not with motion off or reduced by the system).
        const shaken = state.ui.shaken !== `${view.table}:${game.round}`;
        state.ui.shaken = `${view.table}:${game.round}`;
        parts.push(h("div", { class: shaken ? "card hand shake" : "card hand", test: "hand" },
          h("div", { class: "dice", test: "my-dice" }, game.dice.map((d) => die(d)))));
      }
      parts.push(renderBids(view));
    }
    if (game.last_round) parts.push(lastRoundCard(view));
    parts.push(historyCard(view));
  }
  parts.push(...[footer].flat());
  if (game && game.phase !== "over") parts.push(renderDock(view));
  // Keyboard users keep their place: a redraw replaces every element, which sent the
  // focus back to the page (11 to 15 Tab presses to reach Bid, every turn; issue 34,
  // item 7). The control that had it (by its data-test) gets it again, now or when it
  // comes back (Bid, in your next turn).
  const focused = app.contains(document.activeElement) ? document.activeElement.dataset.test : null;
  if (focused) state.ui.focus = focused;
  app.replaceChildren(...parts.filter(Boolean));
  const again = state.ui.focus && !document.querySelector(".overlay")
    ? app.querySelector(`[data-test="${state.ui.focus}"]:not(:disabled)`) : null;
  if (again && app.contains(document.activeElement) === false) again.focus({ preventScroll: true });
  const ended = game?.phase === "over" ? view.table : null;
  if (ended && state.ui.ended !== ended) window.scrollTo(0, 0); // the end is at the top
  state.ui.ended = ended;
  maybeReveal(view);
  tickClocks();
  const turn = mine(view) ? `${game.round}:${game.bids.length}:${view.table}` : null;
  if (turn && turn !== state.ui.alerted) {
    alertTurn();
    handInSight();
  }
  state.ui.alerted = turn;
}

/** At the start of your turn, your dice above the dock: a tournament's header above the
 *  table (and a players' card made taller by longer words, "5 Würfel") pushed them under
 *  it on a phone (issue 53, item 1). The page scrolls as little as it takes, the top of
 *  the page going first; never further than the hand's own top. */
function handInSight() {
  const hand = app.querySelector("[data-test=hand]");
  const dock = app.querySelector("[data-test=dock]");
  if (!hand || !dock) return;
  const { top, bottom } = hand.getBoundingClientRect();
  const under = bottom - (dock.getBoundingClientRect().top - 8);
  if (under > 0) window.scrollBy(0, Math.min(under, top - 8));
}

function topRow(view, { back }) {
  const game = view.game;
  const playing = view.seat !== null && view.status === "playing";
  const ask = (why) => () => { state.ui.confirmLeave = why; state.redraw(); };
  if (state.ui.confirmLeave) {
    // Leaving for the lobby in the middle of a game asks too: it had kept the seat without
    // a word, and the games left that way piled up under "Games being played".
    const lobby = state.ui.confirmLeave === "lobby";
    return h("div", { class: "card confirm", role: "alertdialog", test: "leave-confirm" },
      h("p", {}, t(lobby ? "leaveLobbyAsk" : "leaveAsk")),
      h("div", { class: "actions" },
        h("button", { class: "primary", test: "leave-yes", onclick: leave }, t("leaveYes")),
        lobby ? link("#/", t("keepSeat"), { test: "keep-seat" }) : null,
        h("button", { test: "leave-no", onclick: ask(false) }, t("stay"))));
  }
  const inPlay = playing && game && game.phase !== "over" && game.dice_counts[view.seat] > 0;
  return h("div", { class: "row top" },
    back && inPlay ? h("button", { test: "back", onclick: ask("lobby") }, `← ${t("back")}`) : null,
    back && !inPlay ? link("#/", `← ${t("back")}`, { test: "back" }) : null,
    h("span", { class: "muted" }, game ? t("round", { n: game.round }) : t("waiting")),
    view.seat === null ? h("span", { class: "badge" }, t("spectator")) : null,
    view.seat !== null && view.status !== "over"
      ? h("button", { test: "leave", onclick: playing ? ask("leave") : leave }, t("leave"))
      : null);
}

async function leave() {
  state.ui.confirmLeave = false;
  if (state.conn) await request(state.conn.leave()); // `left` takes the page to the lobby
}

function renderWaiting(view) {
  const seated = view.players.filter(Boolean).length;
  const isHost = state.welcome && state.welcome.player === view.host;
  return h("div", { class: "card", test: "waiting" },
    h("h2", {}, t("waiting")),
    h("ol", {}, view.players.map((p, i) => h("li", {}, p ? p.name : "…",
      p?.bot ? h("span", { class: "badge" }, `${t("bot")} · ${t(p.bot)}`) : null,
      i === me() ? h("span", { class: "badge you" }, t("you")) : null))),
    h("p", {}, `${t("share")}: `, shareLink(`${location.origin}/#/t/${view.table}`, "table-share")),
    // Every seat is fixed and the seeds are being committed to or revealed (the library
    // sends ours): the dice are dealt in a moment, nobody starts anything.
    view.seeds?.until !== undefined || view.seeds?.commit_until !== undefined
      ? h("p", { class: "muted", test: "sealing" }, t("sealing"))
      : isHost
        ? h("div", {}, h("button", { class: "primary", onclick: () => state.conn && request(state.conn.start()), test: "start" }, t("start")),
            h("p", { class: "muted" }, t("startHint", { n: seated })))
        : h("p", { class: "muted" }, t("startWait")));
}

function renderPlayers(view) {
  const game = view.game;
  return h("div", { class: "players card", test: "players" },
    view.players.map((p, seat) => {
      if (!p) return null;
      const dice = game.dice_counts[seat];
      const turn = game.turn === seat && game.phase !== "over";
      return h("div", { class: ["player", turn ? "turn" : "", dice === 0 ? "out" : ""].join(" "), test: `player-${seat}` },
        h("div", { class: "name" }, h("span", { class: "who" }, p.name), bubble(seat),
          seat === me() ? h("span", { class: "badge you" }, t("you")) : null,
          p.bot ? h("span", { class: "badge" }, `${t("bot")} · ${t(p.bot)}`) : null,
          p.away ? h("span", { class: "badge" }, t("away")) : null),
        h("div", { class: "cups", test: `count-${seat}` }, dice
          ? [h("span", { class: "cup-dots", "aria-hidden": "true" }, "■".repeat(Math.min(dice, 10))), ` ${dice} ${t(dice === 1 ? "die" : "dice")}`]
          : t("outLabel")));
    }), reactionBar(view));
}

// While the bot services still solve the presets' heads-up endgames (minutes after a
// start), a hard bot plays its heuristic in such a round: a table with one says so
// (issue 53, item 21). Asked at such a table only, every 15 s while they run.
const SOLVES_EVERY_MS = { running: 15_000, none: 60_000 };

function solvesNote(view) {
  if (!view.players.some((p) => p?.bot === "hard") || view.game.phase === "over") return null;
  const known = state.solves;
  const every = known?.answer ? SOLVES_EVERY_MS.running : SOLVES_EVERY_MS.none;
  if (!known || Date.now() - known.at > every) {
    state.solves = { at: Date.now(), answer: known?.answer ?? null };
    api("GET", "/api/bots").then((got) => {
      const answer = got.endgame_solves;
      if (JSON.stringify(answer) === JSON.stringify(state.solves.answer)) return;
      state.solves.answer = answer;
      if (state.route.page === "table" || state.route.page === "cup") state.redraw();
    }).catch(() => {}); // an old gateway, or none: no note
  }
  const solving = state.solves.answer;
  return solving ? h("p", { class: "muted", test: "bot-solves", role: "status" },
    t("botSolves", { done: solving.done, of: solving.of })) : null;
}

function renderBids(view) {
  const game = view.game;
  // The newest bid slides in once, when it arrives (not at every redraw).
  const newest = `${view.table}:${game.round}:${game.bids.length}`;
  const arrived = game.bids.length && state.ui.arrived !== newest;
  state.ui.arrived = newest;
  const rows = [...game.bids].reverse().map(([seat, q, f], i) =>
    h("li", { class: i === 0 ? (arrived ? "standing arrive" : "standing") : "" },
      h("span", { class: "who" }, nameOf(seat)), h("strong", {}, q), "×", die(f, { small: true })));
  const opener = undealt(game) ? t("resealing") : game.turn === me() ? t("opensYou") : t("opensOther", { name: nameOf(game.turn) });
  return h("div", { class: "card" },
    h("h2", {}, t("history")),
    rows.length ? h("ol", { class: "bids", test: "bids" }, rows) : h("p", { class: "muted" }, game.phase === "bidding" ? opener : t("noStanding")));
}

function renderOut() {
  return h("div", { class: "card out-panel", test: "out" },
    h("h2", {}, t("outTitle")), h("p", {}, t("outText")),
    h("div", { class: "actions" },
      h("button", { test: "watch-on", onclick: () => { state.ui.watching = true; state.redraw(); } }, t("watchOn")),
      h("button", { class: "primary", test: "new-game", onclick: () => playNow() }, t("newGame")),
      link("#/", t("back"))));
}

function renderOver(view) {
  const game = view.game;
  const offer = view.rematch && view.rematch.by !== view.seat ? view.rematch : null;
  return h("div", { class: "card", test: "game-over", "data-winner": game.winner },
    h("h2", {}, t("over"), " — ", t("winner", { name: nameOf(game.winner) })),
    // Someone asked for a rematch: the invitation, first (seated players join it).
    offer ? h("div", { class: "banner", role: "status", test: "rematch-offer" },
      t("rematchOffer", { name: nameOf(offer.by) }), " ",
      view.seat !== null ? h("button", { class: "primary", test: "rematch-join", onclick: () => rematch(view) }, t("rematchJoin")) : null) : null,
    h("h3", {}, t("standings")),
    h("ol", {}, game.standings.map((seat) => h("li", {}, nameOf(seat),
      game.chips ? ` (${game.chips[seat] > 0 ? "+" : ""}${game.chips[seat]} ${t("chips")})` : ""))),
    h("div", { class: "actions" },
      view.seat !== null && !offer ? h("button", { class: "primary", test: "rematch", onclick: () => rematch(view) }, t("rematch")) : null,
      // One primary action: join the rematch, or ask for one; New game only for a spectator.
      h("button", { class: view.seat === null ? "primary" : "", test: "new-game", onclick: () => playNow() }, t("newGame")),
      link(`#/replay/${view.table}`, t("replay"), { test: "replay-link" }),
      link("#/", t("back"))));
}

// ---------------------------------------------------------------- the dock

function renderDock(view) {
  const game = view.game;
  const standing = game.bids.at(-1);
  const yours = mine(view);
  const odds = game.odds && standing && game.odds.bid_true !== null
    ? h("span", { class: "odds", test: "odds" }, `${t("odds")}: ${t("oddsBid", { p: pct(game.odds.bid_true) })}, ${t("oddsCalza", { p: pct(game.odds.calza_exact) })}`)
    : null;
  const strip = h("div", { class: "strip", test: "strip", role: "status", "aria-live": "polite" },
    h("span", { class: "standing", test: "standing" }, standing
      ? t("standingBid", { bid: bidText(standing[1], standing[2]), name: nameOf(standing[0]) }) : t("noStanding")),
    view.paused
      ? h("span", { class: "whose paused", test: "dock-paused" }, t("pausedDock"))
      : undealt(game) ? h("span", { class: "whose", test: "dock-sealing" }, t("resealing"))
      : h("span", { class: yours ? "whose mine" : "whose", test: yours ? "your-turn" : "whose-turn" },
        yours ? t("yourTurn") : t("turnOf", { name: nameOf(game.turn) }),
        view.deadline ? h("span", { class: "clock", "data-deadline": view.deadline, "data-hold": view.reveal_until ?? 0, test: "clock" }) : null),
    h("span", { class: "muted", test: "in-play" }, t("diceInPlay", { n: game.dice_in_play })),
    odds);
  // Calza out of turn ("anyone"): the one move a player may make while others bid.
  const calza = !yours && !view.paused && view.seat !== null && game.legal?.calza
    ? h("div", { class: "actions" }, h("button", { class: "big", onclick: () => act({ type: "calza" }), test: "calza" }, t("calzaBtn")))
    : null;
  return h("div", { class: yours ? "dock yours" : "dock", test: "dock" }, strip, yours ? renderControls(view) : calza);
}

function renderControls(view) {
  const game = view.game;
  const legal = game.legal;
  if (legal.direction) {
    const next = (step) => nameOf(nextSeat(game, view.seat, step));
    return h("div", { class: "controls", test: "direction" },
      h("strong", {}, t("chooseDirection")),
      h("div", { class: "actions" },
        h("button", { class: "big", onclick: () => act({ type: "direction", value: -1 }), test: "direction-left" }, `← ${t("nextIs", { name: next(-1) })}`),
        h("button", { class: "big", onclick: () => act({ type: "direction", value: 1 }), test: "direction-right" }, `${t("nextIs", { name: next(1) })} →`)));
  }
  const choice = bidChoice(game);
  const { face, quantity, floor } = choice;
  const raiseOdds = face && game.odds ? game.odds.raises[face - 1]?.[quantity - floor] : null;
  const faces = legal.bid.map((low, i) => h("button", {
    class: i + 1 === face ? "selected" : "", disabled: low === null, test: `face-${i + 1}`, "aria-label": faceName(i + 1),
    "aria-pressed": i + 1 === face ? "true" : "false", onclick: () => choose({ face: i + 1, quantity: null }),
  }, die(i + 1, { small: true })));
  return h("div", { class: "controls", test: "controls" },
    face ? h("div", { class: "faces", test: "faces" }, faces) : null,
    h("div", { class: "actions" },
      face ? h("div", { class: "qty" },
        h("button", { onclick: () => choose({ quantity: quantity - 1 }), disabled: quantity <= floor, test: "qty-down", "aria-label": "−" }, "−"),
        h("output", { test: "qty", "aria-live": "polite" }, quantity),
        h("button", { onclick: () => choose({ quantity: quantity + 1 }), disabled: quantity >= legal.max_quantity, test: "qty-up", "aria-label": "+" }, "+")) : null,
      face ? h("button", { class: "primary big", test: "bid", onclick: () => bid(choice) }, `${t("bidBtn")} ${bidText(quantity, face)}`) : null,
      h("button", { class: "big", disabled: !legal.dudo, onclick: () => act({ type: "dudo" }), test: "dudo" }, t("dudo")),
      game.rules.calza !== "off"
        ? h("button", { class: "big", disabled: !legal.calza, onclick: () => act({ type: "calza" }), test: "calza" }, t("calzaBtn")) : null),
    raiseOdds !== null && raiseOdds !== undefined ? h("p", { class: "odds" }, t("oddsRaise", { p: pct(raiseOdds) })) : null,
    window.matchMedia("(pointer: fine)").matches ? h("p", { class: "keys muted" }, t("keys")) : null);
}

function nextSeat(game, seat, step) {
  const n = game.dice_counts.length;
  for (let i = 1; i < n; i++) {
    const s = (((seat + step * i) % n) + n) % n;
    if (game.dice_counts[s] > 0) return s;
  }
  return seat;
}

/** The bid the action bar offers: the player's own choice for this bid situation, else a
 * sensible one (the standing bid's face, or the face held most; the opening quantity near
 * what the dice on the table make likely, a raise the lowest legal). */
function bidChoice(game) {
  const legal = game.legal;
  const key = `${game.round}:${game.bids.length}`;
  if (state.ui.choiceKey !== key) [state.ui.choiceKey, state.ui.face, state.ui.quantity] = [key, null, null];
  const open = (f) => legal.bid[f - 1] !== null;
  let face = state.ui.face && open(state.ui.face) ? state.ui.face : suggestedFace(game);
  if (!face) return { face: null, quantity: 0, floor: 0 };
  const floor = legal.bid[face - 1];
  let quantity = state.ui.quantity;
  if (quantity === null || quantity < floor || quantity > legal.max_quantity) {
    quantity = game.bids.length ? floor : Math.max(floor, Math.min(legal.max_quantity, expected(game, face)));
  }
  [state.ui.face, state.ui.quantity] = [face, quantity];
  return { face, quantity, floor };
}

function wildFor(game, face) {
  return onesWild(game.rules, game.palifico, face);
}

function held(game, face) {
  return game.dice.filter((d) => d === face || (wildFor(game, face) && d === 1)).length;
}

/** How many of this face the table likely holds: yours, plus the unseen dice's share. */
function expected(game, face) {
  const unseen = game.dice_in_play - game.dice.length;
  return Math.floor(held(game, face) + unseen * (wildFor(game, face) ? 1 / 3 : 1 / 6));
}

function suggestedFace(game) {
  const faces = [1, 2, 3, 4, 5, 6].filter((f) => game.legal.bid[f - 1] !== null);
  if (!faces.length) return null;
  const standing = game.bids.at(-1)?.[2];
  if (standing && faces.includes(standing)) return standing;
  return faces.reduce((best, f) => (held(game, f) > held(game, best) ? f : best), faces[0]);
}

function choose(change) {
  if ("face" in change) state.ui.face = change.face;
  state.ui.quantity = change.quantity;
  state.redraw();
}

function bid({ face, quantity }) {
  act({ type: "bid", quantity, face });
}

/** Keys on a desktop, in your turn (not while typing in a field). */
export function onKey(event) {
  const view = state.view;
  if (!view?.game?.legal || view.game.phase === "over" || event.target.closest?.("input, select, textarea")) return;
  if (event.altKey || event.ctrlKey || event.metaKey) return;
  const legal = view.game.legal;
  const key = event.key.toLowerCase();
  if (!mine(view)) {
    if (key === "c" && legal.calza && !view.paused) act({ type: "calza" }); // Calza out of turn, where allowed
    return;
  }
  if (legal.direction) {
    if (key === "arrowleft") act({ type: "direction", value: -1 });
    else if (key === "arrowright") act({ type: "direction", value: 1 });
    return;
  }
  const choice = bidChoice(view.game);
  if (/^[1-6]$/.test(key) && legal.bid[Number(key) - 1] !== null) choose({ face: Number(key), quantity: null });
  else if ((key === "arrowup" || key === "+") && choice.face) choose({ quantity: Math.min(legal.max_quantity, choice.quantity + 1) });
  else if ((key === "arrowdown" || key === "-") && choice.face) choose({ quantity: Math.max(choice.floor, choice.quantity - 1) });
  else if (key === "enter" && choice.face && !event.target.closest?.("button")) bid(choice);
  else if (key === "d" && legal.dudo) act({ type: "dudo" });
  else if (key === "c" && legal.calza) act({ type: "calza" });
  else return;
  event.preventDefault();
}

// ---------------------------------------------------------------- the clock

export function tickClocks() {
  const now = serverNow();
  for (const el of document.querySelectorAll(".clock[data-deadline]")) {
    // While a reveal holds the table the clock waits with it: it starts when the hold ends.
    const from = Math.max(now, Number(el.dataset.hold || 0));
    const left = Math.max(0, Math.ceil((Number(el.dataset.deadline) - from) / 1000));
    el.textContent = `◷ ${t("seconds", { s: left })}`;
    el.classList.toggle("low", left <= 5);
  }
}
