// Quick reactions at the table: six buttons for a seated player, and what anyone at the
// table sent, shown by their seat for a few seconds (the views' `reaction` events). The
// protocol names them; the page draws them.

import { t } from "./i18n.js";
import { request, state } from "./session.js";
import { h } from "./ui.js";

export const EMOTES = { nice: "👍", haha: "😂", wow: "😮", grr: "😠", hmm: "🤔", clap: "👏" };
const SHOWN_MS = 3000;

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
  return h("span", { class: "bubble", test: `bubble-${seat}`, role: "status",
    "aria-label": t(`emote_${shown.emote}`), style: `animation-delay: -${age}ms` }, EMOTES[shown.emote]);
}

/** The six buttons, for a seated player (a spectator watches). */
export function reactionBar(view) {
  if (view.seat === null || !state.conn) return null;
  return h("div", { class: "reactions", role: "group", "aria-label": t("reactions"), test: "reactions" },
    Object.entries(EMOTES).map(([name, glyph]) => h("button", {
      class: "small", test: `react-${name}`, "aria-label": t(`emote_${name}`), title: t(`emote_${name}`),
      onclick: () => request(state.conn.react(name)),
    }, glyph)));
}
