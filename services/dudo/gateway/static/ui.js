// Small pieces every screen uses: building elements, dice, notices, what the browser
// remembers (seat tokens, your games, your name, sound), and the "your turn" alert.

import { seatedSeed } from "./dudo-client.js";
import { faceName, t } from "./i18n.js";

/** An element: h("button", {class: "big", onclick: f, test: "bid"}, "Bid"). */
/** A link that looks like a button: one Tab stop (a button inside a link made two). */
export function link(href, label, attrs = {}) {
  return h("a", { ...attrs, href, class: ["button", attrs.class].filter(Boolean).join(" ") }, label);
}

export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === false || value === null || value === undefined) continue;
    if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else if (key === "class") el.className = value;
    else if (key === "test") el.dataset.test = value;
    else el.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

const PIPS = { 1: [4], 2: [0, 8], 3: [0, 4, 8], 4: [0, 2, 6, 8], 5: [0, 2, 4, 6, 8], 6: [0, 2, 3, 5, 6, 8] };

/** A die; `hit`: it counts for the bid shown, `wild`: a one counting as wild. */
export function die(face, { small = false, hit = false, wild = false } = {}) {
  const cells = [...Array(9)].map((_, i) => h("span", { class: PIPS[face].includes(i) ? "pip on" : "pip" }));
  const cls = ["die", `f${face}`, face === 1 ? "one" : "", small ? "small" : "", hit ? "hit" : "", wild ? "wild" : ""];
  return h("span", { class: cls.join(" ").replace(/ +/g, " ").trim(), role: "img", "aria-label": hit || wild ? `${faceName(face, 1)} (${t("countsDie")})` : faceName(face, 1) }, cells);
}

/** A seat's player's name in a view (an open seat by its number, counted from 1). */
export function playerName(view, seat) {
  return view?.players?.[seat]?.name ?? `#${seat + 1}`;
}

/** Do ones count for ``face`` under these rules, in a palifico round or not? */
export function onesWild(rules, palifico, face) {
  return face !== 1 && rules.wild_ones && (!palifico || rules.palifico_wild_ones);
}

export function bidText(quantity, face) {
  return `${quantity} × ${faceName(face, quantity)}`;
}

export function pct(p) {
  return p === null || p === undefined ? "–" : `${Math.round(p * 100)}%`;
}

/** A notice at the bottom of the screen, read out by screen readers (role=alert). */
export function toast(text, ms = 4000) {
  const el = document.getElementById("toast");
  el.textContent = text;
  el.hidden = false;
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => (el.hidden = true), ms);
}

// ---------------------------------------------------------------- what the browser keeps

/** What the browser keeps under ``key`` (JSON), or ``empty``. */
export function load(key, empty) {
  try {
    return JSON.parse(localStorage.getItem(key) || "null") ?? empty;
  } catch {
    return empty;
  }
}

/** The ``limit`` newest of records by table (each with its ``at``, ms): what the device
 *  keeps of tables it no longer shows (a game's history, the statistics' counted rounds). */
export function newestOf(byTable, limit) {
  return Object.fromEntries(Object.entries(byTable).sort(([, a], [, b]) => (b.at ?? 0) - (a.at ?? 0)).slice(0, limit));
}

/** Seat tokens by table: a token is the seat (docs/protocol.md). */
export function tokens() {
  return load("dudo.tokens", {});
}

/** Remember a seat, and list its table among "your games" (newest first, at most 10). */
export function saveToken(table, token, about = {}) {
  localStorage.setItem("dudo.tokens", JSON.stringify({ ...tokens(), [table]: token }));
  // The seat's seed (made by the library when it took the seat), for the reveal after a reload.
  const seed = seatedSeed(token);
  if (seed) localStorage.setItem("dudo.seeds", JSON.stringify({ ...load("dudo.seeds", {}), [table]: seed }));
  const games = yourGames().filter((g) => g.table !== table);
  games.unshift({ table, at: Date.now(), ...about });
  localStorage.setItem("dudo.games", JSON.stringify(games.slice(0, 10)));
}

export function forgetToken(table) {
  const all = tokens();
  delete all[table];
  localStorage.setItem("dudo.tokens", JSON.stringify(all));
  const seeds = load("dudo.seeds", {});
  delete seeds[table];
  localStorage.setItem("dudo.seeds", JSON.stringify(seeds));
  localStorage.setItem("dudo.games", JSON.stringify(yourGames().filter((g) => g.table !== table)));
}

/** The seed kept with a seat's token (null: none, or not a seat's token). */
export function seedOf(token) {
  if (!token) return null;
  const table = Object.keys(tokens()).find((t) => tokens()[t] === token);
  return table ? load("dudo.seeds", {})[table] ?? null : null;
}

export function yourGames() {
  return load("dudo.games", []).filter((g) => tokens()[g.table]);
}

export function savedName() {
  return localStorage.getItem("dudo.name") || "";
}

export function saveName(name) {
  localStorage.setItem("dudo.name", name);
}

// ---------------------------------------------------------------- your turn

let sound = localStorage.getItem("dudo.sound") === "on"; // muted unless asked for
let audio = null;

export function soundOn() {
  return sound;
}

export function setSound(on) {
  sound = on;
  localStorage.setItem("dudo.sound", on ? "on" : "off");
}

/** Notes [[hertz, start s, length s], ...], if sound is on. */
function play(notes) {
  if (!sound) return;
  try {
    audio = audio || new AudioContext();
    for (const [hertz, start, length] of notes) {
      const tone = audio.createOscillator();
      const gain = audio.createGain();
      const at = audio.currentTime + start;
      tone.frequency.value = hertz;
      gain.gain.setValueAtTime(0.12, at);
      gain.gain.exponentialRampToValueAtTime(0.001, at + length);
      tone.connect(gain).connect(audio.destination);
      tone.start(at);
      tone.stop(at + length);
    }
  } catch {
    // no audio here: the title and the page say it
  }
}

/** Say it is your turn: a short tone (if sound is on) and, in a hidden tab, the title. */
export function alertTurn() {
  if (document.hidden) document.title = `• ${t("yourTurn")} — Dudo`;
  play([[660, 0, 0.25]]);
}

/** The cups are lifted: two falling notes (if sound is on). */
export function revealSound() {
  play([[523, 0, 0.14], [392, 0.15, 0.22]]);
}

// Motion: the cup shaken at a round's start, a new bid sliding in, the reveal counted die
// by die. On unless the player turned it off, never where the system asks for reduced
// motion (the `motion` class on the page is what style.css animates under).
const stillSystem = window.matchMedia?.("(prefers-reduced-motion: reduce)");

export function motionAllowed() {
  return !stillSystem?.matches;
}

export function motionOn() {
  return motionAllowed() && localStorage.getItem("dudo.motion") !== "off";
}

export function setMotion(on) {
  localStorage.setItem("dudo.motion", on ? "on" : "off");
  document.documentElement.classList.toggle("motion", motionOn());
}
document.documentElement.classList.toggle("motion", motionOn());
stillSystem?.addEventListener?.("change", () => document.documentElement.classList.toggle("motion", motionOn()));

document.addEventListener("visibilitychange", () => {
  if (!document.hidden) document.title = "Dudo";
});

/** A link to hand on: its text (selectable), a Copy button and, where the device has a
 *  share sheet (phones), Share (issue 53, item 9: the invite link was bare text). */
export function shareLink(url, test) {
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(url);
      toast(t("copied"));
    } catch {
      toast(t("copyFailed"));
    }
  };
  return [h("span", { class: "share", test }, url), " ",
    h("button", { class: "small", test: `${test}-copy`, onclick: copy }, t("copy")),
    navigator.share ? [" ", h("button", { class: "small", test: `${test}-send`, onclick: () => navigator.share({ url }).catch(() => {}) }, t("shareBtn"))] : null];
}
