// The Dudo browser client: plain ES modules, no build step. It speaks the gateway's
// client protocol (docs/protocol.md) through the official client library
// (dudo-client.js, protocol/js): HTTP for the lobby, one WebSocket per table or
// tournament, every view a full snapshot.
//
// app.js: routes (#/ lobby, #/t/T seat, #/w/T watch, #/c/C tournament (#/c/C/INVITE: a
// private one's invite link), #/cn a new tournament, #/r leaderboard, #/help, #/replay/T a
// finished game's replay) and what each message does. The screens: lobby.js, table.js (+ reveal.js),
// cup.js, help.js; the shared state and connection: session.js; the words: i18n.js.

import { cupHeader, cupShowsTable, cupStandings, goCup, loadCups, quickCup, renderCupList, renderLeaderboard, tableNumber } from "./cup.js";
import { renderHelp } from "./help.js";
import { goReplay, noteView, renderReplay, stepReplay } from "./history.js";
import { noteStats } from "./stats.js";
import { noteReactions } from "./reactions.js";
import { renderCupForm } from "./organize.js";
import { LANGS, detectLang, errorText, faceName, lang, setLang, t } from "./i18n.js";
import { lobbyActions, renderJoin, renderLobby, renderTableList } from "./lobby.js";
import { api, closeSocket, openSocket, setReceiver, state } from "./session.js";
import { onKey, renderTable, tickClocks } from "./table.js";
import { forgetToken, h, motionAllowed, motionOn, setMotion, setSound, soundOn, toast, tokens } from "./ui.js";

lobbyActions({ quickCup }); // the lobby's "quick cup" button, a cup's screen's work

function parseRoute() {
  if (location.hash === "#/r") return { page: "leaderboard" };
  if (location.hash === "#/help") return { page: "help" };
  if (location.hash === "#/cn") return { page: "newCup" };
  const cup = location.hash.match(/^#\/c\/([A-Za-z0-9_-]{1,64})(?:\/([A-Za-z0-9_-]{1,64}))?/);
  if (cup) return { page: "cup", cup: cup[1], invite: cup[2] ?? null };
  const replay = location.hash.match(/^#\/replay\/([A-Za-z0-9_-]{1,64})/);
  if (replay) return { page: "replay", table: replay[1] };
  const m = location.hash.match(/^#\/(t|w)\/([A-Za-z0-9_-]{1,64})/);
  if (m) return { page: "table", table: m[2], watch: m[1] === "w" };
  return { page: "lobby" };
}

/** Draw the page shown again (after a message, a choice, a language change). */
function redraw({ reload = false } = {}) {
  if (reload) return go();
  const page = state.route.page;
  if (page === "lobby") renderLobby(), renderCupList();
  else if (page === "leaderboard") renderLeaderboard();
  else if (page === "help") renderHelp();
  else if (page === "newCup") renderCupForm();
  else if (page === "replay") renderReplay();
  else if (page === "cup") renderTable({ header: cupHeader(), footer: cupStandings(), table: cupShowsTable() });
  else if (state.view || state.conn) renderTable();
}
state.redraw = redraw;

async function go() {
  state.route = parseRoute();
  closeSocket();
  state.timers.forEach(clearInterval);
  state.timers = [setInterval(tickClocks, 500)];
  Object.assign(state, { view: null, welcome: null, cup: null, ui: {} });
  document.querySelectorAll(".overlay").forEach((el) => el.remove());
  window.scrollTo(0, 0); // a page opens at its top (it kept the last page's scroll)
  const route = state.route;
  if (route.page === "lobby") {
    renderLobby();
    openSocket(null);
    loadCups();
    state.timers.push(setInterval(loadCups, 3000));
  } else if (route.page === "cup") await goCup(route.cup);
  else if (route.page === "leaderboard") await renderLeaderboard();
  else if (route.page === "help") renderHelp();
  else if (route.page === "newCup") renderCupForm();
  else if (route.page === "replay") await goReplay(route.table);
  else await goTable(route);
}

async function goTable({ table, watch }) {
  let token = watch ? null : tokens()[table];
  if (!token && !watch) return renderJoin(table);
  if (!token) {
    try {
      token = (await api("POST", `/api/tables/${table}/watch`)).token;
    } catch (err) {
      toast(errorText(err.code, err.message));
      location.hash = "#/";
      return;
    }
  }
  renderTable();
  openSocket(token);
}

/** What the house played when a turn clock ran out: the event after `house_bot`. */
function houseMove(events, seat) {
  const at = events.findIndex((e) => e.type === "house_bot" && e.seat === seat);
  const move = at >= 0 ? events[at + 1] : null;
  if (!move) return null;
  if (move.type === "bid") return `${move.quantity} × ${faceName(move.face, move.quantity)}`;
  return t({ dudo: "moveDudo", calza: "moveCalza", direction: "moveDirection" }[move.type] ?? "moveDudo");
}

function receive(msg) {
  switch (msg.type) {
    case "welcome":
      state.welcome = msg;
      redraw();
      break;
    case "view": {
      // Not the seat's own view (a reconnect) replayed: events are what just happened.
      const move = msg.seat !== null ? houseMove(msg.events || [], msg.seat) : null;
      if (move) toast(t("houseMoved", { move }), 6000);
      noteView(msg);
      noteStats(msg);
      noteReactions(msg);
      state.view = msg;
      if (state.route.page !== "lobby") redraw();
      break;
    }
    case "moved": // the tournament seated us elsewhere: the next view is that table's
      state.view = null;
      // The old table's drafts go; the host's choice to unfold the organizer's panel
      // stays (it folded again when the start seated her, under her finger).
      state.ui = { hostOpen: state.ui?.hostOpen };
      document.querySelectorAll(".overlay").forEach((el) => el.remove()); // the old table's
      if (msg.from !== null) toast(t("movedTo", { table: tableNumber(msg.table) }));
      if (state.welcome) state.welcome = { ...state.welcome, table: msg.table, seat: msg.seat };
      redraw();
      break;
    case "left": // this seat was given up (here or in another window)
      if (state.route.page === "table") {
        forgetToken(msg.table);
        toast(t("leftTable"));
        location.hash = "#/";
      }
      break;
    case "tournament":
      if (state.cup && msg.version <= state.cup.version) return;
      state.cup = { id: msg.tournament, version: msg.version, standings: msg.standings };
      if (state.route.page === "cup") redraw();
      break;
    case "error":
      toast(errorText(msg.code, msg.message));
      if ((msg.code === "unauthorized" || msg.code === "unknown_table") && state.route.table) forgetToken(state.route.table);
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

function setupHeader() {
  const select = document.getElementById("lang");
  for (const [code, name] of Object.entries(LANGS)) select.append(h("option", { value: code }, name));
  setLang(detectLang());
  select.value = lang();
  select.addEventListener("change", () => {
    setLang(select.value);
    paintSound();
    paintMotion();
    redraw();
  });
  const sound = document.getElementById("sound");
  // The toggle says its state in words ("♪ Sound off"; it was a bare struck-through
  // note); the longer name ("Sound on your turn") is its tooltip.
  const paintSound = () => {
    sound.textContent = `♪ ${t(soundOn() ? "soundOn" : "soundOff")}`;
    sound.classList.toggle("off", !soundOn());
    sound.title = t("sound"); // (its name is its state: no aria-pressed to say it twice)
  };
  sound.addEventListener("click", () => {
    setSound(!soundOn());
    paintSound();
  });
  paintSound();
  // The same for motion; where the system asks for reduced motion, off and not offered.
  const motion = document.getElementById("motion");
  const paintMotion = () => {
    motion.textContent = `✦ ${t(motionOn() ? "motionOn" : "motionOff")}`;
    motion.classList.toggle("off", !motionOn());
    motion.disabled = !motionAllowed();
    motion.title = t(motionAllowed() ? "motion" : "motionSystem");
  };
  motion.addEventListener("click", () => {
    setMotion(!motionOn());
    paintMotion();
  });
  paintMotion();
}

/** Installable, and opens offline: the service worker keeps the page's shell (sw.js).
 *  With the network gone the header says so; the connection's own state says the rest. */
function setupApp() {
  if ("serviceWorker" in navigator) navigator.serviceWorker.register("/sw.js").catch(() => {});
  const status = document.getElementById("status");
  const offline = () => { status.textContent = t("offline"); };
  window.addEventListener("offline", offline);
  window.addEventListener("online", () => {
    if (status.textContent === t("offline")) status.textContent = "";
  });
  if (!navigator.onLine) offline();
}

setReceiver(receive);
setupHeader();
setupApp();
document.addEventListener("keydown", (event) => {
  if (state.route.page !== "replay") return onKey(event);
  if (event.key !== "ArrowLeft" && event.key !== "ArrowRight") return;
  const by = event.key === "ArrowLeft" ? -1 : 1; // a bid; with Shift, a round
  stepReplay(event.shiftKey ? 0 : by, { rounds: event.shiftKey ? by : 0 });
});
window.addEventListener("hashchange", go);
go();
