// The reveal: what the dice were when a round ended, shown as it happens (an overlay
// held while the table holds, `reveal_until`) and kept afterwards as the "last round"
// card, with a key to the colours and the fair-dice check.

import { faceName, t } from "./i18n.js";
import { serverNow, state } from "./session.js";
import { die, h, onesWild, playerName as nameOf, revealSound } from "./ui.js";

const SHOWN_WITHOUT_HOLD_MS = 5000; // a server that does not hold: the overlay's own time
const COUNTDOWN_AFTER_MS = 2000; // the result alone, still, before "Next round in …"

/** What the round cost whom, in words: "Ana loses a die · Ana is out" (the overlay's
 *  title, the last round's and the history's summaries: one wording). */
export function resultOf(view, last) {
  const outcome = [];
  if (last.loser !== null) outcome.push(t("lost", { name: nameOf(view, last.loser) }));
  if (last.gainer !== null) outcome.push(t("gained", { name: nameOf(view, last.gainer) }));
  if (last.loser === null && last.gainer === null) outcome.push(t("noChange"));
  if (last.loser !== null && view.game.dice_counts[last.loser] === 0) {
    outcome.push(t("eliminated", { name: nameOf(view, last.loser) }));
  }
  return outcome.join(" · ");
}

/** The reveal's body: who bid what, every hand, the count and what it cost whom.
 *  ``lead``: the overlay's, whose title already says the result: the count comes first,
 *  in large type, before the hands (issue 53, item 5). */
export function revealBody(view, last, { lead = false } = {}) {
  const [bidder, q, face] = last.bid;
  const rules = view.game.rules;
  const wild = onesWild(rules, last.palifico, face);
  const counts = (d) => d === face || (wild && d === 1); // marked on the die, totalled per row
  const call = last.call === "dudo" ? t("dudo") : t("calzaBtn");
  const countLine = t("count", { count: last.count, q, face: faceName(face, q) });
  const verify = h("p", { class: "verify muted", test: "verify" }, "…");
  verifySeed(last).then(([text, kind]) => {
    verify.textContent = text;
    verify.className = `verify ${kind}`;
  });
  return [
    lead ? h("p", { class: "outcome lead", test: "outcome" }, countLine) : null,
    h("p", { class: "muted" }, t("callBy", { call, name: nameOf(view, last.caller) }), " · ",
      t("bidOf", { name: nameOf(view, bidder), q, face: faceName(face, q) })),
    last.dice.map((hand, seat) => hand.length
      ? handRow(nameOf(view, seat), hand.map((d) => die(d, { small: true, hit: d === face, wild: wild && d === 1 })),
          h("span", { class: "counted", test: "counted" }, t("counted", { n: hand.filter(counts).length })))
      : null),
    lead ? null : h("p", { class: "outcome", test: "outcome" }, countLine, " — ", resultOf(view, last)),
    h("p", { class: "key muted" }, t("revealKey")),
    verify,
  ];
}

/** One player's hand in a row: who, their dice (drawn), and what follows (the count). */
export function handRow(name, dice, after = null, test = null) {
  return h("div", { class: "reveal-row", test }, h("span", { class: "who" }, name),
    h("span", { class: "dice" }, dice), after);
}

/** The last round, kept on the table screen (folded on a phone). */
export function lastRoundCard(view) {
  const last = view.game.last_round;
  return h("details", { class: "card last-round", test: "last-round", open: window.innerWidth > 700 },
    h("summary", {}, h("strong", {}, t("lastRound")), " · ", resultOf(view, last)),
    revealBody(view, last));
}

/** Show the reveal of a round that just ended (once per round). */
export function maybeReveal(view) {
  const last = view.game?.last_round;
  if (!last) return;
  if (state.ui.revealed === undefined) {
    // On (re)joining a table, show the previous reveal only if it just happened.
    state.ui.revealed = view.events?.some((e) => e.type === "reveal") ? last.round - 1 : last.round;
  }
  if (last.round <= state.ui.revealed) return;
  state.ui.revealed = last.round;
  showOverlay(view, last);
}

// The open reveal's close, while it counts down to a next round.
let closeCountdown = null;

/** Close a reveal that counts down to the next round: for a player a tournament has just
 *  placed, no next round is theirs (the standings that place them can come before the
 *  view of the round that put them out). */
export function dropCountdown() {
  if (closeCountdown) closeCountdown();
}

function showOverlay(view, last) {
  document.querySelectorAll(".overlay").forEach((el) => el.remove());
  closeCountdown = null;
  // The round that ended the game: its reveal says so, and stays until it is closed (no
  // "next round" counting down over the winner; issue 34, item 1).
  const over = view.game.phase === "over" && view.game.winner !== null;
  // The round that put this player out: nothing of theirs comes next, so no countdown
  // either; it stays until they have read it.
  const out = view.seat !== null && last.loser === view.seat && view.game.dice_counts[view.seat] === 0;
  // The result stays still for COUNTDOWN_AFTER_MS before anything counts down, and the
  // overlay a moment longer than that (a short hold would have it read "Next round in
  // 1 s" from the start).
  const opened = serverNow();
  const until = Math.max(view.reveal_until ?? opened + SHOWN_WITHOUT_HOLD_MS, opened + COUNTDOWN_AFTER_MS + 500);
  const countdown = over || out ? null : h("p", { class: "countdown muted", test: "next-round" });
  const close = () => {
    overlay.remove();
    clearInterval(timer);
    if (closeCountdown === close) closeCountdown = null;
    // Back where the keyboard was (the table's control that had the focus, by data-test).
    const back = state.ui.focus && document.querySelector(`#app [data-test="${state.ui.focus}"]:not(:disabled)`);
    if (back) back.focus({ preventScroll: true });
  };
  const ok = h("button", { class: "primary", test: "reveal-ok", onclick: close }, over ? t("seeResult") : t("ok"));
  // The title is the result: "Ana loses a die", not "Reveal" (issue 53, item 5).
  const result = resultOf(view, last);
  const title = over ? `${t("over")} — ${t("winner", { name: nameOf(view, view.game.winner) })}` : out ? `${t("outTitle")} · ${result}` : result;
  const overlay = h("div", { class: "overlay", test: "reveal", role: "dialog", "aria-modal": "true", "aria-label": title },
    h("div", { class: "card reveal-card" }, h("h2", { class: "reveal-title", test: over ? "reveal-winner" : "reveal-result" }, title),
      revealBody(view, last, { lead: true }), countdown, h("div", { class: "actions" }, ok)));
  overlay.addEventListener("keydown", (e) => {
    if (e.key === "Escape") close();
    else if (e.key === "Tab") trapTab(overlay, e); // a modal dialog keeps the focus inside
  });
  const tick = () => {
    const now = serverNow();
    const left = Math.ceil((until - now) / 1000);
    if (left <= 0) return close();
    countdown.textContent = now < opened + COUNTDOWN_AFTER_MS ? "" : t("nextRound", { s: left });
  };
  const timer = countdown ? setInterval(tick, 250) : null;
  if (countdown) closeCountdown = close;
  if (countdown) tick();
  countDieByDie(overlay, until);
  document.body.append(overlay);
  revealSound();
  ok.focus();
}

/** The dice that count light up one after the other, then the outcome: all within the
 *  time the table holds (or the overlay's own), at most 280 ms a die. Only the delays
 *  are set here; style.css animates under the page's `motion` class. */
function countDieByDie(overlay, until) {
  const counted = [...overlay.querySelectorAll(".die.hit, .die.wild")];
  const time = Math.max(600, until - serverNow() - 800);
  const step = Math.round(Math.min(280, time / Math.max(1, counted.length)));
  counted.forEach((d, i) => {
    d.classList.add("count-in");
    d.style.setProperty("--at", `${i * step}ms`);
  });
  overlay.style.setProperty("--done", `${counted.length * step}ms`);
}

/** Tab and Shift+Tab go round the dialog's own controls, never to the page behind it. */
function trapTab(dialog, event) {
  const items = [...dialog.querySelectorAll("button:not(:disabled), a[href], summary, [tabindex]:not([tabindex='-1'])")];
  if (!items.length) return;
  const at = items.indexOf(document.activeElement);
  const next = event.shiftKey ? (at <= 0 ? items.length - 1 : at - 1) : (at + 1) % items.length;
  event.preventDefault();
  items[next].focus();
}

/** Check the revealed seed against the commitment shown during the round (docs/rules.md). */
async function verifySeed(last) {
  if (!last.seed || !last.commitment || !crypto.subtle) return [t("dealt"), "muted"];
  const seed = Uint8Array.from(last.seed.match(/../g).map((b) => parseInt(b, 16)));
  const tag = new TextEncoder().encode("dudo-commit/1:");
  const data = new Uint8Array(tag.length + seed.length);
  data.set(tag);
  data.set(seed, tag.length);
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", data));
  const hex = [...digest].map((b) => b.toString(16).padStart(2, "0")).join("");
  return hex === last.commitment ? [t("fairDice"), "good"] : [t("unfairDice"), "bad"];
}
