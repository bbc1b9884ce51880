// Quick reactions at the table: six buttons for a seated player, and what anyone at the
// table sent, shown by their seat for a few seconds (the views' `reaction` events). The
// protocol names them; the page draws them.

import { t } from "./i18n.js";
import { request, state } from "./session.js";
import { h } from "./ui.js";

// Drawn, not typed: three of the emoji (👍 🤔 👏) were empty boxes where the system has
// no emoji font (issue 53, item 14). Each is a 24×24 picture in the page's own code.
const FACE = '<circle cx="12" cy="12" r="10" fill="#f2c14e" stroke="#1f1a14" stroke-width="1.5"/>';
const LINE = 'fill="none" stroke="#1f1a14" stroke-width="1.6" stroke-linecap="round" stroke-linejoin="round"';
const DOTS = '<circle cx="8.5" cy="10" r="1.3" fill="#1f1a14"/><circle cx="15.5" cy="10" r="1.3" fill="#1f1a14"/>';
const DRAWN = {
  nice: `<path d="M7 11h-3v9h3z" fill="#f2c14e" stroke="#1f1a14" stroke-width="1.5" stroke-linejoin="round"/>
    <path d="M7 11l4-7c1.5 0 2.3 1.2 2 2.6L12.3 10H18a2 2 0 0 1 2 2.3l-1.2 6A2 2 0 0 1 16.8 20H7z" fill="#f2c14e" ${LINE}/>`,
  haha: `${FACE}<path d="M6.5 10l2-1.6 2 1.6M13.5 10l2-1.6 2 1.6" ${LINE}/>
    <path d="M7 13.5h10a5 5 0 0 1-10 0z" fill="#1f1a14"/>`,
  wow: `${FACE}${DOTS}<ellipse cx="12" cy="16" rx="2.3" ry="3" fill="#1f1a14"/>`,
  grr: `<circle cx="12" cy="12" r="10" fill="#e0664b" stroke="#1f1a14" stroke-width="1.5"/>${DOTS}
    <path d="M6.5 7.5l4 1.6M17.5 7.5l-4 1.6M8 17.5c2.5-2.4 5.5-2.4 8 0" ${LINE}/>`,
  hmm: `${FACE}${DOTS}<path d="M6.8 7.2l3.4-.8M14 7.8l3 .6M9 16.2l6-1.4" ${LINE}/>`,
  clap: `<path d="M5 14l5.5-8.5a1.5 1.5 0 0 1 2.5 1.6L10 12l5-6a1.5 1.5 0 0 1 2.3 1.9l-4.8 6.6 4-3.4a1.4 1.4 0 0 1 1.8 2.1l-5 5.3A5 5 0 0 1 5 14z" fill="#f2c14e" ${LINE}/>
    <path d="M4 6.5L2.5 5M6.5 4L6 2M2 9.5H.8" ${LINE}/>`,
};
export const EMOTES = Object.keys(DRAWN);
const SHOWN_MS = 3000;

/** An emote's picture (inline SVG: no font needed), named for screen readers by its
 *  button or bubble. */
function picture(name) {
  const span = document.createElement("span");
  span.className = "emote";
  span.innerHTML = `<svg viewBox="0 0 24 24" width="1.5em" height="1.5em" aria-hidden="true" focusable="false">${DRAWN[name]}</svg>`;
  return span;
}

/** Keep the reactions a view brings, each by its seat, for SHOWN_MS. */
export function noteReactions(view) {
  const reactions = (view.events || []).filter((e) => e.type === "reaction");
  if (!reactions.length) return;
  state.ui.bubbles = { ...(state.ui.bubbles || {}) };
  for (const { seat, emote } of reactions) state.ui.bubbles[seat] = { emote, at: Date.now() };
  setTimeout(() => state.redraw(), SHOWN_MS + 100); // and gone again
}

/** The reaction by a seat's name, while it lasts (it fades out as it goes). */
export function bubble(seat) {
  const shown = state.ui.bubbles?.[seat];
  const age = shown ? Date.now() - shown.at : SHOWN_MS;
  if (age >= SHOWN_MS) return null;
  return h("span", { class: "bubble", test: `bubble-${seat}`, role: "status", "data-emote": shown.emote,
    "aria-label": t(`emote_${shown.emote}`), style: `animation-delay: -${age}ms` }, DRAWN[shown.emote] ? picture(shown.emote) : "?");
}

/** The six buttons, for a seated player (a spectator watches). */
export function reactionBar(view) {
  if (view.seat === null || !state.conn) return null;
  return h("div", { class: "reactions", role: "group", "aria-label": t("reactions"), test: "reactions" },
    EMOTES.map((name) => h("button", {
      class: "small", test: `react-${name}`, "aria-label": t(`emote_${name}`), title: t(`emote_${name}`),
      onclick: () => request(state.conn.react(name)),
    }, picture(name))));
}
