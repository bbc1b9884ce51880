// What the page holds while it runs: the route, the live connection (the official
// client library, protocol/js), the last view, and the requests a screen makes.

import { DudoApi, DudoConnection } from "./dudo-client.js";
import { errorText, t } from "./i18n.js";
import { saveName, savedName, seedOf, toast } from "./ui.js";

export const app = document.getElementById("app");

export const state = {
  route: { page: "lobby" }, // {page: "lobby" | "table" | "cup" | "leaderboard" | "help", ...}
  conn: null, // the live DudoConnection
  view: null, // the last view applied
  welcome: null, // {table, seat, player}
  lobby: [], // open tables (the lobby's list, kept current by its changes)
  cups: [], // the tournament listing
  cup: null, // {version, standings} of the tournament shown
  timers: [], // intervals of the page shown, cleared when it changes
  ui: {}, // the table screen's own choices (face, quantity, dialogs); reset per table
};

let onMessage = () => {};

/** Where messages go (app.js sets it once). */
export function setReceiver(receive) {
  onMessage = receive;
}

// HTTP with request keys and retries: a create or join sent again after a timeout, a 503
// or a cut connection is the same request (one table, one seat), never a second.
const http = new DudoApi(location.origin);

export function api(method, path, body) {
  return http.call(method, path, body, { idempotent: Boolean(body) });
}

/** Take a seat (a new table with `name`, or `table`'s): through the library, which makes
 *  the seat a seed of its own for the dice and sends its commitment (docs/rules.md, "Seeds
 *  from everyone"); the seed is kept with the token (saveToken), for the reveal. */
export function takeSeat(table, body) {
  return table === null ? http.createTable(body) : http.joinTable(table, body);
}

/** Open the WebSocket for a token (null: the lobby) and route what it brings. */
export function openSocket(token) {
  closeSocket();
  // The seat's own seed, kept with its token: revealed when its table asks (seeds.until).
  const conn = new DudoConnection(location.origin, token, { lobby: !token, seed: seedOf(token) ?? undefined });
  state.conn = conn;
  const status = document.getElementById("status");
  conn.addEventListener("state", ({ detail }) => {
    if (state.conn === conn) status.textContent = detail === "reconnecting" ? t("reconnecting") : "";
  });
  for (const kind of ["welcome", "view", "moved", "tournament", "lobby", "error", "left"]) {
    conn.addEventListener(kind, ({ detail }) => state.conn === conn && onMessage(detail));
  }
  conn.open().catch(() => {}); // a refused token arrives as an error message
}

/** The gateway's time now (ms): the views' deadlines count against it, not the device's
 * clock (a phone 12 s fast showed 3 s of a 15 s turn). */
export function serverNow() {
  return state.conn ? state.conn.serverNow() : Date.now();
}

export function closeSocket() {
  const conn = state.conn;
  state.conn = null;
  if (conn) conn.close();
}

/** A request of the seat (act, leave, start): a refusal shows, translated. */
export function request(promise) {
  return promise.catch((err) => {
    if (err.code !== "closed") toast(errorText(err.code, err.message));
    return null;
  });
}

export function act(action) {
  if (state.conn) request(state.conn.act(action));
}

/** The player's name from the lobby's field (remembered), or null after asking for it. */
export function askName() {
  const name = (document.getElementById("name")?.value ?? savedName()).trim();
  if (!name) {
    if (state.route.page !== "lobby") location.hash = "#/";
    toast(t("yourName"));
    document.getElementById("name")?.focus();
    return null;
  }
  saveName(name);
  return name;
}
