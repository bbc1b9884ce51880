// Tournaments an organizer runs: the create form (#/cn), the host's controls on the
// tournament page (begin, pause, resume, cancel, kick, announce, the invite link of a
// private one), who registered before the start, and registering from the page itself
// (a private tournament's invite link, late registration, re-entry).

import { errorText, presetName, t } from "./i18n.js";
import { BOT_LEVELS, PRESETS } from "./presets.js";
import { api, app, serverNow, state } from "./session.js";
import { h, load, savedName, saveName, shareLink, toast } from "./ui.js";

const CLOCKS = [15, 30, 60, 120]; // a tournament's tables always keep a turn clock
const LATE = [0, 5, 10, 30, 60];

export function entrantTokens() {
  return load("dudo.entrants", {});
}

/** What opens a tournament's standings and results to this browser, as a query string:
 *  its entrant token, else the invite its link carried (a private tournament's are its
 *  entrants' and its invite holders' alone; a public one's anyone's). */
export function standingsQuery(cup, more = {}) {
  const token = entrantTokens()[cup];
  const invite = state.route?.invite || load("dudo.invites", {})[cup];
  const params = new URLSearchParams(token ? { token } : invite ? { invite } : {});
  for (const [name, value] of Object.entries(more)) params.set(name, value);
  const text = params.toString();
  return text ? `?${text}` : "";
}

export function saveEntrant(cup, token) {
  localStorage.setItem("dudo.entrants", JSON.stringify({ ...entrantTokens(), [cup]: token }));
}

export function saveInvite(cup, invite) {
  localStorage.setItem("dudo.invites", JSON.stringify({ ...load("dudo.invites", {}), [cup]: invite }));
}

/** The request key this browser registers with at `cup`: sent again, it names the same
 * player (a re-entry is that player buying in again, not a new entrant). */
function requestKey(cup) {
  return load("dudo.cupRequests", {})[cup] ?? rememberKey(cup, newKey());
}

function newKey() {
  return Array.from(crypto.getRandomValues(new Uint8Array(12)), (b) => b.toString(16).padStart(2, "0")).join("");
}

function rememberKey(cup, key) {
  localStorage.setItem("dudo.cupRequests", JSON.stringify({ ...load("dudo.cupRequests", {}), [cup]: key }));
  return key;
}

function choice(id, options, value, extra = {}) {
  return h("select", { id, test: id, ...extra },
    options.map(([v, text]) => h("option", { value: String(v), selected: String(v) === String(value) }, text)));
}

function field(label, input, help = null) {
  return h("label", {}, label, input, help ? h("small", { class: "help" }, help) : null);
}

function group(legend, ...fields) {
  return h("fieldset", { class: "group" }, h("legend", {}, legend), h("div", { class: "grid" }, ...fields));
}

function input(id, attrs = {}) {
  return h("input", { id, test: id, ...attrs });
}

/** #/cn: every setting an organizer chooses; the creator hosts (and plays). */
export function renderCupForm() {
  const form = h("form", { class: "card", test: "cup-form", onsubmit: (e) => { e.preventDefault(); createCup(); } },
    h("div", { class: "row" }, h("a", { href: "#/" }, `← ${t("back")}`), h("h2", {}, t("newCup"))),
    // Four groups, not sixteen fields in one grid (issue 53, item 10).
    group(t("cupGroupWhat"),
      field(t("cupName"), input("cup-name", { required: true, maxlength: 64 })),
      field(t("yourName"), input("cup-host", { required: true, maxlength: 32, value: savedName(), autocomplete: "nickname" })),
      field(t("cupFormat"), choice("cup-format", [["elimination", t("fmt_elimination")], ["heats", t("fmt_heats")]], "elimination"), t("help_cupFormat")),
      field(t("seatsPerTable"), choice("cup-seats", [3, 4, 5, 6].map((n) => [n, String(n)]), 6)),
      h("label", { class: "check" }, input("cup-private", { type: "checkbox" }), t("privateCup"))),
    group(t("cupGroupGame"),
      field(t("preset"), choice("cup-preset", Object.keys(PRESETS).map((p) => [p, presetName(p)]), "classic")),
      field(t("opt_start_dice"), choice("cup-dice", [["", t("asRules")], ...[1, 2, 3, 4, 5].map((n) => [n, String(n)])], "")),
      field(t("clock"), choice("cup-clock", CLOCKS.map((s) => [s, t("seconds", { s })]), 30), t("help_cupClock")),
      field(t("botsFill"), choice("cup-bots", [["", t("no")], ...BOT_LEVELS.map((l) => [l, t(l)])], ""))),
    group(t("cupGroupStart"),
      field(t("cupStart"), choice("cup-start", [["host", t("start_host")], ["full", t("start_full")], ["time", t("start_time")]], "host", { onchange: startFields })),
      field(t("startPlayers"), input("cup-start-players", { type: "number", min: 2, value: 6 })),
      field(t("startAt"), input("cup-start-at", { type: "datetime-local" })),
      field(t("lateMinutes"), choice("cup-late", LATE.map((m) => [m, m ? t("minutes", { m }) : t("no")]), 0), t("help_late")),
      field(t("reentries"), choice("cup-reentries", [0, 1, 2, 3].map((n) => [n, String(n)]), 0), t("help_reentries"))),
    group(t("cupGroupEntry"),
      field(t("maxPlayers"), input("cup-max", { type: "number", min: 2, max: 100000, value: 100 })),
      field(t("buyIn"), input("cup-buy-in", { type: "number", min: 0, value: 0 })),
      field(t("payouts"), input("cup-payouts", { value: "100", pattern: "[0-9 ,]+" }), t("help_payouts"))),
    h("div", { class: "actions" }, h("button", { class: "primary big", type: "submit", test: "cup-create" }, t("createCup"))));
  app.replaceChildren(form);
  startFields();
}

/** Only the start setting chosen can be filled in. */
function startFields() {
  const start = value("cup-start");
  document.getElementById("cup-start-players").disabled = start !== "full";
  document.getElementById("cup-start-at").disabled = start !== "time";
}

function value(id) {
  return document.getElementById(id).value;
}

async function createCup() {
  const host = value("cup-host").trim();
  const start = value("cup-start");
  const body = {
    name: value("cup-name").trim(), host,
    rules: { preset: value("cup-preset"), turn_seconds: Number(value("cup-clock")) },
    format: value("cup-format"), seats: Number(value("cup-seats")),
    max_players: Number(value("cup-max")), buy_in: Number(value("cup-buy-in")),
    payouts: value("cup-payouts").split(/[ ,]+/).filter(Boolean).map(Number),
    bots: value("cup-bots") || null, late_minutes: Number(value("cup-late")),
    reentries: Number(value("cup-reentries")), private: document.getElementById("cup-private").checked,
    request: newKey(), // the creator's credential: the host, and their registration
    seeds: true, // this page's connection commits to a seed of its own at each table
  };
  if (value("cup-dice")) body.rules.start_dice = Number(value("cup-dice"));
  if (start === "full") body.start_players = Number(value("cup-start-players"));
  if (start === "time") body.start_at = new Date(value("cup-start-at")).getTime();
  try {
    const made = await api("POST", "/api/tournaments", body);
    rememberKey(made.tournament, body.request);
    saveName(host);
    saveEntrant(made.tournament, made.token);
    if (made.invite) saveInvite(made.tournament, made.invite);
    location.hash = `#/c/${made.tournament}`;
  } catch (err) {
    toast(errorText(err.code, err.message));
  }
}

// ------------------------------------------------------------ the tournament page

/** Late registration is open now (a running tournament's `late_until` not passed). */
export function lateOpen(s) {
  return s.status === "running" && s.late_until && s.late_until > serverNow();
}

/** Register (or re-enter) from the tournament's own page: its invite, if private. */
async function registerHere(cup) {
  const name = (state.ui.regName ?? savedName()).trim();
  if (!name) return toast(errorText("bad_message", ""));
  // The invite the link carried, or the one kept from it: a plain link opened later
  // showed Register, then "This seat is not yours" (issue 53, item 7).
  const invite = state.route.invite || load("dudo.invites", {})[cup] || null;
  if (await registerAt(cup, name, invite)) {
    saveName(name);
    state.redraw({ reload: true });
  }
}

/** Register `name` at `cup` (its invite, if private) with this browser's request key
 * there, and keep the entrant token; false (and why, in a toast) if refused. */
export async function registerAt(cup, name, invite = null) {
  const body = { name, request: requestKey(cup), seeds: true, ...(invite ? { invite } : {}) };
  try {
    saveEntrant(cup, (await api("POST", `/api/tournaments/${cup}/register`, body)).token);
    return true;
  } catch (err) {
    toast(errorText(err.code, err.message));
    return false;
  }
}

/** The registration line of a tournament page: for a visitor while registering is open,
 * for an entrant who is out when a re-entry is possible. */
/** The place this page's entrant was given in the standings ``s`` (null: not placed). */
export function myPlace(s) {
  return state.welcome?.player ? s.places.find((p) => p.handle === state.welcome.player) : null;
}

export function registerLine(s) {
  const cup = state.cup?.id;
  const entrant = Boolean(entrantTokens()[cup]);
  const mine = myPlace(s);
  const open = s.status === "registering" || lateOpen(s);
  const reenter = entrant && mine && lateOpen(s) && s.reentries > 0;
  if (!cup || !open || (entrant && !reenter)) return null;
  return h("div", { class: "row", test: "cup-register" },
    entrant ? null : h("label", { class: "reg-name" }, t("yourName"), input("cup-reg-name", {
      value: state.ui.regName ?? savedName(), maxlength: 32, placeholder: t("yourName"), autocomplete: "nickname",
      oninput: (e) => { state.ui.regName = e.target.value; } })),
    h("button", { class: "primary", test: reenter ? "cup-reenter" : "cup-register-btn", onclick: () => registerHere(cup) },
      reenter ? t("reenter") : t(s.status === "running" ? "registerLate" : "register")));
}

/** What everyone sees of the organizer: the announcement, and a pause. */
export function organizerNews(s) {
  if (s.status !== "registering" && s.status !== "running") return null; // ended: none of it
  return [
    s.announcement ? h("p", { class: "banner", test: "cup-announcement", role: "status" }, `${t("organizer")}: ${s.announcement.text}`) : null,
    s.paused ? h("p", { class: "banner", test: "cup-paused", role: "status" }, t("cupPaused")) : null,
  ];
}

function isHost(s) {
  return Boolean(s.host && state.welcome?.player === s.host);
}

async function organize(action, fields = {}) {
  const cup = state.cup.id;
  try {
    const token = entrantTokens()[cup];
    const done = await api("POST", `/api/tournaments/${cup}/${action}`, { token, ...fields });
    if (done.standings && (!state.cup || state.cup.id === cup)) {
      state.cup = { ...state.cup, standings: done.standings };
      state.redraw();
    }
    return true;
  } catch (err) {
    toast(errorText(err.code, err.message));
    return false;
  }
}

/** The host's controls (shown to the host only; the director checks the token anyway).
 *  ``folded``: the host is playing at a table: the controls wait, folded, under it (above
 *  it they pushed the host's own dice under the dock in their turn; issue 53, item 1). */
export function hostPanel(s, { folded = false } = {}) {
  if (!isHost(s) || (s.status !== "registering" && s.status !== "running")) return null;
  const ui = state.ui;
  const invite = load("dudo.invites", {})[state.cup.id];
  const text = input("announce-text", { maxlength: 280, value: ui.announce ?? "", placeholder: t("announcePlaceholder"),
    oninput: (e) => { ui.announce = e.target.value; } });
  if (ui.focus === "announce") queueMicrotask(() => { text.focus(); text.setSelectionRange(text.value.length, text.value.length); });
  text.addEventListener("focus", () => { ui.focus = "announce"; });
  text.addEventListener("blur", () => { ui.focus = null; });
  const wrap = folded
    ? (...parts) => h("details", { class: "card host-panel", test: "host-panel", open: Boolean(ui.hostOpen),
      ontoggle: (e) => { ui.hostOpen = e.target.open; } },
    // The click records the new state at once: a view drawn before the toggle event
    // (dispatched later) would otherwise fold the panel again under the host's finger.
    h("summary", { test: "host-panel-open", onclick: (e) => { ui.hostOpen = !e.currentTarget.parentElement.open; } },
      h("strong", {}, t("organizer"))), ...parts.slice(1))
    : (...parts) => h("div", { class: "card", test: "host-panel" }, ...parts);
  return wrap(
    h("h3", {}, t("organizer")),
    h("div", { class: "actions" },
      s.status === "registering" ? h("button", { class: "primary", test: "cup-begin", onclick: () => organize("begin") }, t("beginCup")) : null,
      s.status === "running" && !s.paused ? h("button", { test: "cup-pause", onclick: () => organize("pause") }, t("pauseCup")) : null,
      s.status === "running" && s.paused ? h("button", { class: "primary", test: "cup-resume", onclick: () => organize("resume") }, t("resumeCup")) : null,
      ui.confirmCancel
        ? h("button", { class: "danger", test: "cup-cancel-yes", onclick: () => { ui.confirmCancel = false; organize("cancel"); } }, t("cancelCupYes"))
        : h("button", { test: "cup-cancel", onclick: () => { ui.confirmCancel = true; state.redraw(); } }, t("cancelCup"))),
    h("form", { class: "row", onsubmit: async (e) => {
      e.preventDefault();
      if (await organize("announce", { text: ui.announce ?? "" })) ui.announce = "";
    } }, text, h("button", { type: "submit", test: "announce" }, t("announce"))),
    invite ? h("p", {}, `${t("inviteLink")}: `, shareLink(`${location.origin}/#/c/${state.cup.id}/${invite}`, "cup-invite")) : null);
}

/** A Kick button beside an entrant, for the host (confirmed by a second click). */
export function kickButton(s, who) {
  if (!isHost(s) || who.handle === s.host || (s.status !== "registering" && s.status !== "running")) return null;
  const ui = state.ui;
  if (ui.kick === who.handle) {
    return h("button", { class: "danger small", test: "kick-yes", onclick: () => { ui.kick = null; organize("kick", { target: who.handle }); } }, t("kickYes", { name: who.name }));
  }
  return h("button", { class: "small", test: "kick", onclick: () => { ui.kick = who.handle; state.redraw(); } }, t("kick"));
}

/** Before the start: who registered (everyone sees it), with Kick for the host. */
export function registeredList(s) {
  if (s.status !== "registering" || !s.registered?.length) return null;
  return h("div", { test: "cup-registered" }, h("h4", {}, t("entrants", { n: s.entrants })),
    h("ul", {}, s.registered.map((e) => h("li", { test: "entrant" }, e.name, " ", kickButton(s, e)))));
}
